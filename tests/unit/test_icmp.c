/* ICMP (ipv4/icmp.c): exact echo replies, ignore rules, checksum errors,
 * rate limiting per destination and through the global bucket at exact
 * times, the never-about-errors/broadcasts/fragments rules, fragmentation
 * needed feeding the PMTU cache, and the events ping hears (RTT, errors
 * quoting its requests). */
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

#define US    IP4(198, 18, 0, 1)
#define PEER  IP4(198, 18, 0, 2)
#define PEER2 IP4(198, 18, 0, 3)

static const struct ns_mac mac_us = {{0x02, 0, 0, 0, 0, 0x01}};
static const struct ns_mac mac_peer = {{0x02, 0, 0, 0, 0, 0x02}};
static const struct ns_mac mac_peer2 = {{0x02, 0, 0, 0, 0, 0x03}};

struct env {
    struct ns_stack *s;
    uint32_t ifi;
    struct ns_icmp_event ev[8];
    int nev;
};

static void on_icmp(void *ctx, const struct ns_icmp_event *ev, uint64_t now)
{
    struct env *e = ctx;
    if (e->nev < 8)
        e->ev[e->nev] = *ev;
    e->nev++;
}

static void add_neigh(struct env *e, uint32_t a, const struct ns_mac *m)
{
    uint8_t key[4];
    ns_wr32(key, a);
    assert_int_equal(ns_neigh_admin_set(&e->s->arp.tbl, e->ifi, key, m->b, NS_NUD_PERMANENT, 0), 0);
}

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct ns_stack_config cfg = {.seed = 11};
    e->s = ns_stack_new(&cfg, 0);
    e->ifi = (uint32_t)ns_stack_add_iface(e->s, "eth0", &mac_us, 1500);
    ns_stack_set_addr(e->s, e->ifi, US, 24, 0);
    ns_stack_iface_up(e->s, e->ifi, 0);
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(e->s, e->ifi)))
        ns_pkt_free(p);
    add_neigh(e, PEER, &mac_peer);
    add_neigh(e, PEER2, &mac_peer2);
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

static void input(struct env *e, const struct ns_mac *from, uint32_t src, uint32_t dst,
                  uint8_t proto, const void *l4, uint32_t len, uint8_t ttl, uint64_t now)
{
    uint8_t f[14 + 20 + 1500];
    ns_eth_write(f, &mac_us, from, NS_ETHERTYPE_IPV4);
    wire_iphdr(f + 14, src, dst, proto, 0x1000, 0, (uint16_t)(20 + len), ttl);
    memcpy(f + 34, l4, len);
    ns_stack_input(e->s, e->ifi, f, 34 + len, now);
}

static uint32_t echo(uint8_t *out, uint8_t type, uint16_t id, uint16_t seq, uint32_t n)
{
    out[0] = type;
    out[1] = 0;
    ns_wr16(out + 2, 0);
    ns_wr16(out + 4, id);
    ns_wr16(out + 6, seq);
    for (uint32_t i = 0; i < n; i++)
        out[8 + i] = (uint8_t)(0x30 + i);
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

static int count_tx(struct env *e)
{
    int n = 0;
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(e->s, e->ifi))) {
        n++;
        ns_pkt_free(p);
    }
    return n;
}

static void test_echo_reply_exact(void **state)
{
    struct env *e = *state;
    uint8_t req[64];
    uint32_t n = echo(req, 8, 0x1234, 7, 56);
    uint16_t id = e->s->ip.ip_id;
    input(e, &mac_peer, PEER, US, 1, req, n, 64, 0);

    uint8_t want[98];
    ns_eth_write(want, &mac_peer, &mac_us, NS_ETHERTYPE_IPV4);
    wire_iphdr(want + 14, US, PEER, 1, id, 0, 84, 64);
    uint8_t *ic = want + 34;
    memcpy(ic, req, n);
    ic[0] = 0;
    ns_wr16(ic + 2, 0);
    ns_wr16(ic + 2, ns_csum(ic, n));
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    assert_int_equal(p->len, sizeof(want));
    assert_memory_equal(p->data, want, sizeof(want));
    ns_pkt_free(p);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    struct ns_icmp_stats *st = &e->s->ip.icmp_stats;
    assert_int_equal(st->in_msgs, 1);
    assert_int_equal(st->in_echos, 1);
    assert_int_equal(st->out_msgs, 1);
    assert_int_equal(st->out_echo_reps, 1);
    assert_int_equal(e->nev, 0);
}

static void test_echo_ignored(void **state)
{
    struct env *e = *state;
    uint8_t req[64];
    uint32_t n = echo(req, 8, 1, 1, 16);
    assert_int_equal(ns_sysctl_set(e->s, "ipv4.icmp_echo_ignore_all", 1, 0), 0);
    input(e, &mac_peer, PEER, US, 1, req, n, 64, 0);
    assert_int_equal(e->s->ip.icmp_stats.echo_ignored, 1);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    assert_int_equal(ns_sysctl_set(e->s, "ipv4.icmp_echo_ignore_all", 0, 0), 0);
    /* IP broadcasts, subnet and limited */
    input(e, &mac_peer, PEER, IP4(198, 18, 0, 255), 1, req, n, 64, 0);
    input(e, &mac_peer, PEER, 0xffffffffu, 1, req, n, 64, 0);
    assert_int_equal(e->s->ip.icmp_stats.echo_ignored, 3);
    /* a link-layer broadcast to our unicast address */
    uint8_t f[14 + 20 + 64];
    ns_eth_write(f, &ns_mac_bcast, &mac_peer, NS_ETHERTYPE_IPV4);
    wire_iphdr(f + 14, PEER, US, 1, 1, 0, (uint16_t)(20 + n), 64);
    memcpy(f + 34, req, n);
    ns_stack_input(e->s, e->ifi, f, 34 + n, 0);
    assert_int_equal(e->s->ip.icmp_stats.echo_ignored, 4);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    assert_int_equal(e->s->ip.icmp_stats.in_echos, 4);
    /* and a plain one is answered */
    input(e, &mac_peer, PEER, US, 1, req, n, 64, 0);
    assert_int_equal(count_tx(e), 1);
}

static void test_bad_checksum_and_short(void **state)
{
    struct env *e = *state;
    uint8_t req[64];
    uint32_t n = echo(req, 8, 1, 1, 16);
    req[20] ^= 0x01;
    input(e, &mac_peer, PEER, US, 1, req, n, 64, 0);
    assert_int_equal(e->s->ip.icmp_stats.in_csum_errors, 1);
    assert_int_equal(e->s->ip.icmp_stats.in_errors, 1);
    input(e, &mac_peer, PEER, US, 1, req, 7, 64, 0);
    assert_int_equal(e->s->ip.icmp_stats.in_errors, 2);
    assert_int_equal(e->s->ip.icmp_stats.in_echos, 0);
    assert_int_equal(e->s->ip.icmp_stats.in_msgs, 2);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
    /* unknown types are counted and dropped */
    n = echo(req, 42, 1, 1, 4);
    input(e, &mac_peer, PEER, US, 1, req, n, 64, 0);
    assert_int_equal(e->s->ip.icmp_stats.in_unknown_types, 1);
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
}

/* A UDP datagram (no checksum) to a closed port draws port unreachable. */
static void closed_port(struct env *e, const struct ns_mac *m, uint32_t src, uint64_t now)
{
    uint8_t u[12] = {0x30, 0x39, 0x00, 0x09, 0x00, 0x0c, 0x00, 0x00, 'a', 'b', 'c', 'd'};
    input(e, m, src, US, 17, u, sizeof(u), 64, now);
}

static void test_rate_limit_per_dest(void **state)
{
    struct env *e = *state;
    struct ns_icmp_stats *st = &e->s->ip.icmp_stats;
    closed_port(e, &mac_peer, PEER, 0);
    assert_int_equal(count_tx(e), 1);
    closed_port(e, &mac_peer, PEER, 999999);
    assert_int_equal(count_tx(e), 0);
    assert_int_equal(st->out_rate_limited, 1);
    /* another destination has its own allowance */
    closed_port(e, &mac_peer2, PEER2, 999999);
    assert_int_equal(count_tx(e), 1);
    /* exactly icmp_ratelimit_ms after the last one sent */
    closed_port(e, &mac_peer, PEER, 1000000);
    assert_int_equal(count_tx(e), 1);
    closed_port(e, &mac_peer, PEER, 1999999);
    assert_int_equal(count_tx(e), 0);
    assert_int_equal(st->out_rate_limited, 2);
    assert_int_equal(st->out_dest_unreachs, 3);
    assert_int_equal(e->s->ip.udp_stats.no_ports, 5);
    /* echo replies are not in the mask: never limited */
    uint8_t req[32];
    uint32_t n = echo(req, 8, 1, 1, 8);
    for (int i = 0; i < 100; i++)
        input(e, &mac_peer, PEER, US, 1, req, n, 64, 2000000);
    assert_int_equal(count_tx(e), 100);
    assert_int_equal(st->out_rate_limited, 2);
}

static void test_rate_limit_global(void **state)
{
    struct env *e = *state;
    struct ns_icmp_stats *st = &e->s->ip.icmp_stats;
    e->s->params.ip.icmp_ratelimit_ms = 0;
    e->s->params.ip.icmp_msgs_burst = 3;
    e->s->params.ip.icmp_msgs_per_sec = 1000;
    uint64_t t = 1000;
    for (int i = 0; i < 4; i++)
        closed_port(e, &mac_peer, PEER, t);
    assert_int_equal(count_tx(e), 3);
    assert_int_equal(st->out_rate_limited, 1);
    /* one token per millisecond at 1000/s */
    closed_port(e, &mac_peer2, PEER2, t + 999);
    assert_int_equal(count_tx(e), 0);
    closed_port(e, &mac_peer2, PEER2, t + 1000);
    assert_int_equal(count_tx(e), 1);
    closed_port(e, &mac_peer2, PEER2, t + 1000);
    assert_int_equal(count_tx(e), 0);
    assert_int_equal(st->out_rate_limited, 3);
    /* a long pause refills only up to the burst */
    for (int i = 0; i < 5; i++)
        closed_port(e, &mac_peer, PEER, t + 100 * NS_SEC);
    assert_int_equal(count_tx(e), 3);

    /* With no tokens at all, echo replies and fragmentation-needed still
     * go (not rate limited, as Linux's icmpv4_mask_allow). */
    e->s->params.ip.icmp_msgs_burst = 0;
    closed_port(e, &mac_peer, PEER, t + 200 * NS_SEC);
    assert_int_equal(count_tx(e), 0);
    uint8_t req[32];
    uint32_t n = echo(req, 8, 1, 1, 8);
    input(e, &mac_peer, PEER, US, 1, req, n, 64, t + 200 * NS_SEC);
    assert_int_equal(count_tx(e), 1);
    uint8_t orig[28];
    wire_iphdr(orig, PEER, US, 17, 1, NS_IP_DF, 28, 64);
    memset(orig + 20, 0, 8);
    struct ns_pkt *op = ns_pkt_from(orig, sizeof(orig));
    ns_icmp_send_error(&e->s->ip, op, NS_ICMP_DEST_UNREACH, NS_ICMP_FRAG_NEEDED, 1280,
                       t + 200 * NS_SEC);
    ns_pkt_free(op);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    assert_int_equal(p->data[34], 3);
    assert_int_equal(p->data[35], 4);
    assert_int_equal(ns_rd16(p->data + 34 + 6), 1280);
    assert_int_equal(ns_rd16(p->data + 34 + 4), 0);
    ns_pkt_free(p);
}

/* Call ns_icmp_send_error about a crafted datagram; returns frames sent. */
static int error_about(struct env *e, uint32_t src, uint32_t dst, uint8_t proto, uint16_t frag,
                       const uint8_t *l4, uint32_t l4len, uint16_t flags)
{
    uint8_t b[64];
    wire_iphdr(b, src, dst, proto, 1, frag, (uint16_t)(20 + l4len), 64);
    memcpy(b + 20, l4, l4len);
    struct ns_pkt *p = ns_pkt_from(b, 20 + l4len);
    p->flags = flags;
    ns_icmp_send_error(&e->s->ip, p, NS_ICMP_DEST_UNREACH, NS_ICMP_PORT_UNREACH, 0, 0);
    ns_pkt_free(p);
    return count_tx(e);
}

static void test_never_about(void **state)
{
    struct env *e = *state;
    e->s->params.ip.icmp_ratelimit_ms = 0;
    uint8_t udp[8] = {0, 1, 0, 2, 0, 8, 0, 0};
    uint8_t ic[8] = {0};
    /* positive controls */
    assert_int_equal(error_about(e, PEER, US, 17, 0, udp, 8, 0), 1);
    ic[0] = NS_ICMP_ECHO;
    assert_int_equal(error_about(e, PEER, US, 1, 0, ic, 8, 0), 1);
    ic[0] = 13; /* timestamp: a query, not an error */
    assert_int_equal(error_about(e, PEER, US, 1, 0, ic, 8, 0), 1);
    /* about ICMP errors, or types we cannot classify */
    const uint8_t errs[] = {3, 4, 5, 11, 12, 19, 200};
    for (size_t i = 0; i < sizeof(errs); i++) {
        ic[0] = errs[i];
        assert_int_equal(error_about(e, PEER, US, 1, 0, ic, 8, 0), 0);
    }
    /* an ICMP datagram too short to tell */
    assert_int_equal(error_about(e, PEER, US, 1, 0, ic, 0, 0), 0);
    /* non-first fragment */
    assert_int_equal(error_about(e, PEER, US, 17, 185, udp, 8, 0), 0);
    /* ... but the first fragment is fine */
    assert_int_equal(error_about(e, PEER, US, 17, NS_IP_MF, udp, 8, 0), 1);
    /* link-layer broadcast / multicast */
    assert_int_equal(error_about(e, PEER, US, 17, 0, udp, 8, NS_PKT_F_BCAST), 0);
    assert_int_equal(error_about(e, PEER, US, 17, 0, udp, 8, NS_PKT_F_MCAST), 0);
    /* IP broadcast / multicast destinations */
    assert_int_equal(error_about(e, PEER, 0xffffffffu, 17, 0, udp, 8, 0), 0);
    assert_int_equal(error_about(e, PEER, IP4(198, 18, 0, 255), 17, 0, udp, 8, 0), 0);
    assert_int_equal(error_about(e, PEER, IP4(224, 0, 0, 251), 17, 0, udp, 8, 0), 0);
    /* sources that name no single host */
    const uint32_t bad_src[] = {0,
                                0xffffffffu,
                                IP4(198, 18, 0, 255),
                                IP4(224, 0, 0, 5),
                                IP4(127, 0, 0, 1),
                                IP4(240, 0, 0, 1)};
    for (size_t i = 0; i < sizeof(bad_src) / sizeof(bad_src[0]); i++)
        assert_int_equal(error_about(e, bad_src[i], US, 17, 0, udp, 8, 0), 0);
    assert_int_equal(e->s->ip.icmp_stats.out_dest_unreachs, 4);
}

static void test_error_quote_and_source(void **state)
{
    struct env *e = *state;
    /* A datagram longer than 548 bytes is quoted up to 576 in total. */
    static uint8_t big[1000];
    for (int i = 0; i < 1000; i++)
        big[i] = (uint8_t)(i ^ 0x5a);
    big[4] = 0x03;
    big[5] = 0xe8; /* UDP length 1000 */
    big[6] = big[7] = 0;
    uint16_t id = e->s->ip.ip_id;
    input(e, &mac_peer, PEER, US, 17, big, 1000, 64, 0);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    assert_int_equal(p->len, 14 + 576);
    struct ns_ip_hdr h;
    assert_int_equal(ns_ip_parse(p->data + 14, 576, &h), NS_IP_OK);
    assert_int_equal(h.id, id);
    assert_int_equal(h.tos, 0xc0);
    assert_int_equal(h.src, US);
    assert_int_equal(h.dst, PEER);
    assert_int_equal(h.ttl, 64);
    assert_int_equal(ns_csum(p->data + 34, 556), 0);
    assert_int_equal(ns_rd16(p->data + 34 + 8 + 2), 1020); /* quoted tot_len */
    assert_memory_equal(p->data + 34 + 28, big, 548 - 20);
    ns_pkt_free(p);
}

/* An ICMP error from PEER2 (a router) quoting an IPv4 header + 8 bytes. */
static void router_error(struct env *e, uint8_t type, uint8_t code, uint16_t mtu, uint32_t qsrc,
                         uint32_t qdst, uint8_t qproto, uint16_t qtot, const uint8_t *q8,
                         uint32_t qlen, uint64_t now)
{
    uint8_t m[8 + 28];
    memset(m, 0, 8);
    m[0] = type;
    m[1] = code;
    ns_wr16(m + 6, mtu);
    wire_iphdr(m + 8, qsrc, qdst, qproto, 0x7777, 0, qtot, 1);
    memcpy(m + 28, q8, 8);
    ns_wr16(m + 2, ns_csum(m, 8 + qlen));
    input(e, &mac_peer2, PEER2, US, 1, m, 8 + qlen, 250, now);
}

static void test_frag_needed_pmtu(void **state)
{
    struct env *e = *state;
    struct ns_stack *s = e->s;
    uint8_t u8[8] = {0x80, 0x00, 0x00, 0x35, 0x05, 0xc8, 0, 0};
    uint32_t d1 = IP4(198, 18, 0, 50), d2 = IP4(198, 18, 0, 51), d3 = IP4(198, 18, 0, 52);
    router_error(e, 3, 4, 1300, US, d1, 17, 1500, u8, 28, 5);
    assert_int_equal(s->ip.icmp_stats.in_frag_needed, 1);
    assert_int_equal(s->ip.icmp_stats.in_dest_unreachs, 1);
    assert_int_equal(ns_pmtu_get(&s->ip, d1, 5), 1300);
    /* next-hop MTU 0 (pre-RFC 1191 router): the plateau below 1500 */
    router_error(e, 3, 4, 0, US, d2, 17, 1500, u8, 28, 5);
    assert_int_equal(ns_pmtu_get(&s->ip, d2, 5), 1492);
    router_error(e, 3, 4, 0, US, d2, 17, 1492, u8, 28, 5);
    assert_int_equal(ns_pmtu_get(&s->ip, d2, 5), 1006);
    /* about a datagram we did not send: ignored */
    router_error(e, 3, 4, 1000, IP4(198, 18, 0, 9), d3, 17, 1500, u8, 28, 5);
    assert_int_equal(ns_pmtu_get(&s->ip, d3, 5), 0);
    /* a quote without the 8 transport bytes: in_errors, no update */
    uint32_t ierr = (uint32_t)s->ip.icmp_stats.in_errors;
    router_error(e, 3, 4, 1000, US, d3, 17, 1500, u8, 24, 5);
    assert_int_equal(s->ip.icmp_stats.in_errors, ierr + 1);
    assert_int_equal(ns_pmtu_get(&s->ip, d3, 5), 0);
    /* a quote that is not IPv4 */
    uint8_t m[8 + 28] = {3, 4};
    ns_wr16(m + 6, 1000);
    wire_iphdr(m + 8, US, d3, 17, 1, 0, 1500, 1);
    m[8] = 0x65;
    memcpy(m + 28, u8, 8);
    ns_wr16(m + 2, ns_csum(m, sizeof(m)));
    input(e, &mac_peer2, PEER2, US, 1, m, sizeof(m), 250, 5);
    assert_int_equal(s->ip.icmp_stats.in_errors, ierr + 2);
    assert_int_equal(ns_pmtu_get(&s->ip, d3, 5), 0);
    assert_null(ns_stack_tx_pop(s, e->ifi));
    assert_int_equal(e->nev, 0);
}

static void test_echo_event_rtt(void **state)
{
    struct env *e = *state;
    uint64_t t0 = 1000000;
    assert_int_equal(ns_icmp_echo_send(&e->s->ip, PEER, 0x42, 5, 56, 0, t0), 0);
    assert_int_equal(e->s->ip.icmp_stats.out_echos, 1);
    struct ns_pkt *p = tx(e);
    assert_non_null(p);
    assert_int_equal(p->len, 14 + 20 + 64);
    uint8_t icmp[64];
    memcpy(icmp, p->data + 34, 64);
    ns_pkt_free(p);
    assert_int_equal(icmp[0], 8);
    assert_int_equal(ns_csum(icmp, 64), 0);
    /* the send time, little-endian, then the iputils pattern */
    for (int i = 0; i < 8; i++)
        assert_int_equal(icmp[8 + i], (uint8_t)(t0 >> (8 * i)));
    for (int i = 8; i < 56; i++)
        assert_int_equal(icmp[8 + i], (uint8_t)i);
    icmp[0] = 0;
    ns_wr16(icmp + 2, 0);
    ns_wr16(icmp + 2, ns_csum(icmp, 64));
    input(e, &mac_peer, PEER, US, 1, icmp, 64, 61, t0 + 2345);
    assert_int_equal(e->nev, 1);
    const struct ns_icmp_event *ev = &e->ev[0];
    assert_int_equal(ev->kind, NS_ICMP_EV_ECHO_REPLY);
    assert_int_equal(ev->from, PEER);
    assert_int_equal(ev->id, 0x42);
    assert_int_equal(ev->seq, 5);
    assert_int_equal(ev->ttl, 61);
    assert_int_equal(ev->bytes, 64);
    assert_int_equal(ev->rtt_us, 2345);
    assert_int_equal(e->s->ip.icmp_stats.in_echo_reps, 1);
    /* a reply too short to carry a timestamp still reports, rtt 0 */
    uint8_t small[8];
    echo(small, 0, 0x42, 6, 0);
    input(e, &mac_peer, PEER, US, 1, small, 8, 61, t0 + 5000);
    assert_int_equal(e->nev, 2);
    assert_int_equal(e->ev[1].rtt_us, 0);
    assert_int_equal(e->ev[1].bytes, 8);
}

static void test_error_events(void **state)
{
    struct env *e = *state;
    uint8_t q8[8];
    echo(q8, 8, 0x42, 9, 0);
    struct {
        uint8_t type, code;
        int err;
    } cases[] = {
        {11, 0, EHOSTUNREACH}, {3, 1, EHOSTUNREACH}, {3, 0, ENETUNREACH},
        {3, 3, ECONNREFUSED},  {3, 4, EMSGSIZE},     {12, 0, EPROTO},
    };
    int nc = (int)(sizeof(cases) / sizeof(cases[0]));
    for (int i = 0; i < nc; i++) {
        router_error(e, cases[i].type, cases[i].code, cases[i].type == 3 ? 1400 : 0, US, PEER, 1,
                     84, q8, 28, (uint64_t)i);
        assert_int_equal(e->nev, i + 1);
        const struct ns_icmp_event *ev = &e->ev[i];
        assert_int_equal(ev->kind, NS_ICMP_EV_ERROR);
        assert_int_equal(ev->from, PEER2);
        assert_int_equal(ev->id, 0x42);
        assert_int_equal(ev->seq, 9);
        assert_int_equal(ev->type, cases[i].type);
        assert_int_equal(ev->code, cases[i].code);
        assert_int_equal(ev->err, cases[i].err);
        assert_int_equal(ev->ttl, 250);
    }
    assert_int_equal(e->s->ip.icmp_stats.in_time_excds, 1);
    assert_int_equal(e->s->ip.icmp_stats.in_parm_probs, 1);
    assert_int_equal(e->s->ip.icmp_stats.in_dest_unreachs, 4);
    /* unknown unreachable code: dropped */
    router_error(e, 3, 16, 0, US, PEER, 1, 84, q8, 28, 10);
    assert_int_equal(e->nev, nc);
    /* quoting an echo reply (not ours to hear about) says nothing */
    echo(q8, 0, 0x42, 9, 0);
    router_error(e, 3, 1, 0, US, PEER, 1, 84, q8, 28, 11);
    assert_int_equal(e->nev, nc);
    /* no reply to any of them */
    assert_null(ns_stack_tx_pop(e->s, e->ifi));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_echo_reply_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_echo_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_checksum_and_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit_per_dest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_limit_global, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_about, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_quote_and_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frag_needed_pmtu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_echo_event_rtt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_events, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
