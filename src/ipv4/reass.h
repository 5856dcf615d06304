/* IPv4 fragment reassembly (RFC 791, RFC 815 hole list; overlapping
 * fragments are rejected as RFC 5722 does for IPv6 and Linux does for
 * IPv4). Memory is capped by ipv4.ipfrag_high_thresh across all datagrams;
 * an incomplete datagram is dropped after ipv4.ipfrag_time_ms, and an ICMP
 * time-exceeded (reassembly) goes back if the first fragment arrived. */
#ifndef NS_IPV4_REASS_H
#define NS_IPV4_REASS_H

#include <stdint.h>

#include "ipv4/ip_params.h"
#include "core/pkt.h"
#include "core/rng.h"
#include "core/timer.h"
#include "ipv4/ipv4.h"

struct ns_reass_frag;

struct ns_reass_dgram {
    struct ns_reass_dgram *next; /* hash chain */
    struct ns_reass_dgram *lru_prev, *lru_next;
    uint32_t src, dst;
    uint16_t id;
    uint8_t proto;
    uint32_t total_len; /* payload length, known once the last fragment is in */
    uint32_t have_len;  /* payload bytes held */
    uint32_t mem;       /* bytes charged against the cap */
    uint32_t nfrags;
    struct ns_reass_frag *frags; /* sorted by offset, non-overlapping */
    struct ns_pkt *first;        /* the offset-0 fragment, kept for its header */
    struct ns_timer timer;
    struct ns_reass *r;
};

struct ns_reass {
    const struct ns_ip_params *parms;
    struct ns_timers *timers;
    struct ns_ip_stats *stats;
    struct ns_reass_dgram *buckets[256];
    struct ns_reass_dgram *lru_head, *lru_tail; /* oldest first, evicted when over the cap */
    uint32_t mem;
    uint32_t count;
    /* Mixed into the bucket hash so remote hosts cannot aim all their
     * datagrams at one chain: drawn from seed_rng when the first fragment
     * arrives (so a stack that never reassembles draws nothing); 0 after
     * ns_reass_init until then, or for good without a seed_rng. */
    uint32_t hash_seed;
    struct ns_rng *seed_rng;
    /* Called for a datagram that timed out with its first fragment (for
     * ICMP time exceeded); pkt is the first fragment, not owned. */
    void (*on_timeout)(void *ctx, const struct ns_pkt *first, uint64_t now);
    void *ctx;
};

void ns_reass_init(struct ns_reass *r, const struct ns_ip_params *parms, struct ns_timers *timers,
                   struct ns_ip_stats *stats);
void ns_reass_free(struct ns_reass *r);
/* Add a fragment (pkt->data at its IPv4 header, h its parsed header).
 * Takes ownership. Returns the whole datagram (data at a rebuilt IPv4 header
 * with tot_len and no fragment bits) once complete, else NULL. */
struct ns_pkt *ns_reass_add(struct ns_reass *r, struct ns_pkt *pkt, const struct ns_ip_hdr *h,
                            uint64_t now);

#endif
