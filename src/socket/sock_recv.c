/* The receive path. ns_sctp_recvv (ns_recvmsg is over it) owns the socket
 * (lock_sock), takes one message, or the next piece of one, from the receive
 * queue, waits for a delivery by giving the ownership up (wait_data), and
 * releases the socket, which hands consumed messages back to the stack
 * thread. Also the test hook that holds a socket as a stuck reader would.
 * RFC 6458 9.13 (sctp_recvv), 5.3.5 (SCTP_RCVINFO), 3.1.4 and 4.1.8 (recvmsg:
 * MSG_EOR, MSG_NOTIFICATION, MSG_PEEK), 3.3 (non-blocking mode).
 * Locking: the model at the top of sock_internal.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "socket/sock_internal.h"

/* ---- Receive -------------------------------------------------------------- */

static uint32_t copy_out(const struct ns_sctp_rmsg *m, uint32_t off, const struct iovec *iov,
                         int iovcnt)
{
    uint32_t done = 0;
    for (int i = 0; i < iovcnt && off < m->len; i++) {
        uint32_t want = iov[i].iov_len > UINT32_MAX ? UINT32_MAX : (uint32_t)iov[i].iov_len;
        if (!want)
            continue;
        uint32_t n;
        if (m->flags & NS_SOCK_RMSG_NOTIF) {
            const struct ns_sock_notif *nt = (const struct ns_sock_notif *)m;
            n = m->len - off < want ? m->len - off : want;
            memcpy(iov[i].iov_base, nt->data + off, n);
        } else {
            n = ns_sctp_rmsg_copy(m, off, iov[i].iov_base, want);
        }
        done += n;
        off += n;
    }
    return done;
}

ssize_t ns_sctp_recvv(struct ns_rt *rt, int sd, const struct iovec *iov, int iovcnt,
                      struct sockaddr *from, socklen_t *fromlen, void *info, socklen_t *infolen,
                      unsigned *infotype, int *msg_flags, int flags)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    ssize_t total = iov_total(iov, iovcnt);
    if (total < 0)
        return fail(s, (int)-total);
    if (flags & ~(NS_MSG_PEEK | NS_MSG_DONTWAIT))
        return fail(s, EOPNOTSUPP);
    if (s->style == NS_SOCK_STREAM) {
        pthread_mutex_lock(&s->slock);
        bool listening = s->state == NS_SS_LISTEN;
        pthread_mutex_unlock(&s->slock);
        if (listening)
            return fail(s, ENOTCONN);
    }
    bool ql = atomic_load_explicit(&rt->rcvq_lock, memory_order_relaxed);
    lock_sock(s);
    struct ns_sctp_rmsg *m;
    int err = 0;
    bool eof = false;
    for (;;) {
        if (ql)
            pthread_mutex_lock(&s->qlock);
        m = s->rcvq.head;
        if (ql)
            pthread_mutex_unlock(&s->qlock);
        pthread_mutex_lock(&s->slock);
        if (s->closed)
            err = EBADF;
        else if (m)
            ;
        else if (s->rd_shut)
            eof = true;
        else if (s->err) {
            err = s->err;
            s->err = 0;
            if (err == ECONNRESET || err == ECONNREFUSED || err == ETIMEDOUT)
                s->peer_eof = true; /* reported once; then end of file */
        } else if (s->style == NS_SOCK_STREAM &&
                   ((s->peer_eof && !s->ev.sctp_association_event) || s->state == NS_SS_CLOSED) &&
                   !s->npending && !s->backlog.head)
            eof = true;
        else if (s->style == NS_SOCK_STREAM && s->state == NS_SS_IDLE)
            err = ENOTCONN;
        else if (s->nonblock || (flags & NS_MSG_DONTWAIT))
            err = s->backlog.head ? 0 : EAGAIN;
        bool nb_backlog = !err && !eof && !m && s->backlog.head;
        if (nb_backlog)
            rcvq_push(s, &s->backlog);
        pthread_mutex_unlock(&s->slock);
        if (m || err || eof)
            break;
        if (nb_backlog)
            continue;
        wait_data(s);
    }
    if (err || eof) {
        release_sock(s);
        if (eof) {
            if (msg_flags)
                *msg_flags = 0;
            sock_put(s);
            return 0;
        }
        return fail(s, err);
    }
    uint32_t off = s->rd_off;
    uint32_t n = copy_out(m, off, iov, iovcnt);
    bool end = off + n >= m->len;
    int mf = 0;
    if (end && (m->flags & NS_SCTP_RMSG_EOR))
        mf |= NS_MSG_EOR;
    if (m->flags & NS_SOCK_RMSG_NOTIF)
        mf |= NS_MSG_NOTIFICATION;
    if (info && infolen && infotype) {
        if (*infolen >= (socklen_t)sizeof(struct ns_sctp_rcvinfo) &&
            !(m->flags & NS_SOCK_RMSG_NOTIF)) {
            struct ns_sctp_rcvinfo ri = {
                .rcv_sid = m->sid,
                .rcv_ssn = m->ssn,
                .rcv_flags = (m->flags & NS_SCTP_RMSG_UNORDERED) ? NS_SCTP_UNORDERED : 0,
                .rcv_ppid = m->ppid,
                .rcv_tsn = m->tsn,
                .rcv_assoc_id = m->assoc_id,
            };
            memcpy(info, &ri, sizeof(ri));
            *infolen = sizeof(ri);
            *infotype = NS_SCTP_RECVV_RCVINFO;
        } else {
            *infolen = 0;
            *infotype = NS_SCTP_RECVV_NOINFO;
        }
    }
    uint32_t assoc_id = m->assoc_id;
    if (!(flags & NS_MSG_PEEK)) {
        if (end) {
            if (ql)
                pthread_mutex_lock(&s->qlock);
            ns_sctp_rmsgq_pop(&s->rcvq);
            if (ql)
                pthread_mutex_unlock(&s->qlock);
            s->rd_off = 0;
            if (m->flags & NS_SOCK_RMSG_NOTIF) {
                free(m);
            } else {
                /* done is read by release_sock under slock */
                pthread_mutex_lock(&s->slock);
                struct ns_sctp_rmsgq one = {m, m, 1, m->len};
                ns_sctp_rmsgq_splice(&s->done, &one);
                pthread_mutex_unlock(&s->slock);
            }
        } else {
            s->rd_off = off + n;
        }
    }
    if (from && fromlen) {
        pthread_mutex_lock(&s->slock);
        struct ns_sock_assoc *w = s->assocs;
        while (w && s->style == NS_SOCK_SEQPACKET && w->id != assoc_id)
            w = w->next;
        if (w)
            fill_sin(from, fromlen, w->peer.addr, w->peer_port);
        else
            *fromlen = 0;
        pthread_mutex_unlock(&s->slock);
    }
    release_sock(s);
    if (msg_flags)
        *msg_flags = mf;
    sock_put(s);
    return n;
}

ssize_t ns_recvmsg(struct ns_rt *rt, int sd, struct msghdr *msg, int flags)
{
    if (!msg) {
        errno = EFAULT;
        return -1;
    }
    struct ns_sctp_rcvinfo ri;
    socklen_t il = sizeof(ri);
    unsigned it = 0;
    int mf = 0;
    socklen_t fl = msg->msg_name ? msg->msg_namelen : 0;
    ssize_t r = ns_sctp_recvv(rt, sd, msg->msg_iov, (int)msg->msg_iovlen, msg->msg_name,
                              msg->msg_name ? &fl : NULL, &ri, &il, &it, &mf, flags);
    if (r < 0)
        return r;
    msg->msg_flags = mf;
    if (msg->msg_name)
        msg->msg_namelen = fl;
    size_t cl = 0;
    if (msg->msg_control && msg->msg_controllen >= CMSG_SPACE(sizeof(ri)) &&
        it == NS_SCTP_RECVV_RCVINFO) {
        struct cmsghdr *c = CMSG_FIRSTHDR(msg);
        c->cmsg_level = NS_IPPROTO_SCTP;
        c->cmsg_type = NS_SCTP_RCVINFO;
        c->cmsg_len = CMSG_LEN(sizeof(ri));
        memcpy(CMSG_DATA(c), &ri, sizeof(ri));
        cl = CMSG_SPACE(sizeof(ri));
    }
    msg->msg_controllen = cl;
    return r;
}

int ns_sock_debug_own(struct ns_rt *rt, int sd, bool own)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    if (own)
        lock_sock(s);
    else
        release_sock(s);
    sock_put(s);
    return 0;
}
