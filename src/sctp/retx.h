/* Outstanding data: TSN assignment, SACK processing, fast retransmit, T3
 * expiry marking, peer receive window and flight size (RFC 9260 sections
 * 6.1-6.3, 6.2.1, 7.2.4).
 *
 * Who calls what (all from the association, single-threaded):
 *  - Output routine, per packet it builds to a path:
 *      ns_sctp_retx_cwnd_allows(path, packets_so_far) gates the packet
 *        (cwnd vs flight, and Max.Burst packets per output pass, 6.1 D:
 *        the "strictly limit the packets emitted" variant);
 *      retransmissions first: c = ns_sctp_retx_next_rtx(room), add it to
 *        the packet, ns_sctp_retx_resent(c, path, now);
 *      then new data: ns_sctp_retx_rwnd_allows(len) (6.1 A, including the
 *        zero-window probe), c = ns_sctp_sendq_pull(...), add it, then
 *        ns_sctp_retx_send_new(c, path, now), which assigns the TSN.
 *    After a SACK reported a fast retransmit, one packet of retransmissions
 *    goes out at once without the cwnd check (7.2.4 step 3).
 *  - Received SACK: ns_sctp_retx_sack() with the parsed values; the result
 *    says which T3 timers to stop/restart/start and whether to fast
 *    retransmit. It drives the paths' congestion control (cc.h).
 *  - T3-rtx expiry for a path: ns_sctp_retx_t3_expired(); then the output
 *    routine retransmits what fits in the (now 1-MTU) cwnd.
 *
 * Outstanding chunks sit on one list in TSN order (TSNs are consecutive,
 * appended at send time). A SACK without gap blocks, with no gap-acked
 * chunk held, only pops acknowledged chunks from the head; gap blocks cost a
 * walk over the outstanding range. Flight size counts payload bytes that are
 * neither acknowledged (cum or gap) nor marked for retransmission.
 */
#ifndef NS_SCTP_RETX_H
#define NS_SCTP_RETX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "sctp/cc.h"
#include "sctp/sendq.h"
#include "sctp/types.h"

#define NS_SCTP_RETX_COUNTERS(X)                                                                   \
    X(chunks_sent)     /* new DATA chunks given a TSN */                                           \
    X(chunks_resent)   /* retransmissions (fast and T3) */                                         \
    X(fast_rtx_marked) /* chunks marked on the third miss indication */                            \
    X(t3_marked)       /* chunks marked by T3 expiry */                                            \
    X(t3_expiries)     /* ns_sctp_retx_t3_expired calls */                                         \
    X(sacks)           /* SACKs processed */                                                       \
    X(sack_stale)      /* SACKs ignored: cum TSN ack older than the last */                        \
    X(sack_invalid)    /* SACKs acknowledging TSNs never sent */                                   \
    X(gap_bad)         /* gap blocks ignored: start > end, start 0 or past the last TSN sent */    \
    X(reneged)         /* gap-acked chunks later reported missing */                               \
    X(rtt_samples)     /* RTT measurements taken */                                                \
    X(zwp)             /* zero-window probes allowed */

struct ns_sctp_retx_stats {
    NS_SCTP_RETX_COUNTERS(NS_CTR_FIELD)
};

/* What a processed SACK means for the association. Path masks have bit i
 * for path index i. */
struct ns_sctp_sack_result {
    bool cum_advanced;     /* the cumulative TSN ack point moved */
    bool fast_rtx;         /* chunks were marked for fast retransmit: send one packet now */
    uint32_t bytes_acked;  /* payload newly acknowledged (cum and gap) */
    uint32_t chunks_freed; /* chunks released by the cumulative ack */
    uint32_t reneged;      /* gap-acked chunks no longer reported */
    uint8_t t3_stop;       /* paths with nothing outstanding: stop T3 (6.3.2 R2) */
    uint8_t t3_restart;    /* earliest outstanding TSN of the path acked, data remains (R3) */
    uint8_t t3_start;      /* reneged data on the path: start T3 if not running (6.2.1) */
    bool all_acked;        /* nothing outstanding at all (SHUTDOWN may proceed) */
};

enum ns_sctp_sack_verdict {
    NS_SCTP_SACK_OK,
    NS_SCTP_SACK_STALE,   /* cum TSN ack below the current one: ignored (6.2.1 D i) */
    NS_SCTP_SACK_INVALID, /* cum TSN ack at or past the next TSN: protocol violation */
};

struct ns_sctp_retx {
    struct ns_sctp_sendq *sq; /* chunks go back here when acknowledged */
    struct ns_sctp_cc *paths[NS_SCTP_MAX_PATHS];
    uint32_t max_burst;

    uint32_t next_tsn;  /* TSN of the next new chunk */
    uint32_t cum_ack;   /* the peer's cumulative TSN ack point */
    uint32_t peer_rwnd; /* the peer's rwnd as tracked by 6.2.1 */

    struct ns_sctp_txchunk *head, *tail; /* outstanding chunks, TSN order */
    uint32_t n_chunks;                   /* chunks on the list */
    uint32_t flight;                     /* payload bytes in flight */
    uint32_t outstanding_bytes;          /* payload of chunks neither cum- nor gap-acked */
    uint32_t n_gap_acked;                /* chunks currently gap-acked */
    uint32_t n_rtx;                      /* chunks marked for retransmission */
    struct ns_sctp_txchunk *rtx_cursor;  /* no marked chunk precedes it; NULL = from head */

    uint32_t path_outstanding[NS_SCTP_MAX_PATHS];     /* chunks neither cum- nor gap-acked */
    struct ns_sctp_txchunk *timed[NS_SCTP_MAX_PATHS]; /* RTT measurement in progress */

    struct ns_sctp_retx_stats stats;
};

/* Set up for an association whose INIT/INIT ACK announced our initial TSN
 * (the first DATA gets it; the cum ack point starts one below) and whose
 * peer advertised peer_rwnd. Chunks are returned to sq. Paths are added
 * with ns_sctp_retx_set_path before the first send. */
void ns_sctp_retx_init(struct ns_sctp_retx *rx, const struct ns_sctp_params *p,
                       struct ns_sctp_sendq *sq, uint32_t initial_tsn, uint32_t peer_rwnd);
/* Releases every outstanding chunk to the send queue. */
void ns_sctp_retx_free(struct ns_sctp_retx *rx);
/* Attach (or detach with NULL) the congestion state of path idx (<
 * NS_SCTP_MAX_PATHS). Chunks already sent to a detached path are treated
 * as sent to no path: the association should first mark them with
 * t3_expired so they move on. */
void ns_sctp_retx_set_path(struct ns_sctp_retx *rx, uint8_t idx, struct ns_sctp_cc *cc);

/* May another packet with DATA go to path now? False when the path's
 * flight is at or above its cwnd, or packets_this_pass has reached
 * Max.Burst. (Sending a full packet may then exceed cwnd by less than one
 * MTU, as RFC 9260 section 6.1 B allows.) */
bool ns_sctp_retx_cwnd_allows(const struct ns_sctp_retx *rx, uint8_t path,
                              uint32_t packets_this_pass);
/* May a new DATA chunk of len payload bytes be sent, as far as the peer's
 * window goes? Yes if len <= rwnd, or if nothing is in flight (the
 * zero-window probe of RFC 9260 section 6.1 A, which also keeps a chunk
 * larger than a small window from stalling). */
bool ns_sctp_retx_rwnd_allows(struct ns_sctp_retx *rx, uint32_t len);

/* A new chunk (from ns_sctp_sendq_pull) was put in a packet to path: give
 * it the next TSN (returned), queue it as outstanding, charge flight and
 * rwnd, and start an RTT measurement on the path if none runs. */
uint32_t ns_sctp_retx_send_new(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c, uint8_t path,
                               uint64_t now);

/* The lowest-TSN chunk marked for retransmission if its wire size fits in
 * room bytes; NULL if none is marked or it does not fit. */
struct ns_sctp_txchunk *ns_sctp_retx_next_rtx(struct ns_sctp_retx *rx, uint32_t room);
/* The chunk from next_rtx was put in a packet to path: unmark it, count it
 * as in flight again (on its new path), charge rwnd (6.2.1 C), and exclude
 * it from RTT measurement (Karn). */
void ns_sctp_retx_resent(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c, uint8_t path,
                         uint64_t now);

/* Process a received SACK: gaps[i] = {start, end} offsets from cum_tsn as
 * parsed from the chunk (any order; bad blocks are ignored and counted).
 * Frees cumulatively acknowledged chunks, marks/unmarks gap-acked ones
 * (reneging), counts miss indications with the HTNA rule and marks chunks
 * on their third miss for fast retransmit (each chunk at most once), takes
 * an RTT sample (Karn), updates each path's cc and the peer's rwnd
 * (a_rwnd minus bytes still in flight). res may be NULL. */
enum ns_sctp_sack_verdict ns_sctp_retx_sack(struct ns_sctp_retx *rx, uint32_t cum_tsn,
                                            uint32_t a_rwnd, const uint16_t (*gaps)[2],
                                            uint16_t ngaps, uint64_t now,
                                            struct ns_sctp_sack_result *res);

/* The T3-rtx timer of path expired: mark every chunk sent there that is
 * not gap-acked for retransmission (6.3.3 E3), remove them from the flight,
 * and apply the T3 reduction and RTO back-off to the path's cc. Returns the
 * number of chunks marked. */
uint32_t ns_sctp_retx_t3_expired(struct ns_sctp_retx *rx, uint8_t path, uint64_t now);

static inline uint32_t ns_sctp_retx_flight(const struct ns_sctp_retx *rx)
{
    return rx->flight;
}
static inline uint32_t ns_sctp_retx_peer_rwnd(const struct ns_sctp_retx *rx)
{
    return rx->peer_rwnd;
}
/* Nothing sent is waiting for an acknowledgement (gap-acked chunks still
 * count as waiting, since the peer may renege). */
static inline bool ns_sctp_retx_all_acked(const struct ns_sctp_retx *rx)
{
    return rx->n_chunks == 0;
}
static inline bool ns_sctp_retx_has_rtx(const struct ns_sctp_retx *rx)
{
    return rx->n_rtx != 0;
}
static inline uint32_t ns_sctp_retx_path_outstanding(const struct ns_sctp_retx *rx, uint8_t path)
{
    return path < NS_SCTP_MAX_PATHS ? rx->path_outstanding[path] : 0;
}
static inline uint32_t ns_sctp_retx_cum_ack(const struct ns_sctp_retx *rx)
{
    return rx->cum_ack;
}
static inline uint32_t ns_sctp_retx_next_tsn(const struct ns_sctp_retx *rx)
{
    return rx->next_tsn;
}

#endif
