/* Inbound streams: reassembly of fragmented messages, ordered and unordered
 * delivery, partial delivery and receive-window accounting (RFC 9260
 * sections 6.2, 6.5, 6.6, 6.9; RFC 6458 section 8.1.21 partial delivery).
 *
 * Who calls what:
 *  - The association, for every DATA chunk tsnmap classified NEW, calls
 *    ns_sctp_reasm_rx(). On NS_SCTP_RX_OK or NS_SCTP_RX_BAD_SID it marks
 *    the TSN in the tsnmap (a chunk for an invalid stream is acknowledged
 *    and discarded, and the association sends an Invalid Stream Identifier
 *    error, RFC 9260 section 6.5); on NS_SCTP_RX_NOMEM it drops the chunk
 *    unmarked (the peer retransmits) and calls ns_sctp_tsnmap_dropped() so
 *    the SACK goes out at once; NS_SCTP_RX_INVALID is a protocol violation
 *    (the association aborts or drops); NS_SCTP_RX_DUP is dropped.
 *  - Complete messages (and partial-delivery pieces) collect on a delivery
 *    queue; the socket layer takes them all in O(1) with
 *    ns_sctp_reasm_take() and calls ns_sctp_reasm_msg_free() when the
 *    application has read a message, which reopens the receive window.
 *  - When building a SACK the association asks ns_sctp_reasm_advertise()
 *    for a_rwnd; after the application read data it asks
 *    ns_sctp_reasm_window_update_due() whether a window-update SACK is worth
 *    sending (receiver silly window avoidance, RFC 9260 section 6.2 citing
 *    RFC 813 and RFC 1122 4.2.3.3: the window is reopened only in steps of
 *    at least min(rcvbuf / 2, MTU)).
 *
 * Without I-DATA, the fragments of a message carry consecutive TSNs and the
 * same SSN (RFC 9260 section 6.9), so a message is a run of TSNs from a B
 * fragment to an E fragment within one stream. Each stream keeps its
 * incomplete fragments in a TSN-sorted list; each fragment that is
 * contiguous with a B fragment points to it, which makes completion and the
 * partial delivery test O(1) for in-order arrival.
 *
 * Partial delivery (our choice, documented as required): when the
 * contiguous prefix of the next deliverable message of a stream (ordered:
 * its SSN is the stream's next; unordered: any) reaches the partial
 * delivery point (pd_point_bytes, default and maximum rcvbuf / 2), or the
 * receive window is full, the prefix is delivered as a piece without EOR and
 * the rest follows in pieces as it arrives, the last with EOR. While a
 * partial delivery is in progress nothing else is delivered, from any
 * stream (RFC 6458 fragment interleave level 0): messages completing
 * meanwhile wait, in completion order, and are delivered right after the
 * last piece. Only one partial delivery runs at a time.
 *
 * Accounting: the receive window counts payload bytes held here (incomplete,
 * waiting for order, waiting behind a partial delivery) plus bytes delivered
 * but not yet freed by the socket layer. reasm_max_bytes bounds the memory
 * held for reassembly, charged at payload + sizeof(struct ns_sctp_rchunk)
 * per chunk; a chunk that would exceed it is refused with NS_SCTP_RX_NOMEM
 * unless the caller says it is the next TSN in sequence (which always
 * completes or extends a deliverable message, so accepting it cannot
 * deadlock the association).
 */
#ifndef NS_SCTP_REASM_H
#define NS_SCTP_REASM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "sctp/sendq.h" /* struct ns_sctp_pool */
#include "sctp/types.h"

#define NS_SCTP_REASM_COUNTERS(X)                                                                  \
    X(chunks_in)      /* chunks accepted */                                                        \
    X(bytes_in)       /* payload bytes accepted */                                                 \
    X(msgs_delivered) /* complete messages delivered (PD pieces not counted) */                    \
    X(pd_started)     /* partial deliveries started */                                             \
    X(pd_pieces)      /* partial delivery pieces delivered */                                      \
    X(bad_sid)        /* chunks for a stream id >= the inbound stream count */                     \
    X(nomem)          /* chunks refused: reasm_max_bytes or pool allocation */                     \
    X(invalid)        /* empty chunks, inconsistent fragments, stale SSNs */                       \
    X(dup)            /* chunks with a TSN already held (tsnmap should filter) */

struct ns_sctp_reasm_stats {
    NS_SCTP_REASM_COUNTERS(NS_CTR_FIELD)
};

/* One received DATA chunk held by reassembly or delivered in a message. In
 * a delivered message only `next` and `d` are meaningful; d.buf holds a
 * reference released by ns_sctp_reasm_msg_free(). */
struct ns_sctp_rchunk {
    struct ns_sctp_rchunk *next, *prev;
    struct ns_sctp_chunk_data d;
    struct ns_sctp_rchunk *run_b;      /* the B fragment this one is contiguous with, or NULL */
    uint32_t prefix_len;               /* on a B fragment: payload bytes contiguous from it */
    struct ns_sctp_rchunk *prefix_end; /* on a B fragment: last fragment of that prefix */
};

/* rmsg flags */
#define NS_SCTP_RMSG_EOR       0x01 /* ends a message (every whole message; the last PD piece) */
#define NS_SCTP_RMSG_UNORDERED 0x02
#define NS_SCTP_RMSG_PARTIAL   0x04 /* a piece of a partially delivered message */

/* A complete message or a partial-delivery piece: its chunks' payloads in
 * order. tsn is the first chunk's; sid/ssn/ppid are the message's. */
struct ns_sctp_rmsg {
    struct ns_sctp_rmsg *next;
    struct ns_sctp_rchunk *chunks; /* linked by next */
    uint32_t len;                  /* payload bytes */
    uint32_t nchunks;
    uint32_t tsn;
    uint32_t ppid;
    uint16_t sid, ssn;
    uint16_t flags;    /* NS_SCTP_RMSG_* */
    uint32_t assoc_id; /* set by the association layer: rcvinfo for the socket layer */
};

struct ns_sctp_rmsgq {
    struct ns_sctp_rmsg *head, *tail;
    uint32_t count;
    uint32_t bytes;
};

static inline void ns_sctp_rmsgq_init(struct ns_sctp_rmsgq *q)
{
    q->head = q->tail = NULL;
    q->count = q->bytes = 0;
}
/* Move every message of src to the tail of dst in O(1). */
void ns_sctp_rmsgq_splice(struct ns_sctp_rmsgq *dst, struct ns_sctp_rmsgq *src);
struct ns_sctp_rmsg *ns_sctp_rmsgq_pop(struct ns_sctp_rmsgq *q);

/* Copy len bytes of the message's payload starting at off to dst; returns
 * the number copied (less when the message is shorter). */
uint32_t ns_sctp_rmsg_copy(const struct ns_sctp_rmsg *m, uint32_t off, void *dst, uint32_t len);

struct ns_sctp_istream {
    struct ns_sctp_rchunk *frags, *frags_tail; /* incomplete fragments, TSN order */
    struct ns_sctp_rmsg *waiting;              /* complete ordered messages, SSN order */
    uint16_t next_ssn;                         /* SSN of the next ordered message to deliver */
};

enum ns_sctp_rx_verdict {
    NS_SCTP_RX_OK,      /* held or delivered: mark the TSN */
    NS_SCTP_RX_BAD_SID, /* stream id out of range: mark, discard, send an ERROR */
    NS_SCTP_RX_NOMEM,   /* over reasm_max_bytes (or allocation failed): drop unmarked */
    NS_SCTP_RX_INVALID, /* empty, outside its buffer, inconsistent fragments, stale SSN */
    NS_SCTP_RX_DUP,     /* this TSN is already held: drop */
};

struct ns_sctp_reasm {
    uint32_t rcvbuf;   /* rcvbuf_bytes */
    uint32_t max_mem;  /* reasm_max_bytes */
    uint32_t pd_point; /* effective partial delivery point */

    struct ns_sctp_istream *streams;
    uint16_t n_streams;   /* valid stream ids are below this */
    uint32_t streams_cap; /* entries allocated (never shrinks) */

    uint32_t held_bytes;   /* payload held here (not delivered) */
    uint32_t held_mem;     /* held_bytes + per-chunk overhead, bounded by max_mem */
    uint32_t unread_bytes; /* delivered, not yet freed by the socket layer */
    uint32_t last_adv;     /* a_rwnd of the last SACK (SWS avoidance) */

    /* Partial delivery in progress (at most one). */
    bool pd_active;
    uint16_t pd_sid;
    uint32_t pd_next_tsn;        /* TSN of the next fragment to deliver */
    struct ns_sctp_rmsg pd_meta; /* sid/ssn/ppid/flags of the message in progress */

    struct ns_sctp_rmsgq ready; /* deliverable, for the socket layer */
    struct ns_sctp_rmsgq held;  /* complete, waiting behind the partial delivery */

    struct ns_sctp_pool chunk_pool;
    struct ns_sctp_pool msg_pool;

    struct ns_sctp_reasm_stats stats;
};

/* Set up with p->rcvbuf_bytes, p->reasm_max_bytes, p->pd_point_bytes and
 * n_in_streams inbound streams (1..65535, from the negotiation). Returns 0
 * or -ENOMEM. */
int ns_sctp_reasm_init(struct ns_sctp_reasm *r, const struct ns_sctp_params *p,
                       uint16_t n_in_streams);
/* Releases everything, including messages on the delivery queue (not those
 * already taken by the socket layer: it frees them with msg_free first). */
void ns_sctp_reasm_free(struct ns_sctp_reasm *r);
/* Change the inbound stream count (stream reconfiguration); streams that
 * remain keep their state. Returns 0 or -ENOMEM. */
int ns_sctp_reasm_set_streams(struct ns_sctp_reasm *r, uint16_t n_in_streams);

/* Take one new DATA chunk (tsnmap said NEW). Takes its own reference on
 * d->buf; the caller keeps its own. in_seq: d->tsn is the cumulative TSN + 1
 * (accepted even over the memory bound). May move messages to the delivery
 * queue. */
enum ns_sctp_rx_verdict ns_sctp_reasm_rx(struct ns_sctp_reasm *r,
                                         const struct ns_sctp_chunk_data *d, bool in_seq);

static inline bool ns_sctp_reasm_has_ready(const struct ns_sctp_reasm *r)
{
    return r->ready.head != NULL;
}
/* Splice every deliverable message onto dst (the socket's receive queue). */
void ns_sctp_reasm_take(struct ns_sctp_reasm *r, struct ns_sctp_rmsgq *dst);
/* The application is done with a message taken from the delivery queue:
 * its bytes leave the window accounting and its chunks are released. Must
 * run under the same serialization as the rest of the association. */
void ns_sctp_reasm_msg_free(struct ns_sctp_reasm *r, struct ns_sctp_rmsg *m);

/* Free receive buffer in bytes, before silly window avoidance. */
uint32_t ns_sctp_reasm_rwnd(const struct ns_sctp_reasm *r);
/* The a_rwnd to put in the SACK being built, with receiver SWS avoidance:
 * a free window below min(rcvbuf / 2, mtu) is advertised as 0, so it only
 * ever reopens by at least that much. Remembered as the last advertised
 * window. */
uint32_t ns_sctp_reasm_advertise(struct ns_sctp_reasm *r, uint32_t mtu);
/* True when the free window exceeds the last advertised one by at least
 * min(rcvbuf / 2, mtu): send a SACK as a window update. */
bool ns_sctp_reasm_window_update_due(const struct ns_sctp_reasm *r, uint32_t mtu);

static inline bool ns_sctp_reasm_pd_active(const struct ns_sctp_reasm *r)
{
    return r->pd_active;
}
static inline uint16_t ns_sctp_reasm_next_ssn(const struct ns_sctp_reasm *r, uint16_t sid)
{
    return sid < r->n_streams ? r->streams[sid].next_ssn : 0;
}

#endif
