/* SCTP over UDP encapsulation (RFC 6951) on nstack's own IPv4/UDP, and
 * the hook for hosted mode (a host UDP socket under the engine).
 *
 * RFC 6951 section 5.1-5.3 (the SCTP packet is the whole UDP payload; one
 * local encapsulation port, sysctl sctp.udp_port, the remote one per path
 * in ns_sctp_addr.port), 5.4 (the remote port follows the UDP source port
 * of verified packets: done by the engine, sctp/sctp.c), 5.5 (the SCTP
 * checksum stays; we also fill the UDP checksum, which IPv4 allows and
 * costs one pass), 5.6 (ICMP: the quoted UDP header is skipped and the
 * SCTP rules of RFC 9260 Appendix C apply to the SCTP header behind it; a
 * port unreachable about the encapsulation port means the peer has no
 * SCTP over UDP there, handled as SCTP's protocol unreachable).
 *
 * Input comes from an ordinary nstack UDP socket bound to sctp.udp_port:
 * its ready callback hands each queued datagram to the engine at once, so
 * the socket queue never holds more than one.
 */
#include <errno.h>
#include <string.h>

#include "core/checksum.h"
#include "stack/stack.h"

#define ENCAP_HLEN (NS_IP_HLEN + NS_UDP_HLEN)

static void udp_ready(void *ctx, struct ns_udp_sock *sk)
{
    struct ns_stack *s = ctx;
    struct ns_sctp_udp_stats *st = &s->sctp_udp_stats;
    struct ns_pkt *p;
    /* ICMP errors reach udp_icmp with the quote instead (on_icmp). */
    sk->err = 0;
    while ((p = ns_pktq_pop(&sk->rxq))) {
        uint64_t now = p->ts;
        const uint8_t *ip = ns_ip_rx_hdr(p);
        uint32_t dst = ns_rd32(ip + 16);
        uint16_t sport = 0;
        if ((uint32_t)p->l4_off + NS_UDP_HLEN <= ns_pkt_headroom(p))
            sport = ns_rd16(p->buf->data + p->l4_off);
        if ((p->flags & (NS_PKT_F_BCAST | NS_PKT_F_MCAST)) || ns_ip_is_bcast(&s->ip, dst) ||
            ns_ip_is_mcast(dst)) {
            /* RFC 9260 8.4 (1) holds inside UDP too. */
            st->rx_drop_bcast++;
            ns_pkt_free(p);
            continue;
        }
        if (ns_pkt_len(p) < 12 || sport == 0) {
            st->rx_short++;
            ns_pkt_free(p);
            continue;
        }
        st->rx_packets++;
        struct ns_sctp_addr sa = {NS_SCTP_AF_INET4, sport, p->nexthop};
        struct ns_sctp_addr da = {NS_SCTP_AF_INET4, sk->lport, dst};
        ns_sctp_input(&s->sctp, p, &sa, &da, now);
    }
}

/* An ICMP error quoting a datagram of our encapsulation socket (RFC 6951
 * 5.6): port unreachable is SCTP's protocol unreachable, and the SCTP rules
 * of Appendix C (the quoted verification tag) apply to the SCTP header
 * behind the UDP one; fragmentation-needed lowers the path MTU less the
 * UDP header. */
static void udp_icmp(void *ctx, struct ns_udp_sock *sk, uint32_t src, uint32_t dst,
                     const uint8_t *udp, uint32_t udp_len, uint8_t type, uint8_t code, uint32_t mtu,
                     uint64_t now)
{
    struct ns_stack *s = ctx;
    (void)sk;
    if (udp_len < NS_UDP_HLEN)
        return;
    struct ns_sctp_udp_stats *st = &s->sctp_udp_stats;
    st->icmp_errors++;
    uint16_t dport = ns_rd16(udp + 2);
    if (type == NS_ICMP_DEST_UNREACH && code == NS_ICMP_PORT_UNREACH) {
        /* Nobody does SCTP over UDP on that port: as if the peer had no
         * SCTP at all (RFC 6951 5.6). */
        st->icmp_port_unreach++;
        code = NS_ICMP_PROT_UNREACH;
    }
    ns_stack_sctp_icmp_error_port(s, src, dst, dport, udp + NS_UDP_HLEN, udp_len - NS_UDP_HLEN,
                                  type, code, mtu, now);
}

int ns_stack_sctp_udp_sync(struct ns_stack *s)
{
    uint16_t want = (uint16_t)s->params.sctp.udp_port;
    if (ns_stack_sctp_is_hosted(s))
        return 0; /* the embedder's socket is the port */
    if (s->sctp_udp_sock && s->sctp_udp_bound == want)
        return 0;
    ns_udp_close(s->sctp_udp_sock);
    s->sctp_udp_sock = NULL;
    s->sctp_udp_bound = 0;
    if (want == 0)
        return 0;
    struct ns_udp_sock *sk = ns_udp_open(&s->ip);
    if (!sk) {
        s->sctp_udp_stats.bind_errors++;
        return -ENOMEM;
    }
    int r = ns_udp_bind(sk, 0, want);
    if (r < 0) {
        ns_udp_close(sk);
        s->sctp_udp_stats.bind_errors++;
        return r;
    }
    sk->on_ready = udp_ready;
    sk->on_icmp = udp_icmp;
    sk->ctx = s;
    s->sctp_udp_sock = sk;
    s->sctp_udp_bound = want;
    return 0;
}

void ns_stack_sctp_hosted(struct ns_stack *s,
                          void (*out)(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                                      const struct ns_sctp_addr *dst, uint64_t now),
                          void *ctx, uint16_t local_port, uint32_t pmtu)
{
    ns_udp_close(s->sctp_udp_sock);
    s->sctp_udp_sock = NULL;
    s->sctp_udp_bound = 0;
    s->hooks.sctp_udp_output = out;
    s->hooks.sctp_udp_ctx = ctx;
    s->sctp_udp_pmtu = pmtu ? pmtu : NS_SCTP_DEFAULT_PMTU;
    s->params.sctp.udp_port = local_port;
    if (!s->params.sctp.encap_port)
        s->params.sctp.encap_port = NS_SCTP_UDP_PORT;
    ns_sctp_set_params(&s->sctp, &s->params.sctp);
}

int ns_stack_sctp_set_encap_port(struct ns_stack *s, uint32_t peer, uint16_t port)
{
    struct ns_sctp_encap_peer *free_slot = NULL;
    for (unsigned i = 0; i < NS_SCTP_ENCAP_PEERS; i++) {
        struct ns_sctp_encap_peer *e = &s->sctp_encap_peers[i];
        if (e->addr == peer) {
            if (port)
                e->port = port;
            else
                *e = (struct ns_sctp_encap_peer){0, 0};
            return 0;
        }
        if (!e->addr && !free_slot)
            free_slot = e;
    }
    if (!port)
        return 0;
    if (!free_slot)
        return -ENOSPC;
    *free_slot = (struct ns_sctp_encap_peer){peer, port};
    return 0;
}

uint16_t ns_stack_sctp_encap_port(const struct ns_stack *s, uint32_t peer)
{
    for (unsigned i = 0; i < NS_SCTP_ENCAP_PEERS; i++)
        if (s->sctp_encap_peers[i].addr == peer && peer)
            return s->sctp_encap_peers[i].port;
    uint16_t p = (uint16_t)s->params.sctp.encap_port;
    /* Hosted mode has no raw IP to fall back on. */
    if (!p && ns_stack_sctp_is_hosted(s))
        p = NS_SCTP_UDP_PORT;
    return p;
}

uint32_t ns_stack_sctp_udp_pmtu(struct ns_stack *s, uint32_t dst, uint64_t now)
{
    if (ns_stack_sctp_is_hosted(s))
        return s->sctp_udp_pmtu;
    return ns_stack_sctp_route_pmtu(s, dst, ENCAP_HLEN, now);
}

void ns_stack_sctp_udp_output(struct ns_stack *s, struct ns_pkt *p, const struct ns_sctp_addr *src,
                              const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_sctp_udp_stats *st = &s->sctp_udp_stats;
    if (ns_stack_sctp_is_hosted(s)) {
        st->tx_packets++;
        s->hooks.sctp_udp_output(s->hooks.sctp_udp_ctx, p, src, dst, now);
        return;
    }
    uint16_t sport = s->sctp_udp_bound;
    if (!s->sctp_udp_sock || !sport) {
        st->tx_no_port++;
        ns_pkt_free(p);
        return;
    }
    uint32_t len = ns_pkt_len(p);
    struct ns_route rt;
    if (len > 65535 - ENCAP_HLEN || !ns_route_lookup(&s->ip, dst->addr, now, &rt)) {
        if (len <= 65535 - ENCAP_HLEN)
            s->ip.stats.out_no_routes++;
        st->tx_errors++;
        ns_pkt_free(p);
        return;
    }
    /* Our own source address only (as sctp_glue.c): the checksum covers
     * it, so it is chosen here rather than by IPv4. */
    uint32_t saddr =
        src && src->addr && ns_link_iface_by_addr(&s->link, src->addr) ? src->addr : rt.src;
    uint8_t *u = ns_pkt_push(p, NS_UDP_HLEN);
    if (!u) {
        st->tx_errors++;
        ns_pkt_free(p);
        return;
    }
    uint16_t ulen = (uint16_t)(len + NS_UDP_HLEN);
    ns_wr16(u, sport);
    ns_wr16(u + 2, dst->port);
    ns_wr16(u + 4, ulen);
    ns_wr16(u + 6, 0);
    if (rt.ifc->tx_csum_offload && (uint32_t)ulen + NS_IP_HLEN <= rt.mtu) {
        /* The device sums the datagram (a TAP with offload): a pass over
         * every byte saved per packet. Only whole datagrams: a fragmented
         * one would need its sum before it is cut. */
        ns_wr16(u + 6, ns_csum_fold(ns_csum_pseudo(saddr, dst->addr, NS_IPPROTO_UDP, ulen)));
        p->flags |= NS_PKT_F_CSUM_PARTIAL;
    } else {
        uint16_t c = (uint16_t)~ns_csum_fold(
            ns_csum_pkt(p, 0, ulen, ns_csum_pseudo(saddr, dst->addr, NS_IPPROTO_UDP, ulen)));
        ns_wr16(u + 6, c ? c : 0xffff);
    }
    struct ns_ip_out o = {.src = saddr, .dst = dst->addr, .proto = NS_IPPROTO_UDP, .df = true};
    if ((uint32_t)ulen + NS_IP_HLEN > rt.mtu) {
        /* Built for a larger path MTU than the route now has (see
         * sctp_glue.c): fragment this one, shrink the path later. */
        o.df = false;
        st->tx_frag_fallback++;
        s->sctp_pmtu_dirty = true;
    }
    p->ts = now;
    if (ns_ip_output(&s->ip, p, &o, now) == 0) {
        st->tx_packets++;
        s->ip.udp_stats.out_datagrams++;
    } else {
        st->tx_errors++;
    }
}
