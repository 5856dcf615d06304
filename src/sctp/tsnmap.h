/* Receive-side TSN tracking and SACK decisions (RFC 9260 sections 6.2 and
 * 6.7; RFC 7053 for the I bit).
 *
 * The association layer owns one map per association. For every received
 * DATA chunk it asks ns_sctp_tsnmap_check() whether the TSN is new, a
 * duplicate or outside the window; only after the chunk has been accepted
 * by reassembly (or deliberately discarded but acknowledged, as for an
 * invalid stream) does it call ns_sctp_tsnmap_mark(), so that a chunk
 * reassembly had to drop is never acknowledged. After the last chunk of a
 * packet it calls ns_sctp_tsnmap_packet_done(), which says whether a SACK
 * must go out now or by which deadline (the association arms its delayed
 * SACK timer with it). When it sends a SACK it calls
 * ns_sctp_tsnmap_build_sack(), which also resets the delayed-SACK state and
 * the duplicate list.
 *
 * TSNs above the cumulative TSN are kept in a bitmap ring covering
 * [cum + 1, cum + span]; span is fixed at init (a power of two). Anything
 * further ahead is rejected with NS_SCTP_TSN_OUT_OF_WINDOW so a peer cannot
 * make the receiver track an unbounded range.
 */
#ifndef NS_SCTP_TSNMAP_H
#define NS_SCTP_TSNMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "sctp/types.h"

/* Upper bounds for one SACK description. The caller passes smaller limits
 * to fit the PMTU (a 1500-byte path has room for 368 gap blocks). */
#define NS_SCTP_SACK_MAX_GAPS 256
#define NS_SCTP_SACK_MAX_DUPS 64

/* Span used when ns_sctp_tsnmap_init is given 0: 64 Ki TSNs (8 KiB of
 * bitmap), enough for a full default receive window (212992 bytes) of
 * chunks of 4 bytes or more. */
#define NS_SCTP_TSNMAP_DEFAULT_SPAN 65536u

#define NS_SCTP_TSNMAP_COUNTERS(X)                                                                 \
    X(rx_new)         /* TSNs accepted as new */                                                   \
    X(rx_dup)         /* duplicate TSNs (at or below cum, or already held) */                      \
    X(rx_out_window)  /* TSNs beyond cum + span: dropped */                                        \
    X(dup_overflow)   /* duplicates not listed because the dup list was full */                    \
    X(sack_immediate) /* packet_done decided "SACK now" */                                         \
    X(sack_delayed)   /* packet_done armed or kept the delayed-SACK deadline */                    \
    X(sacks_built)    /* SACK descriptions produced */                                             \
    X(gaps_truncated) /* SACKs that had more gap blocks than the caller's limit */

struct ns_sctp_tsnmap_stats {
    NS_SCTP_TSNMAP_COUNTERS(NS_CTR_FIELD)
};

/* What to send in a SACK chunk. gaps[i] = {start, end} offsets from cum_tsn
 * (RFC 9260 section 3.3.4), ascending; the layout matches what
 * ns_sctp_wr_sack() takes. a_rwnd is left 0 by the map: the association
 * fills it from reassembly (ns_sctp_reasm_advertise()). */
struct ns_sctp_sack_info {
    uint32_t cum_tsn;
    uint32_t a_rwnd;
    uint16_t n_gaps, n_dups;
    uint16_t gaps[NS_SCTP_SACK_MAX_GAPS][2];
    uint32_t dups[NS_SCTP_SACK_MAX_DUPS];
};

enum ns_sctp_tsn_verdict {
    NS_SCTP_TSN_NEW,           /* not seen: hand it to reassembly, then mark it */
    NS_SCTP_TSN_DUP,           /* seen before: already listed for the next SACK; drop it */
    NS_SCTP_TSN_OUT_OF_WINDOW, /* beyond cum + span: drop it, do not mark */
};

/* Why packet_done wants an immediate SACK (bit set), for tests and tracing. */
#define NS_SCTP_SACKWHY_FREQ 0x01 /* sack_freq packets with DATA since the last SACK */
#define NS_SCTP_SACKWHY_GAP  0x02 /* out-of-order data: a gap exists after this packet */
#define NS_SCTP_SACKWHY_DUP  0x04 /* a duplicate TSN arrived */
#define NS_SCTP_SACKWHY_FILL 0x08 /* this packet closed (part of) a gap */
#define NS_SCTP_SACKWHY_IBIT 0x10 /* a DATA chunk carried the I bit (RFC 7053) */
#define NS_SCTP_SACKWHY_DROP 0x20 /* a DATA chunk was dropped (window, memory): tell the peer */

struct ns_sctp_tsnmap {
    uint32_t cum_tsn; /* highest TSN with every TSN at or below it received */
    uint32_t max_tsn; /* highest TSN received (== cum_tsn when no gaps) */
    uint32_t span;    /* bitmap size in TSNs, a power of two */
    uint64_t *bits;   /* bit (tsn & (span-1)) set = received, for cum < tsn <= cum+span */
    uint32_t held;    /* TSNs above cum that are marked received */

    uint32_t dups[NS_SCTP_SACK_MAX_DUPS];
    uint16_t n_dups;

    /* Delayed SACK state (RFC 9260 section 6.2). */
    uint32_t sack_freq;       /* SACK at least every this many DATA packets */
    uint64_t sack_timeout_us; /* ... and no later than this after the first unacked */
    uint32_t pkts_unacked;    /* packets with new DATA since the last SACK */
    uint64_t sack_deadline;   /* NS_TIME_NEVER when no SACK is owed */
    uint8_t pkt_why;          /* NS_SCTP_SACKWHY_* gathered for the current packet */
    bool pkt_had_data;        /* a DATA chunk (new or dup) was seen in the current packet */
    bool had_gap_before;      /* a gap existed when the current packet started */
    uint32_t cum_before;      /* cum_tsn when the current packet started */

    struct ns_sctp_tsnmap_stats stats;
};

/* Set up for a peer whose INIT/INIT ACK carried initial_tsn: the cumulative
 * TSN starts at initial_tsn - 1. span = 0 picks NS_SCTP_TSNMAP_DEFAULT_SPAN;
 * other values are rounded up to a power of two (minimum 64). The delayed
 * SACK parameters come from p (sack_freq, sack_timeout_ms). Returns 0 or
 * -ENOMEM. */
int ns_sctp_tsnmap_init(struct ns_sctp_tsnmap *m, uint32_t initial_tsn, uint32_t span,
                        const struct ns_sctp_params *p);
/* Start over at initial_tsn (an association restart, RFC 9260 5.2.4),
 * keeping the bitmap's memory and the counters: nothing to allocate, so
 * nothing can fail. */
void ns_sctp_tsnmap_reset(struct ns_sctp_tsnmap *m, uint32_t initial_tsn,
                          const struct ns_sctp_params *p);
void ns_sctp_tsnmap_free(struct ns_sctp_tsnmap *m);

/* Classify a received TSN. A duplicate is recorded for the next SACK (once
 * per arrival, up to NS_SCTP_SACK_MAX_DUPS) and makes the current packet
 * want an immediate SACK. Does not mark a new TSN. */
enum ns_sctp_tsn_verdict ns_sctp_tsnmap_check(struct ns_sctp_tsnmap *m, uint32_t tsn);

/* The association dropped a DATA chunk of the current packet that check()
 * called NEW (reassembly refused it, or the zero-window rule of RFC 9260
 * section 6.2): the SACK for this packet goes out at once so the peer
 * learns the real state. check() does this itself for out-of-window TSNs. */
void ns_sctp_tsnmap_dropped(struct ns_sctp_tsnmap *m);

/* Record a new TSN as received (only after check() said NEW). Advances the
 * cumulative TSN over any run that becomes contiguous. i_bit: the chunk had
 * the RFC 7053 I bit, which makes the current packet's SACK immediate. */
void ns_sctp_tsnmap_mark(struct ns_sctp_tsnmap *m, uint32_t tsn, bool i_bit);

/* The association processed every DATA chunk of one received packet.
 * Returns true if a SACK must be sent now (before the association's reply
 * packet goes out, ideally bundled with it); otherwise the delayed-SACK
 * deadline (ns_sctp_tsnmap_sack_deadline) is set or unchanged. A packet
 * without DATA chunks should not be reported. `why` (may be NULL) receives
 * NS_SCTP_SACKWHY_* bits. */
bool ns_sctp_tsnmap_packet_done(struct ns_sctp_tsnmap *m, uint64_t now, uint8_t *why);

/* When the owed SACK must go out at the latest, NS_TIME_NEVER if none. The
 * association fires its SACK timer at this time and then builds a SACK. */
static inline uint64_t ns_sctp_tsnmap_sack_deadline(const struct ns_sctp_tsnmap *m)
{
    return m->sack_deadline;
}

/* Fill s with the cumulative TSN, at most max_gaps gap blocks (lowest
 * first; more than that are left out and counted) and at most max_dups
 * duplicate TSNs, then forget the listed duplicates and the delayed-SACK
 * state (the SACK is considered sent). a_rwnd is set to 0 for the caller to
 * fill. Limits above the NS_SCTP_SACK_MAX_* bounds are clamped. */
void ns_sctp_tsnmap_build_sack(struct ns_sctp_tsnmap *m, struct ns_sctp_sack_info *s,
                               uint16_t max_gaps, uint16_t max_dups);

static inline uint32_t ns_sctp_tsnmap_cum(const struct ns_sctp_tsnmap *m)
{
    return m->cum_tsn;
}
/* The highest TSN received so far (RFC 9260 section 6.2 zero-window rule:
 * with a_rwnd 0, a new TSN above this is dropped). */
static inline uint32_t ns_sctp_tsnmap_highest(const struct ns_sctp_tsnmap *m)
{
    return m->max_tsn;
}
static inline bool ns_sctp_tsnmap_has_gaps(const struct ns_sctp_tsnmap *m)
{
    return m->max_tsn != m->cum_tsn;
}
/* Whether tsn is received (at or below cum, or marked in the window). */
bool ns_sctp_tsnmap_is_received(const struct ns_sctp_tsnmap *m, uint32_t tsn);

#endif
