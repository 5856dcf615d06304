/* ARP for IPv4 over Ethernet: RFC 826 (packet format, the reception
 * algorithm: learn from requests aimed at us), RFC 5227 sections 1.1, 2.1.1
 * and 3 (probes from 0.0.0.0 are answered but teach nothing; gratuitous
 * announcements), RFC 1122 section 2.3.2.1 (cache entries are refreshed by
 * traffic, not created by every packet heard). The input rules follow
 * Linux's arp_process() with its defaults (arp_accept=0, arp_ignore=0,
 * arp_announce=0), except that a locktime also guards the entry of a sender
 * whose request is for us. The cache itself is the neighbour engine. */
#include "link/arp.h"

#include <errno.h>
#include <string.h>

#include "core/bytes.h"

enum ns_arp_verdict ns_arp_parse(const uint8_t *b, uint32_t len, struct ns_arp_msg *m)
{
    if (len < NS_ARP_LEN)
        return NS_ARP_SHORT;
    if (ns_rd16(b) != 1 || b[4] != NS_ETH_ALEN)
        return NS_ARP_BAD_HTYPE;
    if (ns_rd16(b + 2) != NS_ETHERTYPE_IPV4 || b[5] != 4)
        return NS_ARP_BAD_PTYPE;
    uint16_t op = ns_rd16(b + 6);
    if (op != NS_ARPOP_REQUEST && op != NS_ARPOP_REPLY)
        return NS_ARP_BAD_OP;
    m->op = op;
    memcpy(m->sha.b, b + 8, NS_ETH_ALEN);
    m->spa = ns_rd32(b + 14);
    memcpy(m->tha.b, b + 18, NS_ETH_ALEN);
    m->tpa = ns_rd32(b + 24);
    return NS_ARP_OK;
}

void ns_arp_write(uint8_t *out, const struct ns_arp_msg *m)
{
    ns_wr16(out, 1);
    ns_wr16(out + 2, NS_ETHERTYPE_IPV4);
    out[4] = NS_ETH_ALEN;
    out[5] = 4;
    ns_wr16(out + 6, m->op);
    memcpy(out + 8, m->sha.b, NS_ETH_ALEN);
    ns_wr32(out + 14, m->spa);
    memcpy(out + 18, m->tha.b, NS_ETH_ALEN);
    ns_wr32(out + 24, m->tpa);
}

int ns_arp_send(struct ns_arp *a, struct ns_iface *ifc, uint16_t op, const struct ns_mac *eth_dst,
                uint32_t spa, const struct ns_mac *tha, uint32_t tpa, uint64_t now)
{
    if (!ifc->up)
        return -ENETDOWN;
    /* Room for the Ethernet padding too, so the frame is never copied. */
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, NS_ETH_MIN_FRAME - NS_ETH_HLEN);
    if (!p) {
        a->stats.tx_nomem++;
        return -ENOMEM;
    }
    struct ns_arp_msg m = {
        .op = op, .sha = ifc->mac, .spa = spa, .tha = tha ? *tha : ns_mac_zero, .tpa = tpa};
    ns_arp_write(ns_pkt_put(p, NS_ARP_LEN), &m);
    p->ts = now;
    p->flags |= NS_PKT_F_LOCAL;
    if (op == NS_ARPOP_REPLY)
        a->stats.tx_replies++;
    else if (spa == tpa && spa != 0)
        a->stats.tx_gratuitous++;
    else
        a->stats.tx_requests++;
    ns_eth_output(a->link, ifc, p, eth_dst ? eth_dst : &ns_mac_bcast, NS_ETHERTYPE_ARP);
    return 0;
}

void ns_arp_announce(struct ns_arp *a, struct ns_iface *ifc, uint64_t now)
{
    if (ifc->addr)
        ns_arp_send(a, ifc, NS_ARPOP_REQUEST, NULL, ifc->addr, NULL, ifc->addr, now);
}

/* ---- the neighbour engine's ops ------------------------------------------ */

static void arp_solicit(void *ctx, struct ns_neigh *n, const uint8_t *dst_lladdr,
                        const struct ns_pkt *skb, uint64_t now)
{
    struct ns_arp *a = ctx;
    struct ns_iface *ifc = ns_link_iface(a->link, n->ifindex);
    if (!ifc)
        return;
    /* arp_announce=0: the waiting packet's own source, when it is one of
     * ours, so the peer learns the address it is about to hear from. */
    uint32_t spa = ifc->addr;
    uint8_t h[16];
    if (skb && ns_pkt_copy_out(skb, 0, h, sizeof(h)) && (h[0] >> 4) == 4) {
        uint32_t src = ns_rd32(h + 12);
        if (src && ns_link_iface_by_addr(a->link, src))
            spa = src;
    }
    struct ns_mac dst;
    if (dst_lladdr)
        memcpy(dst.b, dst_lladdr, NS_ETH_ALEN);
    ns_arp_send(a, ifc, NS_ARPOP_REQUEST, dst_lladdr ? &dst : NULL, spa, NULL,
                ns_arp_key_addr(n->key), now);
}

static void arp_output(void *ctx, struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_arp *a = ctx;
    struct ns_iface *ifc = ns_link_iface(a->link, n->ifindex);
    if (!ifc) {
        ns_pkt_free(pkt);
        return;
    }
    struct ns_mac dst;
    memcpy(dst.b, n->lladdr, NS_ETH_ALEN);
    ns_eth_output(a->link, ifc, pkt, &dst, NS_ETHERTYPE_IPV4);
}

static void arp_error_report(void *ctx, struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_arp *a = ctx;
    (void)n;
    if (a->unreachable)
        a->unreachable(a->unreachable_ctx, pkt, now);
    else
        ns_pkt_free(pkt);
}

static const struct ns_neigh_ops arp_neigh_ops = {
    .solicit = arp_solicit,
    .output = arp_output,
    .error_report = arp_error_report,
};

/* ---- input ---------------------------------------------------------------- */

static bool bogus_mac(const struct ns_iface *ifc, const struct ns_mac *m)
{
    return ns_mac_is_mcast(m->b) || ns_mac_eq(m, &ns_mac_zero) || ns_mac_eq(m, &ifc->mac);
}

/* Addresses no host may claim as its own on a link. */
static bool bogus_sender_ip(struct ns_arp *a, const struct ns_iface *ifc, uint32_t ip)
{
    if ((ip >> 28) >= 0xe) /* multicast, class E, limited broadcast */
        return true;
    if ((ip >> 24) == 127)
        return true;
    if (ifc->addr && ifc->plen <= 30) {
        uint32_t mask = ifc->plen ? ~0u << (32 - ifc->plen) : 0;
        if ((ip & mask) == (ifc->addr & mask) && (ip | mask) == ~0u)
            return true;
    }
    return ns_link_iface_by_addr(a->link, ip) != NULL;
}

static bool t_before(uint64_t a, uint64_t b)
{
    return (int64_t)(a - b) < 0;
}

/* Offer the sender's MAC to its entry. Within locktime of the last change a
 * different MAC is refused: with several answers back to back (proxies, a
 * spoofer racing the real host) the first one stays. */
static void learn(struct ns_arp *a, struct ns_neigh *n, const struct ns_mac *sha, uint8_t state,
                  uint64_t now)
{
    if (n->state & (NS_NUD_PERMANENT | NS_NUD_NOARP)) {
        a->stats.ignored_permanent++;
        return;
    }
    bool valid = n->state & NS_NUD_VALID;
    bool differs = valid && memcmp(n->lladdr, sha->b, NS_ETH_ALEN) != 0;
    bool override = !valid || !t_before(now, n->updated + (uint64_t)a->parms->locktime_ms * NS_MS);
    if (!override && differs) {
        a->stats.ignored_locktime++;
        return;
    }
    ns_neigh_update(n, sha->b, state, override ? NS_NEIGH_UPDATE_OVERRIDE : 0, now);
}

void ns_arp_input(struct ns_arp *a, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_arp_stats *st = &a->stats;
    struct ns_neigh_table *tbl = &a->tbl;
    struct ns_arp_msg m;
    st->rx++;
    if (!ns_pkt_linearize(pkt, 0)) {
        st->drop_short++;
        goto out;
    }
    switch (ns_arp_parse(pkt->data, pkt->len, &m)) {
    case NS_ARP_OK:
        break;
    case NS_ARP_SHORT:
        st->drop_short++;
        goto out;
    case NS_ARP_BAD_HTYPE:
    case NS_ARP_BAD_PTYPE:
        st->drop_bad_format++;
        goto out;
    case NS_ARP_BAD_OP:
        st->drop_bad_op++;
        goto out;
    }
    bool request = m.op == NS_ARPOP_REQUEST;
    bool bcast = pkt->flags & (NS_PKT_F_BCAST | NS_PKT_F_MCAST);
    bool garp = m.spa == m.tpa && m.spa != 0;
    if (request)
        st->rx_requests++;
    else
        st->rx_replies++;
    if (garp)
        st->rx_gratuitous++;

    if (bogus_mac(ifc, &m.sha)) {
        st->drop_bogus_sender++;
        goto out;
    }
    if ((m.tpa >> 28) == 0xe || (m.tpa >> 24) == 127) {
        st->drop_bogus_target++;
        goto out;
    }
    /* Only an interface with an address answers, for any of our addresses
     * (arp_ignore=0). */
    bool for_us = request && ifc->addr && ns_link_iface_by_addr(a->link, m.tpa);

    if (m.spa == 0) {
        /* RFC 5227 probe: defend the address, learn nothing (the sender
         * has no address yet). */
        if (!for_us) {
            st->drop_bogus_sender++;
            goto out;
        }
        if (bcast)
            tbl->stats.rcv_probes_mcast++;
        else
            tbl->stats.rcv_probes_ucast++;
        ns_arp_send(a, ifc, NS_ARPOP_REPLY, &m.sha, m.tpa, &m.sha, 0, now);
        goto out;
    }
    if (bogus_sender_ip(a, ifc, m.spa)) {
        st->drop_bogus_sender++;
        goto out;
    }

    uint8_t key[4];
    ns_arp_key(m.spa, key);
    if (for_us) {
        if (bcast)
            tbl->stats.rcv_probes_mcast++;
        else
            tbl->stats.rcv_probes_ucast++;
        /* The asker will talk to us next: cache it (STALE, unconfirmed).
         * No entry, no reply, as Linux: a full table answers nobody new. */
        int err;
        struct ns_neigh *n = ns_neigh_create(tbl, ifc->index, key, now, &err);
        if (!n)
            goto out;
        learn(a, n, &m.sha, NS_NUD_STALE, now);
        ns_arp_send(a, ifc, NS_ARPOP_REPLY, &m.sha, m.tpa, &m.sha, m.spa, now);
        goto out;
    }

    /* Replies, gratuitous ARP and others' requests only refresh entries we
     * already have (arp_accept=0). */
    struct ns_neigh *n = ns_neigh_lookup(tbl, ifc->index, key);
    if (!n) {
        if (request && !garp)
            st->drop_not_for_us++;
        else
            st->ignored_unsolicited++;
        goto out;
    }
    /* Broadcast replies and requests do not prove the path to us works. */
    uint8_t state = (!request && !bcast && !garp) ? NS_NUD_REACHABLE : NS_NUD_STALE;
    learn(a, n, &m.sha, state, now);
out:
    ns_pkt_free(pkt);
}

static void arp_rx(void *ctx, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now)
{
    ns_arp_input(ctx, ifc, pkt, now);
}

int ns_arp_init(struct ns_arp *a, struct ns_link *l, const struct ns_neigh_params *parms,
                struct ns_timers *timers, struct ns_rng *rng, uint64_t now)
{
    memset(a, 0, sizeof(*a));
    a->link = l;
    a->parms = parms;
    if (ns_neigh_table_init(&a->tbl, "arp_cache", 4, NS_ETH_ALEN, parms, timers, rng,
                            &arp_neigh_ops, a, now) < 0)
        return -ENOMEM;
    int r = ns_link_register(l, NS_ETHERTYPE_ARP, arp_rx, a);
    if (r < 0) {
        ns_neigh_table_free(&a->tbl);
        return r;
    }
    return 0;
}

void ns_arp_free(struct ns_arp *a)
{
    ns_neigh_table_free(&a->tbl);
}
