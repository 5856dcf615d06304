/* Packet buffers.
 *
 * A packet is a linear head (where every layer pushes its header into the
 * headroom reserved at allocation) followed by up to NS_PKT_MAX_FRAGS
 * scatter-gather fragments that reference other refcounted buffers. SCTP
 * bundles chunks and retransmits by referencing the same payload buffer from
 * several packets instead of copying it; devices hand the pieces to writev.
 *
 * Buffers are refcounted atomically because the socket layer hands them
 * between the stack thread and application threads. A packet itself has one
 * owner at a time.
 */
#ifndef NS_CORE_PKT_H
#define NS_CORE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nstack/pkt.h"

#define NS_PKT_MAX_FRAGS 8
_Static_assert(NS_PKT_MAX_FRAGS + 1 == NS_PKT_MAX_IOV, "the head and every fragment");
/* Ethernet (14) + IPv4 with options (60) + UDP (8) + SCTP common (12) + slack. */
#define NS_PKT_HEADROOM 128

struct ns_buf {
    _Atomic uint32_t refcnt;
    uint32_t cap;
    uint8_t data[];
};

struct ns_buf *ns_buf_alloc(uint32_t cap);
struct ns_buf *ns_buf_get(struct ns_buf *b);
void ns_buf_put(struct ns_buf *b);

struct ns_frag {
    struct ns_buf *buf;
    uint32_t off;
    uint32_t len;
};

struct ns_pkt {
    struct ns_pkt *next; /* queue linkage, owned by whoever holds the packet */
    struct ns_buf *buf;  /* the linear head's storage */
    uint8_t *data;       /* first valid byte of the head */
    uint32_t len;        /* valid bytes in the head */
    uint32_t frag_len;   /* sum of frags[].len */
    uint8_t nfrags;
    struct ns_frag frags[NS_PKT_MAX_FRAGS];

    /* Metadata that travels with the packet between layers. */
    uint32_t ifindex;
    uint32_t nexthop; /* IPv4 next hop (host order), set by routing */
    uint16_t l3_off;  /* offset of the network header in the head (rx) */
    uint16_t l4_off;  /* offset of the transport header in the head (rx) */
    uint16_t flags;
    uint64_t ts; /* time the packet entered the stack, microseconds */
};

#define NS_PKT_F_BCAST 0x1 /* received as link-layer broadcast */
#define NS_PKT_F_MCAST 0x2 /* received as link-layer multicast */
#define NS_PKT_F_LOCAL 0x4 /* originated by this host (not forwarded) */
/* (tx) the UDP checksum field holds the pseudo header's sum only; the
 * device finishes it (checksum offload: dev/vnet.h). Set only for an
 * interface whose device said it can (ns_iface.tx_csum_offload). */
#define NS_PKT_F_CSUM_PARTIAL 0x8

/* A packet with `headroom` bytes free in front and room for `size` bytes of
 * head data; len starts at 0. Returns NULL on allocation failure. */
struct ns_pkt *ns_pkt_alloc(uint32_t headroom, uint32_t size);
/* A packet holding a copy of `len` bytes, with NS_PKT_HEADROOM in front. */

static inline uint32_t ns_pkt_len(const struct ns_pkt *p)
{
    return p->len + p->frag_len;
}
static inline uint32_t ns_pkt_headroom(const struct ns_pkt *p)
{
    return (uint32_t)(p->data - p->buf->data);
}
static inline uint32_t ns_pkt_tailroom(const struct ns_pkt *p)
{
    return p->buf->cap - ns_pkt_headroom(p) - p->len;
}

/* Prepend n bytes to the head; NULL if the headroom is short. */
uint8_t *ns_pkt_push(struct ns_pkt *p, uint32_t n);
/* Drop n bytes from the front of the head; NULL if the head is shorter. */
uint8_t *ns_pkt_pull(struct ns_pkt *p, uint32_t n);
/* Append n bytes to the head (only while there are no frags); NULL if no room. */
uint8_t *ns_pkt_put(struct ns_pkt *p, uint32_t n);
/* Shorten the packet to len bytes in total (frags first, then the head). */
void ns_pkt_trim(struct ns_pkt *p, uint32_t len);
/* Reference len bytes at off of buf as a new fragment; false if full. */
bool ns_pkt_add_frag(struct ns_pkt *p, struct ns_buf *buf, uint32_t off, uint32_t len);
/* Copy len bytes starting at off (across head and frags) to dst; false if the
 * packet is shorter than off+len. */
/* Make the whole packet linear in its head (allocating if needed), keeping
 * at least `headroom` bytes of headroom. Returns false on allocation failure. */
bool ns_pkt_linearize(struct ns_pkt *p, uint32_t headroom);
/* A new packet sharing this one's buffers (headers pushed onto the clone
 * later go into a fresh head, so the original is never written). */
struct ns_pkt *ns_pkt_clone(const struct ns_pkt *p);
/* A deep copy with its own linear buffer and NS_PKT_HEADROOM headroom. */
struct ns_pkt *ns_pkt_copy(const struct ns_pkt *p);
/* Fill iov (up to max entries) with the packet's pieces; returns the count. */

/* Allocation failure injection: when set, the n-th next allocation (1 = the
 * next one) and every `period`-th after it fail. Per process; tests only. */
void ns_alloc_fail_set(uint64_t nth, uint64_t period);
bool ns_alloc_should_fail(void);
/* How many times ns_alloc_should_fail was asked while armed (allocation
 * sites passed), so a test can sweep the failure over each of them: arm
 * with ns_alloc_fail_set(UINT64_MAX, 0) to count without failing. */
uint64_t ns_alloc_calls(void);

/* Live packet memory of the whole process (every stack instance and the
 * socket layer together): buffers, their capacity in bytes, and packet
 * descriptors. Soak and fault tests check that these come back to their
 * baseline at quiescent points. Counted only after ns_pkt_gauges_enable(),
 * which a test calls before any buffer exists (a buffer allocated before
 * and freed after would be miscounted). */
struct ns_pkt_gauges {
    uint64_t bufs;
    uint64_t buf_bytes;
    uint64_t pkts;
};
void ns_pkt_gauges(struct ns_pkt_gauges *out);
void ns_pkt_gauges_enable(void);

/* FIFO of packets with byte and count accounting. */
struct ns_pktq {
    struct ns_pkt *head, *tail;
    uint32_t count;
    uint32_t bytes;
};

static inline void ns_pktq_init(struct ns_pktq *q)
{
    q->head = q->tail = NULL;
    q->count = q->bytes = 0;
}
void ns_pktq_push(struct ns_pktq *q, struct ns_pkt *p);
struct ns_pkt *ns_pktq_pop(struct ns_pktq *q);
/* Move every packet of src to the tail of dst in O(1). */
void ns_pktq_splice(struct ns_pktq *dst, struct ns_pktq *src);
void ns_pktq_purge(struct ns_pktq *q);

#endif
