/* Socket options: ns_setsockopt and ns_getsockopt. The values live in the
 * socket under slock; they reach the engine when the socket starts an
 * association (sock_assoc.c). SCTP_STATUS is read on the stack thread.
 * RFC 6458 7.2 (setsockopt, getsockopt), 8.1.1 (SCTP_RTOINFO), 8.1.3
 * (SCTP_INITMSG), 8.1.4 (SO_LINGER), 8.1.5 (SCTP_NODELAY), 8.1.6 (SO_RCVBUF),
 * 8.1.7 (SO_SNDBUF), 8.1.21 (SCTP_PARTIAL_DELIVERY_POINT), 6.2.1
 * (SCTP_EVENTS), 8.2.1 (SCTP_STATUS).
 * Locking: the model at the top of sock_internal.h. */
#include <errno.h>
#include <string.h>

#include "socket/sock_internal.h"

/* ---- Options -------------------------------------------------------------- */

static int opt_u32(const void *val, socklen_t len, uint32_t *out)
{
    if (!val)
        return -EFAULT;
    if (len < (socklen_t)sizeof(int))
        return -EINVAL;
    int v;
    memcpy(&v, val, sizeof(v));
    if (v < 0)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

int ns_setsockopt(struct ns_rt *rt, int sd, int level, int name, const void *val, socklen_t len)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    if (!val)
        return fail(s, EFAULT);
    int e = 0;
    uint32_t v = 0;
    pthread_mutex_lock(&s->slock);
    if (level == NS_SOL_SOCKET && (name == NS_SO_RCVBUF || name == NS_SO_SNDBUF)) {
        e = opt_u32(val, len, &v);
        if (!e) {
            /* Linux doubles the value for bookkeeping overhead; the minimum
             * keeps a window of at least a few MTUs. */
            v = v < 2048 ? 4096 : (v > (1u << 30) ? (1u << 31) : v * 2);
            if (name == NS_SO_RCVBUF)
                s->rcvbuf = v;
            else
                s->sndbuf = v;
        }
    } else if (level == NS_SOL_SOCKET && name == NS_SO_LINGER) {
        struct linger l;
        if (len < (socklen_t)sizeof(l))
            e = -EINVAL;
        else {
            memcpy(&l, val, sizeof(l));
            s->linger_abort = l.l_onoff && l.l_linger == 0;
        }
    } else if (level != NS_IPPROTO_SCTP) {
        e = -ENOPROTOOPT;
    } else if (name == NS_SCTP_NODELAY) {
        e = opt_u32(val, len, &v);
        if (!e)
            s->nodelay = v != 0;
    } else if (name == NS_SCTP_INITMSG) {
        struct ns_sctp_initmsg im;
        if (len < (socklen_t)sizeof(im))
            e = -EINVAL;
        else {
            memcpy(&im, val, sizeof(im));
            if (im.sinit_num_ostreams)
                s->initmsg.sinit_num_ostreams = im.sinit_num_ostreams;
            if (im.sinit_max_instreams)
                s->initmsg.sinit_max_instreams = im.sinit_max_instreams;
            if (im.sinit_max_attempts)
                s->initmsg.sinit_max_attempts = im.sinit_max_attempts;
            if (im.sinit_max_init_timeo)
                s->initmsg.sinit_max_init_timeo = im.sinit_max_init_timeo;
        }
    } else if (name == NS_SCTP_RTOINFO) {
        struct ns_sctp_rtoinfo ri;
        if (len < (socklen_t)sizeof(ri))
            e = -EINVAL;
        else {
            memcpy(&ri, val, sizeof(ri));
            uint32_t mn = ri.srto_min ? ri.srto_min : s->rto.srto_min;
            uint32_t mx = ri.srto_max ? ri.srto_max : s->rto.srto_max;
            uint32_t in = ri.srto_initial ? ri.srto_initial : s->rto.srto_initial;
            if (mn > mx || in < mn || in > mx)
                e = -EINVAL;
            else
                s->rto = (struct ns_sctp_rtoinfo){0, in, mx, mn};
        }
    } else if (name == NS_SCTP_EVENTS_OPT) {
        if (len < (socklen_t)sizeof(s->ev))
            e = -EINVAL;
        else
            memcpy(&s->ev, val, sizeof(s->ev));
    } else if (name == NS_SCTP_PARTIAL_DELIVERY_POINT) {
        e = opt_u32(val, len, &v);
        if (!e)
            s->pd_point = v;
    } else {
        e = -ENOPROTOOPT;
    }
    pthread_mutex_unlock(&s->slock);
    if (e)
        return fail(s, -e);
    sock_put(s);
    return 0;
}

struct status_op {
    struct ns_sock *s;
    uint32_t id;
    struct ns_sctp_status st;
    int ret;
};

static void status_fn(struct ns_rt *rt, void *arg)
{
    struct status_op *o = arg;
    struct ns_sock_assoc *w = find_assoc_id(o->s, o->id);
    struct ns_sctp_assoc_info info;
    if (!w || ns_sctp_assoc_info(w->a, &info) != 0) {
        o->ret = -EINVAL;
        return;
    }
    o->st = (struct ns_sctp_status){info.id,
                                    (int32_t)info.state,
                                    info.rwnd,
                                    (uint16_t)info.outstanding_chunks,
                                    (uint16_t)info.queued_msgs,
                                    info.in_streams,
                                    info.out_streams};
}

int ns_getsockopt(struct ns_rt *rt, int sd, int level, int name, void *val, socklen_t *len)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    if (!val || !len)
        return fail(s, EFAULT);
    union {
        int i;
        struct linger l;
        struct ns_sctp_initmsg im;
        struct ns_sctp_rtoinfo ri;
        struct ns_sctp_event_subscribe ev;
        struct ns_sctp_status st;
    } u;
    memset(&u, 0, sizeof(u));
    size_t n = 0;
    int e = 0;
    if (level == NS_IPPROTO_SCTP && name == NS_SCTP_STATUS) {
        struct status_op o = {.s = s};
        if (*len >= (socklen_t)sizeof(u.st))
            memcpy(&o.id, val, sizeof(o.id));
        ns_rt_call(rt, status_fn, &o);
        e = o.ret;
        u.st = o.st;
        n = sizeof(u.st);
    } else {
        pthread_mutex_lock(&s->slock);
        if (level == NS_SOL_SOCKET && name == NS_SO_RCVBUF)
            u.i = (int)s->rcvbuf, n = sizeof(int);
        else if (level == NS_SOL_SOCKET && name == NS_SO_SNDBUF)
            u.i = (int)s->sndbuf, n = sizeof(int);
        else if (level == NS_SOL_SOCKET && name == NS_SO_LINGER)
            u.l = (struct linger){s->linger_abort, 0}, n = sizeof(u.l);
        else if (level != NS_IPPROTO_SCTP)
            e = -ENOPROTOOPT;
        else if (name == NS_SCTP_NODELAY)
            u.i = s->nodelay, n = sizeof(int);
        else if (name == NS_SCTP_INITMSG)
            u.im = s->initmsg, n = sizeof(u.im);
        else if (name == NS_SCTP_RTOINFO)
            u.ri = s->rto, n = sizeof(u.ri);
        else if (name == NS_SCTP_EVENTS_OPT)
            u.ev = s->ev, n = sizeof(u.ev);
        else if (name == NS_SCTP_PARTIAL_DELIVERY_POINT)
            u.i = (int)s->pd_point, n = sizeof(int);
        else
            e = -ENOPROTOOPT;
        pthread_mutex_unlock(&s->slock);
    }
    if (!e && *len < (socklen_t)n)
        e = -EINVAL;
    if (e)
        return fail(s, -e);
    memcpy(val, &u, n);
    *len = (socklen_t)n;
    sock_put(s);
    return 0;
}
