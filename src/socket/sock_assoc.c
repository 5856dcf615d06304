/* Stack thread: a socket's engine endpoint and its associations. The
 * endpoint behind bind and listen; the wrapper of each association (struct
 * ns_sock_assoc, the engine's user pointer); the active open, for connect and
 * for implicit setup on send, with the socket's options put into the engine
 * for the call; the passive open (COMM_UP on a listener: for one-to-one, a
 * new socket on the accept queue); and close, which releases every
 * association gracefully, or aborts them with SO_LINGER {1, 0}. RFC 6458
 * 3.1.2 and 4.1.2 (bind), 3.1.3 and 4.1.3 (listen), 4.1.4 (the accept queue),
 * 3.1.6 and 4.1.5 (connect), 3.2 (implicit association setup), 3.1.5 and
 * 4.1.6 (close), 8.1.4 (SO_LINGER).
 * Locking: the model at the top of sock_internal.h. */
#include <stdlib.h>

#include "socket/sock_internal.h"
#include "stack/stack.h"

/* ---- Stack thread: the endpoint and the associations ---------------------- */

static struct ns_sock_assoc *wrap(struct ns_sock *s, struct ns_sctp_assoc *a)
{
    struct ns_sock_assoc *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->sock = s;
    w->a = a;
    w->id = ns_sctp_assoc_id(a);
    sock_hold(s);
    ns_sctp_assoc_set_user(a, w);
    pthread_mutex_lock(&s->slock);
    w->next = s->assocs;
    s->assocs = w;
    pthread_mutex_unlock(&s->slock);
    return w;
}

int ns_sock_ensure_ep(struct ns_rt *rt, struct ns_sock *s)
{
    if (s->ep)
        return 0;
    struct ns_sctp_addr la = {NS_SCTP_AF_INET4, 0, s->bind_addr};
    int err = 0;
    struct ns_sctp_ep *ep = ns_sctp_ep_new(rt->sctp, s->port, &la, s->bind_addr ? 1 : 0, &err);
    if (!ep)
        return err ? err : -ENOMEM;
    ns_sctp_ep_set_user(ep, s);
    pthread_mutex_lock(&s->slock);
    s->ep = ep;
    s->port = ns_sctp_ep_port(ep);
    s->bound = true;
    pthread_mutex_unlock(&s->slock);
    return 0;
}

/* The engine takes an association's tunables from the instance when it
 * creates it; the socket's options are put there for the duration of the
 * call (the stack thread is the only one touching the engine). */
struct ns_sock_assoc *ns_sock_start_assoc(struct ns_rt *rt, struct ns_sock *s,
                                          const struct ns_sctp_addr *peer, uint16_t port, int *err)
{
    int e = ns_sock_ensure_ep(rt, s);
    if (e) {
        *err = e;
        return NULL;
    }
    struct ns_sctp_params saved = rt->sctp->p;
    pthread_mutex_lock(&s->slock);
    rt->sctp->p.rcvbuf_bytes = s->rcvbuf;
    rt->sctp->p.pd_point_bytes = s->pd_point;
    rt->sctp->p.nodelay = s->nodelay;
    if (s->initmsg.sinit_num_ostreams)
        rt->sctp->p.out_streams = s->initmsg.sinit_num_ostreams;
    if (s->initmsg.sinit_max_instreams)
        rt->sctp->p.max_in_streams = s->initmsg.sinit_max_instreams;
    if (s->initmsg.sinit_max_attempts)
        rt->sctp->p.max_init_retransmits = s->initmsg.sinit_max_attempts;
    if (s->rto.srto_initial)
        rt->sctp->p.rto_initial_ms = s->rto.srto_initial;
    if (s->rto.srto_min)
        rt->sctp->p.rto_min_ms = s->rto.srto_min;
    if (s->rto.srto_max)
        rt->sctp->p.rto_max_ms = s->rto.srto_max;
    pthread_mutex_unlock(&s->slock);
    e = 0;
    /* Over a stack, its connect sets the path MTU from the route first. */
    struct ns_sctp_assoc *a =
        rt->stack ? ns_stack_sctp_connect(rt->stack, s->ep, peer->addr, port, ns_rt_now(), &e)
                  : ns_sctp_connect(s->ep, peer, 1, port, ns_rt_now(), &e);
    rt->sctp->p = saved;
    if (!a) {
        *err = e ? e : -ENOMEM;
        return NULL;
    }
    struct ns_sock_assoc *w = wrap(s, a);
    if (!w) {
        ns_sctp_abort(a, NULL, 0, ns_rt_now());
        ns_sctp_assoc_release(a, ns_rt_now());
        *err = -ENOMEM;
        return NULL;
    }
    w->peer = *peer;
    w->peer_port = port;
    return w;
}

struct ns_sock_assoc *ns_sock_passive_up(struct ns_rt *rt, const struct ns_sctp_event *ev)
{
    struct ns_sock *ls = ns_sctp_ep_user(ns_sctp_assoc_ep(ev->assoc));
    struct ns_sock *owner = NULL;
    if (ls) {
        pthread_mutex_lock(&ls->slock);
        bool ok = !ls->closed && ls->state == NS_SS_LISTEN &&
                  (ls->style == NS_SOCK_SEQPACKET || ls->n_accept < ls->backlog_max);
        pthread_mutex_unlock(&ls->slock);
        if (ok)
            owner = ls->style == NS_SOCK_SEQPACKET ? ls : ns_sock_alloc(rt, NS_SOCK_STREAM);
    }
    struct ns_sock_assoc *w = owner ? wrap(owner, ev->assoc) : NULL;
    if (!w) {
        if (owner && owner != ls)
            sock_put(owner);
        ns_sctp_abort(ev->assoc, NULL, 0, ns_rt_now());
        ns_sctp_assoc_release(ev->assoc, ns_rt_now());
        return NULL;
    }
    struct ns_sctp_assoc_info info;
    if (ns_sctp_assoc_info(ev->assoc, &info) == 0) {
        w->peer = info.paths[info.primary].addr;
        w->peer_port = info.peer_port;
    }
    if (owner != ls) {
        /* A new one-to-one socket waiting for ns_accept (the queue holds
         * the reference ns_sock_alloc returned). */
        pthread_mutex_lock(&owner->slock);
        owner->state = NS_SS_CONNECTED;
        owner->port = ls->port;
        owner->bound = true;
        owner->ev = ls->ev;
        owner->rcvbuf = ls->rcvbuf;
        owner->sndbuf = ls->sndbuf;
        pthread_mutex_unlock(&owner->slock);
        pthread_mutex_lock(&ls->slock);
        if (ls->acceptq_tail)
            ls->acceptq_tail->accept_next = owner;
        else
            ls->acceptq = owner;
        ls->acceptq_tail = owner;
        ls->n_accept++;
        set_fd_locked(ls, true);
        wake_locked(ls);
        pthread_mutex_unlock(&ls->slock);
    }
    return w;
}

/* ---- Stack thread: close --------------------------------------------------- */

void ns_sock_close_assocs(struct ns_rt *rt, struct ns_sock *s, uint64_t now)
{
    /* Engine calls deliver events at once, and an event may free a wrapper
     * (ns_sock_maybe_release): restart from the head after each one. */
    for (;;) {
        struct ns_sock_assoc *w = s->assocs;
        while (w && w->close_done)
            w = w->next;
        if (!w)
            break;
        w->close_done = true;
        /* Whatever is still in the engine is unread data of a closed
         * socket: take it to free it (ns_sock_deliver() frees on a closed socket). */
        ns_sock_deliver(rt, w, now);
        if (s->linger_abort && !w->dead) {
            ns_sctp_abort(w->a, NULL, 0, now); /* COMM_LOST releases it */
            continue;
        }
        ns_sock_maybe_release(rt, w, now);
    }
    if (s->ep) {
        ns_sctp_ep_set_user(s->ep, NULL);
        ns_sctp_ep_close(s->ep);
        s->ep = NULL;
    }
}
