/* ARP (RFC 826) for IPv4 over Ethernet, and the IPv4 resolver of the
 * neighbour engine. Input follows Linux's arp_process() with arp_accept=0,
 * arp_ignore=0, arp_announce=0: a request for one of our addresses (on an
 * interface that has an address) creates or refreshes the sender's entry as
 * STALE and is answered; replies and others' requests update existing
 * entries only (REACHABLE if a unicast reply, else STALE); gratuitous ARP
 * never creates entries and never asserts reachability; nothing replaces a
 * cached MAC within locktime of the entry's last change (also for requests
 * for us, where Linux always overrides). RFC 5227 probes (sender 0.0.0.0)
 * are answered but teach nothing. */
#ifndef NS_LINK_ARP_H
#define NS_LINK_ARP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "link/eth.h"
#include "link/iface.h"
#include "link/neigh.h"

#define NS_ARP_LEN       28
#define NS_ARPOP_REQUEST 1
#define NS_ARPOP_REPLY   2

struct ns_arp_msg {
    uint16_t op;
    struct ns_mac sha; /* sender hardware address */
    uint32_t spa;      /* sender protocol address, host order */
    struct ns_mac tha;
    uint32_t tpa;
};

enum ns_arp_verdict {
    NS_ARP_OK = 0,
    NS_ARP_SHORT,
    NS_ARP_BAD_HTYPE, /* not Ethernet (1) or wrong hlen */
    NS_ARP_BAD_PTYPE, /* not IPv4 (0x0800) or wrong plen */
    NS_ARP_BAD_OP,
};

/* Parse the 28-byte ARP body (after the Ethernet header). */
enum ns_arp_verdict ns_arp_parse(const uint8_t *b, uint32_t len, struct ns_arp_msg *m);
void ns_arp_write(uint8_t *out, const struct ns_arp_msg *m);

/* rx counts every ARP packet handed to ns_arp_input; each is then either
 * dropped by exactly one drop_* counter or parsed (rx_requests/rx_replies,
 * and rx_gratuitous when sender IP == target IP).
 *   drop_bogus_sender  sender MAC multicast/broadcast/zero/ours; sender IP
 *                      multicast, class E, 255.255.255.255, loopback, the
 *                      interface's subnet broadcast, one of our addresses
 *                      (a conflict), or 0.0.0.0 outside an RFC 5227 probe
 *   drop_bogus_target  target IP multicast or loopback
 *   drop_not_for_us    a request for someone else from a sender we have
 *                      no entry for (nothing to learn)
 *   ignored_unsolicited a reply or gratuitous ARP with no entry to update
 *   ignored_locktime   a different MAC within locktime of the last update
 *   ignored_permanent  an update aimed at a PERMANENT/NOARP entry
 * tx_requests counts solicitations, tx_gratuitous announcements. */
/* clang-format off */
#define NS_ARP_COUNTERS(X)                                                                  \
    X(rx) X(rx_requests) X(rx_replies) X(rx_gratuitous) X(tx_requests) X(tx_replies)        \
    X(tx_gratuitous) X(drop_short) X(drop_bad_format) X(drop_bad_op) X(drop_bogus_sender)   \
    X(drop_not_for_us) X(ignored_locktime) X(ignored_permanent) X(ignored_unsolicited)      \
    X(drop_bogus_target) X(tx_nomem)
/* clang-format on */

struct ns_arp_stats {
    NS_ARP_COUNTERS(NS_CTR_FIELD)
};

/* ARP on one stack's link: the IPv4 neighbour table and its counters. */
struct ns_arp {
    struct ns_link *link;
    struct ns_neigh_table tbl; /* "arp_cache" */
    struct ns_arp_stats stats;
    const struct ns_neigh_params *parms;
    /* A queued packet whose next hop did not resolve (IPv4 registers this:
     * host unreachable to the packet's sender). Takes pkt; NULL frees it. */
    void (*unreachable)(void *ctx, struct ns_pkt *pkt, uint64_t now);
    void *unreachable_ctx;
};

/* Keys of the ARP table: the 4-byte IPv4 address in network byte
 * order (as on the wire). */
static inline void ns_arp_key(uint32_t addr, uint8_t key[4])
{
    key[0] = (uint8_t)(addr >> 24);
    key[1] = (uint8_t)(addr >> 16);
    key[2] = (uint8_t)(addr >> 8);
    key[3] = (uint8_t)addr;
}
static inline uint32_t ns_arp_key_addr(const uint8_t *key)
{
    return (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
}

/* The table (neighbour engine with ARP's solicit / output / error_report)
 * on link l, registered for EtherType 0x0806. 0 or -ENOMEM. */
int ns_arp_init(struct ns_arp *a, struct ns_link *l, const struct ns_neigh_params *parms,
                struct ns_timers *timers, struct ns_rng *rng, uint64_t now);
void ns_arp_free(struct ns_arp *a);

/* Handle a received ARP packet (pkt->data at the ARP body). Takes ownership. */
void ns_arp_input(struct ns_arp *a, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now);
/* Broadcast a gratuitous ARP request announcing ifc's address. */
void ns_arp_announce(struct ns_arp *a, struct ns_iface *ifc, uint64_t now);
/* Send one ARP packet out of ifc (link-layer dst: broadcast if NULL; ARP
 * target hardware address: zero if tha is NULL). Counted as tx_replies,
 * tx_gratuitous (a request with spa == tpa) or tx_requests. Returns 0,
 * -ENETDOWN (interface down) or -ENOMEM. */
int ns_arp_send(struct ns_arp *a, struct ns_iface *ifc, uint16_t op, const struct ns_mac *eth_dst,
                uint32_t spa, const struct ns_mac *tha, uint32_t tpa, uint64_t now);

#endif
