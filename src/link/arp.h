/* ARP (RFC 826) for IPv4 over Ethernet, and the IPv4 resolver of the
 * neighbour engine. Input follows Linux's arp_process(): a request for one of
 * our addresses creates or refreshes the sender's entry as STALE; replies
 * update existing entries only (REACHABLE if unicast to us, else STALE);
 * gratuitous ARP never creates entries; nothing overrides within locktime.
 * RFC 5227 probes (sender 0.0.0.0) are answered but teach nothing. */
#ifndef NS_LINK_ARP_H
#define NS_LINK_ARP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "link/eth.h"
#include "link/neigh.h"

#define NS_ARP_LEN 28
#define NS_ARPOP_REQUEST 1
#define NS_ARPOP_REPLY 2

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

#define NS_ARP_COUNTERS(X)                                                                  \
    X(rx) X(rx_requests) X(rx_replies) X(rx_gratuitous) X(tx_requests) X(tx_replies)        \
    X(tx_gratuitous) X(drop_short) X(drop_bad_format) X(drop_bad_op) X(drop_bogus_sender)   \
    X(drop_not_for_us) X(ignored_locktime) X(ignored_permanent) X(ignored_unsolicited)

struct ns_arp_stats {
    NS_ARP_COUNTERS(NS_CTR_FIELD)
};

struct ns_stack;
struct ns_iface;

/* The neighbour ops ARP gives the engine (solicit / output / error_report). */
extern const struct ns_neigh_ops ns_arp_neigh_ops;

/* Handle a received ARP packet (pkt->data at the ARP body). Takes ownership. */
void ns_arp_input(struct ns_stack *s, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now);
/* Broadcast a gratuitous ARP request announcing ifc's address. */
void ns_arp_announce(struct ns_stack *s, struct ns_iface *ifc, uint64_t now);
/* Send one ARP packet out of ifc (link-layer dst: broadcast if NULL). */
int ns_arp_send(struct ns_stack *s, struct ns_iface *ifc, uint16_t op, const struct ns_mac *eth_dst,
                uint32_t spa, const struct ns_mac *tha, uint32_t tpa, uint64_t now);

#endif
