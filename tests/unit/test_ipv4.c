/* IPv4 (ipv4/ipv4.c): header parse/write, every malformed verdict and its
 * counter, options, address acceptance, protocol unreachable, output
 * fragmentation and DF, broadcast output, the local-error path, and the
 * address text forms. Frames go through a real stack (fixed seed) with a
 * permanent neighbour so nothing waits for ARP. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/checksum.h"
#include "stack/stack.h"
#include "wire.h"

#define US   IP4(198, 18, 0, 1)
#define PEER IP4(198, 18, 0, 2)

static const struct ns_mac mac_us = {{0x02, 0, 0, 0, 0, 0x01}};
static const struct ns_mac mac_peer = {{0x02, 0, 0, 0, 0, 0x02}};

struct env {
    struct ns_stack *s;
    uint32_t ifi;
    struct ns_icmp_event ev[8];
    uint64_t ev_at[8];
    int nev;
};

static void on_icmp(void *ctx, const struct ns_icmp_event *ev, uint64_t now)
{
    struct env *e = ctx;
    if (e->nev < 8) {
        e->ev[e->nev] = *ev;
        e->ev_at[e->nev] = now;
    }
    e->nev++;
}

static void drain(struct env *e)
{
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(e->s, e->ifi)))
        ns_pkt_free(p);
}

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct ns_stack_config cfg = {.seed = 1};
    e->s = ns_stack_new(&cfg, 0);
    assert_non_null(e->s);
    e->ifi = (uint32_t)ns_stack_add_iface(e->s, "eth0", &mac_us, 1500);
    assert_int_equal(ns_stack_set_addr(e->s, e->ifi, US, 24, 0), 0);
    assert_int_equal(ns_stack_iface_up(e->s, e->ifi, 0), 0);
    drain(e); /* the gratuitous ARP */
    uint8_t key[4];
    ns_wr32(key, PEER);
    assert_int_equal(
        ns_neigh_admin_set(&e->s->arp.tbl, e->ifi, key, mac_peer.b, NS_NUD_PERMANENT, 0), 0);
    ns_stack_set_icmp_event(e->s, on_icmp, e);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    ns_stack_free(e->s);
    free(e);
    return 0;
}

/* A 20-byte header built by hand (independently of ns_ip_write). */
static void iphdr(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
                  uint16_t frag, uint16_t tot_len)
{
    wire_iphdr(ip, src, dst, proto, id, frag, tot_len, 64);
}

/* An Ethernet frame from the peer to us carrying l4 over IPv4. */
static uint32_t frame(uint8_t *out, uint32_t src, uint32_t dst, uint8_t proto, const void *l4,
                      uint32_t l4len)
{
    ns_eth_write(out, &mac_us, &mac_peer, NS_ETHERTYPE_IPV4);
    iphdr(out + 14, src, dst, proto, 0x4242, 0, (uint16_t)(20 + l4len));
    memcpy(out + 34, l4, l4len);
    return 34 + l4len;
}

/* An ICMP echo request with `n` payload bytes of value i. */
static uint32_t echo_req(uint8_t *out, uint16_t id, uint16_t seq, uint32_t n)
{
    out[0] = 8;
    out[1] = 0;
    ns_wr16(out + 2, 0);
    ns_wr16(out + 4, id);
    ns_wr16(out + 6, seq);
    for (uint32_t i = 0; i < n; i++)
        out[8 + i] = (uint8_t)i;
    ns_wr16(out + 2, ns_csum(out, 8 + n));
    return 8 + n;
}

static struct ns_pkt *tx(struct env *e)
{
    struct ns_pkt *p = ns_stack_tx_pop(e->s, e->ifi);
    if (p)
        assert_true(ns_pkt_linearize(p, 0));
    return p;
}

static void test_parse_write_roundtrip(void **state)
{
    (void)state;
    const uint8_t known[20] = {0x45, 0x00, 0x00, 0x54, 0xab, 0xcd, 0x40, 0x00, 0x40, 0x01,
                               0x02, 0xb4, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02};
    struct ns_ip_hdr h = {.ihl = 20,
                          .tos = 0,
                          .tot_len = 0x54,
                          .id = 0xabcd,
                          .frag = NS_IP_DF,
                          .ttl = 64,
                          .proto = NS_IPPROTO_ICMP,
                          .src = US,
                          .dst = PEER};
    uint8_t out[0x54] = {0};
    ns_ip_write(out, &h);
    assert_memory_equal(out, known, 20);
    struct ns_ip_hdr g;
    assert_int_equal(ns_ip_parse(out, sizeof(out), &g), NS_IP_OK);
    assert_int_equal(g.ihl, 20);
    assert_int_equal(g.tos, 0);
    assert_int_equal(g.tot_len, 0x54);
    assert_int_equal(g.id, 0xabcd);
    assert_int_equal(g.frag, NS_IP_DF);
    assert_int_equal(g.ttl, 64);
    assert_int_equal(g.proto, 1);
    assert_int_equal(g.src, US);
    assert_int_equal(g.dst, PEER);
    /* Extra bytes beyond tot_len (Ethernet padding) are not an error. */
    uint8_t big[0x60] = {0};
    memcpy(big, out, sizeof(out));
    assert_int_equal(ns_ip_parse(big, sizeof(big), &g), NS_IP_OK);
    assert_int_equal(g.tot_len, 0x54);
}

static void test_parse_verdicts(void **state)
{
    (void)state;
    uint8_t b[64];
    struct ns_ip_hdr h;
    iphdr(b, US, PEER, 17, 1, 0, 40);
    assert_int_equal(ns_ip_parse(b, 40, &h), NS_IP_OK);
    for (uint32_t n = 0; n < 20; n++)
        assert_int_equal(ns_ip_parse(b, n, &h), NS_IP_SHORT);
    /* tot_len beyond the data */
    assert_int_equal(ns_ip_parse(b, 39, &h), NS_IP_TRUNCATED);
    /* version 6 */
    b[0] = 0x65;
    assert_int_equal(ns_ip_parse(b, 40, &h), NS_IP_BAD_VERSION);
    /* IHL 4 */
    b[0] = 0x44;
    assert_int_equal(ns_ip_parse(b, 40, &h), NS_IP_BAD_IHL);
    /* IHL 15 = 60 bytes, only 40 there */
    b[0] = 0x4f;
    assert_int_equal(ns_ip_parse(b, 40, &h), NS_IP_BAD_IHL);
    /* checksum */
    iphdr(b, US, PEER, 17, 1, 0, 40);
    b[8] ^= 1;
    assert_int_equal(ns_ip_parse(b, 40, &h), NS_IP_BAD_CSUM);
    /* tot_len < IHL */
    iphdr(b, US, PEER, 17, 1, 0, 19);
    assert_int_equal(ns_ip_parse(b, 40, &h), NS_IP_BAD_LEN);
}

static void inject(struct env *e, const uint8_t *f, uint32_t len)
{
    ns_stack_input(e->s, e->ifi, f, len, 0);
}

static void test_malformed_counters(void **state)
{
    struct env *e = *state;
    struct ns_ip_stats *st = &e->s->ip.stats;
    uint8_t icmp[64], f[128];
    uint32_t il = echo_req(icmp, 1, 1, 8);
    uint32_t n = frame(f, PEER, US, 1, icmp, il);

    uint8_t g[128];
    /* short: 14 + 19 bytes */
    memcpy(g, f, n);
    inject(e, g, 14 + 19);
    assert_int_equal(st->in_hdr_errors, 1);
    /* bad version */
    memcpy(g, f, n);
    g[14] = 0x55;
    inject(e, g, n);
    assert_int_equal(st->in_hdr_errors, 2);
    /* IHL < 5 */
    memcpy(g, f, n);
    g[14] = 0x43;
    inject(e, g, n);
    assert_int_equal(st->in_hdr_errors, 3);
    /* IHL past the data: IHL 15 in a 34-byte datagram frame cut to 14+40 */
    memcpy(g, f, n);
    g[14] = 0x4f;
    inject(e, g, 14 + 40);
    assert_int_equal(st->in_hdr_errors, 4);
    /* tot_len shorter than the header */
    memcpy(g, f, n);
    iphdr(g + 14, PEER, US, 1, 7, 0, 16);
    inject(e, g, n);
    assert_int_equal(st->in_hdr_errors, 5);
    /* tot_len longer than the frame */
    memcpy(g, f, n);
    iphdr(g + 14, PEER, US, 1, 7, 0, (uint16_t)(n - 14 + 1));
    inject(e, g, n);
    assert_int_equal(st->in_truncated, 1);
    /* bad checksum counts both, like Linux */
    memcpy(g, f, n);
    g[14 + 10] ^= 0x40;
    inject(e, g, n);
    assert_int_equal(st->in_csum_errors, 1);
    assert_int_equal(st->in_hdr_errors, 6);

    assert_int_equal(st->in_receives, 7);
    assert_int_equal(st->in_delivers, 0);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    /* and the good one is answered */
    inject(e, f, n);
    assert_int_equal(st->in_delivers, 1);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    ns_pkt_free(p);
}

static void test_options_skipped(void **state)
{
    struct env *e = *state;
    uint8_t f[128], icmp[64];
    uint32_t il = echo_req(icmp, 0x77, 3, 32);
    ns_eth_write(f, &mac_us, &mac_peer, NS_ETHERTYPE_IPV4);
    uint8_t *ip = f + 14;
    /* IHL 6: a Router Alert option (RFC 2113), which we need not act on. */
    ip[0] = 0x46;
    ip[1] = 0;
    ns_wr16(ip + 2, (uint16_t)(24 + il));
    ns_wr16(ip + 4, 9);
    ns_wr16(ip + 6, 0);
    ip[8] = 1; /* TTL 1 is fine for local delivery */
    ip[9] = 1;
    ip[10] = ip[11] = 0;
    ns_wr32(ip + 12, PEER);
    ns_wr32(ip + 16, US);
    ip[20] = 0x94;
    ip[21] = 0x04;
    ip[22] = ip[23] = 0;
    ns_wr16(ip + 10, ns_csum(ip, 24));
    memcpy(ip + 24, icmp, il);
    inject(e, f, 14 + 24 + il);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    /* The reply has a plain 20-byte header and echoes id/seq/payload. */
    assert_int_equal(p->len, 14 + 20 + il);
    const uint8_t *r = p->data + 34;
    assert_int_equal(r[0], 0);
    assert_int_equal(ns_rd16(r + 4), 0x77);
    assert_int_equal(ns_rd16(r + 6), 3);
    assert_memory_equal(r + 8, icmp + 8, il - 8);
    ns_pkt_free(p);
}

static void test_ethernet_padding_trimmed(void **state)
{
    struct env *e = *state;
    uint8_t f[128], icmp[64];
    uint32_t il = echo_req(icmp, 5, 6, 0); /* 8-byte ICMP: 42-byte frame */
    uint32_t n = frame(f, PEER, US, 1, icmp, il);
    assert_int_equal(n, 42);
    memset(f + n, 0xee, 60 - n);
    inject(e, f, 60);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    /* The reply's IP tot_len is 28: the padding was not echoed. */
    assert_int_equal(ns_rd16(p->data + 16), 28);
    ns_pkt_free(p);
    assert_int_equal(e->s->ip.icmp_stats.in_csum_errors, 0);
}

static void test_not_for_us(void **state)
{
    struct env *e = *state;
    uint8_t f[128], icmp[64];
    uint32_t il = echo_req(icmp, 1, 1, 8);
    uint32_t n = frame(f, PEER, IP4(198, 18, 0, 99), 1, icmp, il);
    inject(e, f, n);
    assert_int_equal(e->s->ip.stats.in_addr_errors, 1);
    assert_int_equal(e->s->ip.stats.in_delivers, 0);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    /* multicast destination: we join no groups */
    n = frame(f, PEER, IP4(224, 0, 0, 1), 1, icmp, il);
    inject(e, f, n);
    assert_int_equal(e->s->ip.stats.in_addr_errors, 2);
    /* broadcast destinations are accepted and counted */
    n = frame(f, PEER, IP4(198, 18, 0, 255), 1, icmp, il);
    inject(e, f, n);
    n = frame(f, PEER, 0xffffffffu, 1, icmp, il);
    inject(e, f, n);
    assert_int_equal(e->s->ip.stats.in_bcast, 2);
    assert_int_equal(e->s->ip.stats.in_delivers, 2);
    /* (echo to broadcast is ignored) */
    assert_int_equal(e->s->ip.icmp_stats.echo_ignored, 2);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
}

/* Expected ICMP error frame from us to the peer quoting `quote`. */
static void check_icmp_error(struct ns_pkt *p, uint16_t id, uint8_t type, uint8_t code,
                             const uint8_t *quote, uint32_t qlen)
{
    uint8_t want[14 + 20 + 8 + 600];
    ns_eth_write(want, &mac_peer, &mac_us, NS_ETHERTYPE_IPV4);
    uint8_t *ip = want + 14;
    iphdr(ip, US, PEER, 1, id, 0, (uint16_t)(28 + qlen));
    ip[1] = 0xc0; /* internetwork control, as Linux */
    ns_wr16(ip + 10, 0);
    ns_wr16(ip + 10, ns_csum(ip, 20));
    uint8_t *ic = ip + 20;
    memset(ic, 0, 8);
    ic[0] = type;
    ic[1] = code;
    memcpy(ic + 8, quote, qlen);
    ns_wr16(ic + 2, ns_csum(ic, 8 + qlen));
    uint32_t wl = 14 + 28 + qlen;
    assert_int_equal(ns_pkt_len(p), wl < 60 ? 60 : wl);
    assert_memory_equal(p->data, want, wl);
}

static void test_unknown_protocol(void **state)
{
    struct env *e = *state;
    uint8_t f[128], body[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    uint32_t n = frame(f, PEER, US, 253, body, sizeof(body));
    uint16_t id = e->s->ip.ip_id;
    inject(e, f, n);
    assert_int_equal(e->s->ip.stats.in_unknown_protos, 1);
    assert_int_equal(e->s->ip.stats.in_delivers, 0);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    check_icmp_error(p, id, 3, 2, f + 14, n - 14);
    ns_pkt_free(p);
    assert_int_equal(e->s->ip.icmp_stats.out_dest_unreachs, 1);

    /* SCTP (132) has a handler (stack/sctp_glue.c): delivered to the
     * engine, which drops this bad-checksum packet; no protocol
     * unreachable (after the per-destination rate limit interval). */
    n = frame(f, PEER, US, NS_IPPROTO_SCTP, body, sizeof(body));
    ns_stack_input(e->s, e->ifi, f, n, 1 * NS_SEC);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    assert_int_equal(e->s->ip.stats.in_unknown_protos, 1);
    assert_int_equal(e->s->ip.stats.in_delivers, 1);
    assert_int_equal(e->s->sctp.stats.rx_bad_csum, 1);

    /* Not for broadcasts. */
    n = frame(f, PEER, IP4(198, 18, 0, 255), 253, body, sizeof(body));
    ns_stack_input(e->s, e->ifi, f, n, 5 * NS_SEC);
    assert_int_equal(e->s->ip.stats.in_unknown_protos, 2);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
}

static void test_output_fragments(void **state)
{
    struct env *e = *state;
    uint16_t id = e->s->ip.ip_id;
    /* 3992 payload bytes + 8 = a 4000-byte ICMP message. */
    assert_int_equal(ns_icmp_echo_send(&e->s->ip, PEER, 0x1111, 9, 3992, 0, 5000), 0);
    static const uint16_t want_len[3] = {1500, 1500, 1060};
    static const uint16_t want_frag[3] = {NS_IP_MF | 0, NS_IP_MF | 185, 370};
    uint8_t whole[4000];
    for (int i = 0; i < 3; i++) {
        struct ns_pkt *p = tx(e);
        assert_non_null(p);
        assert_int_equal(p->len, 14u + want_len[i]);
        assert_memory_equal(p->data, mac_peer.b, 6);
        const uint8_t *ip = p->data + 14;
        struct ns_ip_hdr h;
        assert_int_equal(ns_ip_parse(ip, p->len - 14, &h), NS_IP_OK); /* checksum valid */
        assert_int_equal(h.tot_len, want_len[i]);
        assert_int_equal(h.frag, want_frag[i]);
        assert_int_equal(h.id, id);
        assert_int_equal(h.proto, 1);
        assert_int_equal(h.ttl, 64);
        assert_int_equal(h.src, US);
        assert_int_equal(h.dst, PEER);
        uint32_t off = (h.frag & NS_IP_OFFMASK) * 8u;
        assert_true(off + h.tot_len - 20 <= sizeof(whole));
        memcpy(whole + off, ip + 20, h.tot_len - 20u);
        assert_true((p->flags & NS_PKT_F_LOCAL) != 0);
        ns_pkt_free(p);
    }
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    /* The reassembled ICMP message is a correct echo request. */
    assert_int_equal(ns_csum(whole, sizeof(whole)), 0);
    assert_int_equal(whole[0], 8);
    assert_int_equal(ns_rd16(whole + 4), 0x1111);
    assert_int_equal(ns_rd16(whole + 6), 9);
    assert_int_equal(whole[8], 5000 & 0xff);
    assert_int_equal(whole[9], (5000 >> 8) & 0xff);
    for (int i = 8; i < 3992; i++)
        assert_int_equal(whole[8 + i], (uint8_t)i);
    assert_int_equal(e->s->ip.stats.frag_creates, 3);
    assert_int_equal(e->s->ip.stats.frag_oks, 1);
    assert_int_equal(e->s->ip.stats.out_requests, 1);
    assert_int_equal(e->s->ip.stats.frag_fails, 0);
}

/* A UDP datagram whose checksum was left for the device (offload) and that
 * must be fragmented: IPv4 finishes the checksum before cutting it, so the
 * reassembled datagram verifies and no fragment carries the mark. */
static void test_output_fragments_partial_csum(void **state)
{
    struct env *e = *state;
    enum { ULEN = 3000 };
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, ULEN);
    assert_non_null(p);
    uint8_t *u = ns_pkt_put(p, ULEN);
    for (int i = 0; i < ULEN; i++)
        u[i] = (uint8_t)(i * 7);
    ns_wr16(u, 5000);
    ns_wr16(u + 2, 9899);
    ns_wr16(u + 4, ULEN);
    ns_wr16(u + 6, ns_csum_fold(ns_csum_pseudo(US, PEER, NS_IPPROTO_UDP, ULEN)));
    p->flags |= NS_PKT_F_CSUM_PARTIAL;
    struct ns_ip_out o = {.src = US, .dst = PEER, .proto = NS_IPPROTO_UDP, .df = false};
    assert_int_equal(ns_ip_output(&e->s->ip, p, &o, 0), 0);
    uint8_t whole[ULEN];
    int n = 0;
    struct ns_pkt *f;
    while ((f = tx(e))) {
        assert_int_equal(f->flags & NS_PKT_F_CSUM_PARTIAL, 0);
        struct ns_ip_hdr h;
        assert_int_equal(ns_ip_parse(f->data + 14, f->len - 14, &h), NS_IP_OK);
        uint32_t off = (h.frag & NS_IP_OFFMASK) * 8u;
        assert_true(off + h.tot_len - 20u <= sizeof(whole));
        memcpy(whole + off, f->data + 14 + 20, h.tot_len - 20u);
        ns_pkt_free(f);
        n++;
    }
    assert_int_equal(n, 3);
    assert_int_equal(
        ns_csum_fold(ns_csum_add(ns_csum_pseudo(US, PEER, NS_IPPROTO_UDP, ULEN), whole, ULEN)),
        0xffff);
}

static void test_output_df(void **state)
{
    struct env *e = *state;
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, 1481);
    memset(ns_pkt_put(p, 1481), 0, 1481);
    struct ns_ip_out o = {.dst = PEER, .proto = 253, .df = true};
    assert_int_equal(ns_ip_output(&e->s->ip, p, &o, 0), -EMSGSIZE);
    assert_int_equal(e->s->ip.stats.frag_fails, 1);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    /* Exactly the MTU with DF goes out whole, DF set. */
    p = ns_pkt_alloc(NS_PKT_HEADROOM, 1480);
    memset(ns_pkt_put(p, 1480), 0, 1480);
    assert_int_equal(ns_ip_output(&e->s->ip, p, &o, 0), 0);
    p = tx(e);
    assert_non_null(p);
    assert_int_equal(p->len, 1514);
    assert_int_equal(ns_rd16(p->data + 14 + 6), NS_IP_DF);
    ns_pkt_free(p);
    /* No route. */
    p = ns_pkt_alloc(NS_PKT_HEADROOM, 10);
    ns_pkt_put(p, 10);
    o.dst = IP4(198, 19, 1, 1);
    assert_int_equal(ns_ip_output(&e->s->ip, p, &o, 0), -ENETUNREACH);
    assert_int_equal(e->s->ip.stats.out_no_routes, 1);
}

static void test_output_broadcast(void **state)
{
    struct env *e = *state;
    /* No neighbour entry exists for either: they must not wait for ARP. */
    assert_int_equal(ns_icmp_echo_send(&e->s->ip, 0xffffffffu, 1, 1, 8, 0, 0), 0);
    assert_int_equal(ns_icmp_echo_send(&e->s->ip, IP4(198, 18, 0, 255), 1, 2, 8, 0, 0), 0);
    for (int i = 0; i < 2; i++) {
        struct ns_pkt *p = tx(e);
        assert_non_null(p);
        assert_true(ns_mac_is_bcast(p->data));
        assert_int_equal(ns_rd16(p->data + 12), NS_ETHERTYPE_IPV4);
        struct ns_ip_hdr h;
        assert_int_equal(ns_ip_parse(p->data + 14, p->len - 14, &h), NS_IP_OK);
        assert_int_equal(h.dst, i == 0 ? 0xffffffffu : IP4(198, 18, 0, 255));
        assert_int_equal(h.src, US);
        ns_pkt_free(p);
    }
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
}

static void test_local_error(void **state)
{
    struct env *e = *state;
    uint32_t dead = IP4(198, 18, 0, 77);
    assert_int_equal(ns_icmp_echo_send(&e->s->ip, dead, 0x4321, 17, 56, 0, 0), 0);
    /* and a fragmented one: three fragments, one event */
    assert_int_equal(ns_icmp_echo_send(&e->s->ip, dead, 0x4321, 18, 3992, 0, 0), 0);
    for (uint64_t t = 0; t <= 10 * NS_SEC; t += 10 * NS_MS) {
        ns_stack_poll(e->s, t);
        drain(e);
    }
    assert_int_equal(e->nev, 2);
    for (int i = 0; i < 2; i++) {
        const struct ns_icmp_event *ev = &e->ev[i];
        assert_int_equal(ev->kind, NS_ICMP_EV_ERROR);
        assert_int_equal(ev->from, US);
        assert_int_equal(ev->type, 3);
        assert_int_equal(ev->code, 1);
        assert_int_equal(ev->id, 0x4321);
        assert_int_equal(ev->seq, 17 + i);
        assert_int_equal(ev->err, EHOSTUNREACH);
    }
    assert_int_equal(e->s->ip.stats.host_unreach_local, 4);
}

static void test_local_error_direct(void **state)
{
    struct env *e = *state;
    /* A packet of ours (data at its IPv4 header): an echo request. */
    uint8_t b[64], icmp[32];
    uint32_t il = echo_req(icmp, 0xbeef, 0x0102, 8);
    iphdr(b, US, IP4(198, 18, 0, 9), 1, 1, 0, (uint16_t)(20 + il));
    memcpy(b + 20, icmp, il);
    ns_ip_local_error(&e->s->ip, ns_pkt_from(b, 20 + il), EHOSTUNREACH, 123);
    assert_int_equal(e->nev, 1);
    assert_int_equal(e->ev_at[0], 123);
    assert_int_equal(e->ev[0].from, US);
    assert_int_equal(e->ev[0].id, 0xbeef);
    assert_int_equal(e->ev[0].seq, 0x0102);
    /* A later fragment of it says nothing. */
    iphdr(b, US, IP4(198, 18, 0, 9), 1, 1, 185, (uint16_t)(20 + il));
    ns_ip_local_error(&e->s->ip, ns_pkt_from(b, 20 + il), EHOSTUNREACH, 124);
    assert_int_equal(e->nev, 1);
    /* Junk is freed, counted, and ignored. */
    ns_ip_local_error(&e->s->ip, ns_pkt_from(b, 7), EHOSTUNREACH, 125);
    assert_int_equal(e->nev, 1);
    assert_int_equal(e->s->ip.stats.host_unreach_local, 3);
}

static void test_addr_text(void **state)
{
    (void)state;
    uint32_t a;
    uint8_t l;
    assert_true(ns_ip_parse_addr("1.2.3.4", &a));
    assert_int_equal(a, IP4(1, 2, 3, 4));
    assert_true(ns_ip_parse_addr("255.255.255.255", &a));
    assert_int_equal(a, 0xffffffffu);
    assert_true(ns_ip_parse_addr("0.0.0.0", &a));
    assert_int_equal(a, 0);
    const char *bad[] = {"",         "1.2.3",    "1.2.3.4.5",  "256.1.1.1", "1.2.3.4 ",
                         " 1.2.3.4", "1.2.3.-4", "1.2.3.+4",   "a.b.c.d",   "1..2.3",
                         "1.2.3.4/", "01.2.3.4", "1.2.3.0004", "1.2.3.4x",  "1.2.3.1000"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(ns_ip_parse_addr(bad[i], &a));
    assert_false(ns_ip_parse_addr(NULL, &a));

    assert_true(ns_ip_parse_prefix("198.18.0.1/24", &a, &l));
    assert_int_equal(a, US);
    assert_int_equal(l, 24);
    assert_true(ns_ip_parse_prefix("198.18.0.1", &a, &l));
    assert_int_equal(l, 32);
    assert_true(ns_ip_parse_prefix("0.0.0.0/0", &a, &l));
    assert_int_equal(l, 0);
    assert_true(ns_ip_parse_prefix("1.2.3.4/32", &a, &l));
    assert_int_equal(l, 32);
    const char *badp[] = {"1.2.3.4/33", "1.2.3.4/",   "1.2.3.4/-1", "1.2.3.4/024",
                          "1.2.3.4/2x", "1.2.3.4//2", "1.2.3/8",    "1.2.3.4/100"};
    for (size_t i = 0; i < sizeof(badp) / sizeof(badp[0]); i++)
        assert_false(ns_ip_parse_prefix(badp[i], &a, &l));

    char out[16];
    assert_string_equal(ns_ip_fmt(US, out), "198.18.0.1");
    assert_string_equal(ns_ip_fmt(0xffffffffu, out), "255.255.255.255");
    assert_string_equal(ns_ip_fmt(0, out), "0.0.0.0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_write_roundtrip),
        cmocka_unit_test(test_parse_verdicts),
        cmocka_unit_test_setup_teardown(test_malformed_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ethernet_padding_trimmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_for_us, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_protocol, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_fragments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_fragments_partial_csum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_df, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_broadcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_local_error_direct, setup, teardown),
        cmocka_unit_test(test_addr_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
