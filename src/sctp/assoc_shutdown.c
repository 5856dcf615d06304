/* Graceful shutdown: RFC 9260 section 9.2 (SHUTDOWN only once everything
 * sent is acknowledged, SHUTDOWN / SHUTDOWN ACK / SHUTDOWN COMPLETE, DATA
 * in SHUTDOWN-SENT answered with SHUTDOWN, T2-shutdown with back-off and
 * Association.Max.Retrans, T5-shutdown-guard, simultaneous shutdown), and
 * 8.5.1 C for the SHUTDOWN COMPLETE we send. */
#include <errno.h>

#include "sctp/assoc.h"

uint32_t sd_cum_tsn(const struct ns_sctp_assoc *a)
{
    return a->rx_ready ? ns_sctp_tsnmap_cum(&a->map) : a->peer_itsn - 1;
}

static bool all_acked(const struct ns_sctp_assoc *a)
{
    return (!a->tx_ready || ns_sctp_retx_all_acked(&a->rx)) &&
           (!a->sq_ready || ns_sctp_sendq_empty(&a->sq));
}

static void t2_arm(struct ns_sctp_assoc *a, uint64_t now)
{
    ns_timer_arm(a->s->timers, &a->t2, now + path_data(a)->cc.rto_us);
}

static void t2_fire(struct ns_timer *t, uint64_t now)
{
    struct ns_sctp_assoc *a = NS_SCTP_CONTAINER(t, struct ns_sctp_assoc, t2);
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    if (a->state != NS_SCTP_SHUTDOWN_SENT && a->state != NS_SCTP_SHUTDOWN_ACK_SENT)
        goto out;
    a->stats.t2_timeouts++;
    struct ns_sctp_path *pa = path_data(a);
    ns_sctp_cc_backoff(&pa->cc);
    path_error(a, pa, now);
    if (assoc_error(a, now))
        goto out;
    /* path_data now avoids pa if it just went inactive (6.4 failover). */
    a->pend |= a->state == NS_SCTP_SHUTDOWN_SENT ? PEND_SHUTDOWN : PEND_SHUTDOWN_ACK;
    data_output(a, now);
    t2_arm(a, now);
out:
    sctp_leave(s, now);
}

static void t5_fire(struct ns_timer *t, uint64_t now)
{
    struct ns_sctp_assoc *a = NS_SCTP_CONTAINER(t, struct ns_sctp_assoc, t5);
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    if (a->state == NS_SCTP_SHUTDOWN_SENT || a->state == NS_SCTP_SHUTDOWN_ACK_SENT) {
        assoc_send_abort(a, 0, NULL, 0, now);
        assoc_close(a, NS_SCTP_EV_COMM_LOST, NS_SCTP_R_SHUTDOWN_GUARD, 0, now);
    }
    sctp_leave(s, now);
}

void sd_timers_init(struct ns_sctp_assoc *a)
{
    ns_timer_init(&a->t2, t2_fire);
    ns_timer_init(&a->t5, t5_fire);
}

void sd_progress(struct ns_sctp_assoc *a, uint64_t now)
{
    switch (a->state) {
    case NS_SCTP_ESTABLISHED:
        if (!a->shutdown_req)
            return;
        assoc_set_state(a, NS_SCTP_SHUTDOWN_PENDING, "9.2: SHUTDOWN requested by the user");
        /* fall through */
    case NS_SCTP_SHUTDOWN_PENDING:
        if (!all_acked(a))
            return;
        assoc_set_state(a, NS_SCTP_SHUTDOWN_SENT, "9.2: all data acknowledged, SHUTDOWN sent");
        a->pend |= PEND_SHUTDOWN;
        t2_arm(a, now);
        ns_timer_arm(a->s->timers, &a->t5, now + 5ull * a->p.rto_max_ms * NS_MS);
        data_output(a, now);
        return;
    case NS_SCTP_SHUTDOWN_RECEIVED:
        if (!all_acked(a))
            return;
        assoc_set_state(a, NS_SCTP_SHUTDOWN_ACK_SENT,
                        "9.2: all data acknowledged, SHUTDOWN ACK sent");
        a->pend |= PEND_SHUTDOWN_ACK;
        t2_arm(a, now);
        data_output(a, now);
        return;
    default:
        return;
    }
}

int ns_sctp_shutdown(struct ns_sctp_assoc *a, uint64_t now)
{
    if (a->state == NS_SCTP_CLOSED)
        return -ENOTCONN;
    sctp_enter(a->s);
    a->shutdown_req = true;
    sd_progress(a, now);
    sctp_leave(a->s, now);
    return 0;
}

static void shutdown_event(struct ns_sctp_assoc *a)
{
    sctp_event_new(a->s, a, NS_SCTP_EV_SHUTDOWN);
}

void sd_9_2_shutdown(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now)
{
    uint32_t cum;
    if (ns_sctp_parse_shutdown(c, &cum) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++;
        return;
    }
    switch (a->state) {
    case NS_SCTP_ESTABLISHED:
    case NS_SCTP_SHUTDOWN_PENDING:
        data_cum_ack(a, cum, now);
        if (a->state == NS_SCTP_CLOSED)
            return;
        assoc_set_state(a, NS_SCTP_SHUTDOWN_RECEIVED, "9.2: SHUTDOWN received");
        shutdown_event(a);
        sd_progress(a, now);
        return;
    case NS_SCTP_SHUTDOWN_RECEIVED:
        data_cum_ack(a, cum, now);
        if (a->state != NS_SCTP_CLOSED)
            sd_progress(a, now);
        return;
    case NS_SCTP_SHUTDOWN_SENT:
        /* Both sides shut down at once. */
        data_cum_ack(a, cum, now);
        if (a->state == NS_SCTP_CLOSED)
            return;
        assoc_set_state(a, NS_SCTP_SHUTDOWN_ACK_SENT,
                        "9.2: SHUTDOWN in SHUTDOWN-SENT (both at once)");
        a->pend &= ~(uint32_t)PEND_SHUTDOWN;
        a->pend |= PEND_SHUTDOWN_ACK;
        shutdown_event(a);
        t2_arm(a, now);
        return;
    case NS_SCTP_SHUTDOWN_ACK_SENT:
        a->pend |= PEND_SHUTDOWN_ACK;
        return;
    default:
        a->stats.drop_state++;
        return;
    }
}

void sd_9_2_shutdown_ack(struct ns_sctp_assoc *a, uint64_t now)
{
    if (a->state != NS_SCTP_SHUTDOWN_SENT && a->state != NS_SCTP_SHUTDOWN_ACK_SENT) {
        a->stats.drop_state++;
        return;
    }
    /* 8.5.1 C: we have a TCB, so our peer's tag and no T bit. */
    struct ns_sctp_path *pa = path_data(a);
    struct ns_sctp_writer w;
    if (assoc_wr_start(a, &w, pa)) {
        ns_sctp_wr_shutdown_complete(&w, false);
        assoc_wr_send(a, &w, pa, now); /* nothing if it failed */
    }
    assoc_close(a, NS_SCTP_EV_SHUTDOWN_COMPLETE, NS_SCTP_R_NONE, 0, now);
}

void sd_9_2_shutdown_complete(struct ns_sctp_assoc *a, uint64_t now)
{
    if (a->state != NS_SCTP_SHUTDOWN_ACK_SENT) {
        a->stats.drop_state++;
        return;
    }
    assoc_close(a, NS_SCTP_EV_SHUTDOWN_COMPLETE, NS_SCTP_R_NONE, 0, now);
}

void sd_data_in_shutdown_sent(struct ns_sctp_assoc *a, uint64_t now)
{
    a->pend |= PEND_SHUTDOWN;
    t2_arm(a, now);
}
