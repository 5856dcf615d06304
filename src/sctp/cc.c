/* Per-destination congestion control and RTO: RFC 9260 sections 6.3.1 (RTO
 * calculation), 6.3.3 (T3 expiry back-off), 7.2.1 (slow start, idle
 * decay), 7.2.2 (congestion avoidance), 7.2.3 (T3 reduction), 7.2.4 (fast
 * retransmit reduction and fast recovery). */
#include "sctp/cc.h"

static uint32_t max_u32(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}
static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* The window both loss reactions fall back to: half the window, but never
 * below four packets so recovery is not starved by delayed SACKs. */
static uint32_t reduced_ssthresh(const struct ns_sctp_cc *cc)
{
    return max_u32(cc->cwnd / 2, 4 * cc->mtu);
}

void ns_sctp_cc_init(struct ns_sctp_cc *cc, const struct ns_sctp_params *p, uint32_t mtu,
                     uint32_t peer_rwnd, uint64_t now)
{
    *cc = (struct ns_sctp_cc){0};
    cc->mtu = mtu;
    cc->cwnd = ns_sctp_cc_initial_cwnd(mtu);
    cc->ssthresh = peer_rwnd ? peer_rwnd : UINT32_MAX;
    cc->rto_min_us = (uint64_t)p->rto_min_ms * 1000;
    cc->rto_max_us = (uint64_t)p->rto_max_ms * 1000;
    if (cc->rto_max_us < cc->rto_min_us)
        cc->rto_max_us = cc->rto_min_us;
    cc->rto_us = (uint64_t)p->rto_initial_ms * 1000;
    cc->last_send = now;
}

void ns_sctp_cc_set_mtu(struct ns_sctp_cc *cc, uint32_t mtu)
{
    cc->mtu = mtu;
}

void ns_sctp_cc_rtt_sample(struct ns_sctp_cc *cc, uint64_t r)
{
    if (!cc->rtt_measured) {
        cc->srtt_us = r;
        cc->rttvar_us = r / 2;
        cc->rtt_measured = true;
    } else {
        /* RTTVAR must use the SRTT from before this sample (C3). */
        uint64_t diff = cc->srtt_us > r ? cc->srtt_us - r : r - cc->srtt_us;
        cc->rttvar_us = (3 * cc->rttvar_us + diff) / 4;
        cc->srtt_us = (7 * cc->srtt_us + r) / 8;
    }
    /* G1: a zero variance would make the RTO collapse onto SRTT; our
     * clock granularity is one microsecond. */
    if (cc->rttvar_us == 0)
        cc->rttvar_us = 1;
    uint64_t rto = cc->srtt_us + 4 * cc->rttvar_us;
    if (rto < cc->rto_min_us)
        rto = cc->rto_min_us;
    if (rto > cc->rto_max_us)
        rto = cc->rto_max_us;
    cc->rto_us = rto;
}

void ns_sctp_cc_on_send(struct ns_sctp_cc *cc, uint32_t bytes, uint64_t now)
{
    cc->flight += bytes;
    cc->last_send = now;
}

void ns_sctp_cc_on_sack(struct ns_sctp_cc *cc, uint32_t acked, bool cum_adv, uint32_t flight_before,
                        uint32_t cum_tsn)
{
    if (cc->in_fast_recovery && ns_tsn_le(cc->fr_exit_tsn, cum_tsn))
        cc->in_fast_recovery = false;

    bool full = flight_before >= cc->cwnd;
    if (cc->cwnd <= cc->ssthresh) {
        if (cum_adv && full && !cc->in_fast_recovery && acked)
            cc->cwnd += min_u32(acked, cc->mtu);
    } else {
        cc->pba += acked;
        if (cc->pba >= cc->cwnd && full && cum_adv && !cc->in_fast_recovery) {
            cc->pba -= cc->cwnd;
            cc->cwnd += cc->mtu;
        } else if (cc->pba > cc->cwnd && !full) {
            /* Acks for a window that was never filled must not bank
             * growth for later. */
            cc->pba = cc->cwnd;
        }
    }
    if (cc->flight == 0)
        cc->pba = 0;
}

bool ns_sctp_cc_fast_rtx(struct ns_sctp_cc *cc, uint32_t highest_outstanding_tsn)
{
    if (cc->in_fast_recovery)
        return false;
    cc->ssthresh = reduced_ssthresh(cc);
    cc->cwnd = cc->ssthresh;
    cc->pba = 0;
    cc->in_fast_recovery = true;
    cc->fr_exit_tsn = highest_outstanding_tsn;
    return true;
}

void ns_sctp_cc_backoff(struct ns_sctp_cc *cc)
{
    uint64_t rto = cc->rto_us * 2;
    cc->rto_us = rto > cc->rto_max_us ? cc->rto_max_us : rto;
}

void ns_sctp_cc_t3_expired(struct ns_sctp_cc *cc)
{
    cc->ssthresh = reduced_ssthresh(cc);
    cc->cwnd = cc->mtu;
    cc->pba = 0;
    cc->in_fast_recovery = false;
    ns_sctp_cc_backoff(cc);
}

void ns_sctp_cc_idle_check(struct ns_sctp_cc *cc, uint64_t now)
{
    if (cc->flight != 0 || cc->rto_us == 0 || now <= cc->last_send)
        return;
    uint64_t periods = (now - cc->last_send) / cc->rto_us;
    if (periods == 0)
        return;
    for (uint64_t i = 0; i < periods; i++) {
        uint32_t next = min_u32(cc->cwnd, reduced_ssthresh(cc));
        if (next == cc->cwnd)
            break;
        cc->cwnd = next;
    }
    /* Only the idle time not yet accounted for may decay the window again. */
    cc->last_send += periods * cc->rto_us;
}
