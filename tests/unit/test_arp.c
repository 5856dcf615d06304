/* ARP (link/arp.c) through a real stack: frames in with ns_stack_input,
 * frames out with ns_stack_tx_pop, timers on a virtual clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/stack.h"

#define T0      (5000 * NS_SEC)
#define MS      NS_MS
#define OUR_IP  0xc6120002u /* 198.18.0.2 */
#define PEER_IP 0xc6120001u /* 198.18.0.1 */
#define NOBODY  0xc6120009u /* 198.18.0.9 */
#define MAXF    64

static const struct ns_mac OUR_MAC = {{0x02, 0, 0, 0, 0, 0x02}};
static const struct ns_mac PEER_MAC = {{0x02, 0, 0, 0, 0, 0xaa}};
static const struct ns_mac SPOOF_MAC = {{0x02, 0, 0, 0, 0, 0xee}};

struct frame {
    uint64_t t;
    uint32_t ifindex;
    uint32_t len;
    uint8_t b[1600];
};

struct fix {
    struct ns_stack *s;
    uint64_t now;
    uint32_t ifindex;
    struct frame f[MAXF];
    int nf;
    struct ns_icmp_event ev[8];
    int nev;
};

static void on_icmp(void *ctx, const struct ns_icmp_event *ev, uint64_t now)
{
    struct fix *f = ctx;
    assert_true(f->nev < 8);
    f->ev[f->nev++] = *ev;
}

/* Move every queued frame of every interface into f->f, stamped with now. */
static void collect(struct fix *f)
{
    for (uint32_t i = 1; i <= f->s->link.n_ifaces; i++) {
        struct ns_pkt *p;
        while ((p = ns_stack_tx_pop(f->s, i))) {
            assert_true(f->nf < MAXF);
            struct frame *fr = &f->f[f->nf++];
            fr->t = f->now;
            fr->ifindex = i;
            fr->len = ns_pkt_len(p);
            assert_true(fr->len <= sizeof(fr->b));
            assert_true(ns_pkt_copy_out(p, 0, fr->b, fr->len));
            ns_pkt_free(p);
        }
    }
}

static void run_to(struct fix *f, uint64_t t)
{
    for (;;) {
        uint64_t next = ns_stack_next_deadline(f->s);
        if (next > t)
            break;
        if (next > f->now)
            f->now = next;
        ns_stack_poll(f->s, f->now);
        collect(f);
    }
    f->now = t;
}

static struct fix *make(uint64_t seed)
{
    struct fix *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->now = T0;
    struct ns_stack_config cfg = {.seed = seed, .params = NULL};
    f->s = ns_stack_new(&cfg, f->now);
    assert_non_null(f->s);
    ns_stack_set_icmp_event(f->s, on_icmp, f);
    int idx = ns_stack_add_iface(f->s, "eth0", &OUR_MAC, 1500);
    assert_true(idx > 0);
    f->ifindex = (uint32_t)idx;
    return f;
}

static int setup(void **state)
{
    struct fix *f = make(7);
    assert_int_equal(ns_stack_set_addr(f->s, f->ifindex, OUR_IP, 24, f->now), 0);
    assert_int_equal(ns_stack_iface_up(f->s, f->ifindex, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 1); /* the announcement */
    f->nf = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    ns_stack_free(f->s);
    free(f);
    return 0;
}

static void put32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

/* A 60-byte Ethernet frame carrying an ARP packet (zero padding). */
static uint32_t arp_frame(uint8_t *b, const struct ns_mac *eth_dst, const struct ns_mac *eth_src,
                          uint16_t op, const struct ns_mac *sha, uint32_t spa,
                          const struct ns_mac *tha, uint32_t tpa)
{
    memset(b, 0, 60);
    memcpy(b, eth_dst->b, 6);
    memcpy(b + 6, eth_src->b, 6);
    b[12] = 0x08;
    b[13] = 0x06;
    uint8_t *a = b + 14;
    a[1] = 1;    /* Ethernet */
    a[2] = 0x08; /* IPv4 */
    a[4] = 6;
    a[5] = 4;
    a[7] = (uint8_t)op;
    memcpy(a + 8, sha->b, 6);
    put32(a + 14, spa);
    memcpy(a + 18, tha->b, 6);
    put32(a + 24, tpa);
    return 60;
}

static void feed(struct fix *f, const uint8_t *b, uint32_t len)
{
    ns_stack_input(f->s, f->ifindex, b, len, f->now);
    collect(f);
}

static void feed_arp(struct fix *f, bool bcast, uint16_t op, const struct ns_mac *sha, uint32_t spa,
                     uint32_t tpa)
{
    uint8_t b[60];
    const struct ns_mac *tha = op == NS_ARPOP_REPLY ? &OUR_MAC : &ns_mac_zero;
    feed(f, b, arp_frame(b, bcast ? &ns_mac_bcast : &OUR_MAC, sha, op, sha, spa, tha, tpa));
}

static struct ns_neigh *entry(struct fix *f, uint32_t ip)
{
    uint8_t key[4];
    ns_arp_key(ip, key);
    struct ns_neigh *n = NULL;
    /* Not through ns_neigh_lookup, which would count a lookup. */
    for (uint32_t b = 0; b <= f->s->arp.tbl.hash_mask && !n; b++)
        for (struct ns_neigh *e = f->s->arp.tbl.buckets[b]; e; e = e->hnext)
            if (e->ifindex == f->ifindex && memcmp(e->key, key, 4) == 0)
                n = e;
    return n;
}

static void expect_arp(const struct frame *fr, const struct ns_mac *eth_dst, uint16_t op,
                       uint32_t spa, const struct ns_mac *tha, uint32_t tpa)
{
    uint8_t want[60];
    arp_frame(want, eth_dst, &OUR_MAC, op, &OUR_MAC, spa, tha, tpa);
    assert_int_equal(fr->len, 60);
    assert_memory_equal(fr->b, want, 60);
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* ---- tests ----------------------------------------------------------------- */

static void test_announce_on_up(void **state)
{
    (void)state;
    struct fix *f = make(3);
    /* An address on a down interface announces nothing. */
    assert_int_equal(ns_stack_set_addr(f->s, f->ifindex, OUR_IP, 24, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 0);
    f->now += MS;
    assert_int_equal(ns_stack_iface_up(f->s, f->ifindex, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 1);
    expect_arp(&f->f[0], &ns_mac_bcast, NS_ARPOP_REQUEST, OUR_IP, &ns_mac_zero, OUR_IP);
    assert_int_equal(f->s->arp.stats.tx_gratuitous, 1);
    assert_int_equal(f->s->arp.stats.tx_requests, 0);
    /* A new address on an up interface is announced too. */
    assert_int_equal(ns_stack_set_addr(f->s, f->ifindex, OUR_IP + 1, 24, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 2);
    expect_arp(&f->f[1], &ns_mac_bcast, NS_ARPOP_REQUEST, OUR_IP + 1, &ns_mac_zero, OUR_IP + 1);
    assert_int_equal(f->s->arp.stats.tx_gratuitous, 2);
    assert_int_equal(f->s->arp.tbl.entries, 0);
    ns_stack_free(f->s);
    free(f);
}

static void test_request_for_us(void **state)
{
    struct fix *f = *state;
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(f->nf, 1);
    expect_arp(&f->f[0], &PEER_MAC, NS_ARPOP_REPLY, OUR_IP, &PEER_MAC, PEER_IP);
    struct ns_neigh *n = entry(f, PEER_IP);
    assert_non_null(n);
    assert_int_equal(n->state, NS_NUD_STALE);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(n->updated, T0);
    assert_false(ns_timer_armed(&n->timer));
    struct ns_arp_stats *st = &f->s->arp.stats;
    assert_int_equal(st->rx, 1);
    assert_int_equal(st->rx_requests, 1);
    assert_int_equal(st->tx_replies, 1);
    assert_int_equal(f->s->arp.tbl.stats.rcv_probes_mcast, 1);
    assert_int_equal(f->s->arp.tbl.stats.rcv_probes_ucast, 0);
    assert_int_equal(f->s->arp.tbl.stats.allocs, 1);
    /* A unicast request (a peer re-validating us) counts apart and leaves
     * the same-address entry as it was. */
    f->now += 2 * NS_SEC;
    feed_arp(f, false, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(f->nf, 2);
    expect_arp(&f->f[1], &PEER_MAC, NS_ARPOP_REPLY, OUR_IP, &PEER_MAC, PEER_IP);
    assert_int_equal(f->s->arp.tbl.stats.rcv_probes_ucast, 1);
    assert_int_equal(n->state, NS_NUD_STALE);
    assert_int_equal(n->updated, T0);
    assert_int_equal(f->s->arp.tbl.entries, 1);
}

static void test_request_for_other(void **state)
{
    struct fix *f = *state;
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, 0xc6120003u);
    assert_int_equal(f->nf, 0);
    assert_null(entry(f, PEER_IP));
    assert_int_equal(f->s->arp.tbl.entries, 0);
    assert_int_equal(f->s->arp.stats.drop_not_for_us, 1);
    assert_int_equal(f->s->arp.stats.rx_requests, 1);
    /* With an entry for the asker, its request refreshes the entry. */
    assert_int_equal(ns_neigh_admin_set(&f->s->arp.tbl, f->ifindex, (uint8_t[]){198, 18, 0, 1},
                                        SPOOF_MAC.b, NS_NUD_STALE, f->now),
                     0);
    f->now += 2 * NS_SEC;
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, 0xc6120003u);
    struct ns_neigh *n = entry(f, PEER_IP);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(n->state, NS_NUD_STALE);
    assert_int_equal(f->nf, 0);
}

static void test_unsolicited_reply(void **state)
{
    struct fix *f = *state;
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(f->nf, 0);
    assert_int_equal(f->s->arp.tbl.entries, 0);
    assert_int_equal(f->s->arp.stats.ignored_unsolicited, 1);
    assert_int_equal(f->s->arp.stats.rx_replies, 1);
}

/* The first packet to an unresolved neighbour: its ARP request leaves from
 * the sending call itself; the reply releases the packet with the MAC. */
static void test_reply_resolves_incomplete(void **state)
{
    struct fix *f = *state;
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 0x1234, 1, 56, 0, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 1);
    assert_int_equal(f->f[0].t, T0);
    expect_arp(&f->f[0], &ns_mac_bcast, NS_ARPOP_REQUEST, OUR_IP, &ns_mac_zero, PEER_IP);
    assert_int_equal(f->s->arp.stats.tx_requests, 1);
    struct ns_neigh *n = entry(f, PEER_IP);
    assert_int_equal(n->state, NS_NUD_INCOMPLETE);
    assert_int_equal(n->arp_queue.count, 1);
    assert_int_equal(n->timer.expires, T0 + 1000 * MS);

    f->now = T0 + 300;
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(n->confirmed, T0 + 300);
    assert_int_equal(f->nf, 2);
    const struct frame *ip = &f->f[1];
    assert_memory_equal(ip->b, PEER_MAC.b, 6);
    assert_memory_equal(ip->b + 6, OUR_MAC.b, 6);
    assert_int_equal(ip->b[12], 0x08);
    assert_int_equal(ip->b[13], 0x00);
    assert_int_equal(ip->len, 14 + 20 + 8 + 56);
    assert_int_equal(ip->b[14 + 9], NS_IPPROTO_ICMP);
    assert_int_equal(get32(ip->b + 14 + 12), OUR_IP);
    assert_int_equal(get32(ip->b + 14 + 16), PEER_IP);
    assert_int_equal(ip->b[14 + 20], NS_ICMP_ECHO);
    /* No retransmission follows. */
    run_to(f, T0 + 5 * NS_SEC);
    assert_int_equal(f->nf, 2);
    /* A second echo goes straight out. */
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 0x1234, 2, 56, 0, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 3);
    assert_int_equal(f->f[2].b[13], 0x00);
}

/* A broadcast reply and a request for us resolve too, as STALE. */
static void test_request_resolves_incomplete(void **state)
{
    struct fix *f = *state;
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 1, 1, 8, 0, f->now), 0);
    collect(f);
    f->now += 10 * MS;
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, OUR_IP);
    /* The flushed echo, then our reply. */
    assert_int_equal(f->nf, 3);
    assert_int_equal(f->f[1].b[13], 0x00);
    assert_memory_equal(f->f[1].b, PEER_MAC.b, 6);
    expect_arp(&f->f[2], &PEER_MAC, NS_ARPOP_REPLY, OUR_IP, &PEER_MAC, PEER_IP);
    /* Sending to the fresh STALE entry moved it to DELAY. */
    assert_int_equal(entry(f, PEER_IP)->state, NS_NUD_DELAY);
}

static void test_locktime(void **state)
{
    struct fix *f = *state;
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 1, 1, 8, 0, f->now), 0);
    collect(f);
    uint64_t t1 = T0 + 2 * MS;
    f->now = t1;
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    struct ns_neigh *n = entry(f, PEER_IP);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_int_equal(n->updated, t1);
    int nf = f->nf;

    /* A second answer within locktime (1 s) with another MAC loses. */
    f->now = t1 + 500 * MS;
    feed_arp(f, false, NS_ARPOP_REPLY, &SPOOF_MAC, PEER_IP, OUR_IP);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(n->updated, t1);
    assert_int_equal(f->s->arp.stats.ignored_locktime, 1);
    /* So does a request for us from it (it is still answered). */
    feed_arp(f, true, NS_ARPOP_REQUEST, &SPOOF_MAC, PEER_IP, OUR_IP);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(f->s->arp.stats.ignored_locktime, 2);
    assert_int_equal(f->nf, nf + 1);
    expect_arp(&f->f[nf], &SPOOF_MAC, NS_ARPOP_REPLY, OUR_IP, &SPOOF_MAC, PEER_IP);
    /* The same MAC within locktime still refreshes. */
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(n->confirmed, t1 + 500 * MS);
    assert_int_equal(f->s->arp.stats.ignored_locktime, 2);

    /* Just before the end of locktime: still refused; at it: accepted. */
    f->now = t1 + 1000 * MS - 1;
    feed_arp(f, false, NS_ARPOP_REPLY, &SPOOF_MAC, PEER_IP, OUR_IP);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(f->s->arp.stats.ignored_locktime, 3);
    f->now = t1 + 1000 * MS;
    feed_arp(f, false, NS_ARPOP_REPLY, &SPOOF_MAC, PEER_IP, OUR_IP);
    assert_memory_equal(n->lladdr, SPOOF_MAC.b, 6);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_int_equal(n->updated, t1 + 1000 * MS);
    assert_int_equal(f->s->arp.stats.ignored_locktime, 3);
}

static void test_gratuitous(void **state)
{
    struct fix *f = *state;
    /* No entry: nothing is learned from it. */
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, PEER_IP);
    uint8_t b[60];
    feed(f, b,
         arp_frame(b, &ns_mac_bcast, &PEER_MAC, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, &PEER_MAC,
                   PEER_IP));
    assert_int_equal(f->s->arp.tbl.entries, 0);
    assert_int_equal(f->s->arp.stats.rx_gratuitous, 2);
    assert_int_equal(f->s->arp.stats.ignored_unsolicited, 2);
    assert_int_equal(f->nf, 0);

    /* An existing entry takes the announced MAC (after locktime), STALE. */
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 1, 1, 8, 0, f->now), 0);
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    struct ns_neigh *n = entry(f, PEER_IP);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    f->now += 2 * NS_SEC;
    feed_arp(f, true, NS_ARPOP_REQUEST, &SPOOF_MAC, PEER_IP, PEER_IP);
    assert_int_equal(n->state, NS_NUD_STALE);
    assert_memory_equal(n->lladdr, SPOOF_MAC.b, 6);
    assert_int_equal(n->confirmed, f->now - 60 * NS_SEC);
    /* Even a unicast gratuitous reply does not make it REACHABLE. */
    f->now += 2 * NS_SEC;
    feed(f, b,
         arp_frame(b, &OUR_MAC, &PEER_MAC, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, &PEER_MAC, PEER_IP));
    assert_int_equal(n->state, NS_NUD_STALE);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(f->s->arp.tbl.entries, 1);
}

static void test_permanent_never_changes(void **state)
{
    struct fix *f = *state;
    uint8_t key[4];
    ns_arp_key(PEER_IP, key);
    assert_int_equal(
        ns_neigh_admin_set(&f->s->arp.tbl, f->ifindex, key, PEER_MAC.b, NS_NUD_PERMANENT, f->now),
        0);
    f->now += 10 * NS_SEC;
    feed_arp(f, false, NS_ARPOP_REPLY, &SPOOF_MAC, PEER_IP, OUR_IP);
    feed_arp(f, true, NS_ARPOP_REQUEST, &SPOOF_MAC, PEER_IP, PEER_IP);
    feed_arp(f, true, NS_ARPOP_REQUEST, &SPOOF_MAC, PEER_IP, OUR_IP);
    struct ns_neigh *n = entry(f, PEER_IP);
    assert_int_equal(n->state, NS_NUD_PERMANENT);
    assert_memory_equal(n->lladdr, PEER_MAC.b, 6);
    assert_int_equal(n->updated, T0);
    assert_int_equal(f->s->arp.stats.ignored_permanent, 3);
    /* The request for us is answered all the same. */
    assert_int_equal(f->nf, 1);
    expect_arp(&f->f[0], &SPOOF_MAC, NS_ARPOP_REPLY, OUR_IP, &SPOOF_MAC, PEER_IP);
    /* And traffic uses the permanent MAC with no ARP at all. */
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 1, 1, 8, 0, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 2);
    assert_memory_equal(f->f[1].b, PEER_MAC.b, 6);
    assert_int_equal(f->f[1].b[13], 0x00);
}

static void test_malformed(void **state)
{
    struct fix *f = *state;
    uint8_t b[60];
    struct ns_arp_stats *st = &f->s->arp.stats;
    /* Short: 27 bytes of ARP. */
    arp_frame(b, &ns_mac_bcast, &PEER_MAC, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, &ns_mac_zero,
              OUR_IP);
    feed(f, b, 14 + 27);
    assert_int_equal(st->drop_short, 1);
    static const struct {
        int off;
        uint8_t val;
        int which; /* 0 bad format, 1 bad op */
    } cases[] = {
        {14 + 1, 6, 0},    /* htype 6 (IEEE 802) */
        {14 + 0, 1, 0},    /* htype 0x0101 */
        {14 + 2, 0x86, 0}, /* ptype 0x8600 */
        {14 + 4, 8, 0},    /* hlen 8 */
        {14 + 5, 16, 0},   /* plen 16 */
        {14 + 7, 3, 1},    /* op 3 (RARP request) */
        {14 + 7, 0, 1},    /* op 0 */
        {14 + 6, 1, 1},    /* op 0x0101 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        arp_frame(b, &ns_mac_bcast, &PEER_MAC, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, &ns_mac_zero,
                  OUR_IP);
        b[cases[i].off] = cases[i].val;
        feed(f, b, 60);
    }
    assert_int_equal(st->drop_bad_format, 5);
    assert_int_equal(st->drop_bad_op, 3);
    assert_int_equal(st->rx, 9);
    assert_int_equal(st->rx_requests + st->rx_replies, 0);
    assert_int_equal(f->nf, 0);
    assert_int_equal(f->s->arp.tbl.entries, 0);
    /* Exactly 28 bytes (no padding) is fine. */
    arp_frame(b, &ns_mac_bcast, &PEER_MAC, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, &ns_mac_zero,
              OUR_IP);
    feed(f, b, 14 + 28);
    assert_int_equal(f->nf, 1);
}

static void test_bogus_senders(void **state)
{
    struct fix *f = *state;
    static const struct ns_mac MCAST = {{0x01, 0x00, 0x5e, 0, 0, 1}};
    static const struct {
        const struct ns_mac *sha;
        uint32_t spa, tpa;
        bool target; /* counted as drop_bogus_target */
    } cases[] = {
        {&ns_mac_bcast, PEER_IP, OUR_IP, false},
        {&MCAST, PEER_IP, OUR_IP, false},
        {&ns_mac_zero, PEER_IP, OUR_IP, false},
        {&OUR_MAC, PEER_IP, OUR_IP, false},
        {&PEER_MAC, 0xe0000001u, OUR_IP, false}, /* 224.0.0.1 */
        {&PEER_MAC, 0xffffffffu, OUR_IP, false},
        {&PEER_MAC, 0xf0000001u, OUR_IP, false}, /* class E */
        {&PEER_MAC, 0x7f000001u, OUR_IP, false}, /* loopback */
        {&PEER_MAC, 0xc61200ffu, OUR_IP, false}, /* subnet broadcast */
        {&PEER_MAC, OUR_IP, OUR_IP, false},      /* our own address: conflict */
        {&PEER_MAC, 0, 0xc6120003u, false},      /* 0.0.0.0 asking for another */
        {&PEER_MAC, PEER_IP, 0xe0000005u, true},
        {&PEER_MAC, PEER_IP, 0x7f000001u, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t b[60];
        feed(f, b,
             arp_frame(b, &ns_mac_bcast, &PEER_MAC, NS_ARPOP_REQUEST, cases[i].sha, cases[i].spa,
                       &ns_mac_zero, cases[i].tpa));
    }
    assert_int_equal(f->s->arp.stats.drop_bogus_sender, 11);
    assert_int_equal(f->s->arp.stats.drop_bogus_target, 2);
    assert_int_equal(f->nf, 0);
    assert_int_equal(f->s->arp.tbl.entries, 0);
}

/* RFC 5227: a probe (sender 0.0.0.0) for our address is answered, nothing
 * is learned. */
static void test_rfc5227_probe(void **state)
{
    struct fix *f = *state;
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, 0, OUR_IP);
    assert_int_equal(f->nf, 1);
    expect_arp(&f->f[0], &PEER_MAC, NS_ARPOP_REPLY, OUR_IP, &PEER_MAC, 0);
    assert_int_equal(f->s->arp.tbl.entries, 0);
    assert_int_equal(f->s->arp.tbl.stats.rcv_probes_mcast, 1);
}

/* An interface without an address answers nobody. */
static void test_no_address_no_answer(void **state)
{
    (void)state;
    struct fix *f = make(5);
    assert_int_equal(ns_stack_iface_up(f->s, f->ifindex, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 0); /* nothing to announce */
    feed_arp(f, true, NS_ARPOP_REQUEST, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(f->nf, 0);
    assert_int_equal(f->s->arp.tbl.entries, 0);
    assert_int_equal(f->s->arp.stats.drop_not_for_us, 1);
    ns_stack_free(f->s);
    free(f);
}

/* Three broadcast requests one second apart, then FAILED and the sender
 * hears EHOSTUNREACH. */
static void test_resolution_failure(void **state)
{
    struct fix *f = *state;
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, NOBODY, 77, 1, 56, 0, f->now), 0);
    collect(f);
    run_to(f, T0 + 10 * NS_SEC);
    assert_int_equal(f->nf, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->f[i].t, T0 + (uint64_t)i * NS_SEC);
        expect_arp(&f->f[i], &ns_mac_bcast, NS_ARPOP_REQUEST, OUR_IP, &ns_mac_zero, NOBODY);
    }
    assert_int_equal(entry(f, NOBODY)->state, NS_NUD_FAILED);
    assert_int_equal(entry(f, NOBODY)->updated, T0 + 3 * NS_SEC);
    assert_int_equal(f->nev, 1);
    assert_int_equal(f->ev[0].kind, NS_ICMP_EV_ERROR);
    assert_int_equal(f->ev[0].err, EHOSTUNREACH);
    assert_int_equal(f->ev[0].type, NS_ICMP_DEST_UNREACH);
    assert_int_equal(f->ev[0].code, NS_ICMP_HOST_UNREACH);
    assert_int_equal(f->ev[0].id, 77);
    assert_int_equal(f->ev[0].seq, 1);
    assert_int_equal(f->ev[0].from, OUR_IP);
    assert_int_equal(f->s->arp.tbl.stats.res_failed, 1);
    assert_int_equal(f->s->arp.stats.tx_requests, 3);
}

/* A forwarded (not local) packet that cannot be resolved draws an ICMP host
 * unreachable back to its source. */
static void test_unresolved_foreign_packet(void **state)
{
    struct fix *f = *state;
    uint8_t key[4];
    ns_arp_key(PEER_IP, key);
    assert_int_equal(
        ns_neigh_admin_set(&f->s->arp.tbl, f->ifindex, key, PEER_MAC.b, NS_NUD_PERMANENT, f->now),
        0);
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, 28);
    assert_non_null(p);
    uint8_t *d = ns_pkt_put(p, 28);
    memset(d, 0, 28);
    struct ns_ip_hdr h = {.ihl = 20,
                          .tot_len = 28,
                          .id = 1,
                          .ttl = 63,
                          .proto = NS_IPPROTO_UDP,
                          .src = PEER_IP,
                          .dst = NOBODY};
    ns_ip_write(d, &h);
    ns_arp_key(NOBODY, key);
    assert_int_equal(ns_neigh_output(&f->s->arp.tbl, f->ifindex, key, p, f->now), 0);
    collect(f);
    /* Our solicitation names our own address: the packet's source is not
     * one of ours. */
    expect_arp(&f->f[0], &ns_mac_bcast, NS_ARPOP_REQUEST, OUR_IP, &ns_mac_zero, NOBODY);
    run_to(f, T0 + 10 * NS_SEC);
    assert_int_equal(f->nf, 4);
    const struct frame *icmp = &f->f[3];
    assert_int_equal(icmp->t, T0 + 3 * NS_SEC);
    assert_memory_equal(icmp->b, PEER_MAC.b, 6);
    assert_int_equal(icmp->b[14 + 9], NS_IPPROTO_ICMP);
    assert_int_equal(get32(icmp->b + 14 + 16), PEER_IP);
    assert_int_equal(icmp->b[34], NS_ICMP_DEST_UNREACH);
    assert_int_equal(icmp->b[35], NS_ICMP_HOST_UNREACH);
    assert_int_equal(get32(icmp->b + 34 + 8 + 16), NOBODY); /* the quoted dst */
    assert_int_equal(f->nev, 0);
}

/* arp_announce=0: the solicitation's sender IP is the waiting packet's
 * source when that is one of our addresses, on whichever interface. */
static void test_solicit_source_address(void **state)
{
    (void)state;
    struct fix *f = make(9);
    static const struct ns_mac MAC2 = {{0x02, 0, 0, 0, 0, 0x22}};
    int i2 = ns_stack_add_iface(f->s, "eth1", &MAC2, 1500);
    assert_true(i2 > 0);
    assert_int_equal(ns_stack_set_addr(f->s, f->ifindex, OUR_IP, 24, f->now), 0);
    assert_int_equal(ns_stack_set_addr(f->s, (uint32_t)i2, 0xc6120102u, 24, f->now), 0);
    assert_int_equal(ns_stack_iface_up(f->s, f->ifindex, f->now), 0);
    assert_int_equal(ns_stack_iface_up(f->s, (uint32_t)i2, f->now), 0);
    collect(f);
    f->nf = 0;
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, 16);
    assert_non_null(p);
    memset(ns_pkt_put(p, 16), 0, 16);
    struct ns_ip_out o = {.src = 0xc6120102u, .dst = PEER_IP, .proto = NS_IPPROTO_UDP};
    assert_int_equal(ns_ip_output(&f->s->ip, p, &o, f->now), 0);
    collect(f);
    assert_int_equal(f->nf, 1);
    assert_int_equal(f->f[0].ifindex, f->ifindex);
    expect_arp(&f->f[0], &ns_mac_bcast, NS_ARPOP_REQUEST, 0xc6120102u, &ns_mac_zero, PEER_IP);
    ns_stack_free(f->s);
    free(f);
}

/* REACHABLE ages to STALE; a send moves it to DELAY and, unconfirmed, to
 * PROBE: unicast requests to the cached MAC; a reply makes it REACHABLE. */
static void test_probe_unicast(void **state)
{
    struct fix *f = *state;
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 1, 1, 8, 0, f->now), 0);
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    struct ns_neigh *n = entry(f, PEER_IP);
    uint64_t rt = f->s->arp.tbl.reachable_time_us;
    run_to(f, T0 + rt);
    assert_int_equal(n->state, NS_NUD_STALE);
    f->nf = 0;
    f->now = T0 + 100 * NS_SEC;
    assert_int_equal(ns_icmp_echo_send(&f->s->ip, PEER_IP, 1, 2, 8, 0, f->now), 0);
    collect(f);
    assert_int_equal(n->state, NS_NUD_DELAY);
    assert_int_equal(f->nf, 1); /* the echo itself */
    run_to(f, T0 + 105 * NS_SEC);
    assert_int_equal(n->state, NS_NUD_PROBE);
    assert_int_equal(f->nf, 2);
    expect_arp(&f->f[1], &PEER_MAC, NS_ARPOP_REQUEST, OUR_IP, &ns_mac_zero, PEER_IP);
    assert_int_equal(f->f[1].t, T0 + 105 * NS_SEC);
    f->now = T0 + 105 * NS_SEC + 400;
    feed_arp(f, false, NS_ARPOP_REPLY, &PEER_MAC, PEER_IP, OUR_IP);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    run_to(f, T0 + 110 * NS_SEC);
    assert_int_equal(f->nf, 2);
    assert_int_equal(f->s->arp.tbl.stats.probes_sent_ucast, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_announce_on_up),
        cmocka_unit_test_setup_teardown(test_request_for_us, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_for_other, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsolicited_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_resolves_incomplete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_resolves_incomplete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locktime, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gratuitous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permanent_never_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bogus_senders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rfc5227_probe, setup, teardown),
        cmocka_unit_test(test_no_address_no_answer),
        cmocka_unit_test_setup_teardown(test_resolution_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unresolved_foreign_packet, setup, teardown),
        cmocka_unit_test(test_solicit_source_address),
        cmocka_unit_test_setup_teardown(test_probe_unicast, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
