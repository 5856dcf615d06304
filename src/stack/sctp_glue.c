/* SCTP over nstack's IPv4: the transport under the sans-I/O engine.
 *
 * RFC 9260 section 3 (SCTP directly over IP, protocol 132), section 8.4
 * item 1 (packets to non-unicast addresses are discarded), section 7.3 and
 * RFC 8899/4821 context for path MTU (SCTP sizes its own packets, so IPv4
 * must not fragment them), Appendix C (ICMP handling: the checks and the
 * action are the engine's, sctp/icmp.c; here IPv4's PMTU cache learns a
 * verified MTU and the outcome is counted), RFC 1191
 * (fragmentation-needed carries the next-hop MTU).
 *
 * DF choice: every SCTP packet is sent with DF set. The engine fragments
 * user messages into chunks that fit its path MTU, and a router dropping
 * an oversized DF packet tells us the real MTU via ICMP; IPv4 fragments
 * would instead lose the whole packet on any fragment loss. The one
 * exception: a packet built before the path MTU was lowered (or below
 * NS_SCTP_MIN_PMTU on a tiny-MTU path) is sent without DF and fragmented
 * by IPv4 rather than dropped (a DF drop would cost a T3 timeout and the
 * chunk would not shrink on retransmission); the engine's path MTU is
 * resynced at the next input or poll.
 *
 * Paths whose transport address carries a port are UDP-encapsulated (RFC
 * 6951): their packets go to stack/sctp_udp_glue.c, which sends them over
 * nstack's UDP or, in hosted mode, to the embedder's host UDP socket.
 */
#include <errno.h>
#include <string.h>

#include "stack/stack.h"

static struct ns_sctp_addr v4(uint32_t addr)
{
    return (struct ns_sctp_addr){.family = NS_SCTP_AF_INET4, .port = 0, .addr = addr};
}

uint32_t ns_stack_sctp_route_pmtu(struct ns_stack *s, uint32_t dst, uint32_t hdrs, uint64_t now)
{
    struct ns_route rt;
    if (!ns_route_lookup(&s->ip, dst, now, &rt) || rt.mtu <= hdrs)
        return 0;
    uint32_t m = rt.mtu - hdrs;
    if (m < NS_SCTP_MIN_PMTU)
        m = NS_SCTP_MIN_PMTU;
    if (m > 65535 - hdrs)
        m = 65535 - hdrs;
    return m;
}

/* Set every path's MTU of a from its route (the route MTU already
 * includes what ICMP taught the IPv4 PMTU cache, and raises it again when
 * that entry expires). */
static void sync_assoc_pmtu(struct ns_stack *s, struct ns_sctp_assoc *a, uint64_t now)
{
    struct ns_sctp_assoc_info info;
    if (ns_sctp_assoc_info(a, &info) < 0 || info.state == NS_SCTP_CLOSED)
        return;
    for (unsigned i = 0; i < info.n_paths && i < NS_SCTP_MAX_PATHS; i++) {
        const struct ns_sctp_path_info *pi = &info.paths[i];
        if (pi->addr.family != NS_SCTP_AF_INET4)
            continue;
        uint32_t m = (pi->addr.port ? ns_stack_sctp_udp_pmtu(s, pi->addr.addr, now)
                                    : ns_stack_sctp_route_pmtu(s, pi->addr.addr, NS_IP_HLEN, now)) &
                     ~3u;
        if (m && m != pi->pmtu && ns_sctp_set_pmtu(a, &pi->addr, m) == 0)
            s->sctp_glue_stats.pmtu_syncs++;
    }
}

static void sync_dirty(struct ns_stack *s, uint64_t now)
{
    if (!s->sctp_pmtu_dirty)
        return;
    s->sctp_pmtu_dirty = false;
    for (struct ns_sctp_assoc *a = ns_sctp_assoc_next(&s->sctp, NULL); a;
         a = ns_sctp_assoc_next(&s->sctp, a))
        sync_assoc_pmtu(s, a, now);
}

void ns_stack_sctp_poll(struct ns_stack *s, uint64_t now)
{
    sync_dirty(s, now);
}

static void glue_output(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_stack *s = ctx;
    struct ns_sctp_glue_stats *st = &s->sctp_glue_stats;
    if (dst->family == NS_SCTP_AF_INET4 && dst->port != 0) {
        ns_stack_sctp_udp_output(s, p, src, dst, now);
        return;
    }
    if (dst->family != NS_SCTP_AF_INET4 || ns_stack_sctp_is_hosted(s)) {
        if (ns_stack_sctp_is_hosted(s))
            s->sctp_udp_stats.raw_tx_dropped++;
        else
            st->tx_errors++;
        ns_pkt_free(p);
        return;
    }
    struct ns_ip_out o = {
        .src = src && src->family == NS_SCTP_AF_INET4 ? src->addr : 0,
        .dst = dst->addr,
        .proto = NS_IPPROTO_SCTP,
        .df = true,
    };
    struct ns_route rt;
    if (ns_route_lookup(&s->ip, dst->addr, now, &rt) && ns_pkt_len(p) + NS_IP_HLEN > rt.mtu) {
        /* Built for a larger path MTU than the route now has: fragment
         * this one rather than lose it, and shrink the path (we may not
         * call into the engine from here). */
        o.df = false;
        st->tx_frag_fallback++;
        s->sctp_pmtu_dirty = true;
    }
    /* Our own source address only: a path's last-seen local address can
     * be one we no longer hold. */
    if (o.src && !ns_link_iface_by_addr(&s->link, o.src))
        o.src = 0;
    p->ts = now;
    if (ns_ip_output(&s->ip, p, &o, now) == 0)
        st->tx_packets++;
    else
        st->tx_errors++;
}

static void glue_path_confirm(void *ctx, const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_stack *s = ctx;
    struct ns_route rt;
    if (dst->family != NS_SCTP_AF_INET4 || !ns_route_lookup(&s->ip, dst->addr, now, &rt))
        return;
    /* The neighbour that forwarded our data is the next hop, which is the
     * gateway for off-link peers. */
    uint8_t key[4];
    ns_wr32(key, rt.nexthop);
    ns_neigh_confirm(&s->arp.tbl, rt.ifc->index, key, now);
    s->sctp_glue_stats.path_confirms++;
}

static void glue_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct ns_stack *s = ctx;
    /* A passive association's paths were created with the engine-wide
     * default MTU; size them for their route before data flows. */
    if (ev->assoc &&
        (ev->type == NS_SCTP_EV_COMM_UP || ev->type == NS_SCTP_EV_RESTART ||
         (ev->type == NS_SCTP_EV_PEER_ADDR_CHANGE && ev->addr_state == NS_SCTP_ADDR_AVAILABLE)))
        sync_assoc_pmtu(s, ev->assoc, now);
    if (s->hooks.sctp_event)
        s->hooks.sctp_event(s->hooks.sctp_ctx, ev, now);
}

int ns_stack_sctp_init(struct ns_stack *s, bool replayable, uint64_t now)
{
    struct ns_sctp_config cfg = {
        .params = &s->params.sctp,
        .timers = &s->timers,
        .rng = &s->rng,
        /* Paths start at 1500 - 20; routes refine it per path. */
        .default_pmtu = 1500 - NS_IP_HLEN,
        /* A seeded stack replays byte for byte, cookies included. */
        .cookie_secret_from_rng = replayable,
        .ops =
            {
                .output = glue_output,
                .event = glue_event,
                .path_confirm = glue_path_confirm,
                .ctx = s,
            },
    };
    int r = ns_sctp_init(&s->sctp, &cfg, now);
    if (r < 0)
        return r;
    /* Protocol 132 and the ICMP errors quoting it come to us. */
    r = ns_ipv4_register(&s->ip, NS_IPPROTO_SCTP, ns_stack_sctp_input, ns_stack_sctp_icmp_error, s);
    if (r < 0)
        ns_sctp_free(&s->sctp);
    return r;
}

void ns_stack_sctp_free(struct ns_stack *s)
{
    ns_sctp_free(&s->sctp);
    ns_udp_close(s->sctp_udp_sock);
    s->sctp_udp_sock = NULL;
}

struct ns_sctp_assoc *ns_stack_sctp_connect(struct ns_stack *s, struct ns_sctp_ep *ep,
                                            uint32_t peer, uint16_t peer_port, uint64_t now,
                                            int *err)
{
    struct ns_sctp_addr pa = v4(peer);
    /* Over UDP when a remote encapsulation port is configured for the
     * peer (the path then learns the port the peer really uses). */
    pa.port = ns_stack_sctp_encap_port(s, peer);
    struct ns_sctp_assoc *a = ns_sctp_connect(ep, &pa, 1, peer_port, now, err);
    if (a)
        sync_assoc_pmtu(s, a, now);
    return a;
}

void ns_stack_sctp_input(void *ctx, struct ns_pkt *pkt, uint32_t src, uint32_t dst, bool bcast,
                         uint64_t now)
{
    struct ns_stack *s = ctx;
    struct ns_sctp_glue_stats *st = &s->sctp_glue_stats;
    /* RFC 9260 8.4 (1): nothing is answered to a non-unicast address. */
    if (bcast || ns_ip_is_mcast(dst)) {
        st->rx_drop_bcast++;
        ns_pkt_free(pkt);
        return;
    }
    st->rx_packets++;
    struct ns_sctp_addr sa = v4(src), da = v4(dst);
    ns_sctp_input(&s->sctp, pkt, &sa, &da, now);
    sync_dirty(s, now);
}

struct ns_sctp_assoc *ns_stack_sctp_find(struct ns_stack *s, uint16_t local_port, uint32_t peer,
                                         uint16_t peer_port, uint32_t vtag)
{
    struct ns_sctp_addr pa = v4(peer);
    struct ns_sctp_assoc_info info;
    for (struct ns_sctp_assoc *a = ns_sctp_assoc_next(&s->sctp, NULL); a;
         a = ns_sctp_assoc_next(&s->sctp, a)) {
        if (ns_sctp_assoc_info(a, &info) < 0 || info.state == NS_SCTP_CLOSED ||
            info.local_port != local_port || info.peer_port != peer_port || info.peer_vtag != vtag)
            continue;
        for (unsigned i = 0; i < info.n_paths && i < NS_SCTP_MAX_PATHS; i++)
            if (ns_sctp_addr_same(&info.paths[i].addr, &pa))
                return a;
    }
    return NULL;
}

void ns_stack_sctp_icmp_error(void *ctx, uint32_t src, uint32_t dst, const uint8_t *l4,
                              uint32_t l4_len, uint8_t type, uint8_t code, uint32_t mtu, int err,
                              uint64_t now)
{
    (void)err; /* Appendix C decides by type and code */
    ns_stack_sctp_icmp_error_port(ctx, src, dst, 0, l4, l4_len, type, code, mtu, now);
}

void ns_stack_sctp_icmp_error_port(struct ns_stack *s, uint32_t src, uint32_t dst,
                                   uint16_t encap_port, const uint8_t *l4, uint32_t l4_len,
                                   uint8_t type, uint8_t code, uint32_t mtu, uint64_t now)
{
    struct ns_sctp_glue_stats *st = &s->sctp_glue_stats;
    /* Appendix C: ICMP1 (only destination unreachable matters for IPv4)
     * and ICMP3 (port unreachable is ignored); the engine's timers judge
     * reachability otherwise. */
    if (l4_len < 8 || type != NS_ICMP_DEST_UNREACH ||
        (code != NS_ICMP_FRAG_NEEDED && code != NS_ICMP_PROT_UNREACH)) {
        st->icmp_other++;
        return;
    }
    /* The checks of Appendix C (ICMP5/ICMP6: the quoted tag, or our INIT
     * with its initiate tag) and the action are the engine's
     * (sctp/icmp.c); what stays here is IPv4's own PMTU cache and the
     * counters. */
    uint32_t hdrs = NS_IP_HLEN + (encap_port ? NS_UDP_HLEN : 0);
    struct ns_sctp_addr peer = {NS_SCTP_AF_INET4, encap_port, dst};
    enum ns_sctp_icmp_verdict v = ns_sctp_icmp_error(
        &s->sctp, &peer, l4, l4_len,
        code == NS_ICMP_PROT_UNREACH ? NS_SCTP_ICMP_PROT_UNREACH : NS_SCTP_ICMP_FRAG_NEEDED,
        mtu > hdrs ? mtu - hdrs : 0, now);
    switch (v) {
    case NS_SCTP_ICMP_NO_ASSOC:
    case NS_SCTP_ICMP_BAD_TAG:
        st->icmp_no_assoc++;
        return;
    case NS_SCTP_ICMP_WRONG_PORT:
        /* The tag matched but we never sent that way (raw IP vs UDP, or
         * an encapsulation port the path has since left). */
        if (encap_port)
            s->sctp_udp_stats.icmp_bad_port++;
        else
            st->icmp_no_assoc++;
        return;
    case NS_SCTP_ICMP_ABORTED:
        st->icmp_prot_unreach_aborts++;
        return;
    case NS_SCTP_ICMP_PMTU_LOWERED:
    case NS_SCTP_ICMP_IGNORED:
        break;
    }
    if (code != NS_ICMP_FRAG_NEEDED)
        return;
    st->icmp_frag_needed++;
    if (v == NS_SCTP_ICMP_PMTU_LOWERED)
        st->icmp_pmtu_lowered++;
    /* Verified: now IPv4's path-MTU cache may learn it too (icmp.c left
     * it alone for SCTP), so the route MTU agrees with the path. */
    if (mtu > NS_IP_HLEN)
        ns_pmtu_update(&s->ip, dst, mtu, now);
}
