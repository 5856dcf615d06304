/* Stack instance: composes the layers bottom up and wires their hooks,
 * runs the timer loop, gathers the counters. Protocol logic lives in
 * link/, ipv4/ and sctp/ (joined to IPv4 by stack/sctp_glue.c). */
#include "stack/stack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The embedder's hooks belong to the layer that calls them. */
void ns_stack_set_tx_ready(struct ns_stack *s, ns_stack_tx_ready_fn fn, void *ctx)
{
    s->link.tx_ready = fn;
    s->link.tx_ctx = ctx;
}

void ns_stack_set_icmp_event(struct ns_stack *s, ns_stack_icmp_event_fn fn, void *ctx)
{
    s->ip.icmp_event = fn;
    s->ip.icmp_ctx = ctx;
}

void ns_stack_set_sctp_event(struct ns_stack *s,
                             void (*fn)(void *ctx, const struct ns_sctp_event *ev, uint64_t now),
                             void *ctx)
{
    s->hooks.sctp_event = fn;
    s->hooks.sctp_ctx = ctx;
}

int ns_stack_ping(struct ns_stack *s, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size,
                  uint8_t ttl, uint64_t now)
{
    return ns_icmp_echo_send(&s->ip, dst, id, seq, size, ttl, now);
}

int ns_stack_ifindex(struct ns_stack *s, const char *name)
{
    struct ns_iface *ifc = ns_link_iface_by_name(&s->link, name);
    return ifc ? (int)ifc->index : -ENODEV;
}

uint64_t ns_stack_next_deadline(const struct ns_stack *s)
{
    return ns_timers_next(&s->timers);
}

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
    /* Bottom up; each layer registers with the one below. The order of
     * the random draws (IPv4's, then ARP's) keeps seeded runs replayable. */
    ns_link_init(&s->link);
    if (ns_ipv4_init(&s->ip, &s->link, &s->arp, &s->params.ip, &s->timers, &s->rng) < 0)
        goto fail_timers;
    if (ns_arp_init(&s->arp, &s->link, &s->params.neigh, &s->timers, &s->rng, now) < 0)
        goto fail_ip;
    s->arp.unreachable = ns_ipv4_neigh_unreachable;
    s->arp.unreachable_ctx = &s->ip;
    if (ns_stack_sctp_init(s, cfg && cfg->seed, now) < 0)
        goto fail_arp;
    /* sctp.udp_port given in cfg->params: best effort, as a later sysctl
     * would (the bind_errors counter says if it failed). */
    (void)ns_stack_sctp_udp_sync(s);
    return s;
fail_arp:
    ns_arp_free(&s->arp);
fail_ip:
    ns_ipv4_free(&s->ip);
fail_timers:
    ns_timers_free(&s->timers);
    free(s);
    return NULL;
}

void ns_stack_free(struct ns_stack *s)
{
    if (!s)
        return;
    ns_stack_sctp_free(s);
    ns_ipv4_free(&s->ip);
    ns_arp_free(&s->arp);
    ns_link_free(&s->link);
    ns_timers_free(&s->timers);
    free(s);
}

int ns_stack_add_iface(struct ns_stack *s, const char *name, const struct ns_mac *mac, uint32_t mtu)
{
    return ns_link_add_iface(&s->link, name, mac, mtu);
}

struct ns_iface *ns_stack_iface(struct ns_stack *s, uint32_t ifindex)
{
    return ns_link_iface(&s->link, ifindex);
}

struct ns_iface *ns_stack_iface_by_name(struct ns_stack *s, const char *name)
{
    return ns_link_iface_by_name(&s->link, name);
}

struct ns_iface *ns_stack_iface_by_addr(struct ns_stack *s, uint32_t addr)
{
    return ns_link_iface_by_addr(&s->link, addr);
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
        ns_arp_announce(&s->arp, ifc, now);
    return 0;
}

int ns_stack_set_gateway(struct ns_stack *s, uint32_t gw)
{
    s->ip.gateway = gw;
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
            ns_arp_announce(&s->arp, ifc, now);
    }
    return 0;
}

void ns_stack_input(struct ns_stack *s, uint32_t ifindex, const void *frame, uint32_t len,
                    uint64_t now)
{
    struct ns_pkt *p = ns_pkt_from(frame, len);
    if (!p) {
        s->link.eth_stats.drop_nomem++;
        return;
    }
    ns_link_input(&s->link, ifindex, p, now);
}

void ns_stack_input_pkt(struct ns_stack *s, uint32_t ifindex, struct ns_pkt *pkt, uint64_t now)
{
    ns_link_input(&s->link, ifindex, pkt, now);
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
    g->arp_cache_entries = s->arp.tbl.entries;
    g->arp_cache_gc_entries = s->arp.tbl.gc_entries;
    g->ip_reasm_datagrams = s->ip.reass.count;
    g->ip_reasm_mem_bytes = s->ip.reass.mem;
    g->txq_frames = 0;
    for (uint32_t i = 0; i < s->link.n_ifaces; i++)
        g->txq_frames += s->link.ifaces[i].txq.count;
}

size_t ns_stack_counters(struct ns_stack *s, struct ns_ctr_group *out, size_t max)
{
    struct ns_ctr_group all[] = {
        NS_CTR_GROUP_NAMED("eth", eth_ctr_names, &s->link.eth_stats),
        NS_CTR_GROUP_NAMED("arp", arp_ctr_names, &s->arp.stats),
        NS_CTR_GROUP_NAMED("arp_cache", neigh_ctr_names, &s->arp.tbl.stats),
        NS_CTR_GROUP_NAMED("ip", ip_ctr_names, &s->ip.stats),
        NS_CTR_GROUP_NAMED("icmp", icmp_ctr_names, &s->ip.icmp_stats),
        NS_CTR_GROUP_NAMED("udp", udp_ctr_names, &s->ip.udp_stats),
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
