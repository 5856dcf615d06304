/* Stack thread: from the engine to the sockets. Delivery of received messages
 * (NS_SCTP_EV_DATA_READY) onto the receive queue, or onto the backlog of a
 * socket a reader owns, up to its bound (the stack thread's half of
 * lock_sock/release_sock); the pull of what the bound left in the engine;
 * notifications; the other engine events; and consumed messages given back to
 * the engine (ns_sctp_msg_free), releasing an association once nothing of it
 * is left with us. RFC 6458 6.1 (notifications: 6.1.1 SCTP_ASSOC_CHANGE,
 * 6.1.5 SCTP_SHUTDOWN_EVENT, 6.1.7 SCTP_PARTIAL_DELIVERY_EVENT, 6.1.11
 * SCTP_SEND_FAILED_EVENT), 6.2 (the subscription in force when the event
 * happens decides).
 * Locking: the model at the top of sock_internal.h. */
#include <stdlib.h>
#include <string.h>

#include "socket/sock_internal.h"

/* ---- Stack thread: delivery ---------------------------------------------- */

static void free_now(struct ns_rt *rt, struct ns_sock_assoc *w, struct ns_sctp_rmsgq *q,
                     uint64_t now);

void ns_sock_deliver(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now)
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

void ns_sock_pull_fn(struct ns_rt *rt, void *arg)
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
        ns_sock_deliver(rt, w, now);
    }
    for (struct ns_sock_assoc *w = s->assocs, *next; w; w = next) {
        next = w->next;
        ns_sock_maybe_release(rt, w, now);
    }
    sock_put(s);
}

/* Queue a notification (the caller checked the subscription). */
void ns_sock_notify(struct ns_rt *rt, struct ns_sock *s, const void *data, uint32_t len)
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
void ns_sock_maybe_release(struct ns_rt *rt, struct ns_sock_assoc *w, uint64_t now)
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
            ns_sock_maybe_release(rt, w, now);
    }
}

/* ---- Stack thread: events ------------------------------------------------- */

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
    ns_sock_notify(rt, s, &c, sizeof(c));
}

void ns_sock_on_event(struct ns_rt *rt, const struct ns_sctp_event *ev, uint64_t now)
{
    struct ns_sock_assoc *w = ev->assoc ? ns_sctp_assoc_user(ev->assoc) : NULL;
    if (!w && ev->type == NS_SCTP_EV_COMM_UP)
        w = ns_sock_passive_up(rt, ev);
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
        ns_sock_maybe_release(rt, w, now);
        break;
    }
    case NS_SCTP_EV_SHUTDOWN: {
        pthread_mutex_lock(&s->slock);
        bool sub = s->ev.sctp_shutdown_event;
        pthread_mutex_unlock(&s->slock);
        if (sub) {
            struct ns_sctp_shutdown_event e = {NS_SCTP_SHUTDOWN_EVENT, 0, sizeof(e), w->id};
            ns_sock_notify(rt, s, &e, sizeof(e));
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
            ns_sock_notify(rt, s, &e, sizeof(e));
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
            ns_sock_notify(rt, s, &e, sizeof(e));
        }
        break;
    }
    case NS_SCTP_EV_DATA_READY:
        ns_sock_deliver(rt, w, now);
        break;
    case NS_SCTP_EV_WRITABLE:
        if (s->tx_blocked) {
            s->tx_blocked = false;
            ns_sock_tx_run(rt, s);
        }
        break;
    case NS_SCTP_EV_PEER_ADDR_CHANGE:
        break;
    }
}
