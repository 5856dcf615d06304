/* SCTP sockets over the stack runtime (RFC 6458 sections 3-9 for the API
 * shapes; RFC 9260 for the association semantics behind them): what the
 * files of the socket layer share. include/nstack/socket.h is the API and
 * sock.h the structures (with runtime.c and the tests); this header is for
 * src/socket/sock_*.c only. One job per file:
 *
 *   sock_table.c    the descriptor table: allocation, the last reference,
 *                   the runtime's teardown
 *   sock_api.c      socket, bind, listen, accept, connect, close, shutdown,
 *                   abort, non-blocking mode, readiness
 *   sock_send.c     the send path: ns_sctp_sendv, ns_sendmsg, and the send
 *                   queue handed to the engine on the stack thread
 *                   (ns_sock_tx_run)
 *   sock_recv.c     the receive path: ns_sctp_recvv, ns_recvmsg
 *   sock_opt.c      ns_setsockopt, ns_getsockopt
 *   sock_deliver.c  stack thread: engine events, delivery to the receive
 *                   queues, notifications, consumed messages given back
 *   sock_assoc.c    stack thread: the socket's endpoint and associations
 *                   (active and passive open, close)
 *   runtime.c       the stack thread itself
 *
 * Below the model: the functions one file calls in another, then the
 * helpers several files use, static inline because the send and receive
 * paths run them for every message (the two-level lock among them).
 *
 * Locking model
 * -------------
 * Threads: one stack thread per runtime (runtime.c) is the only thread that
 * calls into the SCTP engine. Application threads call the socket API.
 * Work that needs the engine (connect, listen, close, shutdown, abort,
 * handing queued messages to ns_sctp_send, freeing consumed messages with
 * ns_sctp_msg_free) travels to the stack thread through the runtime's
 * mutex-protected request queue: that queue is not on the receive path.
 *
 * Each socket has a two-level lock, as Linux's sock lock:
 *  - slock, a short mutex, and
 *  - `owned`, a flag with waiters (slock + the condvar wq).
 * lock_sock(): take slock, wait while owned, set owned, drop slock.
 * release_sock(): take slock, splice the backlog onto the receive queue,
 * collect the consumed messages, clear owned, wake waiters, drop slock;
 * then hand the consumed messages to the stack thread for freeing.
 *
 * The stack thread delivering to a socket takes slock. If a user owns the
 * socket it appends the delivered list to the socket's backlog and returns
 * without waiting; else it splices the whole list onto the receive queue in
 * O(1) and wakes a reader. The backlog is bounded in bytes by rcvbuf +
 * sndbuf: beyond it the stack thread leaves the messages in the engine,
 * where they keep counting against the receive window (so the peer's
 * window closes) and release_sock asks the stack thread to pull them later.
 * Delivered data is never dropped.
 *
 * The receive queue and the partial-read lobby (rd_off) have no lock of
 * their own: they are touched only by the thread that owns the socket, or
 * by the stack thread holding slock while nobody owns it. That is the 2016
 * Linux change (one lock, not two per data chunk). The ablation knob
 * (ns_rt_config.rcvq_lock) puts back a per-queue mutex (qlock) taken for
 * every message enqueued and dequeued, so a benchmark can compare.
 *
 * Lock order: tlock (descriptor table) -> slock -> qlock; rt->mu (requests)
 * and sndlock are leaves: never take another lock while holding them, and
 * never hold slock and sndlock together. No lock is held while waking
 * another socket, and the stack thread never waits for a user thread.
 *
 * Lifetime: sockets are reference counted (the descriptor table, each
 * association wrapper, each call in progress); ns_close removes the
 * descriptor, so later calls get EBADF, and the struct goes when the last
 * reference does.
 */
#ifndef NS_SOCKET_SOCK_INTERNAL_H
#define NS_SOCKET_SOCK_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "socket/sock.h"

/* ---- Shared between the files --------------------------------------------
 * Hidden: not exported from libnstack.so, and called directly rather than
 * through the PLT, as when they were static functions of one file. */
#pragma GCC visibility push(hidden)

/* sock_table.c */
void ns_sock_destroy(struct ns_sock *s); /* the last reference went */
struct ns_sock *ns_sock_alloc(struct ns_rt *rt, int style);
int ns_sock_install(struct ns_rt *rt, struct ns_sock *s);

/* sock_deliver.c, stack thread */
void ns_sock_deliver(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now);
void ns_sock_pull_fn(struct ns_rt *rt, void *arg); /* posted by release_sock */
void ns_sock_notify(struct ns_rt *rt, struct ns_sock *s, const void *data, uint32_t len);
void ns_sock_maybe_release(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now);

/* sock_assoc.c, stack thread */
int ns_sock_ensure_ep(struct ns_rt *rt, struct ns_sock *s);
struct ns_sock_assoc *ns_sock_start_assoc(struct ns_rt *rt, struct ns_sock *s,
                                          const struct ns_sctp_addr *peer, uint16_t port, int *err);
struct ns_sock_assoc *ns_sock_passive_up(struct ns_rt *rt, const struct ns_sctp_event *ev);
void ns_sock_close_assocs(struct ns_rt *rt, struct ns_sock *s, uint64_t now);

/* sock_send.c, stack thread */
void ns_sock_tx_run(struct ns_rt *rt, struct ns_sock *s);

#pragma GCC visibility pop

/* ---- Messages waiting for the engine -------------------------------------- */

/* Each lives in a packet buffer (core/pkt.h) of its own, header first, so a
 * large one goes to the engine by reference (ns_sctp_send_buf): its bytes
 * are copied once, from the caller, as Linux's sctp_sendmsg does. */
static inline struct ns_buf *tx_buf(struct ns_sock_tx *t)
{
    return (struct ns_buf *)(void *)((uint8_t *)t - offsetof(struct ns_buf, data));
}

static inline struct ns_sock_tx *tx_alloc(size_t len)
{
    struct ns_buf *b = ns_buf_alloc((uint32_t)(sizeof(struct ns_sock_tx) + len));
    return b ? (struct ns_sock_tx *)(void *)b->data : NULL;
}

static inline void tx_free(struct ns_sock_tx *t)
{
    ns_buf_put(tx_buf(t));
}

/* ---- References ---------------------------------------------------------- */

static inline void sock_hold(struct ns_sock *s)
{
    atomic_fetch_add(&s->refs, 1);
}

static inline void sock_put(struct ns_sock *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        ns_sock_destroy(s);
}

static inline struct ns_sock *sock_get(struct ns_rt *rt, int sd)
{
    if (!rt || sd < 0) {
        errno = EBADF;
        return NULL;
    }
    struct ns_sock *s = NULL;
    pthread_rwlock_rdlock(&rt->tlock);
    if (sd < rt->tab_n && (s = rt->tab[sd]))
        sock_hold(s);
    pthread_rwlock_unlock(&rt->tlock);
    if (!s)
        errno = EBADF;
    return s;
}

static inline int fail(struct ns_sock *s, int err)
{
    if (s)
        sock_put(s);
    errno = err;
    return -1;
}

/* ---- Readiness ------------------------------------------------------------ */

/* Under slock, by the owner or by anyone while unowned (rcvq stable). */
static inline bool readable_locked(const struct ns_sock *s)
{
    /* With association events on, end of file waits for SHUTDOWN_COMP. */
    return s->rcvq.head || s->backlog.head || s->err ||
           (s->peer_eof && !s->ev.sctp_association_event) || s->closed || s->rd_shut ||
           s->acceptq || s->state == NS_SS_CLOSED;
}

static inline void set_fd_locked(struct ns_sock *s, bool on)
{
    uint64_t v = 1;
    if (on && !s->fd_set) {
        ssize_t r = write(s->efd, &v, sizeof(v));
        (void)r;
        s->fd_set = true;
    } else if (!on && s->fd_set) {
        ssize_t r = read(s->efd, &v, sizeof(v));
        (void)r;
        s->fd_set = false;
    }
}

/* Stack thread or a non-owner: the receive queue may be in an owner's
 * hands, and the owner recomputes on release_sock. */
static inline void refresh_fd_locked(struct ns_sock *s)
{
    if (!s->owned)
        set_fd_locked(s, readable_locked(s));
}

static inline void wake_locked(struct ns_sock *s)
{
    s->gen++;
    pthread_cond_broadcast(&s->wq);
}

/* ---- The two-level lock -------------------------------------------------- */

static inline void lock_sock(struct ns_sock *s)
{
    pthread_mutex_lock(&s->slock);
    while (s->owned)
        pthread_cond_wait(&s->wq, &s->slock);
    s->owned = true;
    pthread_mutex_unlock(&s->slock);
}

static inline void rcvq_push(struct ns_sock *s, struct ns_sctp_rmsgq *q)
{
    if (!atomic_load_explicit(&s->rt->rcvq_lock, memory_order_relaxed)) {
        ns_sctp_rmsgq_splice(&s->rcvq, q);
        return;
    }
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(q))) {
        struct ns_sctp_rmsgq one = {m, m, 1, m->len};
        pthread_mutex_lock(&s->qlock);
        ns_sctp_rmsgq_splice(&s->rcvq, &one);
        pthread_mutex_unlock(&s->qlock);
    }
}

/* Under slock with ownership held: process the backlog and give ownership
 * up. Returns whether a pull must be posted; consumed messages go to out. */
static inline bool unown_locked(struct ns_sock *s, struct ns_sctp_rmsgq *out)
{
    rcvq_push(s, &s->backlog);
    ns_sctp_rmsgq_splice(out, &s->done);
    s->owned = false;
    bool pull = false;
    if (s->npending && !s->pull_posted) {
        s->pull_posted = true;
        pull = true;
    }
    set_fd_locked(s, readable_locked(s));
    pthread_cond_broadcast(&s->wq);
    return pull;
}

static inline void after_unown(struct ns_sock *s, struct ns_sctp_rmsgq *out, bool pull)
{
    ns_rt_give_back(s->rt, out);
    if (pull) {
        sock_hold(s);
        ns_rt_post(s->rt, ns_sock_pull_fn, s);
    }
}

static inline void release_sock(struct ns_sock *s)
{
    struct ns_sctp_rmsgq out;
    ns_sctp_rmsgq_init(&out);
    pthread_mutex_lock(&s->slock);
    bool pull = unown_locked(s, &out);
    pthread_mutex_unlock(&s->slock);
    after_unown(s, &out, pull);
}

/* Owned, and the receive queue is empty: give ownership up until the stack
 * thread delivers or the state changes, then own the socket again. */
static inline void wait_data(struct ns_sock *s)
{
    struct ns_sctp_rmsgq out;
    ns_sctp_rmsgq_init(&out);
    pthread_mutex_lock(&s->slock);
    if (s->backlog.head) {
        rcvq_push(s, &s->backlog);
        pthread_mutex_unlock(&s->slock);
        return;
    }
    uint64_t gen = s->gen;
    bool pull = unown_locked(s, &out);
    pthread_mutex_unlock(&s->slock);
    after_unown(s, &out, pull);

    pthread_mutex_lock(&s->slock);
    while (s->gen == gen)
        pthread_cond_wait(&s->wq, &s->slock);
    while (s->owned)
        pthread_cond_wait(&s->wq, &s->slock);
    s->owned = true;
    pthread_mutex_unlock(&s->slock);
}

/* ---- Association lookup (the send path, abort, SCTP_STATUS) -------------- */

static inline struct ns_sock_assoc *find_assoc_id(struct ns_sock *s, uint32_t id)
{
    for (struct ns_sock_assoc *w = s->assocs; w; w = w->next) {
        if (s->style == NS_SOCK_STREAM || w->id == id)
            return w;
    }
    return NULL;
}

/* ---- Addresses and buffers of the calls ---------------------------------- */

static inline int parse_sin(const struct sockaddr *addr, socklen_t len, uint32_t *ip,
                            uint16_t *port)
{
    if (!addr)
        return -EFAULT;
    if (len < (socklen_t)sizeof(struct sockaddr_in))
        return -EINVAL;
    if (addr->sa_family != AF_INET)
        return -EAFNOSUPPORT;
    struct sockaddr_in sin;
    memcpy(&sin, addr, sizeof(sin));
    *ip = ntohl(sin.sin_addr.s_addr);
    *port = ntohs(sin.sin_port);
    return 0;
}

static inline void fill_sin(struct sockaddr *addr, socklen_t *len, uint32_t ip, uint16_t port)
{
    if (!addr || !len)
        return;
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(ip);
    sin.sin_port = htons(port);
    socklen_t n = *len < (socklen_t)sizeof(sin) ? *len : (socklen_t)sizeof(sin);
    memcpy(addr, &sin, n);
    *len = sizeof(sin);
}

static inline ssize_t iov_total(const struct iovec *iov, int iovcnt)
{
    if (iovcnt < 0 || iovcnt > 1024 || (iovcnt > 0 && !iov))
        return -EINVAL;
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len && !iov[i].iov_base)
            return -EFAULT;
        n += iov[i].iov_len;
        if (n > UINT32_MAX)
            return -EMSGSIZE;
    }
    return (ssize_t)n;
}

#endif
