/* Stack instance glue: interfaces, Ethernet input dispatch, link output and
 * the timer loop. Protocol logic lives in link/, ipv4/ and sctp/ (joined to
 * IPv4 by stack/sctp_glue.c). */
#include "stack/stack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ns_stack *ns_stack_new(const struct ns_stack_config *cfg, uint64_t now)
{
    struct ns_stack *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    if (cfg && cfg->params)
        s->params = *cfg->params;
    else
        ns_params_default(&s->params);
    ns_timers_init(&s->timers);
    ns_rng_seed(&s->rng, cfg && cfg->seed ? cfg->seed : ns_rng_os_seed());
    s->ip_id = (uint16_t)ns_rng_u64(&s->rng);
    s->udp.next_ephemeral = (uint16_t)(32768 + ns_rng_below(&s->rng, 61000 - 32768));
    if (ns_neigh_table_init(&s->arp_tbl, "arp_cache", 4, NS_ETH_ALEN, &s->params.neigh, &s->timers,
                            &s->rng, &ns_arp_neigh_ops, s, now) < 0) {
        free(s);
        return NULL;
    }
    ns_reass_init(&s->reass, &s->params.ip, &s->timers, &s->ip_stats);
    if (ns_stack_sctp_init(s, cfg && cfg->seed, now) < 0) {
        ns_reass_free(&s->reass);
        ns_neigh_table_free(&s->arp_tbl);
        ns_timers_free(&s->timers);
        free(s);
        return NULL;
    }
    /* sctp.udp_port given in cfg->params: best effort, as a later sysctl
     * would (the bind_errors counter says if it failed). */
    (void)ns_stack_sctp_udp_sync(s);
    return s;
}

void ns_stack_free(struct ns_stack *s)
{
    if (!s)
        return;
    ns_stack_sctp_free(s);
    ns_udp_table_free(s);
    ns_reass_free(&s->reass);
    ns_neigh_table_free(&s->arp_tbl);
    for (uint32_t i = 0; i < s->n_ifaces; i++)
        ns_pktq_purge(&s->ifaces[i].txq);
    ns_timers_free(&s->timers);
    free(s);
}

int ns_stack_add_iface(struct ns_stack *s, const char *name, const struct ns_mac *mac, uint32_t mtu)
{
    if (s->n_ifaces >= NS_MAX_IFACES)
        return -ENOSPC;
    if (!name || strlen(name) >= NS_IFNAMSIZ || mtu < 68 || mtu > 65535)
        return -EINVAL;
    if (ns_stack_iface_by_name(s, name))
        return -EEXIST;
    struct ns_iface *ifc = &s->ifaces[s->n_ifaces];
    memset(ifc, 0, sizeof(*ifc));
    ifc->index = ++s->n_ifaces;
    strcpy(ifc->name, name);
    ifc->mac = *mac;
    ifc->mtu = mtu;
    ns_pktq_init(&ifc->txq);
    return (int)ifc->index;
}

struct ns_iface *ns_stack_iface(struct ns_stack *s, uint32_t ifindex)
{
    if (ifindex == 0 || ifindex > s->n_ifaces)
        return NULL;
    return &s->ifaces[ifindex - 1];
}

struct ns_iface *ns_stack_iface_by_name(struct ns_stack *s, const char *name)
{
    for (uint32_t i = 0; i < s->n_ifaces; i++)
        if (strcmp(s->ifaces[i].name, name) == 0)
            return &s->ifaces[i];
    return NULL;
}

struct ns_iface *ns_stack_iface_by_addr(struct ns_stack *s, uint32_t addr)
{
    for (uint32_t i = 0; i < s->n_ifaces; i++)
        if (s->ifaces[i].addr && s->ifaces[i].addr == addr)
            return &s->ifaces[i];
    return NULL;
}

int ns_stack_set_addr(struct ns_stack *s, uint32_t ifindex, uint32_t addr, uint8_t plen,
                      uint64_t now)
{
    struct ns_iface *ifc = ns_stack_iface(s, ifindex);
    if (!ifc)
        return -ENODEV;
    if (plen > 32)
        return -EINVAL;
    ifc->addr = addr;
    ifc->plen = plen;
    if (ifc->up && addr)
        ns_arp_announce(s, ifc, now);
    return 0;
}

int ns_stack_set_gateway(struct ns_stack *s, uint32_t gw)
{
    s->gateway = gw;
    return 0;
}

int ns_stack_iface_up(struct ns_stack *s, uint32_t ifindex, uint64_t now)
{
    struct ns_iface *ifc = ns_stack_iface(s, ifindex);
    if (!ifc)
        return -ENODEV;
    if (!ifc->up) {
        ifc->up = true;
        if (ifc->addr)
            ns_arp_announce(s, ifc, now);
    }
    return 0;
}

void ns_stack_input(struct ns_stack *s, uint32_t ifindex, const void *frame, uint32_t len,
                    uint64_t now)
{
    struct ns_pkt *p = ns_pkt_from(frame, len);
    if (!p) {
        s->eth_stats.drop_nomem++;
        return;
    }
    ns_stack_input_pkt(s, ifindex, p, now);
}

void ns_stack_input_pkt(struct ns_stack *s, uint32_t ifindex, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_iface *ifc = ns_stack_iface(s, ifindex);
    struct ns_eth_stats *st = &s->eth_stats;
    if (!ifc || !ifc->up || !ns_pkt_linearize(pkt, 0)) {
        st->drop_nomem += ifc != NULL && ifc->up;
        ns_pkt_free(pkt);
        return;
    }
    st->rx_frames++;
    st->rx_bytes += pkt->len;
    pkt->ifindex = ifindex;
    pkt->ts = now;

    struct ns_eth_hdr h;
    switch (ns_eth_parse(pkt->data, pkt->len, &h)) {
    case NS_ETH_SHORT:
        st->drop_short++;
        ns_pkt_free(pkt);
        return;
    case NS_ETH_NOT_II:
        st->drop_not_ethernet_ii++;
        ns_pkt_free(pkt);
        return;
    case NS_ETH_OK:
        break;
    }
    if (ns_mac_is_bcast(h.dst.b)) {
        st->rx_bcast++;
        pkt->flags |= NS_PKT_F_BCAST;
    } else if (ns_mac_is_mcast(h.dst.b)) {
        /* We join no multicast groups. */
        st->rx_mcast++;
        st->drop_other_host++;
        ns_pkt_free(pkt);
        return;
    } else if (!ns_mac_eq(&h.dst, &ifc->mac)) {
        st->drop_other_host++;
        ns_pkt_free(pkt);
        return;
    }
    ns_pkt_pull(pkt, NS_ETH_HLEN);
    pkt->l3_off = NS_ETH_HLEN;
    switch (h.type) {
    case NS_ETHERTYPE_ARP:
        ns_arp_input(s, ifc, pkt, now);
        return;
    case NS_ETHERTYPE_IPV4:
        ns_ip_input(s, ifc, pkt, now);
        return;
    default:
        st->drop_unknown_type++;
        ns_pkt_free(pkt);
        return;
    }
}

void ns_eth_output(struct ns_stack *s, struct ns_iface *ifc, struct ns_pkt *pkt,
                   const struct ns_mac *dst, uint16_t type)
{
    struct ns_eth_stats *st = &s->eth_stats;
    if (ifc->txq.count >= NS_TXQ_LEN) {
        st->drop_txq_full++;
        ns_pkt_free(pkt);
        return;
    }
    uint8_t *h = ns_pkt_push(pkt, NS_ETH_HLEN);
    if (!h) {
        if (!ns_pkt_linearize(pkt, NS_PKT_HEADROOM)) {
            st->drop_nomem++;
            ns_pkt_free(pkt);
            return;
        }
        h = ns_pkt_push(pkt, NS_ETH_HLEN);
    }
    ns_eth_write(h, dst, &ifc->mac, type);
    /* Pad runts so every frame on the wire is at least 60 bytes. */
    uint32_t len = ns_pkt_len(pkt);
    if (len < NS_ETH_MIN_FRAME) {
        if (pkt->nfrags || ns_pkt_tailroom(pkt) < NS_ETH_MIN_FRAME - len) {
            struct ns_pkt *c = ns_pkt_alloc(0, NS_ETH_MIN_FRAME);
            if (!c) {
                st->drop_nomem++;
                ns_pkt_free(pkt);
                return;
            }
            ns_pkt_copy_out(pkt, 0, ns_pkt_put(c, len), len);
            c->ts = pkt->ts;
            c->flags = pkt->flags;
            ns_pkt_free(pkt);
            pkt = c;
        }
        memset(ns_pkt_put(pkt, NS_ETH_MIN_FRAME - len), 0, NS_ETH_MIN_FRAME - len);
    }
    st->tx_frames++;
    st->tx_bytes += ns_pkt_len(pkt);
    pkt->ifindex = ifc->index;
    ns_pktq_push(&ifc->txq, pkt);
    if (s->hooks.tx_ready)
        s->hooks.tx_ready(s->hooks.ctx, ifc);
}

uint64_t ns_stack_poll(struct ns_stack *s, uint64_t now)
{
    ns_timers_run(&s->timers, now);
    ns_stack_sctp_poll(s, now);
    return ns_timers_next(&s->timers);
}

struct ns_pkt *ns_stack_tx_pop(struct ns_stack *s, uint32_t ifindex)
{
    struct ns_iface *ifc = ns_stack_iface(s, ifindex);
    return ifc ? ns_pktq_pop(&ifc->txq) : NULL;
}

/* Static: the groups handed out must outlive this function. */
NS_CTR_NAMES(eth_ctr_names, NS_ETH_COUNTERS);
NS_CTR_NAMES(arp_ctr_names, NS_ARP_COUNTERS);
NS_CTR_NAMES(neigh_ctr_names, NS_NEIGH_COUNTERS);
NS_CTR_NAMES(ip_ctr_names, NS_IP_COUNTERS);
NS_CTR_NAMES(icmp_ctr_names, NS_ICMP_COUNTERS);
NS_CTR_NAMES(udp_ctr_names, NS_UDP_COUNTERS);
NS_CTR_NAMES(sctp_glue_ctr_names, NS_SCTP_GLUE_COUNTERS);
NS_CTR_NAMES(sctp_udp_ctr_names, NS_SCTP_UDP_COUNTERS);
NS_CTR_NAMES(gauge_names, NS_STACK_GAUGES);

static void refresh_gauges(struct ns_stack *s)
{
    struct ns_stack_gauges *g = &s->gauges;
    g->arp_cache_entries = s->arp_tbl.entries;
    g->arp_cache_gc_entries = s->arp_tbl.gc_entries;
    g->ip_reasm_datagrams = s->reass.count;
    g->ip_reasm_mem_bytes = s->reass.mem;
    g->txq_frames = 0;
    for (uint32_t i = 0; i < s->n_ifaces; i++)
        g->txq_frames += s->ifaces[i].txq.count;
}

size_t ns_stack_counters(struct ns_stack *s, struct ns_ctr_group *out, size_t max)
{
    struct ns_ctr_group all[] = {
        NS_CTR_GROUP_NAMED("eth", eth_ctr_names, &s->eth_stats),
        NS_CTR_GROUP_NAMED("arp", arp_ctr_names, &s->arp_stats),
        NS_CTR_GROUP_NAMED("arp_cache", neigh_ctr_names, &s->arp_tbl.stats),
        NS_CTR_GROUP_NAMED("ip", ip_ctr_names, &s->ip_stats),
        NS_CTR_GROUP_NAMED("icmp", icmp_ctr_names, &s->icmp_stats),
        NS_CTR_GROUP_NAMED("udp", udp_ctr_names, &s->udp_stats),
    };
    size_t n = sizeof(all) / sizeof(all[0]);
    if (n > max)
        n = max;
    memcpy(out, all, n * sizeof(all[0]));
    n += ns_sctp_counters(&s->sctp, out + n, max - n);
    if (n < max)
        out[n++] = NS_CTR_GROUP_NAMED("sctp_glue", sctp_glue_ctr_names, &s->sctp_glue_stats);
    if (n < max)
        out[n++] = NS_CTR_GROUP_NAMED("sctp_udp", sctp_udp_ctr_names, &s->sctp_udp_stats);
    if (n < max) {
        refresh_gauges(s);
        out[n++] = NS_CTR_GROUP_NAMED("gauges", gauge_names, &s->gauges);
    }
    return n;
}
