/* SCTP sockets over the stack runtime (RFC 6458 sections 3-9 for the API
 * shapes; RFC 9260 for the association semantics behind them).
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
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "socket/sock.h"
#include "stack/stack.h"

/* ---- Messages waiting for the engine -------------------------------------- */

/* Each lives in a packet buffer (core/pkt.h) of its own, header first, so a
 * large one goes to the engine by reference (ns_sctp_send_buf): its bytes
 * are copied once, from the caller, as Linux's sctp_sendmsg does. */
static struct ns_buf *tx_buf(struct ns_sock_tx *t)
{
    return (struct ns_buf *)(void *)((uint8_t *)t - offsetof(struct ns_buf, data));
}

static struct ns_sock_tx *tx_alloc(size_t len)
{
    struct ns_buf *b = ns_buf_alloc((uint32_t)(sizeof(struct ns_sock_tx) + len));
    return b ? (struct ns_sock_tx *)(void *)b->data : NULL;
}

static void tx_free(struct ns_sock_tx *t)
{
    ns_buf_put(tx_buf(t));
}

/* ---- References and the descriptor table --------------------------------- */

static void sock_free_raw(struct ns_sock *s)
{
    /* Engine messages were handed back by close; notifications are ours. */
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&s->rcvq)))
        free(m);
    while ((m = ns_sctp_rmsgq_pop(&s->backlog)))
        free(m);
    while (s->txq) {
        struct ns_sock_tx *t = s->txq;
        s->txq = t->next;
        tx_free(t);
    }
    close(s->efd);
    pthread_mutex_destroy(&s->slock);
    pthread_mutex_destroy(&s->qlock);
    pthread_mutex_destroy(&s->sndlock);
    pthread_cond_destroy(&s->wq);
    pthread_cond_destroy(&s->sndwq);
    free(s);
}

static void sock_destroy(struct ns_sock *s)
{
    struct ns_rt *rt = s->rt;
    pthread_rwlock_wrlock(&rt->tlock);
    if (s->all_prev)
        s->all_prev->all_next = s->all_next;
    else
        rt->all = s->all_next;
    if (s->all_next)
        s->all_next->all_prev = s->all_prev;
    pthread_rwlock_unlock(&rt->tlock);
    sock_free_raw(s);
}

static void sock_hold(struct ns_sock *s)
{
    atomic_fetch_add(&s->refs, 1);
}

static void sock_put(struct ns_sock *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        sock_destroy(s);
}

static struct ns_sock *sock_get(struct ns_rt *rt, int sd)
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

static int fail(struct ns_sock *s, int err)
{
    if (s)
        sock_put(s);
    errno = err;
    return -1;
}

static struct ns_sock *sock_alloc(struct ns_rt *rt, int style)
{
    struct ns_sock *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->efd < 0) {
        free(s);
        return NULL;
    }
    s->rt = rt;
    s->sd = -1;
    s->style = style;
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->slock, NULL);
    pthread_mutex_init(&s->qlock, NULL);
    pthread_mutex_init(&s->sndlock, NULL);
    pthread_cond_init(&s->wq, NULL);
    pthread_cond_init(&s->sndwq, NULL);
    ns_sctp_rmsgq_init(&s->rcvq);
    ns_sctp_rmsgq_init(&s->backlog);
    ns_sctp_rmsgq_init(&s->done);
    s->rcvbuf = rt->params.rcvbuf_bytes;
    s->sndbuf = rt->params.sndbuf_bytes;
    s->pd_point = rt->params.pd_point_bytes;
    s->initmsg.sinit_num_ostreams = (uint16_t)rt->params.out_streams;
    s->initmsg.sinit_max_instreams = (uint16_t)rt->params.max_in_streams;
    s->initmsg.sinit_max_attempts = (uint16_t)rt->params.max_init_retransmits;
    s->rto.srto_initial = rt->params.rto_initial_ms;
    s->rto.srto_max = rt->params.rto_max_ms;
    s->rto.srto_min = rt->params.rto_min_ms;
    s->nodelay = rt->params.nodelay != 0;
    pthread_rwlock_wrlock(&rt->tlock);
    s->all_next = rt->all;
    if (rt->all)
        rt->all->all_prev = s;
    rt->all = s;
    pthread_rwlock_unlock(&rt->tlock);
    return s;
}

/* Give s a descriptor (takes the caller's reference for the table). */
static int sock_install(struct ns_rt *rt, struct ns_sock *s)
{
    pthread_rwlock_wrlock(&rt->tlock);
    int sd = -1;
    for (int i = 0; i < rt->tab_n; i++) {
        if (!rt->tab[i]) {
            sd = i;
            break;
        }
    }
    if (sd < 0) {
        int n = rt->tab_n ? 2 * rt->tab_n : 16;
        struct ns_sock **t = realloc(rt->tab, (size_t)n * sizeof(*t));
        if (!t) {
            pthread_rwlock_unlock(&rt->tlock);
            return -1;
        }
        memset(t + rt->tab_n, 0, (size_t)(n - rt->tab_n) * sizeof(*t));
        sd = rt->tab_n;
        rt->tab = t;
        rt->tab_n = n;
    }
    rt->tab[sd] = s;
    s->sd = sd;
    rt->n_open++;
    pthread_rwlock_unlock(&rt->tlock);
    return sd;
}

/* ---- Readiness ------------------------------------------------------------ */

/* Under slock, by the owner or by anyone while unowned (rcvq stable). */
static bool readable_locked(const struct ns_sock *s)
{
    /* With association events on, end of file waits for SHUTDOWN_COMP. */
    return s->rcvq.head || s->backlog.head || s->err ||
           (s->peer_eof && !s->ev.sctp_association_event) || s->closed || s->rd_shut ||
           s->acceptq || s->state == NS_SS_CLOSED;
}

static void set_fd_locked(struct ns_sock *s, bool on)
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
static void refresh_fd_locked(struct ns_sock *s)
{
    if (!s->owned)
        set_fd_locked(s, readable_locked(s));
}

static void wake_locked(struct ns_sock *s)
{
    s->gen++;
    pthread_cond_broadcast(&s->wq);
}

/* ---- The two-level lock -------------------------------------------------- */

static void lock_sock(struct ns_sock *s)
{
    pthread_mutex_lock(&s->slock);
    while (s->owned)
        pthread_cond_wait(&s->wq, &s->slock);
    s->owned = true;
    pthread_mutex_unlock(&s->slock);
}

static void rcvq_push(struct ns_sock *s, struct ns_sctp_rmsgq *q)
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

static void pull_fn(struct ns_rt *rt, void *arg);

/* Under slock with ownership held: process the backlog and give ownership
 * up. Returns whether a pull must be posted; consumed messages go to out. */
static bool unown_locked(struct ns_sock *s, struct ns_sctp_rmsgq *out)
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

static void after_unown(struct ns_sock *s, struct ns_sctp_rmsgq *out, bool pull)
{
    ns_rt_give_back(s->rt, out);
    if (pull) {
        sock_hold(s);
        ns_rt_post(s->rt, pull_fn, s);
    }
}

static void release_sock(struct ns_sock *s)
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
static void wait_data(struct ns_sock *s)
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

/* ---- Stack thread: delivery ---------------------------------------------- */

static void free_now(struct ns_rt *rt, struct ns_sock_assoc *w, struct ns_sctp_rmsgq *q,
                     uint64_t now);
static void maybe_release(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now);

static void deliver(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now)
{
    struct ns_sock *s = w->sock;
    struct ns_sctp_rmsgq tmp;
    ns_sctp_rmsgq_init(&tmp);
    pthread_mutex_lock(&s->slock);
    if (s->closed) {
        pthread_mutex_unlock(&s->slock);
        ns_sctp_recv_take(w->a, &tmp);
        w->taken += tmp.count;
        free_now(rt, w, &tmp, now);
        return;
    }
    if (s->owned) {
        if (s->backlog.bytes >= s->rcvbuf + s->sndbuf) {
            if (!w->pending) {
                w->pending = true;
                s->npending++;
            }
            rt->stats.backlog_full++;
            pthread_mutex_unlock(&s->slock);
            return;
        }
        ns_sctp_recv_take(w->a, &tmp);
        w->taken += tmp.count;
        ns_sctp_rmsgq_splice(&s->backlog, &tmp);
        rt->stats.delivered_backlog++;
    } else {
        if (atomic_load_explicit(&rt->rcvq_lock, memory_order_relaxed)) {
            ns_sctp_recv_take(w->a, &tmp);
            w->taken += tmp.count;
            rcvq_push(s, &tmp);
        } else {
            uint32_t before = s->rcvq.count;
            ns_sctp_recv_take(w->a, &s->rcvq);
            w->taken += s->rcvq.count - before;
        }
        rt->stats.delivered_direct++;
    }
    set_fd_locked(s, true);
    wake_locked(s);
    pthread_mutex_unlock(&s->slock);
}

static void pull_fn(struct ns_rt *rt, void *arg)
{
    struct ns_sock *s = arg;
    uint64_t now = ns_rt_now();
    pthread_mutex_lock(&s->slock);
    s->pull_posted = false;
    pthread_mutex_unlock(&s->slock);
    for (struct ns_sock_assoc *w = s->assocs; w; w = w->next) {
        if (!w->pending)
            continue;
        pthread_mutex_lock(&s->slock);
        w->pending = false;
        s->npending--;
        pthread_mutex_unlock(&s->slock);
        deliver(rt, w, now);
    }
    for (struct ns_sock_assoc *w = s->assocs, *next; w; w = next) {
        next = w->next;
        maybe_release(rt, w, now);
    }
    sock_put(s);
}

/* Queue a notification (the caller checked the subscription). */
static void notify(struct ns_rt *rt, struct ns_sock *s, const void *data, uint32_t len)
{
    struct ns_sock_notif *n = ns_alloc_should_fail() ? NULL : calloc(1, sizeof(*n));
    if (!n) {
        rt->stats.notif_dropped++;
        return;
    }
    memcpy(n->data, data, len);
    n->m.len = len;
    n->m.flags = NS_SOCK_RMSG_NOTIF | NS_SCTP_RMSG_EOR;
    struct ns_sctp_rmsgq one = {&n->m, &n->m, 1, len};
    pthread_mutex_lock(&s->slock);
    if (s->closed) {
        pthread_mutex_unlock(&s->slock);
        free(n);
        return;
    }
    if (s->owned)
        ns_sctp_rmsgq_splice(&s->backlog, &one);
    else
        rcvq_push(s, &one);
    set_fd_locked(s, true);
    wake_locked(s);
    pthread_mutex_unlock(&s->slock);
}

/* ---- Stack thread: freeing and releasing ---------------------------------- */

static void free_now(struct ns_rt *rt, struct ns_sock_assoc *w, struct ns_sctp_rmsgq *q,
                     uint64_t now)
{
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(q))) {
        ns_sctp_msg_free(w->a, m, now);
        w->taken--;
        rt->stats.msgs_freed++;
    }
}

static void unlink_assoc(struct ns_sock *s, struct ns_sock_assoc *w)
{
    pthread_mutex_lock(&s->slock);
    for (struct ns_sock_assoc **pp = &s->assocs; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    if (w->pending)
        s->npending--;
    pthread_mutex_unlock(&s->slock);
}

/* Release the engine's association once nothing of it is left with us: it
 * is dead (or the socket closed) and every taken message came back. */
static void maybe_release(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now)
{
    struct ns_sock *s = w->sock;
    pthread_mutex_lock(&s->slock);
    bool closing = s->closed && s->close_pending == false;
    bool go = (w->dead || closing) && w->taken == 0 && (!w->pending || s->closed);
    pthread_mutex_unlock(&s->slock);
    if (!go || w->released)
        return;
    w->released = true;
    unlink_assoc(s, w);
    ns_sctp_assoc_set_user(w->a, NULL);
    ns_sctp_assoc_release(w->a, now);
    free(w);
    sock_put(s);
}

void ns_sock_free_msgs(struct ns_rt *rt, struct ns_sctp_rmsgq *q, uint64_t now)
{
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(q))) {
        if (m->flags & NS_SOCK_RMSG_NOTIF) {
            free(m);
            continue;
        }
        struct ns_sctp_assoc *a = ns_sctp_assoc_by_id(rt->sctp, m->assoc_id);
        struct ns_sock_assoc *w = a ? ns_sctp_assoc_user(a) : NULL;
        if (!w)
            continue; /* cannot happen: released only when nothing is taken */
        ns_sctp_msg_free(a, m, now);
        w->taken--;
        rt->stats.msgs_freed++;
        if (w->taken == 0)
            maybe_release(rt, w, now);
    }
}

/* ---- Stack thread: sending ------------------------------------------------ */

static struct ns_sock_assoc *find_assoc_id(struct ns_sock *s, uint32_t id)
{
    for (struct ns_sock_assoc *w = s->assocs; w; w = w->next) {
        if (s->style == NS_SOCK_STREAM || w->id == id)
            return w;
    }
    return NULL;
}

static struct ns_sock_assoc *find_assoc_peer(struct ns_sock *s, const struct ns_sctp_addr *peer,
                                             uint16_t port)
{
    for (struct ns_sock_assoc *w = s->assocs; w; w = w->next) {
        if (!w->dead && w->peer.addr == peer->addr && w->peer_port == port)
            return w;
    }
    return NULL;
}

static struct ns_sock_assoc *start_assoc(struct ns_rt *rt, struct ns_sock *s,
                                         const struct ns_sctp_addr *peer, uint16_t port, int *err);

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
    notify(rt, s, &e, sizeof(e));
}

static void do_shutdown_assocs(struct ns_rt *rt, struct ns_sock *s, uint64_t now)
{
    for (struct ns_sock_assoc *w = s->assocs, *next; w; w = next) {
        next = w->next;
        if (!w->dead)
            ns_sctp_shutdown(w->a, now);
    }
}

static void close_assocs(struct ns_rt *rt, struct ns_sock *s, uint64_t now);

static void tx_run(struct ns_rt *rt, struct ns_sock *s)
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
                w = start_assoc(rt, s, &t->peer, t->peer_port, &r);
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
        close_assocs(rt, s, now);
    }
}

static void tx_fn(struct ns_rt *rt, void *arg)
{
    struct ns_sock *s = arg;
    if (!s->tx_blocked)
        tx_run(rt, s);
    else {
        pthread_mutex_lock(&s->sndlock);
        s->tx_posted = false;
        pthread_mutex_unlock(&s->sndlock);
    }
    sock_put(s);
}

/* ---- Stack thread: associations and events -------------------------------- */

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

static int ensure_ep(struct ns_rt *rt, struct ns_sock *s)
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
static struct ns_sock_assoc *start_assoc(struct ns_rt *rt, struct ns_sock *s,
                                         const struct ns_sctp_addr *peer, uint16_t port, int *err)
{
    int e = ensure_ep(rt, s);
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

static void assoc_change(struct ns_rt *rt, struct ns_sock *s, struct ns_sock_assoc *w,
                         uint16_t state, uint16_t error)
{
    pthread_mutex_lock(&s->slock);
    bool sub = s->ev.sctp_association_event;
    pthread_mutex_unlock(&s->slock);
    if (!sub)
        return;
    struct ns_sctp_assoc_change c = {
        .sac_type = NS_SCTP_ASSOC_CHANGE,
        .sac_length = sizeof(c),
        .sac_state = state,
        .sac_error = error,
        .sac_outbound_streams = w->out_streams,
        .sac_inbound_streams = w->in_streams,
        .sac_assoc_id = w->id,
    };
    notify(rt, s, &c, sizeof(c));
}

static struct ns_sock_assoc *passive_up(struct ns_rt *rt, const struct ns_sctp_event *ev)
{
    struct ns_sock *ls = ns_sctp_ep_user(ns_sctp_assoc_ep(ev->assoc));
    struct ns_sock *owner = NULL;
    if (ls) {
        pthread_mutex_lock(&ls->slock);
        bool ok = !ls->closed && ls->state == NS_SS_LISTEN &&
                  (ls->style == NS_SOCK_SEQPACKET || ls->n_accept < ls->backlog_max);
        pthread_mutex_unlock(&ls->slock);
        if (ok)
            owner = ls->style == NS_SOCK_SEQPACKET ? ls : sock_alloc(rt, NS_SOCK_STREAM);
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
         * the reference sock_alloc returned). */
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

void ns_sock_on_event(struct ns_rt *rt, const struct ns_sctp_event *ev, uint64_t now)
{
    struct ns_sock_assoc *w = ev->assoc ? ns_sctp_assoc_user(ev->assoc) : NULL;
    if (!w && ev->type == NS_SCTP_EV_COMM_UP)
        w = passive_up(rt, ev);
    if (!w)
        return;
    struct ns_sock *s = w->sock;
    switch (ev->type) {
    case NS_SCTP_EV_COMM_UP:
    case NS_SCTP_EV_RESTART:
        pthread_mutex_lock(&s->slock);
        w->in_streams = ev->in_streams;
        w->out_streams = ev->out_streams;
        pthread_mutex_unlock(&s->slock);
        /* Queued before connect() can return, so the subscription in force
         * when the association came up decides. */
        assoc_change(rt, s, w, ev->type == NS_SCTP_EV_COMM_UP ? NS_SCTP_COMM_UP : NS_SCTP_RESTART,
                     0);
        pthread_mutex_lock(&s->slock);
        w->up = true;
        if (s->style == NS_SOCK_STREAM)
            s->state = NS_SS_CONNECTED;
        wake_locked(s);
        pthread_mutex_unlock(&s->slock);
        break;
    case NS_SCTP_EV_COMM_LOST:
    case NS_SCTP_EV_CANT_STR_ASSOC:
    case NS_SCTP_EV_SHUTDOWN_COMPLETE: {
        int err = 0;
        uint16_t st = NS_SCTP_SHUTDOWN_COMP;
        if (ev->type == NS_SCTP_EV_COMM_LOST) {
            err = ECONNRESET;
            st = NS_SCTP_COMM_LOST;
        } else if (ev->type == NS_SCTP_EV_CANT_STR_ASSOC) {
            err = ev->reason == NS_SCTP_R_INIT_TIMEOUT ? ETIMEDOUT : ECONNREFUSED;
            st = NS_SCTP_CANT_STR_ASSOC;
        }
        /* The notification goes first: a reader must not see end of file
         * before it. */
        assoc_change(rt, s, w, st, ev->cause);
        pthread_mutex_lock(&s->slock);
        w->dead = true;
        if (s->style == NS_SOCK_STREAM) {
            s->state = NS_SS_CLOSED;
            if (err)
                s->err = err;
            else
                s->peer_eof = true;
        }
        refresh_fd_locked(s);
        wake_locked(s);
        pthread_mutex_unlock(&s->slock);
        if (s->style == NS_SOCK_STREAM) {
            pthread_mutex_lock(&s->sndlock);
            s->tx_dead = true;
            s->tx_err = err ? err : EPIPE;
            pthread_cond_broadcast(&s->sndwq);
            pthread_mutex_unlock(&s->sndlock);
        }
        maybe_release(rt, w, now);
        break;
    }
    case NS_SCTP_EV_SHUTDOWN: {
        pthread_mutex_lock(&s->slock);
        bool sub = s->ev.sctp_shutdown_event;
        pthread_mutex_unlock(&s->slock);
        if (sub) {
            struct ns_sctp_shutdown_event e = {NS_SCTP_SHUTDOWN_EVENT, 0, sizeof(e), w->id};
            notify(rt, s, &e, sizeof(e));
        }
        pthread_mutex_lock(&s->slock);
        if (s->style == NS_SOCK_STREAM)
            s->peer_eof = true;
        refresh_fd_locked(s);
        wake_locked(s);
        pthread_mutex_unlock(&s->slock);
        break;
    }
    case NS_SCTP_EV_SEND_FAILED: {
        pthread_mutex_lock(&s->slock);
        bool sub = s->ev.sctp_send_failure_event;
        pthread_mutex_unlock(&s->slock);
        if (sub) {
            struct ns_sctp_send_failed_event e = {
                .ssf_type = NS_SCTP_SEND_FAILED_EVENT,
                .ssf_flags =
                    (ev->flags & NS_SCTP_SF_SENT) ? NS_SCTP_DATA_SENT : NS_SCTP_DATA_UNSENT,
                .ssf_length = sizeof(e),
                .ssf_error = 0,
                .ssfe_info = {ev->sid, 0, ev->ppid, ev->context, w->id},
                .ssf_assoc_id = w->id,
            };
            notify(rt, s, &e, sizeof(e));
        }
        break;
    }
    case NS_SCTP_EV_PARTIAL_DELIVERY_ABORTED: {
        pthread_mutex_lock(&s->slock);
        bool sub = s->ev.sctp_partial_delivery_event;
        pthread_mutex_unlock(&s->slock);
        if (sub) {
            struct ns_sctp_pdapi_event e = {NS_SCTP_PARTIAL_DELIVERY_EVENT,
                                            0,
                                            sizeof(e),
                                            NS_SCTP_PARTIAL_DELIVERY_ABORTED,
                                            ev->sid,
                                            0,
                                            w->id};
            notify(rt, s, &e, sizeof(e));
        }
        break;
    }
    case NS_SCTP_EV_DATA_READY:
        deliver(rt, w, now);
        break;
    case NS_SCTP_EV_WRITABLE:
        if (s->tx_blocked) {
            s->tx_blocked = false;
            tx_run(rt, s);
        }
        break;
    case NS_SCTP_EV_PEER_ADDR_CHANGE:
        break;
    }
}

/* ---- Stack thread: close --------------------------------------------------- */

static void close_assocs(struct ns_rt *rt, struct ns_sock *s, uint64_t now)
{
    /* Engine calls deliver events at once, and an event may free a wrapper
     * (maybe_release): restart from the head after each one. */
    for (;;) {
        struct ns_sock_assoc *w = s->assocs;
        while (w && w->close_done)
            w = w->next;
        if (!w)
            break;
        w->close_done = true;
        /* Whatever is still in the engine is unread data of a closed
         * socket: take it to free it (deliver() frees on a closed socket). */
        deliver(rt, w, now);
        if (s->linger_abort && !w->dead) {
            ns_sctp_abort(w->a, NULL, 0, now); /* COMM_LOST releases it */
            continue;
        }
        maybe_release(rt, w, now);
    }
    if (s->ep) {
        ns_sctp_ep_set_user(s->ep, NULL);
        ns_sctp_ep_close(s->ep);
        s->ep = NULL;
    }
}

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
        tx_run(rt, s); /* closes the associations when the queue empties */
    } else if (queued && !s->linger_abort) {
        s->close_pending = true; /* WRITABLE resumes tx_run */
    } else {
        close_assocs(rt, s, ns_rt_now());
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
    struct ns_sock *s = sock_alloc(rt, style);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    int sd = sock_install(rt, s);
    if (sd < 0) {
        sock_put(s);
        errno = ENOMEM;
        return -1;
    }
    return sd;
}

static int parse_sin(const struct sockaddr *addr, socklen_t len, uint32_t *ip, uint16_t *port)
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

static void fill_sin(struct sockaddr *addr, socklen_t *len, uint32_t ip, uint16_t port)
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
    o->ret = ensure_ep(rt, o->s);
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
    o->ret = ensure_ep(rt, o->s);
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
    int nsd = sock_install(rt, c);
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
    struct ns_sock_assoc *w = start_assoc(rt, o->s, &peer, o->port, &err);
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
        tx_run(rt, s);
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

/* ---- Send ----------------------------------------------------------------- */

static ssize_t iov_total(const struct iovec *iov, int iovcnt)
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

/* ---- Teardown ------------------------------------------------------------- */

static void purge_engine_msgs(struct ns_rt *rt, struct ns_sctp_rmsgq *q, uint64_t now)
{
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(q))) {
        if (m->flags & NS_SOCK_RMSG_NOTIF) {
            free(m);
            continue;
        }
        struct ns_sctp_assoc *a = ns_sctp_assoc_by_id(rt->sctp, m->assoc_id);
        if (a)
            ns_sctp_msg_free(a, m, now);
    }
}

void ns_sock_rt_teardown(struct ns_rt *rt)
{
    uint64_t now = ns_rt_now();
    pthread_mutex_lock(&rt->mu);
    struct ns_sctp_rmsgq fq;
    ns_sctp_rmsgq_init(&fq);
    ns_sctp_rmsgq_splice(&fq, &rt->freeq);
    pthread_mutex_unlock(&rt->mu);
    purge_engine_msgs(rt, &fq, now);
    /* The application has stopped using the runtime: free every socket
     * whatever its references, after giving the engine its messages. */
    pthread_rwlock_wrlock(&rt->tlock);
    struct ns_sock *all = rt->all;
    rt->all = NULL;
    for (int i = 0; i < rt->tab_n; i++)
        rt->tab[i] = NULL;
    rt->n_open = 0;
    pthread_rwlock_unlock(&rt->tlock);
    for (struct ns_sock *s = all; s; s = s->all_next) {
        purge_engine_msgs(rt, &s->rcvq, now);
        purge_engine_msgs(rt, &s->backlog, now);
        purge_engine_msgs(rt, &s->done, now);
    }
    while (all) {
        struct ns_sock *s = all;
        all = s->all_next;
        while (s->assocs) {
            struct ns_sock_assoc *w = s->assocs;
            s->assocs = w->next;
            ns_sctp_assoc_set_user(w->a, NULL);
            /* A stack outlives its runtime: end the association there. */
            if (rt->stack)
                ns_sctp_assoc_release(w->a, now);
            free(w);
        }
        if (s->ep) {
            ns_sctp_ep_set_user(s->ep, NULL);
            if (rt->stack)
                ns_sctp_ep_close(s->ep);
        }
        sock_free_raw(s);
    }
}
