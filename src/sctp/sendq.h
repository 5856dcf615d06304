/* Outbound user messages: per-stream queues, SSN assignment, fragmentation
 * into DATA chunks and send-buffer accounting (RFC 9260 sections 6.1, 6.6,
 * 6.9).
 *
 * The socket layer calls ns_sctp_sendq_enqueue() for every user message:
 * the bytes are copied once, into a shared append-only arena buffer (small
 * messages) or a buffer of their own (large ones); every DATA chunk made
 * from the message references that buffer, so nothing is copied again, not
 * even on retransmission.
 *
 * The association's output routine calls ns_sctp_sendq_pull() for each
 * chunk it wants to bundle into the packet it is building: the message is
 * cut into fragments at that moment, with the fragment size the caller
 * derives from the current PMTU, so a PMTU change applies to the rest of a
 * message not yet sent. Once the first fragment of a message has been
 * pulled the remaining fragments come next, before any other message, since
 * without I-DATA (RFC 8260) a message's fragments take consecutive TSNs
 * (RFC 9260 section 6.9). The pulled chunk (struct ns_sctp_txchunk) then
 * belongs to the retransmission queue (retx.h), which gives it its TSN and
 * hands it back with ns_sctp_sendq_chunk_done() once it is acknowledged.
 *
 * Scheduling across streams is FCFS by default: messages leave in the order
 * they were enqueued, whatever their stream (as Linux's default "fcfs"
 * scheduler). NS_SCTP_SCHED_RR takes one message per stream in turn among
 * streams that have data.
 *
 * Send buffer: bytes queued (not yet pulled) plus bytes pulled and not yet
 * acknowledged must stay within sndbuf_bytes (payload bytes, not counting
 * headers). A message larger than the free space gets -EAGAIN, except that a
 * completely empty send buffer takes any message up to max_message_bytes,
 * so a message larger than sndbuf can still be sent.
 */
#ifndef NS_SCTP_SENDQ_H
#define NS_SCTP_SENDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "sctp/types.h"

/* ---- Fixed-size object pool ------------------------------------------ */

/* Free list of equal-size objects carved from slabs of `per_slab` objects;
 * slabs are only released by ns_sctp_pool_free, so the steady state does no
 * allocation. Used for transmit chunks and messages here and by reasm.h for
 * received chunks and messages. Single-threaded. */
struct ns_sctp_pool {
    void *free;        /* free objects, linked through their first word */
    void *slabs;       /* allocated slabs, linked through their first word */
    uint32_t obj_size; /* >= sizeof(void *) */
    uint32_t per_slab;
    uint32_t in_use; /* objects handed out */
    uint32_t total;  /* objects carved so far */
};

void ns_sctp_pool_init(struct ns_sctp_pool *p, size_t obj_size, uint32_t per_slab);
/* Frees every slab: objects still in use become invalid. */
void ns_sctp_pool_free(struct ns_sctp_pool *p);
/* An object (contents undefined), or NULL when a new slab cannot be allocated. */
void *ns_sctp_pool_get(struct ns_sctp_pool *p);
void ns_sctp_pool_put(struct ns_sctp_pool *p, void *obj);

/* ---- Transmit chunks ------------------------------------------------- */

/* txchunk flags, owned by retx.c after the chunk is pulled. */
#define NS_SCTP_TXC_GAP_ACKED 0x01 /* acknowledged by a gap block (revocable) */
#define NS_SCTP_TXC_RTX       0x02 /* marked for retransmission, not yet resent */
#define NS_SCTP_TXC_RESENT    0x04 /* transmitted more than once (Karn: no RTT sample) */
#define NS_SCTP_TXC_FAST_DONE 0x08 /* already fast-retransmitted: not eligible again */
#define NS_SCTP_TXC_TIMED     0x10 /* the RTT measurement of its path times this chunk */

/* One DATA chunk on its way out. d.buf holds a reference to the message's
 * buffer. `next` links the chunk into the retransmission queue. */
struct ns_sctp_txchunk {
    struct ns_sctp_txchunk *next;
    struct ns_sctp_chunk_data d; /* tsn assigned by retx; flags B/E/U as on the wire */
    uint64_t sent_at;            /* last transmission, microseconds */
    uint32_t context;            /* the user's context of the message (for send-failed events) */
    uint8_t path;                /* retx: destination of the last transmission */
    uint8_t state;               /* NS_SCTP_TXC_* */
    uint8_t misses;              /* retx: miss indications (RFC 9260 section 7.2.4) */
    uint8_t sends;               /* retx: number of transmissions */
};

/* Bytes a DATA chunk carrying len payload bytes takes in a packet. */
static inline uint32_t ns_sctp_data_wire_len(uint32_t len)
{
    return 16u + ((len + 3u) & ~3u);
}

/* ---- Send queue ------------------------------------------------------ */

#define NS_SCTP_SENDQ_COUNTERS(X)                                                                  \
    X(msgs_queued)     /* user messages accepted */                                                \
    X(bytes_queued)    /* user bytes accepted */                                                   \
    X(chunks_pulled)   /* DATA chunks produced */                                                  \
    X(msgs_fragmented) /* messages sent as more than one chunk */                                  \
    X(eagain)          /* enqueue refused: send buffer full */                                     \
    X(emsgsize)        /* enqueue refused: larger than max_message_bytes */                        \
    X(einval)          /* enqueue refused: bad stream or empty message */                          \
    X(enomem)          /* enqueue or pull failed to allocate */

struct ns_sctp_sendq_stats {
    NS_SCTP_SENDQ_COUNTERS(NS_CTR_FIELD)
};

/* enqueue flags */
#define NS_SCTP_SEND_UNORDERED 0x01 /* deliver as soon as received (U bit) */

enum ns_sctp_sched { NS_SCTP_SCHED_FCFS, NS_SCTP_SCHED_RR };

struct ns_sctp_smsg; /* a queued user message, private to sendq.c */

struct ns_sctp_ostream {
    struct ns_sctp_smsg *head, *tail; /* messages not fully pulled yet (RR scheduler) */
    uint16_t next_ssn;                /* SSN for the next ordered message */
    bool on_rr;                       /* linked into the round-robin ring */
    uint16_t rr_next;                 /* next stream in the RR ring */
};

struct ns_sctp_sendq {
    uint32_t sndbuf;      /* bytes queued + in flight limit */
    uint32_t max_message; /* max_message_bytes */
    enum ns_sctp_sched sched;

    struct ns_sctp_ostream *streams;
    uint16_t n_streams;   /* streams the user may send on */
    uint32_t streams_cap; /* entries allocated (never shrinks: queued data stays valid) */

    /* FCFS: one association-wide FIFO of messages. RR: per-stream FIFOs and
     * a ring of streams with data (rr_cur is the next stream to serve). */
    struct ns_sctp_smsg *fifo_head, *fifo_tail;
    bool rr_any;
    uint16_t rr_cur, rr_prev;

    struct ns_sctp_smsg *cur; /* message whose fragments are being pulled */

    uint32_t queued_bytes;   /* enqueued, not yet pulled */
    uint32_t inflight_bytes; /* pulled, not yet released by chunk_done */
    uint32_t queued_msgs;

    /* Small messages share an append-only arena buffer; each chunk taking a
     * reference keeps the arena alive as long as needed. */
    struct ns_buf *arena;
    uint32_t arena_used;

    struct ns_sctp_pool msg_pool;
    struct ns_sctp_pool chunk_pool;

    struct ns_sctp_sendq_stats stats;
};

/* Messages up to this size are copied into the shared arena; larger ones
 * get a buffer of their own. */
#define NS_SCTP_SENDQ_ARENA_MSG_MAX 2048u
#define NS_SCTP_SENDQ_ARENA_SIZE    65536u

/* Set up with p->sndbuf_bytes, p->max_message_bytes and n_out_streams (the
 * negotiated number of outbound streams, 1..65535). Returns 0 or -ENOMEM. */
int ns_sctp_sendq_init(struct ns_sctp_sendq *q, const struct ns_sctp_params *p,
                       uint16_t n_out_streams);
/* Drops every queued message; chunks still held by retx must have been
 * released (ns_sctp_retx_free does that) before. */
void ns_sctp_sendq_free(struct ns_sctp_sendq *q);

/* Change the number of outbound streams (after INIT ACK / stream reset),
 * keeping the SSNs of existing streams. Queued messages on streams that go
 * away stay queued and are sent. Returns 0 or -ENOMEM. */
int ns_sctp_sendq_set_streams(struct ns_sctp_sendq *q, uint16_t n_out_streams);
/* Switch the scheduler; only while nothing is queued (-EBUSY otherwise). */
int ns_sctp_sendq_set_sched(struct ns_sctp_sendq *q, enum ns_sctp_sched s);

/* Queue one user message (socket layer, sendmsg). The bytes are copied.
 * Returns 0, -EINVAL (sid >= streams or len 0: RFC 9260 forbids empty DATA),
 * -EMSGSIZE (len > max_message_bytes), -EAGAIN (not enough free send
 * buffer; retry when ns_sctp_sendq_space() grows) or -ENOMEM. */
int ns_sctp_sendq_enqueue(struct ns_sctp_sendq *q, uint16_t sid, const void *data, uint32_t len,
                          uint32_t ppid, uint32_t flags, uint32_t context);
/* The same without the copy: the message is len bytes at b->data + off,
 * which must not change until the queue lets go of its reference (taken
 * only on success). */
int ns_sctp_sendq_enqueue_buf(struct ns_sctp_sendq *q, uint16_t sid, struct ns_buf *b, uint32_t off,
                              uint32_t len, uint32_t ppid, uint32_t flags, uint32_t context);

/* Produce the next DATA chunk for the packet being built (association
 * output routine). room: bytes left in the packet for this chunk including
 * its 16-byte header and padding; max_payload: the fragment size for the
 * current PMTU (payload bytes of a DATA chunk alone in a packet). A message
 * longer than max_payload is cut into max_payload-sized fragments with the
 * remainder last. Returns NULL when nothing is queued or the next chunk
 * does not fit in room (close the packet and call again with a fresh one),
 * or on allocation failure. The chunk's tsn is 0 until retx assigns it. */
struct ns_sctp_txchunk *ns_sctp_sendq_pull(struct ns_sctp_sendq *q, uint32_t room,
                                           uint32_t max_payload);

/* The wire size (ns_sctp_data_wire_len) of the chunk pull() would return
 * next with this max_payload, 0 if nothing is queued. Lets the association
 * decide whether to bundle or wait (Nagle-like delay). */
uint32_t ns_sctp_sendq_peek_len(const struct ns_sctp_sendq *q, uint32_t max_payload);

/* retx is done with a chunk (acknowledged, or the association is going
 * away): its bytes leave the send buffer and it returns to the pool. */
void ns_sctp_sendq_chunk_done(struct ns_sctp_sendq *q, struct ns_sctp_txchunk *c);

/* Free send-buffer space for the socket layer (POLLOUT, SO_SNDBUF). */
static inline uint32_t ns_sctp_sendq_space(const struct ns_sctp_sendq *q)
{
    uint32_t used = q->queued_bytes + q->inflight_bytes;
    return used >= q->sndbuf ? 0 : q->sndbuf - used;
}
static inline bool ns_sctp_sendq_empty(const struct ns_sctp_sendq *q)
{
    return q->queued_msgs == 0;
}
/* The SSN the next ordered message on sid will get (tests, stream reset). */
static inline uint16_t ns_sctp_sendq_next_ssn(const struct ns_sctp_sendq *q, uint16_t sid)
{
    return sid < q->n_streams ? q->streams[sid].next_ssn : 0;
}

#endif
