/* Writer internals shared by the chunk_*.c files (private to the codec:
 * the engine uses chunk.h). See chunk.h for the writer's rules.
 *
 * Every failure is born in one of the primitives (start, begin, bytes,
 * tlv_begin/end, end, the DATA and SACK writers, the size checks of the
 * helpers) and goes through wr_fail, which records the writer's first
 * error. Every public call opens with wr_stuck: the one branch latching
 * costs a call that succeeds. A helper that writes several pieces brackets
 * them with wr_txn_begin / wr_txn_end: inside, the pieces latch, so they
 * need no checks between them, and on failure the bytes are undone and the
 * failure stays the writer's (what every public call promises: a failed
 * call leaves the packet as it was). */
#ifndef NS_SCTP_CHUNK_WR_H
#define NS_SCTP_CHUNK_WR_H

#include "sctp/chunk.h"

static inline uint32_t wr_room(const struct ns_sctp_writer *w)
{
    return w->budget - w->used;
}

/* A latching writer that has failed: the call is a no-op returning w->err. */
static inline bool wr_stuck(const struct ns_sctp_writer *w)
{
    return w->err != NS_SCTP_WR_OK && w->latch;
}

/* Where a failure is born: recorded if it is the first. */
static inline enum ns_sctp_wr_res wr_fail(struct ns_sctp_writer *w, enum ns_sctp_wr_res r)
{
    if (w->err == NS_SCTP_WR_OK)
        w->err = r;
    return r;
}

/* Append n bytes at the end of the packet: in the head until the first frag,
 * in the side buffer after. The caller has checked the budget. */
static inline uint8_t *wr_emit(struct ns_sctp_writer *w, uint32_t n)
{
    uint8_t *d;
    if (w->pkt->nfrags == 0) {
        d = ns_pkt_put(w->pkt, n);
    } else {
        d = w->side->data + w->side_used;
        w->side_used += n;
    }
    w->used += n;
    return d;
}

/* Reference the side buffer's bytes not yet in the packet as a frag. */
void wr_flush_side(struct ns_sctp_writer *w);

/* Zero bytes up to the next 4-byte boundary of the open chunk (chunk
 * starts are aligned, so the packet offset is what matters); *written gets
 * how many. */
enum ns_sctp_wr_res wr_align(struct ns_sctp_writer *w, uint8_t *written);

/* A TLV wrapping a received parameter or chunk whole, its padding inside
 * the wrapper's length (3.2, 3.2.1). */
enum ns_sctp_wr_res wr_tlv_wrap(struct ns_sctp_writer *w, uint16_t type, const uint8_t *raw,
                                uint16_t len);

/* A helper's pieces as one call (see above): t is a section that keeps its
 * failure as the writer's error. */
static inline void wr_txn_begin(struct ns_sctp_writer *w, struct ns_sctp_wr_opt *t)
{
    ns_sctp_wr_opt_begin(w, t);
}
enum ns_sctp_wr_res wr_txn_end(struct ns_sctp_writer *w, const struct ns_sctp_wr_opt *t);

#endif
