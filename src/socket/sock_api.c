/* The calls on a socket other than send, receive and options: socket,
 * bind, listen, accept, connect, close, shutdown, abort, non-blocking mode
 * and readiness (ns_socket_fd, ns_poll). Work that needs the engine is a
 * request run on the stack thread (ns_rt_call). RFC 6458 3.1 (one-to-many:
 * socket, bind, listen, close, connect), 4.1 (one-to-one: socket, bind,
 * listen, accept, connect, close, shutdown), 3.3 (non-blocking mode).
 * Locking: the model at the top of sock_internal.h. */
#include <errno.h>
#include <string.h>

#include "socket/sock_internal.h"

/* ---- Close ---------------------------------------------------------------- */

static void close_fn(struct ns_rt *rt, void *arg);

static void close_sock_common(struct ns_sock *s)
{
    /* Owned: nobody reads the queues; give every message back. */
    lock_sock(s);
    pthread_mutex_lock(&s->slock);
    s->closed = true;
    rcvq_push(s, &s->backlog);
    ns_sctp_rmsgq_splice(&s->done, &s->rcvq);
    s->rd_off = 0;
    struct ns_sock *acc = s->acceptq;
    s->acceptq = s->acceptq_tail = NULL;
    s->n_accept = 0;
    pthread_mutex_unlock(&s->slock);
    release_sock(s);
    pthread_mutex_lock(&s->slock);
    wake_locked(s);
    pthread_mutex_unlock(&s->slock);
    pthread_mutex_lock(&s->sndlock);
    s->tx_dead = true;
    s->tx_err = EBADF;
    pthread_cond_broadcast(&s->sndwq);
    pthread_mutex_unlock(&s->sndlock);
    sock_hold(s);
    ns_rt_call(s->rt, close_fn, s);
    while (acc) {
        struct ns_sock *c = acc;
        acc = c->accept_next;
        c->accept_next = NULL;
        close_sock_common(c);
        sock_put(c); /* the accept queue's reference */
    }
}

static void close_fn(struct ns_rt *rt, void *arg)
{
    struct ns_sock *s = arg;
    pthread_mutex_lock(&s->sndlock);
    bool queued = s->txq != NULL;
    pthread_mutex_unlock(&s->sndlock);
    if (queued && !s->linger_abort && !s->tx_blocked) {
        s->close_pending = true;
        ns_sock_tx_run(rt, s); /* closes the associations when the queue empties */
    } else if (queued && !s->linger_abort) {
        s->close_pending = true; /* WRITABLE resumes ns_sock_tx_run */
    } else {
        ns_sock_close_assocs(rt, s, ns_rt_now());
    }
    sock_put(s);
}

/* ---- API ------------------------------------------------------------------ */

int ns_socket(struct ns_rt *rt, int style)
{
    if (!rt) {
        errno = EINVAL;
        return -1;
    }
    if (style != NS_SOCK_STREAM && style != NS_SOCK_SEQPACKET) {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    struct ns_sock *s = ns_sock_alloc(rt, style);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    int sd = ns_sock_install(rt, s);
    if (sd < 0) {
        sock_put(s);
        errno = ENOMEM;
        return -1;
    }
    return sd;
}

struct op {
    struct ns_sock *s;
    int ret;
    uint32_t ip;
    uint16_t port;
    int arg;
};

static void bind_fn(struct ns_rt *rt, void *arg)
{
    struct op *o = arg;
    o->s->bind_addr = o->ip;
    o->s->port = o->port;
    o->ret = ns_sock_ensure_ep(rt, o->s);
    if (o->ret) {
        o->s->bind_addr = 0;
        o->s->port = 0;
    }
}

int ns_bind(struct ns_rt *rt, int sd, const struct sockaddr *addr, socklen_t len)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    struct op o = {.s = s};
    int e = parse_sin(addr, len, &o.ip, &o.port);
    if (e)
        return fail(s, -e);
    pthread_mutex_lock(&s->slock);
    bool bound = s->bound || s->state != NS_SS_IDLE;
    pthread_mutex_unlock(&s->slock);
    if (bound)
        return fail(s, EINVAL);
    ns_rt_call(rt, bind_fn, &o);
    if (o.ret)
        return fail(s, -o.ret);
    sock_put(s);
    return 0;
}

static void listen_fn(struct ns_rt *rt, void *arg)
{
    struct op *o = arg;
    o->ret = ns_sock_ensure_ep(rt, o->s);
    if (o->ret == 0)
        ns_sctp_ep_listen(o->s->ep, o->arg > 0 || o->s->style == NS_SOCK_STREAM);
}

int ns_listen(struct ns_rt *rt, int sd, int backlog)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    pthread_mutex_lock(&s->slock);
    bool bad = s->state != NS_SS_IDLE && s->state != NS_SS_LISTEN;
    pthread_mutex_unlock(&s->slock);
    if (bad)
        return fail(s, EINVAL);
    if (backlog < 0)
        backlog = 0;
    if (s->style == NS_SOCK_STREAM && backlog == 0)
        backlog = 1;
    if (backlog > 4096)
        backlog = 4096;
    struct op o = {.s = s, .arg = backlog};
    ns_rt_call(rt, listen_fn, &o);
    if (o.ret)
        return fail(s, -o.ret);
    pthread_mutex_lock(&s->slock);
    s->backlog_max = backlog;
    s->state = (s->style == NS_SOCK_SEQPACKET && backlog == 0) ? NS_SS_IDLE : NS_SS_LISTEN;
    pthread_mutex_unlock(&s->slock);
    sock_put(s);
    return 0;
}

int ns_accept(struct ns_rt *rt, int sd, struct sockaddr *addr, socklen_t *len)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    if (s->style != NS_SOCK_STREAM)
        return fail(s, EOPNOTSUPP);
    pthread_mutex_lock(&s->slock);
    for (;;) {
        if (s->closed) {
            pthread_mutex_unlock(&s->slock);
            return fail(s, EBADF);
        }
        if (s->state != NS_SS_LISTEN) {
            pthread_mutex_unlock(&s->slock);
            return fail(s, EINVAL);
        }
        if (s->acceptq)
            break;
        if (s->nonblock) {
            pthread_mutex_unlock(&s->slock);
            return fail(s, EAGAIN);
        }
        pthread_cond_wait(&s->wq, &s->slock);
    }
    struct ns_sock *c = s->acceptq;
    s->acceptq = c->accept_next;
    if (!s->acceptq)
        s->acceptq_tail = NULL;
    c->accept_next = NULL;
    s->n_accept--;
    refresh_fd_locked(s);
    pthread_mutex_unlock(&s->slock);
    int nsd = ns_sock_install(rt, c);
    if (nsd < 0) {
        close_sock_common(c);
        sock_put(c);
        return fail(s, ENOMEM);
    }
    pthread_mutex_lock(&c->slock);
    if (c->assocs)
        fill_sin(addr, len, c->assocs->peer.addr, c->assocs->peer_port);
    pthread_mutex_unlock(&c->slock);
    sock_put(s);
    return nsd;
}

static void connect_fn(struct ns_rt *rt, void *arg)
{
    struct op *o = arg;
    struct ns_sctp_addr peer = {NS_SCTP_AF_INET4, 0, o->ip};
    int err = 0;
    struct ns_sock_assoc *w = ns_sock_start_assoc(rt, o->s, &peer, o->port, &err);
    o->ret = w ? 0 : err;
    if (w) {
        o->arg = (int)w->id;
        if (o->s->style == NS_SOCK_STREAM) {
            pthread_mutex_lock(&o->s->slock);
            o->s->state = NS_SS_CONNECTING;
            pthread_mutex_unlock(&o->s->slock);
        }
    }
}

int ns_connect(struct ns_rt *rt, int sd, const struct sockaddr *addr, socklen_t len)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    struct op o = {.s = s};
    int e = parse_sin(addr, len, &o.ip, &o.port);
    if (e)
        return fail(s, -e);
    if (o.ip == 0 || o.port == 0)
        return fail(s, EINVAL);
    pthread_mutex_lock(&s->slock);
    enum ns_sock_state st = s->state;
    bool nb = s->nonblock;
    pthread_mutex_unlock(&s->slock);
    if (st == NS_SS_CONNECTED)
        return fail(s, EISCONN);
    if (st == NS_SS_CONNECTING)
        return fail(s, EALREADY);
    if (s->style == NS_SOCK_STREAM && st != NS_SS_IDLE)
        return fail(s, EINVAL);
    ns_rt_call(rt, connect_fn, &o);
    if (o.ret)
        return fail(s, o.ret == -EISCONN ? EISCONN : -o.ret);
    if (nb)
        return fail(s, EINPROGRESS);
    uint32_t id = (uint32_t)o.arg;
    int err = 0;
    pthread_mutex_lock(&s->slock);
    for (;;) {
        struct ns_sock_assoc *w = s->assocs;
        while (w && w->id != id)
            w = w->next;
        if (s->closed) {
            err = EBADF;
            break;
        }
        if (!w || w->dead) {
            err = s->err ? s->err : ECONNREFUSED;
            s->err = 0;
            break;
        }
        if (w->up)
            break;
        pthread_cond_wait(&s->wq, &s->slock);
    }
    pthread_mutex_unlock(&s->slock);
    if (err)
        return fail(s, err);
    sock_put(s);
    return 0;
}

int ns_close(struct ns_rt *rt, int sd)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    pthread_rwlock_wrlock(&rt->tlock);
    bool mine = rt->tab[sd] == s;
    if (mine) {
        rt->tab[sd] = NULL;
        rt->n_open--;
    }
    pthread_rwlock_unlock(&rt->tlock);
    if (!mine)
        return fail(s, EBADF);
    close_sock_common(s);
    sock_put(s); /* the table's */
    sock_put(s);
    return 0;
}

static void shutdown_fn(struct ns_rt *rt, void *arg)
{
    struct ns_sock *s = arg;
    s->shut_pending = true;
    if (!s->tx_blocked)
        ns_sock_tx_run(rt, s);
}

int ns_shutdown(struct ns_rt *rt, int sd, int how)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
        return fail(s, EINVAL);
    if (s->style != NS_SOCK_STREAM && how != SHUT_RD)
        return fail(s, EOPNOTSUPP);
    pthread_mutex_lock(&s->slock);
    bool conn = s->state == NS_SS_CONNECTED || s->state == NS_SS_CONNECTING;
    if (how != SHUT_WR)
        s->rd_shut = true;
    refresh_fd_locked(s);
    wake_locked(s);
    pthread_mutex_unlock(&s->slock);
    if (how == SHUT_RD)
        goto out;
    if (!conn)
        return fail(s, ENOTCONN);
    pthread_mutex_lock(&s->sndlock);
    bool already = s->tx_dead;
    s->tx_dead = true;
    if (!s->tx_err)
        s->tx_err = EPIPE;
    pthread_cond_broadcast(&s->sndwq);
    pthread_mutex_unlock(&s->sndlock);
    if (!already)
        ns_rt_call(rt, shutdown_fn, s);
out:
    sock_put(s);
    return 0;
}

static void abort_fn(struct ns_rt *rt, void *arg)
{
    struct op *o = arg;
    struct ns_sock_assoc *w = find_assoc_id(o->s, (uint32_t)o->arg);
    if (w && o->s->style == NS_SOCK_STREAM && o->arg && (uint32_t)o->arg != w->id)
        w = NULL;
    if (!w || w->dead) {
        o->ret = -EINVAL;
        return;
    }
    o->ret = ns_sctp_abort(w->a, NULL, 0, ns_rt_now());
}

int ns_abort(struct ns_rt *rt, int sd, uint32_t assoc_id)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    struct op o = {.s = s, .arg = (int)assoc_id};
    ns_rt_call(rt, abort_fn, &o);
    if (o.ret)
        return fail(s, -o.ret);
    sock_put(s);
    return 0;
}

int ns_set_nonblock(struct ns_rt *rt, int sd, bool on)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    pthread_mutex_lock(&s->slock);
    s->nonblock = on;
    pthread_mutex_unlock(&s->slock);
    pthread_mutex_lock(&s->sndlock);
    pthread_cond_broadcast(&s->sndwq);
    pthread_mutex_unlock(&s->sndlock);
    sock_put(s);
    return 0;
}

int ns_socket_fd(struct ns_rt *rt, int sd)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    int fd = s->efd;
    sock_put(s);
    return fd;
}

int ns_poll(struct ns_rt *rt, int sd)
{
    struct ns_sock *s = sock_get(rt, sd);
    if (!s)
        return -1;
    int mask = 0;
    pthread_mutex_lock(&s->slock);
    if (s->fd_set)
        mask |= NS_POLLIN;
    if (s->err)
        mask |= NS_POLLERR;
    if (s->peer_eof || (s->style == NS_SOCK_STREAM && s->state == NS_SS_CLOSED))
        mask |= NS_POLLHUP;
    bool conn = s->style == NS_SOCK_SEQPACKET || s->state == NS_SS_CONNECTED;
    pthread_mutex_unlock(&s->slock);
    pthread_mutex_lock(&s->sndlock);
    if (conn && !s->tx_dead && s->tx_bytes < s->sndbuf)
        mask |= NS_POLLOUT;
    pthread_mutex_unlock(&s->sndlock);
    sock_put(s);
    return mask;
}
