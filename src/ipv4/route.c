/* IPv4 route selection and the path-MTU cache.
 *
 * RFC 1122 section 3.3.1 (a host sends on-link destinations directly and
 * everything else to a gateway, which must itself be on-link), RFC 3021
 * (/31 point-to-point prefixes have no broadcast address), RFC 1191
 * section 3 (hosts keep a per-destination PMTU estimate that only shrinks on
 * ICMP reports and is forgotten after a while so increases are noticed).
 */
#include "ipv4/route.h"

#include <string.h>

#include "ipv4/layer.h"

#define PMTU_MIN 68 /* RFC 791: every host must take 68-byte datagrams */

/* Longest prefix among up interfaces with an address that covers a. */
static struct ns_iface *onlink(struct ns_ipv4 *ip, uint32_t a)
{
    struct ns_iface *best = NULL;
    for (uint32_t i = 0; i < ip->link->n_ifaces; i++) {
        struct ns_iface *ifc = &ip->link->ifaces[i];
        if (!ifc->up || !ifc->addr)
            continue;
        uint32_t m = ns_ip_mask(ifc->plen);
        if ((a & m) == (ifc->addr & m) && (!best || ifc->plen > best->plen))
            best = ifc;
    }
    return best;
}

/* The route without the PMTU cache. */
static bool route_base(struct ns_ipv4 *ip, uint32_t dst, struct ns_route *rt)
{
    struct ns_iface *ifc = NULL;
    uint32_t nexthop = dst;
    if (dst == 0xffffffffu) {
        /* Limited broadcast never leaves the link: the first interface that
         * is up, even without an address (a DHCP client's case). */
        for (uint32_t i = 0; i < ip->link->n_ifaces && !ifc; i++)
            if (ip->link->ifaces[i].up)
                ifc = &ip->link->ifaces[i];
    } else if (dst == 0 || ns_ip_is_mcast(dst) || (dst >> 28) == 0xf || (dst >> 24) == 127) {
        /* Unspecified, multicast (no group support), class E and loopback
         * (no loopback device) are not routable here. */
        return false;
    } else if (!(ifc = onlink(ip, dst))) {
        if (!ip->gateway || !(ifc = onlink(ip, ip->gateway)))
            return false;
        nexthop = ip->gateway;
    }
    if (!ifc)
        return false;
    rt->ifc = ifc;
    rt->nexthop = nexthop;
    rt->src = ifc->addr;
    rt->mtu = ifc->mtu;
    return true;
}

bool ns_route_lookup(struct ns_ipv4 *ip, uint32_t dst, uint64_t now, struct ns_route *rt)
{
    if (!route_base(ip, dst, rt))
        return false;
    uint32_t pmtu = dst == 0xffffffffu ? 0 : ns_pmtu_get(ip, dst, now);
    if (pmtu && pmtu < rt->mtu)
        rt->mtu = pmtu;
    return true;
}

static bool live(const struct ns_pmtu_entry *e, uint64_t now)
{
    return e->mtu != 0 && e->expires > now;
}

void ns_pmtu_update(struct ns_ipv4 *ip, uint32_t dst, uint32_t mtu, uint64_t now)
{
    struct ns_route rt;
    if (!route_base(ip, dst, &rt) || dst == 0xffffffffu)
        return;
    if (mtu < PMTU_MIN)
        mtu = PMTU_MIN;
    /* A report at or above the link MTU teaches nothing (and would let a
     * forged ICMP raise the estimate). */
    if (mtu >= rt.mtu)
        return;
    uint64_t expires = now + (uint64_t)ip->params->pmtu_expires_ms * NS_MS;
    struct ns_pmtu_entry *victim = NULL;
    for (int i = 0; i < NS_PMTU_SLOTS; i++) {
        struct ns_pmtu_entry *e = &ip->pmtu.e[i];
        if (live(e, now) && e->dst == dst) {
            if (mtu < e->mtu) {
                e->mtu = mtu;
                e->expires = expires;
            }
            return;
        }
        /* Prefer a free or expired slot; otherwise the one closest to
         * expiry, which (one lifetime for all) is the oldest. */
        if (!victim || (live(victim, now) && (!live(e, now) || e->expires < victim->expires)))
            victim = e;
    }
    victim->dst = dst;
    victim->mtu = mtu;
    victim->expires = expires;
}

uint32_t ns_pmtu_get(struct ns_ipv4 *ip, uint32_t dst, uint64_t now)
{
    for (int i = 0; i < NS_PMTU_SLOTS; i++) {
        const struct ns_pmtu_entry *e = &ip->pmtu.e[i];
        if (live(e, now) && e->dst == dst)
            return e->mtu;
    }
    return 0;
}
