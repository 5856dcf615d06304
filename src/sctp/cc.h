/* Per-destination congestion control and retransmission timeout (RFC 9260
 * sections 6.3.1, 6.3.3, 7.2.1-7.2.4).
 *
 * One struct ns_sctp_cc lives in each path (destination transport address)
 * of an association. The association initialises it and reads cwnd/rto;
 * retx.c drives it: flight size on every transmission and acknowledgement,
 * growth on SACKs, the fast-retransmit and T3 reductions, RTT samples. All
 * arithmetic is integer; times are microseconds; "MTU" in the formulas is
 * the path MTU the association sets.
 */
#ifndef NS_SCTP_CC_H
#define NS_SCTP_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "sctp/types.h"

/* Destinations an association may use (retx indexes paths with uint8_t). */
#define NS_SCTP_MAX_PATHS 8

struct ns_sctp_cc {
    uint32_t mtu;      /* path MTU in bytes */
    uint32_t cwnd;     /* bytes */
    uint32_t ssthresh; /* bytes */
    uint32_t pba;      /* partial_bytes_acked (7.2.2) */
    uint32_t flight;   /* payload bytes outstanding to this destination */

    bool in_fast_recovery; /* 7.2.4 */
    uint32_t fr_exit_tsn;  /* recovery ends when the cum ack reaches it */

    bool rtt_measured; /* a first RTT measurement was made (6.3.1 C2) */
    uint64_t srtt_us, rttvar_us;
    uint64_t rto_us; /* current RTO including back-off */
    uint64_t rto_min_us, rto_max_us;

    uint64_t last_send; /* time of the last transmission to this destination */
};

/* Initial state (7.2.1): cwnd = min(4*MTU, max(2*MTU, 4380)), ssthresh as
 * large as the peer's a_rwnd (the caller passes it; 0 = unlimited), RTO =
 * rto_initial_ms (6.3.1 C1). */
void ns_sctp_cc_init(struct ns_sctp_cc *cc, const struct ns_sctp_params *p, uint32_t mtu,
                     uint32_t peer_rwnd, uint64_t now);
/* A new PMTU for the path (cwnd is left as is; later formulas use it). */
void ns_sctp_cc_set_mtu(struct ns_sctp_cc *cc, uint32_t mtu);

/* An RTT measurement R in microseconds (6.3.1 C2/C3): the first sets
 * SRTT = R, RTTVAR = R/2; later ones RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|,
 * then SRTT = 7/8 SRTT + 1/8 R. RTO = SRTT + 4 * RTTVAR clamped to
 * [rto_min, rto_max] (with a floor of 1 us of variance, 6.3.1 G1 clock
 * granularity). A new measurement also cancels any back-off. */
void ns_sctp_cc_rtt_sample(struct ns_sctp_cc *cc, uint64_t rtt_us);

/* Bytes were transmitted (new data or retransmission) to this destination.
 * Before the transmission the association should call
 * ns_sctp_cc_idle_check() so an idle path restarts from a decayed cwnd. */
void ns_sctp_cc_on_send(struct ns_sctp_cc *cc, uint32_t bytes, uint64_t now);

/* A SACK was processed (retx.c, once per SACK for each path):
 *  acked      payload bytes of chunks sent to this path newly acknowledged
 *             by this SACK (cumulative and gap blocks),
 *  cum_adv    the SACK advanced the cumulative TSN ack point,
 *  flight_before  this path's flight size before the SACK was processed,
 *  cum_tsn    the SACK's cumulative TSN ack (ends fast recovery once it
 *             reaches the exit point; checked first).
 * Slow start (cwnd <= ssthresh): cwnd += min(acked, MTU) if cum_adv, the
 * window was fully used (flight_before >= cwnd) and not in fast recovery.
 * Congestion avoidance: partial_bytes_acked += acked; when it reaches cwnd
 * with flight_before >= cwnd, cum_adv and not in fast recovery, it drops by
 * cwnd and cwnd grows by MTU; if it exceeds cwnd while the window was not
 * fully used it is capped at cwnd. partial_bytes_acked resets to 0 once the
 * path's flight is 0 (flight is kept by retx.c; cc.flight must already
 * reflect this SACK). */
void ns_sctp_cc_on_sack(struct ns_sctp_cc *cc, uint32_t acked, bool cum_adv, uint32_t flight_before,
                        uint32_t cum_tsn);

/* Data sent to this path was marked for fast retransmission (7.2.4 step
 * 2). Outside fast recovery: ssthresh = max(cwnd/2, 4*MTU), cwnd = ssthresh,
 * partial_bytes_acked = 0, enter fast recovery until the cum ack reaches
 * highest_outstanding_tsn; returns true. In fast recovery nothing changes
 * and it returns false. */
bool ns_sctp_cc_fast_rtx(struct ns_sctp_cc *cc, uint32_t highest_outstanding_tsn);

/* The T3-rtx timer of this path expired (6.3.3 E1/E2, 7.2.3):
 * ssthresh = max(cwnd/2, 4*MTU), cwnd = MTU, partial_bytes_acked = 0,
 * RTO doubled up to rto_max. Fast recovery is left (every outstanding chunk
 * is being retransmitted anyway). */
void ns_sctp_cc_t3_expired(struct ns_sctp_cc *cc);

/* Before sending on a path that may have been idle (7.2.1): for every
 * full RTO without transmission since the last send, cwnd = max(cwnd/2,
 * 4*MTU) (applied repeatedly for longer idleness, never above its value).
 * Nothing happens while data is in flight. */
void ns_sctp_cc_idle_check(struct ns_sctp_cc *cc, uint64_t now);

/* A heartbeat on an idle path timed out too: back off the RTO only. */
void ns_sctp_cc_backoff(struct ns_sctp_cc *cc);

static inline uint32_t ns_sctp_cc_initial_cwnd(uint32_t mtu)
{
    uint32_t a = 4 * mtu, b = 2 * mtu > 4380 ? 2 * mtu : 4380;
    return a < b ? a : b;
}

#endif
