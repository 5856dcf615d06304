/* IPv4 input and output.
 *
 * RFC 791 section 3.1 (header format, fragmentation fields) and 3.2
 * (fragmentation procedure); RFC 1122 section 3.2.1 (host input checks:
 * version, checksum, lengths, address acceptance, silently discarding
 * unknown-destination datagrams) and 3.3.6 (broadcasts); RFC 919/922 for
 * limited and subnet-directed broadcast.
 *
 * Error accounting follows Linux's ip_rcv_core(): fewer than 20 bytes, a bad
 * version, a bad IHL or tot_len < IHL count in_hdr_errors; a bad checksum
 * counts in_csum_errors and in_hdr_errors; tot_len beyond the frame counts
 * in_truncated.
 */
#include "ipv4/ipv4.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/checksum.h"
#include "ipv4/layer.h"

enum ns_ip_verdict ns_ip_parse(const uint8_t *b, uint32_t len, struct ns_ip_hdr *h)
{
    if (len < NS_IP_HLEN)
        return NS_IP_SHORT;
    if ((b[0] >> 4) != 4)
        return NS_IP_BAD_VERSION;
    uint32_t ihl = (b[0] & 0x0fu) * 4u;
    if (ihl < NS_IP_HLEN || ihl > len)
        return NS_IP_BAD_IHL;
    if (ns_csum(b, ihl) != 0)
        return NS_IP_BAD_CSUM;
    h->ihl = (uint8_t)ihl;
    h->tos = b[1];
    h->tot_len = ns_rd16(b + 2);
    h->id = ns_rd16(b + 4);
    h->frag = ns_rd16(b + 6);
    h->ttl = b[8];
    h->proto = b[9];
    h->src = ns_rd32(b + 12);
    h->dst = ns_rd32(b + 16);
    if (h->tot_len > len)
        return NS_IP_TRUNCATED;
    if (h->tot_len < ihl)
        return NS_IP_BAD_LEN;
    return NS_IP_OK;
}

bool ns_ip_parse_quoted(const uint8_t *b, uint32_t len, struct ns_ip_hdr *h)
{
    if (len < NS_IP_HLEN || (b[0] >> 4) != 4)
        return false;
    uint32_t ihl = (b[0] & 0x0fu) * 4u;
    if (ihl < NS_IP_HLEN || ihl > len)
        return false;
    h->ihl = (uint8_t)ihl;
    h->tos = b[1];
    h->tot_len = ns_rd16(b + 2);
    h->id = ns_rd16(b + 4);
    h->frag = ns_rd16(b + 6);
    h->ttl = b[8];
    h->proto = b[9];
    h->src = ns_rd32(b + 12);
    h->dst = ns_rd32(b + 16);
    return h->tot_len >= ihl;
}

void ns_ip_write(uint8_t *out, const struct ns_ip_hdr *h)
{
    out[0] = 0x45;
    out[1] = h->tos;
    ns_wr16(out + 2, h->tot_len);
    ns_wr16(out + 4, h->id);
    ns_wr16(out + 6, h->frag);
    out[8] = h->ttl;
    out[9] = h->proto;
    out[10] = out[11] = 0;
    ns_wr32(out + 12, h->src);
    ns_wr32(out + 16, h->dst);
    ns_wr16(out + 10, ns_csum(out, NS_IP_HLEN));
}

bool ns_ip_rx_restore(struct ns_pkt *p)
{
    uint32_t hr = ns_pkt_headroom(p);
    if (p->l3_off > hr)
        return false;
    return ns_pkt_push(p, hr - p->l3_off) != NULL;
}

bool ns_ip_is_bcast(const struct ns_ipv4 *ip, uint32_t addr)
{
    if (addr == 0xffffffffu)
        return true;
    for (uint32_t i = 0; i < ip->link->n_ifaces; i++) {
        const struct ns_iface *ifc = &ip->link->ifaces[i];
        if (ifc->addr && ifc->plen < 31 && addr == (ifc->addr | ~ns_ip_mask(ifc->plen)))
            return true;
    }
    return false;
}

/* The reassembly timer's ICMP time exceeded (RFC 792: code 1, only when
 * fragment zero arrived, which reass.c guarantees by passing it). */
static void reass_timed_out(void *ctx, const struct ns_pkt *first, uint64_t now)
{
    ns_icmp_send_error(ctx, first, NS_ICMP_TIME_EXCEEDED, NS_ICMP_EXC_FRAGTIME, 0, now);
}

static void drop(struct ns_pkt *pkt, uint64_t *ctr)
{
    (*ctr)++;
    ns_pkt_free(pkt);
}

void ns_ip_input(struct ns_ipv4 *ip, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_ip_stats *st = &ip->stats;
    st->in_receives++;
    /* l3_off is 16 bits wide: keep the header near the buffer start. */
    if (!ns_pkt_linearize(pkt, 0)) {
        drop(pkt, &st->in_discards);
        return;
    }
    if (ns_pkt_headroom(pkt) > 0xff00) {
        struct ns_pkt *c = ns_pkt_copy(pkt);
        ns_pkt_free(pkt);
        if (!c) {
            st->in_discards++;
            return;
        }
        pkt = c;
    }

    struct ns_ip_hdr h;
    switch (ns_ip_parse(pkt->data, pkt->len, &h)) {
    case NS_IP_OK:
        break;
    case NS_IP_BAD_CSUM:
        st->in_csum_errors++;
        drop(pkt, &st->in_hdr_errors);
        return;
    case NS_IP_TRUNCATED:
        drop(pkt, &st->in_truncated);
        return;
    default:
        drop(pkt, &st->in_hdr_errors);
        return;
    }
    /* Ethernet pads short frames; the padding is not datagram. */
    ns_pkt_trim(pkt, h.tot_len);

    /* Weak host model like Linux: any of our addresses on any interface. */
    bool bcast = ns_ip_is_bcast(ip, h.dst);
    if (!bcast && !ns_link_iface_by_addr(ip->link, h.dst)) {
        drop(pkt, &st->in_addr_errors);
        return;
    }
    /* A broadcast or multicast source names no single host (RFC 1122
     * 3.2.1.3); nothing sensible can answer it. */
    if (h.src == 0xffffffffu || ns_ip_is_mcast(h.src)) {
        drop(pkt, &st->in_addr_errors);
        return;
    }
    if (bcast)
        st->in_bcast++;

    if (h.frag & (NS_IP_MF | NS_IP_OFFMASK)) {
        pkt = ns_reass_add(&ip->reass, pkt, &h, now);
        if (!pkt)
            return;
        if (ns_ip_parse(pkt->data, pkt->len, &h) != NS_IP_OK) {
            drop(pkt, &st->in_discards);
            return;
        }
    }

    pkt->l3_off = (uint16_t)ns_pkt_headroom(pkt);
    pkt->l4_off = (uint16_t)(pkt->l3_off + h.ihl);
    switch (h.proto) {
    case NS_IPPROTO_ICMP:
        st->in_delivers++;
        ns_pkt_pull(pkt, h.ihl);
        ns_icmp_input(ip, ifc, pkt, h.src, h.dst, h.ttl, now);
        return;
    case NS_IPPROTO_UDP:
        st->in_delivers++;
        ns_pkt_pull(pkt, h.ihl);
        ns_udp_input(ip, ifc, pkt, h.src, h.dst, now);
        return;
    default:
        break;
    }
    /* The protocols above IPv4 (SCTP) registered their input. */
    const struct ns_ip_proto *pr = ns_ipv4_proto(ip, h.proto);
    if (pr && pr->input) {
        st->in_delivers++;
        ns_pkt_pull(pkt, h.ihl);
        pr->input(pr->ctx, pkt, h.src, h.dst, bcast, now);
        return;
    }
    st->in_unknown_protos++;
    if (!bcast)
        ns_icmp_send_error(ip, pkt, NS_ICMP_DEST_UNREACH, NS_ICMP_PROT_UNREACH, 0, now);
    ns_pkt_free(pkt);
}

static bool bcast_on(const struct ns_iface *ifc, uint32_t dst)
{
    if (dst == 0xffffffffu)
        return true;
    return ifc->addr && ifc->plen < 31 && dst == (ifc->addr | ~ns_ip_mask(ifc->plen));
}

/* Hand one finished IPv4 packet to the link: broadcasts go straight out with
 * the Ethernet broadcast address, everything else through ARP. */
static int send_one(struct ns_ipv4 *ip, const struct ns_route *rt, struct ns_pkt *pkt, bool bcast,
                    uint64_t now)
{
    pkt->nexthop = rt->nexthop;
    pkt->ifindex = rt->ifc->index;
    pkt->flags |= NS_PKT_F_LOCAL;
    if (bcast) {
        ns_eth_output(ip->link, rt->ifc, pkt, &ns_mac_bcast, NS_ETHERTYPE_IPV4);
        return 0;
    }
    uint8_t key[4];
    ns_wr32(key, rt->nexthop);
    return ns_neigh_output(&ip->arp->tbl, rt->ifc->index, key, pkt, now);
}

int ns_ip_output(struct ns_ipv4 *ip, struct ns_pkt *pkt, const struct ns_ip_out *o, uint64_t now)
{
    struct ns_ip_stats *st = &ip->stats;
    struct ns_route rt;
    if (!ns_route_lookup(ip, o->dst, now, &rt)) {
        drop(pkt, &st->out_no_routes);
        return -ENETUNREACH;
    }
    st->out_requests++;
    uint32_t plen = ns_pkt_len(pkt);
    if (plen > NS_IP_MAXLEN - NS_IP_HLEN) {
        drop(pkt, &st->out_discards);
        return -EMSGSIZE;
    }
    struct ns_ip_hdr h = {
        .ihl = NS_IP_HLEN,
        .tos = o->tos,
        .tot_len = (uint16_t)(NS_IP_HLEN + plen),
        .id = ip->ip_id++,
        .frag = o->df ? NS_IP_DF : 0,
        .ttl = o->ttl ? o->ttl : (uint8_t)ip->params->default_ttl,
        .proto = o->proto,
        .src = o->src ? o->src : rt.src,
        .dst = o->dst,
    };
    bool bcast = bcast_on(rt.ifc, o->dst);

    if (NS_IP_HLEN + plen <= rt.mtu) {
        uint8_t *b = ns_pkt_push(pkt, NS_IP_HLEN);
        if (!b) {
            if (!ns_pkt_linearize(pkt, NS_PKT_HEADROOM)) {
                drop(pkt, &st->out_discards);
                return -ENOMEM;
            }
            b = ns_pkt_push(pkt, NS_IP_HLEN);
        }
        ns_ip_write(b, &h);
        return send_one(ip, &rt, pkt, bcast, now);
    }
    if (o->df) {
        drop(pkt, &st->frag_fails);
        return -EMSGSIZE;
    }
    if ((pkt->flags & NS_PKT_F_CSUM_PARTIAL) && o->proto == NS_IPPROTO_UDP) {
        /* A device cannot finish the sum of a datagram cut in pieces. */
        if (pkt->len < 8 && !ns_pkt_linearize(pkt, NS_PKT_HEADROOM)) {
            drop(pkt, &st->out_discards);
            return -ENOMEM;
        }
        uint16_t c = (uint16_t)~ns_csum_fold(ns_csum_pkt(pkt, 0, plen, 0));
        ns_wr16(pkt->data + 6, c ? c : 0xffff);
        pkt->flags &= (uint16_t)~NS_PKT_F_CSUM_PARTIAL;
    }

    /* RFC 791 3.2: every fragment but the last carries a multiple of 8
     * payload bytes; all share the ID. Payload is copied: fragmenting is
     * rare (PMTU discovery keeps SCTP below the MTU) and copies keep each
     * fragment independent of the caller's buffers. */
    uint32_t per = (rt.mtu - NS_IP_HLEN) & ~7u;
    for (uint32_t off = 0; off < plen;) {
        uint32_t n = plen - off > per ? per : plen - off;
        bool last = off + n == plen;
        struct ns_pkt *f = ns_pkt_alloc(NS_PKT_HEADROOM, NS_IP_HLEN + n);
        if (!f) {
            st->out_discards++;
            drop(pkt, &st->frag_fails);
            return -ENOMEM;
        }
        uint8_t *b = ns_pkt_put(f, NS_IP_HLEN + n);
        struct ns_ip_hdr fh = h;
        fh.tot_len = (uint16_t)(NS_IP_HLEN + n);
        fh.frag = (uint16_t)((off / 8) | (last ? 0 : NS_IP_MF));
        ns_ip_write(b, &fh);
        ns_pkt_copy_out(pkt, off, b + NS_IP_HLEN, n);
        f->ts = pkt->ts;
        st->frag_creates++;
        int r = send_one(ip, &rt, f, bcast, now);
        if (r < 0) {
            drop(pkt, &st->frag_fails);
            return r;
        }
        off += n;
    }
    st->frag_oks++;
    ns_pkt_free(pkt);
    return 0;
}

void ns_ip_local_error(struct ns_ipv4 *ip, struct ns_pkt *pkt, int err, uint64_t now)
{
    ip->stats.host_unreach_local++;
    uint8_t b[60 + 8];
    uint32_t len = ns_pkt_len(pkt);
    uint32_t n = len < sizeof(b) ? len : (uint32_t)sizeof(b);
    struct ns_ip_hdr h;
    if (!ns_pkt_copy_out(pkt, 0, b, n) || !ns_ip_parse_quoted(b, n, &h) ||
        (h.frag & NS_IP_OFFMASK) || n < h.ihl + 8u) {
        ns_pkt_free(pkt);
        return;
    }
    const uint8_t *l4 = b + h.ihl;
    if (h.proto == NS_IPPROTO_ICMP && l4[0] == NS_ICMP_ECHO) {
        /* iputils prints "From <our address> ... Destination Host
         * Unreachable" for this: the reporter is ourselves. */
        struct ns_icmp_event ev = {
            .kind = NS_ICMP_EV_ERROR,
            .from = h.src,
            .id = ns_rd16(l4 + 4),
            .seq = ns_rd16(l4 + 6),
            .type = NS_ICMP_DEST_UNREACH,
            .code = NS_ICMP_HOST_UNREACH,
            .bytes = (uint32_t)(h.tot_len - h.ihl),
            .err = err,
        };
        ns_pkt_free(pkt);
        if (ip->icmp_event)
            ip->icmp_event(ip->icmp_ctx, &ev, now);
        return;
    }
    ns_pkt_free(pkt);
    if (h.proto == NS_IPPROTO_UDP)
        ns_udp_icmp_error(ip, h.src, h.dst, ns_rd16(l4), ns_rd16(l4 + 2), err);
}

/* ---- The layer ------------------------------------------------------------ */

static void ip_rx(void *ctx, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now)
{
    ns_ip_input(ctx, ifc, pkt, now);
}

/* ARP could not resolve the next hop of a queued packet: the local sender
 * hears of it (socket error, ping's "Destination Host Unreachable"), a
 * forwarded one would get an ICMP host unreachable. */
void ns_ipv4_neigh_unreachable(void *ctx, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_ipv4 *ip = ctx;
    if (pkt->flags & NS_PKT_F_LOCAL) {
        ns_ip_local_error(ip, pkt, EHOSTUNREACH, now); /* frees pkt */
        return;
    }
    ns_icmp_send_error(ip, pkt, NS_ICMP_DEST_UNREACH, NS_ICMP_HOST_UNREACH, 0, now);
    ns_pkt_free(pkt);
}

int ns_ipv4_init(struct ns_ipv4 *ip, struct ns_link *l, struct ns_arp *arp,
                 const struct ns_ip_params *params, struct ns_timers *timers, struct ns_rng *rng)
{
    memset(ip, 0, sizeof(*ip));
    ip->link = l;
    ip->arp = arp;
    ip->params = params;
    ip->timers = timers;
    ip->rng = rng;
    ip->ip_id = (uint16_t)ns_rng_u64(rng);
    ip->udp.next_ephemeral =
        (uint16_t)(NS_UDP_EPHEMERAL_MIN +
                   ns_rng_below(rng, NS_UDP_EPHEMERAL_MAX + 1 - NS_UDP_EPHEMERAL_MIN));
    ns_reass_init(&ip->reass, params, timers, &ip->stats);
    ip->reass.on_timeout = reass_timed_out;
    ip->reass.ctx = ip;
    ip->reass.seed_rng = rng;
    int r = ns_link_register(l, NS_ETHERTYPE_IPV4, ip_rx, ip);
    if (r < 0) {
        ns_reass_free(&ip->reass);
        return r;
    }
    return 0;
}

void ns_ipv4_free(struct ns_ipv4 *ip)
{
    ns_udp_table_free(ip);
    ns_reass_free(&ip->reass);
}

int ns_ipv4_register(struct ns_ipv4 *ip, uint8_t proto, ns_ip_proto_input_fn input,
                     ns_ip_proto_err_fn err, void *ctx)
{
    if (proto == 0 || proto == NS_IPPROTO_ICMP || proto == NS_IPPROTO_UDP ||
        ns_ipv4_proto(ip, proto))
        return -EEXIST;
    for (int i = 0; i < NS_IP_MAX_PROTOS; i++) {
        if (ip->protos[i].proto == 0) {
            ip->protos[i] = (struct ns_ip_proto){proto, input, err, ctx};
            return 0;
        }
    }
    return -ENOSPC;
}

const struct ns_ip_proto *ns_ipv4_proto(const struct ns_ipv4 *ip, uint8_t proto)
{
    for (int i = 0; i < NS_IP_MAX_PROTOS; i++)
        if (ip->protos[i].proto == proto)
            return &ip->protos[i];
    return NULL;
}

/* One decimal number of 1-maxd digits, no sign and no leading zero (so
 * "010" is not silently octal or decimal). */
static bool parse_num(const char **pp, unsigned maxd, unsigned *v)
{
    const char *p = *pp;
    unsigned val = 0, nd = 0;
    while (*p >= '0' && *p <= '9') {
        if (++nd > maxd)
            return false;
        val = val * 10 + (unsigned)(*p - '0');
        p++;
    }
    if (nd == 0 || (nd > 1 && **pp == '0'))
        return false;
    *v = val;
    *pp = p;
    return true;
}

static bool parse_addr_at(const char **pp, uint32_t *addr)
{
    uint32_t a = 0;
    for (int i = 0; i < 4; i++) {
        if (i > 0) {
            if (**pp != '.')
                return false;
            (*pp)++;
        }
        unsigned v;
        if (!parse_num(pp, 3, &v) || v > 255)
            return false;
        a = a << 8 | v;
    }
    *addr = a;
    return true;
}

bool ns_ip_parse_addr(const char *str, uint32_t *addr)
{
    uint32_t a;
    if (!str || !parse_addr_at(&str, &a) || *str != '\0')
        return false;
    *addr = a;
    return true;
}

bool ns_ip_parse_prefix(const char *str, uint32_t *addr, uint8_t *plen)
{
    uint32_t a;
    unsigned l = 32;
    if (!str || !parse_addr_at(&str, &a))
        return false;
    if (*str == '/') {
        str++;
        if (!parse_num(&str, 2, &l) || l > 32)
            return false;
    }
    if (*str != '\0')
        return false;
    *addr = a;
    *plen = (uint8_t)l;
    return true;
}

const char *ns_ip_fmt(uint32_t addr, char out[16])
{
    snprintf(out, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
             addr & 0xff);
    return out;
}
