/* The IPv4 layer of one stack: its state (routes, path MTUs, reassembly,
 * ICMP rate limits, UDP sockets, counters) and the table through which the
 * protocols above it (SCTP, ...) register their input and ICMP error
 * handlers by protocol number, as Linux's inet_protos does. IPv4 sits on a
 * link (interfaces, Ethernet output) and its ARP table; it knows no upper
 * layer. */
#ifndef NS_IPV4_LAYER_H
#define NS_IPV4_LAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/rng.h"
#include "core/timer.h"
#include "ipv4/icmp.h"
#include "ipv4/ip_params.h"
#include "ipv4/ipv4.h"
#include "ipv4/reass.h"
#include "ipv4/route.h"
#include "ipv4/udp.h"
#include "link/arp.h"
#include "link/iface.h"

/* Input of a protocol: pkt->data at its header, the IPv4 header in front
 * (ns_ip_rx_hdr). bcast: sent to a broadcast address. Takes ownership. */
typedef void (*ns_ip_proto_input_fn)(void *ctx, struct ns_pkt *pkt, uint32_t src, uint32_t dst,
                                     bool bcast, uint64_t now);
/* An ICMP error quoting one of our datagrams of this protocol from src to
 * dst: l4 holds the first l4_len (>= 8) quoted bytes of its header. mtu:
 * the next-hop MTU of a fragmentation-needed (0 otherwise); err: the errno
 * a socket would see. */
typedef void (*ns_ip_proto_err_fn)(void *ctx, uint32_t src, uint32_t dst, const uint8_t *l4,
                                   uint32_t l4_len, uint8_t type, uint8_t code, uint32_t mtu,
                                   int err, uint64_t now);

struct ns_ip_proto {
    uint8_t proto; /* 0: free */
    ns_ip_proto_input_fn input;
    ns_ip_proto_err_fn err;
    void *ctx;
};

#define NS_IP_MAX_PROTOS 4

struct ns_ipv4 {
    struct ns_link *link;
    struct ns_arp *arp;
    struct ns_timers *timers;
    struct ns_rng *rng;
    const struct ns_ip_params *params;

    uint32_t gateway; /* default route's next hop, 0 = none */
    uint16_t ip_id;
    struct ns_reass reass;
    struct ns_pmtu_cache pmtu;
    struct ns_icmp_rl icmp_rl;
    struct ns_udp_table udp;
    struct ns_ip_proto protos[NS_IP_MAX_PROTOS];

    struct ns_ip_stats stats;
    struct ns_icmp_stats icmp_stats;
    struct ns_udp_stats udp_stats;

    /* Echo replies and errors for the embedder's echo requests (ping):
     * the embedder's hook, set through ns_stack_set_icmp_event. */
    ns_stack_icmp_event_fn icmp_event;
    void *icmp_ctx;
};

/* IPv4 over link l and its ARP table; registers EtherType 0x0800 with l.
 * 0 or -errno. The composer points arp->unreachable at
 * ns_ipv4_neigh_unreachable (ctx ip). */
int ns_ipv4_init(struct ns_ipv4 *ip, struct ns_link *l, struct ns_arp *arp,
                 const struct ns_ip_params *params, struct ns_timers *timers, struct ns_rng *rng);
void ns_ipv4_free(struct ns_ipv4 *ip);
/* ARP's report of a queued packet whose next hop did not resolve: the
 * local sender hears EHOSTUNREACH, anything else an ICMP host unreachable
 * goes back. ctx: the ns_ipv4. Takes pkt. */
void ns_ipv4_neigh_unreachable(void *ctx, struct ns_pkt *pkt, uint64_t now);
/* Protocol `proto` is delivered to input and gets the ICMP errors quoting
 * it through err (either may be NULL). 0, -EEXIST, -ENOSPC. */
int ns_ipv4_register(struct ns_ipv4 *ip, uint8_t proto, ns_ip_proto_input_fn input,
                     ns_ip_proto_err_fn err, void *ctx);
const struct ns_ip_proto *ns_ipv4_proto(const struct ns_ipv4 *ip, uint8_t proto);

#endif
