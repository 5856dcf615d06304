/* IPv4 routing: on-link subnets of each interface, one default gateway, and
 * a path-MTU cache fed by ICMP fragmentation-needed (RFC 1191). */
#ifndef NS_IPV4_ROUTE_H
#define NS_IPV4_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

struct ns_ipv4;
struct ns_iface;

struct ns_route {
    struct ns_iface *ifc;
    uint32_t nexthop; /* the destination itself when on-link */
    uint32_t src;     /* the interface's address */
    uint32_t mtu;     /* min(interface MTU, cached path MTU) */
};

/* Longest-prefix match over the interfaces' subnets, then the gateway.
 * Returns false (no route) when nothing matches. */
bool ns_route_lookup(struct ns_ipv4 *ip, uint32_t dst, uint64_t now, struct ns_route *rt);

#define NS_PMTU_SLOTS 64
struct ns_pmtu_entry {
    uint32_t dst;
    uint32_t mtu;
    uint64_t expires;
};
struct ns_pmtu_cache {
    struct ns_pmtu_entry e[NS_PMTU_SLOTS];
};

/* Learn a smaller path MTU for dst (never below 68, never raised). */
void ns_pmtu_update(struct ns_ipv4 *ip, uint32_t dst, uint32_t mtu, uint64_t now);
/* 0 when nothing (unexpired) is known. */
uint32_t ns_pmtu_get(struct ns_ipv4 *ip, uint32_t dst, uint64_t now);

#endif
