/* Data transfer of an association: RFC 9260 sections 6.1 (transmission
 * rules A-D, Max.Burst, zero-window probing), 6.2 (acknowledgement on
 * reception: delayed SACK, zero window), 6.2.1 (processing a SACK), 6.3.2
 * and 6.3.3 (T3-rtx), 6.4 (retransmission to an alternate path), 6.5
 * (Invalid Stream Identifier), 6.10 (bundling order), 7.2.4 (fast
 * retransmit: one packet at once), 8.1 (error counter reset on SACK).
 * The send queue, retransmission queue, congestion control, TSN map and
 * reassembly are the data path modules' (sendq.h, retx.h, cc.h, tsnmap.h,
 * reasm.h); this file decides when and where packets go.
 *
 * Bundling delay (our reading of the "Nagle-like" rule of 6.1): unless
 * nodelay is set, a packet of new DATA is held back while DATA is in
 * flight and everything queued would not fill a packet (queued payload
 * plus 20 bytes of header and padding per message is below the PMTU minus
 * the common header). It goes out once a SACK empties the flight, or when
 * enough is queued to fill a packet. Retransmissions, control chunks and
 * the first packet with nothing in flight are never held. */
#include <string.h>

#include "sctp/assoc.h"

#define PEND_ALL                                                                                   \
    (PEND_COOKIE_ACK | PEND_SACK | PEND_SHUTDOWN | PEND_SHUTDOWN_ACK | PEND_BAD_SID |              \
     PEND_COOKIE_WHILE_SD)

static uint32_t max_payload(const struct ns_sctp_path *pa)
{
    return (pa->pmtu - NS_SCTP_COMMON_HLEN - NS_SCTP_DATA_HLEN) & ~3u;
}

static void sack_fire(struct ns_timer *t, uint64_t now)
{
    struct ns_sctp_assoc *a = NS_SCTP_CONTAINER(t, struct ns_sctp_assoc, sack_timer);
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    if (a->rx_ready && a->state != NS_SCTP_CLOSED) {
        a->pend |= PEND_SACK;
        data_output(a, now);
    }
    sctp_leave(s, now);
}

void data_timers_init(struct ns_sctp_assoc *a)
{
    ns_timer_init(&a->sack_timer, sack_fire);
}

void data_stop_timers(struct ns_sctp_assoc *a)
{
    ns_timer_cancel(a->s->timers, &a->sack_timer);
}

void data_t3_arm(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now)
{
    if (!ns_timer_armed(&pa->t3)) {
        ns_timer_arm(a->s->timers, &pa->t3, now + pa->cc.rto_us);
        pa->t3_started_at = now;
    }
}

/* ---- Output ------------------------------------------------------------- */

static struct ns_sctp_path *rtx_path(struct ns_sctp_assoc *a)
{
    if (a->rtx_path < a->n_paths) {
        struct ns_sctp_path *pa = &a->paths[a->rtx_path];
        if (pa->active && pa->confirmed)
            return pa;
    }
    return path_data(a);
}

static struct ns_sctp_path *ctl_path(struct ns_sctp_assoc *a)
{
    if (a->pend & (PEND_SHUTDOWN | PEND_SHUTDOWN_ACK))
        return path_data(a);
    uint8_t i = (a->pend & PEND_SACK) ? a->rx_path : a->ctl_path;
    return i < a->n_paths ? &a->paths[i] : path_data(a);
}

static bool nagle_hold(const struct ns_sctp_assoc *a, const struct ns_sctp_path *pa)
{
    if (a->p.nodelay || ns_sctp_retx_flight(&a->rx) == 0)
        return false;
    uint64_t need = (uint64_t)a->sq.queued_bytes + 20ull * a->sq.queued_msgs;
    return need < pa->pmtu - NS_SCTP_COMMON_HLEN;
}

static bool rwnd_ok(const struct ns_sctp_assoc *a, uint32_t len)
{
    return len <= ns_sctp_retx_peer_rwnd(&a->rx) || ns_sctp_retx_flight(&a->rx) == 0;
}

static bool put_data(struct ns_sctp_writer *w, const struct ns_sctp_chunk_data *d)
{
    enum ns_sctp_wr_res r = ns_sctp_wr_data(w, d);
    if (r == NS_SCTP_WR_NOFRAG || r == NS_SCTP_WR_NOMEM)
        r = ns_sctp_wr_data_copy(w, d);
    return r == NS_SCTP_WR_OK;
}

bool data_write_sack(struct ns_sctp_assoc *a, struct ns_sctp_writer *w, struct ns_sctp_path *pa)
{
    if (!a->rx_ready)
        return false;
    uint32_t room = ns_sctp_wr_room(w);
    if (room < NS_SCTP_SACK_HLEN)
        return false;
    uint32_t slots = (room - NS_SCTP_SACK_HLEN) / 4;
    uint16_t mg = (uint16_t)(slots < NS_SCTP_SACK_MAX_GAPS ? slots : NS_SCTP_SACK_MAX_GAPS);
    uint32_t left = slots - mg;
    uint16_t md = (uint16_t)(left < NS_SCTP_SACK_MAX_DUPS ? left : NS_SCTP_SACK_MAX_DUPS);
    struct ns_sctp_sack_info si;
    ns_sctp_tsnmap_build_sack(&a->map, &si, mg, md);
    si.a_rwnd = ns_sctp_reasm_advertise(&a->ra, pa->pmtu);
    ns_timer_cancel(a->s->timers, &a->sack_timer);
    if (ns_sctp_wr_sack(w, si.cum_tsn, si.a_rwnd, (const uint16_t(*)[2])si.gaps, si.n_gaps, si.dups,
                        si.n_dups, NULL, NULL) != NS_SCTP_WR_OK)
        return false;
    a->stats.tx_sacks++;
    return true;
}

static void write_bad_sids(struct ns_sctp_assoc *a, struct ns_sctp_writer *w)
{
    if (ns_sctp_wr_error_begin(w) != NS_SCTP_WR_OK)
        return;
    for (uint8_t i = 0; i < a->n_bad_sids; i++)
        ns_sctp_wr_cause_invalid_stream(w, a->bad_sids[i]);
    if (ns_sctp_wr_end(w) == NS_SCTP_WR_OK)
        a->stats.tx_errors++;
    else
        ns_sctp_wr_cancel(w);
}

/* Control chunks first (6.10): COOKIE ECHO / COOKIE ACK lead. Every owed
 * chunk is cleared here, written or not, so output cannot spin. */
static void write_control(struct ns_sctp_assoc *a, struct ns_sctp_writer *w,
                          struct ns_sctp_path *pa, bool cookie, uint64_t now)
{
    uint32_t p = a->pend;
    a->pend = 0;
    if (cookie) {
        hs_write_cookie_echo(a, w);
        a->cookie_first = false;
        a->cookie_sent_at = now;
    }
    if (p & PEND_COOKIE_ACK)
        ns_sctp_wr_cookie_ack(w);
    if ((p & PEND_BAD_SID) && a->n_bad_sids)
        write_bad_sids(a, w);
    a->n_bad_sids = 0;
    if ((p & PEND_SACK) && a->state != NS_SCTP_SHUTDOWN_ACK_SENT)
        data_write_sack(a, w, pa);
    if (p & PEND_SHUTDOWN)
        ns_sctp_wr_shutdown(w, sd_cum_tsn(a));
    if (p & PEND_SHUTDOWN_ACK)
        ns_sctp_wr_shutdown_ack(w);
    if ((p & PEND_COOKIE_WHILE_SD) && ns_sctp_wr_error_begin(w) == NS_SCTP_WR_OK) {
        if (ns_sctp_wr_cause_cookie_while_shutdown(w) == NS_SCTP_WR_OK &&
            ns_sctp_wr_end(w) == NS_SCTP_WR_OK)
            a->stats.tx_errors++;
        else
            ns_sctp_wr_cancel(w);
    }
}

void data_output(struct ns_sctp_assoc *a, uint64_t now)
{
    if (a->state == NS_SCTP_CLOSED || a->n_paths == 0)
        return;
    bool cookie = a->state == NS_SCTP_COOKIE_ECHOED && a->cookie_first && a->cookie;
    bool data_state = a->tx_ready && (assoc_can_data(a) || cookie);
    uint32_t packets = 0;
    for (;;) {
        bool ctl = cookie || (a->pend & PEND_ALL);
        struct ns_sctp_path *dp = NULL;
        bool rtx = false, fresh = false;
        if (data_state) {
            rtx = ns_sctp_retx_has_rtx(&a->rx);
            dp = rtx ? rtx_path(a) : path_data(a);
            bool cw = ns_sctp_retx_cwnd_allows(&a->rx, dp->idx, packets) || (rtx && a->fast_rtx);
            if (!cw) {
                rtx = false;
            } else if (!rtx && !ns_sctp_sendq_empty(&a->sq)) {
                uint32_t wl = ns_sctp_sendq_peek_len(&a->sq, max_payload(dp));
                fresh = wl && rwnd_ok(a, wl - NS_SCTP_DATA_HLEN) && !nagle_hold(a, dp);
            }
        }
        if (!ctl && !rtx && !fresh)
            break;
        /* A packet goes out anyway: an owed (delayed) SACK rides along. */
        if (a->rx_ready && a->state != NS_SCTP_SHUTDOWN_ACK_SENT &&
            ns_sctp_tsnmap_sack_deadline(&a->map) != NS_TIME_NEVER)
            a->pend |= PEND_SACK;
        struct ns_sctp_path *pa = (rtx || fresh) ? dp : ctl_path(a);
        struct ns_sctp_writer w;
        uint32_t budget = pa->pmtu;
        if (cookie) {
            uint32_t need = NS_SCTP_COMMON_HLEN + NS_SCTP_CHUNK_HLEN + ns_sctp_pad4(a->cookie_len);
            budget = need > budget ? need : budget;
        }
        if (ns_sctp_wr_start(&w, budget, a->lport, a->pport, a->peer_vtag) != NS_SCTP_WR_OK) {
            a->s->stats.nomem++;
            break;
        }
        if (ctl)
            write_control(a, &w, pa, cookie, now);
        cookie = false;
        bool wrote = false;
        if (rtx || fresh) {
            struct ns_sctp_txchunk *c;
            while ((c = ns_sctp_retx_next_rtx(&a->rx, ns_sctp_wr_room(&w)))) {
                if (!put_data(&w, &c->d))
                    break;
                ns_sctp_retx_resent(&a->rx, c, pa->idx, now);
                a->stats.retransmissions++;
                wrote = true;
            }
            /* New data only once nothing marked is waiting (6.1 C). */
            if (!ns_sctp_retx_has_rtx(&a->rx) && (wrote || fresh)) {
                uint32_t mp = max_payload(pa);
                for (;;) {
                    uint32_t room = ns_sctp_wr_room(&w);
                    uint32_t wl = ns_sctp_sendq_peek_len(&a->sq, mp);
                    if (wl == 0 || wl > room ||
                        !ns_sctp_retx_rwnd_allows(&a->rx, wl - NS_SCTP_DATA_HLEN))
                        break;
                    c = ns_sctp_sendq_pull(&a->sq, room, mp);
                    if (!c)
                        break;
                    ns_sctp_retx_send_new(&a->rx, c, pa->idx, now);
                    /* Failing to write leaves the chunk outstanding: T3
                     * retransmits it. */
                    put_data(&w, &c->d);
                    a->stats.tx_data++;
                    wrote = true;
                }
            }
        }
        if (w.nchunks == 0) {
            ns_sctp_wr_discard(&w);
            break;
        }
        assoc_wr_send(a, &w, pa, now);
        if (wrote) {
            packets++;
            pa->data_since_hb = true;
            data_t3_arm(a, pa, now);
            a->fast_rtx = false;
            /* 6.3.3 E3: on T3 expiry, as many of the earliest marked chunks
             * as fit in one packet; the rest wait for the next SACK or T3. */
            if (rtx && a->t3_rtx)
                break;
        } else if (rtx || fresh) {
            break; /* data was wanted but none fitted: do not spin */
        }
        /* 5.1: until the COOKIE ACK, nothing but the COOKIE ECHO packet
         * (reordered ahead of it, DATA would be OOTB and draw an ABORT). */
        if (a->state == NS_SCTP_COOKIE_ECHOED)
            break;
    }
    a->fast_rtx = false;
}

/* ---- DATA received ------------------------------------------------------ */

static void note_bad_sid(struct ns_sctp_assoc *a, uint16_t sid)
{
    for (uint8_t i = 0; i < a->n_bad_sids; i++) {
        if (a->bad_sids[i] == sid)
            return;
    }
    if (a->n_bad_sids < NS_SCTP_MAX_BAD_SIDS)
        a->bad_sids[a->n_bad_sids++] = sid;
    a->pend |= PEND_BAD_SID;
}

bool data_rx(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now)
{
    struct ns_sctp_data_view d;
    if (ns_sctp_parse_data(c, &d) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++;
        return true;
    }
    a->stats.rx_data++;
    if (d.payload_len == 0) {
        /* 6.2: an empty DATA chunk ends the association. */
        uint8_t v[4];
        ns_wr32(v, d.tsn);
        assoc_abort_protocol(a, NS_SCTP_CAUSE_NO_USER_DATA, v, 4, now);
        return false;
    }
    switch (ns_sctp_tsnmap_check(&a->map, d.tsn)) {
    case NS_SCTP_TSN_DUP:
        a->stats.drop_dup_tsn++;
        return true;
    case NS_SCTP_TSN_OUT_OF_WINDOW:
        a->stats.drop_out_window++;
        a->pend |= PEND_SACK;
        return true;
    case NS_SCTP_TSN_NEW:
        break;
    }
    /* 6.2: with the window closed, nothing beyond what was seen. */
    if (ns_sctp_reasm_rwnd(&a->ra) == 0 && ns_tsn_lt(ns_sctp_tsnmap_highest(&a->map), d.tsn)) {
        a->stats.drop_zero_window++;
        a->pend |= PEND_SACK;
        return true;
    }
    struct ns_buf *b = a->s->rx_buf;
    struct ns_sctp_chunk_data cd = {
        .tsn = d.tsn,
        .sid = d.sid,
        .ssn = d.ssn,
        .ppid = d.ppid,
        .flags = d.flags,
        .buf = b,
        .off = (uint32_t)(d.payload - b->data),
        .len = d.payload_len,
    };
    bool in_seq = d.tsn == ns_sctp_tsnmap_cum(&a->map) + 1;
    switch (ns_sctp_reasm_rx(&a->ra, &cd, in_seq)) {
    case NS_SCTP_RX_OK:
        ns_sctp_tsnmap_mark(&a->map, d.tsn, (d.flags & NS_SCTP_DATA_I) != 0);
        break;
    case NS_SCTP_RX_BAD_SID:
        /* 6.5: acknowledged, discarded, reported. */
        ns_sctp_tsnmap_mark(&a->map, d.tsn, (d.flags & NS_SCTP_DATA_I) != 0);
        a->stats.drop_bad_sid++;
        note_bad_sid(a, d.sid);
        break;
    case NS_SCTP_RX_NOMEM:
        a->stats.drop_nomem++;
        a->pend |= PEND_SACK;
        break;
    case NS_SCTP_RX_INVALID:
        /* Not acknowledged: a correct peer never sends this. */
        a->stats.drop_invalid_data++;
        break;
    case NS_SCTP_RX_DUP:
        a->stats.drop_dup_tsn++;
        break;
    }
    return true;
}

void data_rx_done(struct ns_sctp_assoc *a, uint64_t now)
{
    if (ns_sctp_tsnmap_packet_done(&a->map, now, NULL)) {
        a->pend |= PEND_SACK;
    } else {
        uint64_t dl = ns_sctp_tsnmap_sack_deadline(&a->map);
        if (dl != NS_TIME_NEVER && (!ns_timer_armed(&a->sack_timer) || a->sack_timer.expires > dl))
            ns_timer_arm(a->s->timers, &a->sack_timer, dl);
    }
    if (a->state == NS_SCTP_SHUTDOWN_SENT)
        sd_data_in_shutdown_sent(a, now);
    assoc_stamp_ready(a);
}

/* ---- SACK received ------------------------------------------------------- */

static void after_ack(struct ns_sctp_assoc *a, const struct ns_sctp_sack_result *res,
                      const uint32_t *before, uint32_t space_before, uint64_t now)
{
    struct ns_sctp *s = a->s;
    if (res->bytes_acked) {
        a->errors = 0; /* 8.1 */
        for (uint8_t i = 0; i < a->n_paths; i++) {
            if (ns_sctp_retx_path_outstanding(&a->rx, i) < before[i]) {
                path_ok(a, &a->paths[i], now);
                if (s->ops.path_confirm)
                    s->ops.path_confirm(s->ops.ctx, &a->paths[i].addr, now);
            }
        }
    }
    for (uint8_t i = 0; i < a->n_paths; i++) {
        uint8_t bit = (uint8_t)(1u << i);
        struct ns_sctp_path *pa = &a->paths[i];
        if (res->t3_stop & bit)
            ns_timer_cancel(s->timers, &pa->t3);
        else if (res->t3_restart & bit) {
            ns_timer_arm(s->timers, &pa->t3, now + pa->cc.rto_us);
            pa->t3_started_at = now;
        } else if (res->t3_start & bit)
            data_t3_arm(a, pa, now);
    }
    if (res->fast_rtx)
        a->fast_rtx = true;
    /* Only once the refused message fits (or the buffer is empty, which
     * takes any size): waking the writer for every SACK's worth of space
     * cost a failed retry and a thread wake-up per SACK. */
    uint32_t space = ns_sctp_sendq_space(&a->sq);
    if (a->want_writable && space > space_before &&
        (space >= a->want_space || a->sq.queued_bytes + a->sq.inflight_bytes == 0)) {
        a->want_writable = false;
        sctp_event_new(s, a, NS_SCTP_EV_WRITABLE);
    }
    if (res->all_acked || res->cum_advanced)
        sd_progress(a, now);
}

void data_rx_sack(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now)
{
    struct ns_sctp *s = a->s;
    struct ns_sctp_sack_view v;
    if (ns_sctp_parse_sack(c, &v) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++;
        return;
    }
    a->stats.rx_sacks++;
    uint16_t ng = v.ngaps < 4096 ? v.ngaps : 4096;
    for (uint16_t i = 0; i < ng; i++)
        ns_sctp_sack_gap(&v, i, &s->gaps[i][0], &s->gaps[i][1]);
    uint32_t before[NS_SCTP_MAX_PATHS];
    for (uint8_t i = 0; i < NS_SCTP_MAX_PATHS; i++)
        before[i] = ns_sctp_retx_path_outstanding(&a->rx, i);
    uint64_t fr = a->rx.stats.fast_rtx_marked;
    uint32_t space = ns_sctp_sendq_space(&a->sq);
    struct ns_sctp_sack_result res;
    enum ns_sctp_sack_verdict vd = ns_sctp_retx_sack(&a->rx, v.cum_tsn, v.a_rwnd,
                                                     (const uint16_t(*)[2])s->gaps, ng, now, &res);
    if (vd == NS_SCTP_SACK_STALE) {
        a->stats.drop_bad_sack++;
        return;
    }
    if (vd == NS_SCTP_SACK_INVALID) {
        static const char why[] = "SACK beyond the highest TSN sent";
        assoc_abort_protocol(a, NS_SCTP_CAUSE_PROTOCOL_VIOLATION, why, sizeof(why) - 1, now);
        return;
    }
    a->last_sack_at = now;
    a->stats.fast_retransmits += a->rx.stats.fast_rtx_marked - fr;
    after_ack(a, &res, before, space, now);
}

void data_cum_ack(struct ns_sctp_assoc *a, uint32_t cum, uint64_t now)
{
    /* A SHUTDOWN has no gap blocks: with gap-acked chunks held, applying
     * it would look like reneging, so the SACKs are left to do the work. */
    if (!a->tx_ready || a->rx.n_gap_acked || !ns_tsn_lt(ns_sctp_retx_cum_ack(&a->rx), cum))
        return;
    uint32_t before[NS_SCTP_MAX_PATHS];
    for (uint8_t i = 0; i < NS_SCTP_MAX_PATHS; i++)
        before[i] = ns_sctp_retx_path_outstanding(&a->rx, i);
    uint32_t space = ns_sctp_sendq_space(&a->sq);
    uint32_t rwnd = ns_sctp_retx_peer_rwnd(&a->rx) + ns_sctp_retx_flight(&a->rx);
    struct ns_sctp_sack_result res;
    if (ns_sctp_retx_sack(&a->rx, cum, rwnd, NULL, 0, now, &res) != NS_SCTP_SACK_OK)
        return;
    after_ack(a, &res, before, space, now);
}

/* ---- T3-rtx (6.3.3) ------------------------------------------------------- */

void data_t3_fire(struct ns_timer *t, uint64_t now)
{
    struct ns_sctp_path *pa = NS_SCTP_CONTAINER(t, struct ns_sctp_path, t3);
    struct ns_sctp_assoc *a = pa->a;
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    if (!a->tx_ready || a->state == NS_SCTP_CLOSED ||
        ns_sctp_retx_path_outstanding(&a->rx, pa->idx) == 0)
        goto out;
    if (pa->cc.flight == 0) {
        /* Only chunks already marked wait here: nothing was lost since. */
        data_output(a, now);
        goto out;
    }
    a->stats.t3_timeouts++;
    ns_sctp_retx_t3_expired(&a->rx, pa->idx, now); /* E1-E3, back-off in cc */
    /* 6.1 A: unanswered zero-window probes are no errors while SACKs
     * keep coming: one came since the probe left (the timer may run later
     * than its deadline, by more than the SACK took), or within an RTO. */
    bool zwp = ns_sctp_retx_peer_rwnd(&a->rx) == 0 && a->last_sack_at &&
               (a->last_sack_at >= pa->t3_started_at || now - a->last_sack_at <= pa->cc.rto_us);
    if (!zwp) {
        path_error(a, pa, now);
        if (assoc_error(a, now))
            goto out;
    }
    struct ns_sctp_path *alt = path_alternate(a, pa);
    a->rtx_path = alt ? alt->idx : pa->idx;
    a->t3_rtx = true;
    data_output(a, now);
    a->t3_rtx = false;
out:
    sctp_leave(s, now);
}
