/* The send path. On the application thread ns_sctp_sendv (ns_sendmsg is
 * over it) checks the call against the association, copies the message into
 * a packet buffer of its own and appends it to the socket's send queue under
 * sndlock, blocking only on the socket's own SO_SNDBUF. On the stack thread
 * ns_sock_tx_run hands the queue to the engine (ns_sctp_send for small
 * messages, ns_sctp_send_buf by reference for large ones, then one flush per
 * association), keeps the rest at EAGAIN until NS_SCTP_EV_WRITABLE, and then
 * runs the shutdown or close that waited for the queue to drain. RFC 6458
 * 9.12 (sctp_sendv), 5.3.4 (SCTP_SNDINFO: SCTP_UNORDERED, SCTP_EOF,
 * SCTP_ABORT), 3.1.4 and 4.1.8 (sendmsg), 3.2 (implicit association setup),
 * 3.3 (non-blocking mode), 8.1.7 (SO_SNDBUF), 6.1.11 (SCTP_SEND_FAILED_EVENT
 * for a message never sent).
 * Locking: the model at the top of sock_internal.h. The send queue is under
 * sndlock, which is never held with slock. */
#include <errno.h>
#include <string.h>

#include "socket/sock_internal.h"

/* ---- Stack thread: sending ------------------------------------------------ */

static struct ns_sock_assoc *find_assoc_peer(struct ns_sock *s, const struct ns_sctp_addr *peer,
                                             uint16_t port)
{
    for (struct ns_sock_assoc *w = s->assocs; w; w = w->next) {
        if (!w->dead && w->peer.addr == peer->addr && w->peer_port == port)
            return w;
    }
    return NULL;
}

static void send_failed(struct ns_rt *rt, struct ns_sock *s, const struct ns_sock_tx *t,
                        uint32_t id, int err)
{
    pthread_mutex_lock(&s->slock);
    bool sub = s->ev.sctp_send_failure_event;
    pthread_mutex_unlock(&s->slock);
    if (!sub)
        return;
    struct ns_sctp_send_failed_event e = {
        .ssf_type = NS_SCTP_SEND_FAILED_EVENT,
        .ssf_flags = NS_SCTP_DATA_UNSENT,
        .ssf_length = sizeof(e),
        .ssf_error = (uint32_t)err,
        .ssfe_info = {t->sid, t->flags, t->ppid, t->context, id},
        .ssf_assoc_id = id,
    };
    ns_sock_notify(rt, s, &e, sizeof(e));
}

static void do_shutdown_assocs(struct ns_rt *rt, struct ns_sock *s, uint64_t now)
{
    for (struct ns_sock_assoc *w = s->assocs, *next; w; w = next) {
        next = w->next;
        if (!w->dead)
            ns_sctp_shutdown(w->a, now);
    }
}

void ns_sock_tx_run(struct ns_rt *rt, struct ns_sock *s)
{
    uint64_t now = ns_rt_now();
    pthread_mutex_lock(&s->sndlock);
    struct ns_sock_tx *t = s->txq;
    /* What is left when the engine's buffer fills is a suffix of this list,
     * so its tail is this tail: putting it back stays O(1) however many
     * small messages wait. */
    struct ns_sock_tx *taken_tail = s->txq_tail;
    s->txq = s->txq_tail = NULL;
    s->tx_posted = false;
    pthread_mutex_unlock(&s->sndlock);

    uint32_t sent_bytes = 0;
    while (t) {
        struct ns_sock_tx *next = t->next;
        /* Written by another thread, so not in this CPU's cache: without
         * the prefetch, following the list was most of this loop's time
         * with small messages (perf annotate). */
        if (next) {
            __builtin_prefetch(next);
            __builtin_prefetch((const uint8_t *)next + 64);
        }
        struct ns_sock_assoc *w = NULL;
        int r = 0;
        if (t->peer.addr) {
            w = find_assoc_peer(s, &t->peer, t->peer_port);
            if (!w)
                w = ns_sock_start_assoc(rt, s, &t->peer, t->peer_port, &r);
        } else {
            w = find_assoc_id(s, t->assoc_id);
            if (!w)
                r = -EINVAL;
        }
        if (w && w->dead)
            r = -ECONNRESET;
        else if (w && (t->flags & NS_SCTP_ABORT))
            r = ns_sctp_abort(w->a, t->data, (uint16_t)(t->len > 512 ? 512 : t->len), now);
        else if (w && t->len) {
            uint32_t fl =
                NS_SCTP_SEND_MORE | ((t->flags & NS_SCTP_UNORDERED) ? NS_SCTP_SEND_UNORDERED : 0u);
            /* Small ones are cheaper packed into the engine's arena. */
            if (t->len > NS_SCTP_SENDQ_ARENA_MSG_MAX)
                r = ns_sctp_send_buf(w->a, t->sid, t->ppid, fl, tx_buf(t),
                                     (uint32_t)(t->data - tx_buf(t)->data), t->len, t->context,
                                     now);
            else
                r = ns_sctp_send(w->a, t->sid, t->ppid, fl, t->data, t->len, t->context, now);
        }
        if (r == -EAGAIN) {
            rt->stats.send_eagain++;
            s->tx_blocked = true;
            break;
        }
        if (w && r == 0 && t->len)
            w->need_flush = true;
        if (w && r == 0 && (t->flags & NS_SCTP_EOF))
            ns_sctp_shutdown(w->a, now);
        if (r < 0)
            send_failed(rt, s, t, w ? w->id : t->assoc_id, -r);
        sent_bytes += t->len;
        tx_free(t);
        t = next;
    }
    for (struct ns_sock_assoc *w = s->assocs; w; w = w->next) {
        if (w->need_flush) {
            w->need_flush = false;
            ns_sctp_flush(w->a, now);
        }
    }
    pthread_mutex_lock(&s->sndlock);
    if (t) {
        /* Put the rest back in front of what came meanwhile. */
        taken_tail->next = s->txq;
        if (!s->txq)
            s->txq_tail = taken_tail;
        s->txq = t;
    }
    s->tx_bytes -= sent_bytes;
    bool empty = s->txq == NULL;
    if (sent_bytes)
        pthread_cond_broadcast(&s->sndwq);
    pthread_mutex_unlock(&s->sndlock);

    if (empty && s->shut_pending) {
        s->shut_pending = false;
        do_shutdown_assocs(rt, s, now);
    }
    if (empty && s->close_pending) {
        s->close_pending = false;
        ns_sock_close_assocs(rt, s, now);
    }
}

static void tx_fn(struct ns_rt *rt, void *arg)
{
    struct ns_sock *s = arg;
    if (!s->tx_blocked)
        ns_sock_tx_run(rt, s);
    else {
        pthread_mutex_lock(&s->sndlock);
        s->tx_posted = false;
        pthread_mutex_unlock(&s->sndlock);
    }
    sock_put(s);
}

/* ---- Send ----------------------------------------------------------------- */

ssize_t ns_sctp_sendv(struct ns_rt *rt, int sd, const struct iovec *iov, int iovcnt,
                      const struct sockaddr *addrs, int addrcnt, const void *info,
                      socklen_t infolen, unsigned infotype, int flags)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    ssize_t total = iov_total(iov, iovcnt);
    if (total < 0)
        return fail(s, (int)-total);
    struct ns_sctp_sndinfo si = {0};
    if (infotype == NS_SCTP_SENDV_SNDINFO) {
        if (!info || infolen < (socklen_t)sizeof(si))
            return fail(s, EINVAL);
        memcpy(&si, info, sizeof(si));
    } else if (infotype != NS_SCTP_SENDV_NOINFO) {
        return fail(s, EINVAL);
    }
    if (si.snd_flags & ~(NS_SCTP_UNORDERED | NS_SCTP_EOF | NS_SCTP_ABORT))
        return fail(s, EINVAL);
    if (flags & ~(NS_MSG_DONTWAIT | NS_MSG_EOR))
        return fail(s, EOPNOTSUPP);
    uint32_t ip = 0;
    uint16_t port = 0;
    if (addrs || addrcnt) {
        if (s->style == NS_SOCK_STREAM)
            return fail(s, EISCONN);
        if (addrcnt != 1)
            return fail(s, EINVAL);
        int e = parse_sin(addrs, sizeof(struct sockaddr_in), &ip, &port);
        if (e)
            return fail(s, -e);
        if (!ip || !port)
            return fail(s, EINVAL);
    }
    bool ctl = s->style == NS_SOCK_SEQPACKET && (si.snd_flags & (NS_SCTP_EOF | NS_SCTP_ABORT));
    if (total == 0 && !ctl)
        return fail(s, EINVAL);
    if (s->style == NS_SOCK_STREAM && (si.snd_flags & (NS_SCTP_EOF | NS_SCTP_ABORT)))
        return fail(s, EINVAL);
    if ((uint64_t)total > rt->params.max_message_bytes)
        return fail(s, EMSGSIZE);

    /* Synchronous checks against the association's state. */
    pthread_mutex_lock(&s->slock);
    int err = 0;
    uint32_t sndbuf = s->sndbuf;
    bool nb = s->nonblock || (flags & NS_MSG_DONTWAIT);
    if (s->style == NS_SOCK_STREAM) {
        struct ns_sock_assoc *w = s->assocs;
        if (s->err)
            err = s->err;
        else if (s->state == NS_SS_CLOSED)
            err = EPIPE;
        else if (!w || s->state == NS_SS_IDLE || s->state == NS_SS_LISTEN)
            err = ENOTCONN;
        else if (w->up && si.snd_sid >= w->out_streams)
            err = EINVAL;
    } else if (!ip) {
        struct ns_sock_assoc *w = find_assoc_id(s, si.snd_assoc_id);
        if (!w)
            err = si.snd_assoc_id ? EINVAL : ENOTCONN;
        else if (w->dead)
            err = ECONNRESET;
        else if (w->up && si.snd_sid >= w->out_streams && total)
            err = EINVAL;
    }
    pthread_mutex_unlock(&s->slock);
    if (err)
        return fail(s, err);
    if ((uint64_t)total > sndbuf)
        return fail(s, EMSGSIZE);

    struct ns_sock_tx *t = tx_alloc((size_t)total); /* fails when injected too (pkt.h) */
    if (!t)
        return fail(s, ENOMEM);
    *t = (struct ns_sock_tx){.assoc_id = si.snd_assoc_id,
                             .peer = {NS_SCTP_AF_INET4, 0, ip},
                             .peer_port = port,
                             .sid = si.snd_sid,
                             .flags = si.snd_flags,
                             .ppid = si.snd_ppid,
                             .context = si.snd_context,
                             .len = (uint32_t)total};
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len)
            memcpy(t->data + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }

    pthread_mutex_lock(&s->sndlock);
    for (;;) {
        if (s->tx_dead) {
            err = s->tx_err ? s->tx_err : EPIPE;
            break;
        }
        if (s->tx_bytes == 0 || s->tx_bytes + t->len <= sndbuf)
            break;
        if (nb) {
            err = EAGAIN;
            break;
        }
        pthread_cond_wait(&s->sndwq, &s->sndlock);
        /* a flip to non-blocking wakes us: re-read it */
        nb = (flags & NS_MSG_DONTWAIT) != 0;
        pthread_mutex_unlock(&s->sndlock);
        pthread_mutex_lock(&s->slock);
        nb = nb || s->nonblock;
        pthread_mutex_unlock(&s->slock);
        pthread_mutex_lock(&s->sndlock);
    }
    if (err) {
        pthread_mutex_unlock(&s->sndlock);
        tx_free(t);
        return fail(s, err);
    }
    if (s->txq_tail)
        s->txq_tail->next = t;
    else
        s->txq = t;
    s->txq_tail = t;
    s->tx_bytes += t->len;
    bool post = !s->tx_posted;
    s->tx_posted = true;
    pthread_mutex_unlock(&s->sndlock);
    if (post) {
        sock_hold(s);
        ns_rt_post(rt, tx_fn, s);
    }
    sock_put(s);
    return total;
}

ssize_t ns_sendmsg(struct ns_rt *rt, int sd, const struct msghdr *msg, int flags)
{
    if (!msg) {
        errno = EFAULT;
        return -1;
    }
    const struct ns_sctp_sndinfo *si = NULL;
    if (msg->msg_control && msg->msg_controllen) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c;
             c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
            if (c->cmsg_level == NS_IPPROTO_SCTP && c->cmsg_type == NS_SCTP_SNDINFO &&
                c->cmsg_len >= CMSG_LEN(sizeof(*si)))
                si = (const struct ns_sctp_sndinfo *)CMSG_DATA(c);
        }
    }
    struct ns_sctp_sndinfo copy;
    if (si)
        memcpy(&copy, si, sizeof(copy));
    return ns_sctp_sendv(rt, sd, msg->msg_iov, (int)msg->msg_iovlen, msg->msg_name,
                         msg->msg_name ? 1 : 0, si ? &copy : NULL, si ? sizeof(copy) : 0,
                         si ? NS_SCTP_SENDV_SNDINFO : NS_SCTP_SENDV_NOINFO, flags);
}
