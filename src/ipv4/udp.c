/* UDP and its datagram sockets.
 *
 * RFC 768 (header, pseudo-header checksum; a transmitted checksum of zero
 * is sent as all ones, a received zero means "none"), RFC 1122 section 4.1.3
 * (verify checksums when present, port unreachable for closed ports but not
 * for broadcasts, pass ICMP errors up to the application).
 *
 * Demultiplexing prefers the most specific socket: connected (remote address
 * and port match) over bound to the destination address over the wildcard.
 * Error accounting follows Linux: bad checksums count in_csum_errors and
 * in_errors, a full receive buffer rcvbuf_errors and in_errors.
 */
#include "ipv4/udp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/checksum.h"
#include "ipv4/layer.h"

struct ns_udp_sock *ns_udp_open(struct ns_ipv4 *ip)
{
    struct ns_udp_sock *sk = calloc(1, sizeof(*sk));
    if (!sk)
        return NULL;
    sk->ip = ip;
    sk->rcvbuf = ip->params->udp_rcvbuf_bytes;
    ns_pktq_init(&sk->rxq);
    sk->next = ip->udp.socks;
    ip->udp.socks = sk;
    return sk;
}

/* Another socket already holds (addr, port): same port and the same
 * address or a wildcard on either side (no SO_REUSEADDR). */
static bool port_taken(const struct ns_ipv4 *ip, const struct ns_udp_sock *self, uint32_t addr,
                       uint16_t port)
{
    for (const struct ns_udp_sock *o = ip->udp.socks; o; o = o->next)
        if (o != self && o->lport == port && (!o->laddr || !addr || o->laddr == addr))
            return true;
    return false;
}

static int pick_port(struct ns_ipv4 *ip, const struct ns_udp_sock *self, uint32_t addr)
{
    const uint32_t range = NS_UDP_EPHEMERAL_MAX - NS_UDP_EPHEMERAL_MIN + 1;
    uint32_t start = ip->udp.next_ephemeral;
    if (start < NS_UDP_EPHEMERAL_MIN || start > NS_UDP_EPHEMERAL_MAX)
        start = NS_UDP_EPHEMERAL_MIN;
    for (uint32_t i = 0; i < range; i++) {
        uint16_t port =
            (uint16_t)(NS_UDP_EPHEMERAL_MIN + (start - NS_UDP_EPHEMERAL_MIN + i) % range);
        if (!port_taken(ip, self, addr, port)) {
            ip->udp.next_ephemeral =
                port == NS_UDP_EPHEMERAL_MAX ? NS_UDP_EPHEMERAL_MIN : (uint16_t)(port + 1);
            return port;
        }
    }
    return -EADDRINUSE;
}

int ns_udp_bind(struct ns_udp_sock *sk, uint32_t addr, uint16_t port)
{
    struct ns_ipv4 *ip = sk->ip;
    if (sk->lport)
        return -EINVAL;
    if (addr && !ns_link_iface_by_addr(ip->link, addr) && !ns_ip_is_bcast(ip, addr))
        return -EADDRNOTAVAIL;
    if (port == 0) {
        int p = pick_port(ip, sk, addr);
        if (p < 0)
            return p;
        port = (uint16_t)p;
    } else if (port_taken(ip, sk, addr, port)) {
        return -EADDRINUSE;
    }
    sk->laddr = addr;
    sk->lport = port;
    return 0;
}

int ns_udp_connect(struct ns_udp_sock *sk, uint32_t addr, uint16_t port)
{
    if (!addr || !port)
        return -EINVAL;
    struct ns_route rt;
    /* Only the source address is wanted here, which does not depend on the
     * PMTU cache, so any time will do. */
    if (!ns_route_lookup(sk->ip, addr, 0, &rt))
        return -ENETUNREACH;
    if (!sk->lport) {
        int r = ns_udp_bind(sk, 0, 0);
        if (r < 0)
            return r;
    }
    if (!sk->laddr)
        sk->laddr = rt.src;
    sk->raddr = addr;
    sk->rport = port;
    return 0;
}

ssize_t ns_udp_sendto(struct ns_udp_sock *sk, const void *buf, uint32_t len, uint32_t dst,
                      uint16_t dport, uint64_t now)
{
    struct ns_ipv4 *ip = sk->ip;
    if (!dst) {
        if (!sk->raddr)
            return -EDESTADDRREQ;
        dst = sk->raddr;
        dport = sk->rport;
    } else if (!dport) {
        return -EINVAL;
    }
    if (len > NS_UDP_MAX_PAYLOAD)
        return -EMSGSIZE;
    if (len && !buf)
        return -EFAULT;
    /* The checksum covers the source address, so pick it before IP does. */
    struct ns_route rt;
    if (!ns_route_lookup(ip, dst, now, &rt)) {
        ip->stats.out_no_routes++;
        return -ENETUNREACH;
    }
    if (!sk->lport) {
        int r = ns_udp_bind(sk, 0, 0);
        if (r < 0)
            return r;
    }
    uint32_t src = sk->laddr && !ns_ip_is_bcast(ip, sk->laddr) ? sk->laddr : rt.src;
    uint16_t ulen = (uint16_t)(NS_UDP_HLEN + len);
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, ulen);
    if (!p) {
        ip->udp_stats.sndbuf_errors++;
        return -ENOBUFS;
    }
    uint8_t *b = ns_pkt_put(p, ulen);
    ns_wr16(b, sk->lport);
    ns_wr16(b + 2, dport);
    ns_wr16(b + 4, ulen);
    ns_wr16(b + 6, 0);
    if (len)
        memcpy(b + NS_UDP_HLEN, buf, len);
    uint16_t c = (uint16_t)~ns_csum_fold(
        ns_csum_add(ns_csum_pseudo(src, dst, NS_IPPROTO_UDP, ulen), b, ulen));
    ns_wr16(b + 6, c ? c : 0xffff);
    p->ts = now;
    struct ns_ip_out o = {.src = src, .dst = dst, .proto = NS_IPPROTO_UDP};
    int r = ns_ip_output(ip, p, &o, now);
    if (r < 0) {
        if (r == -ENOBUFS || r == -ENOMEM)
            ip->udp_stats.sndbuf_errors++;
        return r;
    }
    ip->udp_stats.out_datagrams++;
    return (ssize_t)len;
}

ssize_t ns_udp_recvfrom(struct ns_udp_sock *sk, void *buf, uint32_t cap, uint32_t *src,
                        uint16_t *sport)
{
    /* Like sock_error(): a pending error is reported (once) first. */
    if (sk->err) {
        int e = sk->err;
        sk->err = 0;
        return -e;
    }
    struct ns_pkt *p = ns_pktq_pop(&sk->rxq);
    if (!p)
        return -EAGAIN;
    uint32_t n = ns_pkt_len(p);
    if (n > cap)
        n = cap;
    if (n)
        ns_pkt_copy_out(p, 0, buf, n);
    if (src)
        *src = p->nexthop;
    if (sport) {
        *sport = 0;
        if ((uint32_t)p->l4_off + NS_UDP_HLEN <= ns_pkt_headroom(p))
            *sport = ns_rd16(p->buf->data + p->l4_off);
    }
    ns_pkt_free(p);
    return (ssize_t)n;
}

void ns_udp_close(struct ns_udp_sock *sk)
{
    if (!sk)
        return;
    struct ns_udp_sock **pp = &sk->ip->udp.socks;
    while (*pp && *pp != sk)
        pp = &(*pp)->next;
    if (*pp)
        *pp = sk->next;
    ns_pktq_purge(&sk->rxq);
    free(sk);
}

void ns_udp_table_free(struct ns_ipv4 *ip)
{
    while (ip->udp.socks)
        ns_udp_close(ip->udp.socks);
}

static struct ns_udp_sock *lookup(struct ns_ipv4 *ip, uint32_t laddr, uint16_t lport,
                                  uint32_t raddr, uint16_t rport)
{
    struct ns_udp_sock *best = NULL;
    int best_score = -1;
    for (struct ns_udp_sock *sk = ip->udp.socks; sk; sk = sk->next) {
        if (sk->lport != lport)
            continue;
        int score = 0;
        if (sk->laddr) {
            if (sk->laddr != laddr)
                continue;
            score += 1;
        }
        if (sk->raddr) {
            if (sk->raddr != raddr || sk->rport != rport)
                continue;
            score += 2;
        }
        if (score > best_score) {
            best = sk;
            best_score = score;
        }
    }
    return best;
}

static void drop(struct ns_pkt *pkt, uint64_t *ctr)
{
    (*ctr)++;
    ns_pkt_free(pkt);
}

void ns_udp_input(struct ns_ipv4 *ip, struct ns_iface *ifc, struct ns_pkt *pkt, uint32_t src,
                  uint32_t dst, uint64_t now)
{
    struct ns_udp_stats *st = &ip->udp_stats;
    uint32_t len = ns_pkt_len(pkt);
    uint8_t h[NS_UDP_HLEN];
    if (len < NS_UDP_HLEN || !ns_pkt_copy_out(pkt, 0, h, NS_UDP_HLEN)) {
        drop(pkt, &st->in_errors);
        return;
    }
    uint16_t ulen = ns_rd16(h + 4);
    if (ulen < NS_UDP_HLEN || ulen > len) {
        drop(pkt, &st->in_errors);
        return;
    }
    /* Bytes past the UDP length are not part of the datagram. */
    ns_pkt_trim(pkt, ulen);
    if (ns_rd16(h + 6) != 0 &&
        ns_csum_fold(ns_csum_pkt(pkt, 0, ulen, ns_csum_pseudo(src, dst, NS_IPPROTO_UDP, ulen))) !=
            0xffff) {
        st->in_csum_errors++;
        drop(pkt, &st->in_errors);
        return;
    }
    uint16_t sport = ns_rd16(h), dport = ns_rd16(h + 2);
    struct ns_udp_sock *sk = lookup(ip, dst, dport, src, sport);
    if (!sk) {
        st->no_ports++;
        bool bcast = (pkt->flags & (NS_PKT_F_BCAST | NS_PKT_F_MCAST)) || ns_ip_is_bcast(ip, dst) ||
                     ns_ip_is_mcast(dst);
        if (!bcast && ns_ip_rx_restore(pkt))
            ns_icmp_send_error(ip, pkt, NS_ICMP_DEST_UNREACH, NS_ICMP_PORT_UNREACH, 0, now);
        ns_pkt_free(pkt);
        return;
    }
    uint32_t plen = ulen - NS_UDP_HLEN;
    uint64_t charged = (uint64_t)sk->rxq.bytes + (uint64_t)sk->rxq.count * NS_UDP_RX_OVERHEAD;
    if (charged + plen + NS_UDP_RX_OVERHEAD > sk->rcvbuf) {
        st->rcvbuf_errors++;
        drop(pkt, &st->in_errors);
        return;
    }
    if (!ns_pkt_linearize(pkt, 0) || !ns_pkt_pull(pkt, NS_UDP_HLEN)) {
        drop(pkt, &st->in_errors);
        return;
    }
    pkt->nexthop = src;
    pkt->ifindex = ifc ? ifc->index : 0;
    ns_pktq_push(&sk->rxq, pkt);
    st->in_datagrams++;
    /* Last: the callback may read or even close the socket. */
    if (sk->on_ready)
        sk->on_ready(sk->ctx, sk);
}

void ns_udp_icmp_error(struct ns_ipv4 *ip, uint32_t inner_src, uint32_t inner_dst, uint16_t sport,
                       uint16_t dport, int err)
{
    struct ns_udp_sock *sk = lookup(ip, inner_src, sport, inner_dst, dport);
    if (!sk)
        return;
    sk->err = err;
    if (sk->on_ready)
        sk->on_ready(sk->ctx, sk);
}

void ns_udp_icmp_quote(struct ns_ipv4 *ip, uint32_t inner_src, uint32_t inner_dst,
                       const uint8_t *udp, uint32_t udp_len, uint8_t type, uint8_t code,
                       uint32_t mtu, int err, uint64_t now)
{
    uint16_t sport = ns_rd16(udp), dport = ns_rd16(udp + 2);
    struct ns_udp_sock *sk = lookup(ip, inner_src, sport, inner_dst, dport);
    if (!sk)
        return;
    if (sk->on_icmp) {
        sk->on_icmp(sk->ctx, sk, inner_src, inner_dst, udp, udp_len, type, code, mtu, now);
        return;
    }
    sk->err = err;
    if (sk->on_ready)
        sk->on_ready(sk->ctx, sk);
}
