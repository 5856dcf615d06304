/* IPv4 reassembly (ipv4/reass.c): in-order, reverse and shuffled fragments
 * give back the exact datagram; overlaps and duplicates drop it; the timer
 * fires at exactly ipfrag_time_ms; the memory cap holds under a flood of
 * gapped datagrams; fragment-count, tiny-fragment and size limits. The last
 * tests go through a stack: reassembled echo requests are answered and a
 * timed-out datagram draws ICMP time exceeded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/checksum.h"
#include "ipv4/reass.h"
#include "stack/stack.h"
#include "wire.h"

#define SRC IP4(198, 18, 0, 2)
#define DST IP4(198, 18, 0, 1)

static void iphdr(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
                  uint16_t frag, uint16_t tot_len)
{
    wire_iphdr(ip, src, dst, proto, id, frag, tot_len, 64);
}

struct fx {
    struct ns_params params;
    struct ns_timers timers;
    struct ns_ip_stats stats;
    struct ns_reass r;
    uint8_t payload[65536];
    int timeouts;
    uint64_t timeout_at;
    uint16_t timeout_frag;
};

static void on_timeout(void *ctx, const struct ns_pkt *first, uint64_t now)
{
    struct fx *f = ctx;
    f->timeouts++;
    f->timeout_at = now;
    struct ns_ip_hdr h;
    assert_int_equal(ns_ip_parse(first->data, first->len, &h), NS_IP_OK);
    f->timeout_frag = h.frag;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    ns_params_default(&f->params);
    ns_timers_init(&f->timers);
    ns_reass_init(&f->r, &f->params.ip, &f->timers, &f->stats);
    f->r.on_timeout = on_timeout;
    f->r.ctx = f;
    for (size_t i = 0; i < sizeof(f->payload); i++)
        f->payload[i] = (uint8_t)(i * 7 + (i >> 8));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    ns_reass_free(&f->r);
    assert_int_equal(f->r.mem, 0);
    assert_int_equal(f->r.count, 0);
    ns_timers_free(&f->timers);
    free(f);
    return 0;
}

/* Add payload[off, off+len) of datagram (src, id) as one fragment. */
static struct ns_pkt *add_from(struct fx *f, uint32_t src, uint16_t id, uint32_t off, uint32_t len,
                               bool mf, uint64_t now)
{
    static uint8_t b[20 + 65536];
    iphdr(b, src, DST, 17, id, (uint16_t)((off / 8) | (mf ? NS_IP_MF : 0)), (uint16_t)(20 + len));
    memcpy(b + 20, f->payload + off, len);
    struct ns_pkt *p = ns_pkt_from(b, 20 + len);
    struct ns_ip_hdr h;
    assert_int_equal(ns_ip_parse(p->data, p->len, &h), NS_IP_OK);
    return ns_reass_add(&f->r, p, &h, now);
}

static struct ns_pkt *add(struct fx *f, uint32_t off, uint32_t len, bool mf)
{
    return add_from(f, SRC, 0x1234, off, len, mf, 0);
}

static void check_whole_from(struct fx *f, struct ns_pkt *p, uint32_t src, uint16_t id,
                             uint32_t len)
{
    assert_non_null(p);
    assert_int_equal(p->nfrags, 0);
    assert_int_equal(p->len, 20 + len);
    struct ns_ip_hdr h;
    assert_int_equal(ns_ip_parse(p->data, p->len, &h), NS_IP_OK); /* checksum recomputed */
    assert_int_equal(h.tot_len, 20 + len);
    assert_int_equal(h.frag, 0);
    assert_int_equal(h.id, id);
    assert_int_equal(h.src, src);
    assert_int_equal(h.dst, DST);
    assert_int_equal(h.proto, 17);
    assert_memory_equal(p->data + 20, f->payload, len);
    ns_pkt_free(p);
}

static void check_whole(struct fx *f, struct ns_pkt *p, uint16_t id, uint32_t len)
{
    check_whole_from(f, p, SRC, id, len);
}

static void test_in_order(void **state)
{
    struct fx *f = *state;
    assert_null(add(f, 0, 1000, true));
    assert_null(add(f, 1000, 1000, true));
    assert_int_equal(f->r.count, 1);
    assert_true(f->r.mem > 2000);
    check_whole(f, add(f, 2000, 999, false), 0x1234, 2999);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
    assert_int_equal(f->stats.reasm_reqds, 3);
    assert_int_equal(f->stats.reasm_oks, 1);
    assert_int_equal(f->stats.reasm_fails, 0);
    /* The timer went with the datagram. */
    assert_int_equal(ns_timers_next(&f->timers), NS_TIME_NEVER);
}

static void test_reverse(void **state)
{
    struct fx *f = *state;
    assert_null(add(f, 2000, 5, false));
    assert_null(add(f, 1000, 1000, true));
    check_whole(f, add(f, 0, 1000, true), 0x1234, 2005);
    assert_int_equal(f->stats.reasm_oks, 1);
}

static void test_shuffled(void **state)
{
    struct fx *f = *state;
    enum { N = 40, SZ = 200 };
    uint32_t order[N];
    uint64_t x = 12345;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++)
            order[i] = (uint32_t)i;
        for (int i = N - 1; i > 0; i--) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int j = (int)((x >> 33) % (uint64_t)(i + 1));
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        uint16_t id = (uint16_t)(100 + round);
        struct ns_pkt *done = NULL;
        for (int i = 0; i < N; i++) {
            uint32_t k = order[i];
            bool last = k == N - 1;
            uint32_t len = last ? 77 : SZ;
            done = add_from(f, SRC, id, k * SZ, len, !last, 0);
            if (i < N - 1)
                assert_null(done);
        }
        check_whole(f, done, id, (N - 1) * SZ + 77);
    }
    assert_int_equal(f->stats.reasm_oks, 20);
    assert_int_equal(f->r.mem, 0);
}

static void test_interleaved_datagrams(void **state)
{
    struct fx *f = *state;
    /* Same id, different sources: two datagrams. */
    assert_null(add_from(f, SRC, 7, 0, 800, true, 0));
    assert_null(add_from(f, SRC + 1, 7, 800, 100, false, 0));
    assert_int_equal(f->r.count, 2);
    check_whole(f, add_from(f, SRC, 7, 800, 100, false, 0), 7, 900);
    assert_int_equal(f->r.count, 1);
}

static void test_overlap_and_duplicate(void **state)
{
    struct fx *f = *state;
    /* partial overlap with a held predecessor */
    assert_null(add(f, 0, 16, true));
    assert_null(add(f, 8, 16, true));
    assert_int_equal(f->stats.reasm_overlaps, 1);
    assert_int_equal(f->stats.reasm_fails, 1);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
    /* exact duplicate */
    assert_null(add(f, 0, 16, true));
    assert_null(add(f, 0, 16, true));
    assert_int_equal(f->stats.reasm_overlaps, 2);
    assert_int_equal(f->stats.reasm_fails, 2);
    assert_int_equal(f->r.count, 0);
    /* overlap with a held successor */
    assert_null(add(f, 16, 16, true));
    assert_null(add(f, 8, 16, true));
    assert_int_equal(f->stats.reasm_overlaps, 3);
    assert_int_equal(f->r.count, 0);
    /* a fragment covering a held one */
    assert_null(add(f, 16, 8, true));
    assert_null(add(f, 0, 40, false));
    assert_int_equal(f->stats.reasm_overlaps, 4);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
    /* the data that follows starts afresh and completes */
    assert_null(add(f, 0, 16, true));
    check_whole(f, add(f, 16, 4, false), 0x1234, 20);
    assert_int_equal(ns_timers_next(&f->timers), NS_TIME_NEVER);
}

static void test_inconsistent_end(void **state)
{
    struct fx *f = *state;
    assert_null(add(f, 0, 16, true));
    assert_null(add(f, 32, 8, false));
    /* another "last" fragment ending elsewhere */
    assert_null(add(f, 16, 8, false));
    assert_int_equal(f->stats.reasm_fails, 1);
    assert_int_equal(f->r.count, 0);
    /* data past the known end */
    assert_null(add(f, 0, 8, true));
    assert_null(add(f, 16, 8, false));
    assert_null(add(f, 24, 8, true));
    assert_int_equal(f->stats.reasm_fails, 2);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->stats.reasm_overlaps, 0);
}

static void test_timeout(void **state)
{
    struct fx *f = *state;
    uint64_t t0 = 1000;
    assert_null(add_from(f, SRC, 1, 0, 64, true, t0));
    /* a later fragment does not restart the timer */
    assert_null(add_from(f, SRC, 1, 128, 64, true, t0 + 5 * NS_SEC));
    /* a datagram without its first fragment */
    assert_null(add_from(f, SRC, 2, 64, 64, true, t0));
    assert_int_equal(f->r.count, 2);
    uint64_t when = t0 + (uint64_t)f->params.ip.ipfrag_time_ms * NS_MS;
    assert_int_equal(ns_timers_next(&f->timers), when);
    assert_int_equal(ns_timers_run(&f->timers, when - 1), 0);
    assert_int_equal(f->timeouts, 0);
    assert_int_equal(ns_timers_run(&f->timers, when), 2);
    assert_int_equal(f->timeouts, 1); /* only the one with offset 0 */
    assert_int_equal(f->timeout_at, when);
    assert_int_equal(f->timeout_frag, NS_IP_MF);
    assert_int_equal(f->stats.reasm_timeouts, 2);
    assert_int_equal(f->stats.reasm_fails, 2);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
    assert_int_equal(ns_timers_next(&f->timers), NS_TIME_NEVER);
}

static void test_memory_cap_flood(void **state)
{
    struct fx *f = *state;
    const uint32_t cap = 100000;
    f->params.ip.ipfrag_high_thresh = cap;
    uint32_t max_count = 0;
    for (uint32_t i = 0; i < 20000; i++) {
        /* gapped: offset 8 with nothing at 0, from many sources */
        assert_null(add_from(f, IP4(10, 0, 0, 0) + i, (uint16_t)i, 8, 64, true, i));
        assert_true(f->r.mem <= cap);
        if (f->r.count > max_count)
            max_count = f->r.count;
    }
    assert_true(f->stats.reasm_mem_drops > 19000);
    assert_int_equal(f->stats.reasm_mem_drops + f->r.count, 20000);
    assert_int_equal(f->stats.reasm_fails, f->stats.reasm_mem_drops);
    assert_true(max_count * (sizeof(struct ns_reass_dgram) + 64) <= cap);
    /* The survivors are the newest: the last one can still complete. */
    uint32_t last = 19999;
    assert_null(add_from(f, IP4(10, 0, 0, 0) + last, (uint16_t)last, 0, 8, true, 20000));
    check_whole_from(f, add_from(f, IP4(10, 0, 0, 0) + last, (uint16_t)last, 72, 8, false, 20000),
                     IP4(10, 0, 0, 0) + last, (uint16_t)last, 80);
}

static void test_fragment_bigger_than_cap(void **state)
{
    struct fx *f = *state;
    f->params.ip.ipfrag_high_thresh = 500;
    assert_null(add(f, 0, 1000, true));
    assert_int_equal(f->stats.reasm_mem_drops, 1);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
}

static void test_max_frags(void **state)
{
    struct fx *f = *state;
    f->params.ip.ipfrag_max_frags = 4;
    /* four that complete are fine */
    assert_null(add(f, 0, 8, true));
    assert_null(add(f, 8, 8, true));
    assert_null(add(f, 16, 8, true));
    check_whole(f, add(f, 24, 3, false), 0x1234, 27);
    /* a fifth kills the datagram */
    for (uint32_t i = 0; i < 4; i++)
        assert_null(add(f, i * 16, 8, true));
    assert_int_equal(f->r.count, 1);
    assert_null(add(f, 64, 8, true));
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
    assert_int_equal(f->stats.reasm_fails, 1);
}

static void test_tiny_and_oversize(void **state)
{
    struct fx *f = *state;
    /* a non-last fragment of 12 bytes */
    assert_null(add(f, 0, 12, true));
    assert_int_equal(f->stats.reasm_fails, 1);
    assert_int_equal(f->r.count, 0);
    assert_int_equal(f->r.mem, 0);
    /* an empty one */
    assert_null(add(f, 8, 0, true));
    assert_int_equal(f->stats.reasm_fails, 2);
    assert_int_equal(f->r.count, 0);
    /* the last fragment may be any size */
    assert_null(add(f, 0, 8, true));
    check_whole(f, add(f, 8, 13, false), 0x1234, 21);
    /* beyond 65535 bytes in total (20 + 65512 + 16) */
    assert_null(add(f, 0, 8, true));
    assert_int_equal(f->r.count, 1);
    assert_null(add(f, 65512, 16, false));
    assert_int_equal(f->stats.reasm_fails, 3);
    assert_int_equal(f->r.count, 0);
    /* up to 65535 is allowed: 20 + 65504 + 8 */
    assert_null(add(f, 65504, 8, true));
    assert_int_equal(f->r.count, 1);
    assert_int_equal(f->stats.reasm_fails, 3);
}

/* --- through a stack --- */

static const struct ns_mac mac_us = {{0x02, 0, 0, 0, 0, 0x01}};
static const struct ns_mac mac_peer = {{0x02, 0, 0, 0, 0, 0x02}};

static struct ns_stack *mkstack(uint32_t *ifi)
{
    struct ns_stack_config cfg = {.seed = 7};
    struct ns_stack *s = ns_stack_new(&cfg, 0);
    *ifi = (uint32_t)ns_stack_add_iface(s, "eth0", &mac_us, 1500);
    ns_stack_set_addr(s, *ifi, DST, 24, 0);
    ns_stack_iface_up(s, *ifi, 0);
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(s, *ifi)))
        ns_pkt_free(p);
    uint8_t key[4];
    ns_wr32(key, SRC);
    assert_int_equal(ns_neigh_admin_set(&s->arp.tbl, *ifi, key, mac_peer.b, NS_NUD_PERMANENT, 0),
                     0);
    return s;
}

static void inject_frag(struct ns_stack *s, uint32_t ifi, const uint8_t *l4, uint8_t proto,
                        uint16_t id, uint32_t off, uint32_t len, bool mf, uint64_t now)
{
    static uint8_t fr[14 + 20 + 2000];
    ns_eth_write(fr, &mac_us, &mac_peer, NS_ETHERTYPE_IPV4);
    iphdr(fr + 14, SRC, DST, proto, id, (uint16_t)((off / 8) | (mf ? NS_IP_MF : 0)),
          (uint16_t)(20 + len));
    memcpy(fr + 34, l4 + off, len);
    ns_stack_input(s, ifi, fr, 34 + len, now);
}

static void test_stack_echo_reassembled(void **state)
{
    (void)state;
    uint32_t ifi;
    struct ns_stack *s = mkstack(&ifi);
    static uint8_t icmp[3000];
    icmp[0] = 8;
    icmp[1] = 0;
    ns_wr16(icmp + 4, 0x99);
    ns_wr16(icmp + 6, 1);
    for (int i = 8; i < 3000; i++)
        icmp[i] = (uint8_t)(i * 13);
    ns_wr16(icmp + 2, ns_csum(icmp, 3000));
    inject_frag(s, ifi, icmp, 1, 0x555, 1480, 1480, true, 0);
    inject_frag(s, ifi, icmp, 1, 0x555, 2960, 40, false, 0);
    inject_frag(s, ifi, icmp, 1, 0x555, 0, 1480, true, 0);
    assert_int_equal(s->ip.stats.reasm_oks, 1);
    assert_int_equal(s->ip.stats.in_delivers, 1);
    assert_int_equal(s->ip.icmp_stats.in_echos, 1);
    /* the 3000-byte reply leaves in three fragments */
    static uint8_t back[3000];
    for (int i = 0; i < 3; i++) {
        struct ns_pkt *p = ns_stack_tx_pop(s, ifi);
        assert_non_null(p);
        assert_true(ns_pkt_linearize(p, 0));
        struct ns_ip_hdr h;
        assert_int_equal(ns_ip_parse(p->data + 14, p->len - 14, &h), NS_IP_OK);
        assert_int_equal(h.dst, SRC);
        uint32_t off = (h.frag & NS_IP_OFFMASK) * 8u;
        memcpy(back + off, p->data + 34, h.tot_len - 20u);
        ns_pkt_free(p);
    }
    assert_null(ns_stack_tx_pop(s, ifi));
    assert_int_equal(back[0], 0);
    assert_int_equal(ns_csum(back, 3000), 0);
    assert_memory_equal(back + 4, icmp + 4, 3000 - 4);
    assert_int_equal(s->ip.reass.mem, 0);
    ns_stack_free(s);
}

static void test_stack_time_exceeded(void **state)
{
    (void)state;
    uint32_t ifi;
    struct ns_stack *s = mkstack(&ifi);
    static uint8_t udp[2000];
    for (int i = 0; i < 2000; i++)
        udp[i] = (uint8_t)i;
    /* first fragment at t=1s, never completed */
    inject_frag(s, ifi, udp, 17, 0x77, 0, 1000, true, NS_SEC);
    /* another datagram with only a later fragment */
    inject_frag(s, ifi, udp, 17, 0x78, 1000, 1000, false, NS_SEC);
    uint64_t when = NS_SEC + 30 * NS_SEC;
    assert_int_equal(ns_stack_poll(s, when - 1), when);
    assert_null(ns_stack_tx_pop(s, ifi));
    ns_stack_poll(s, when);
    assert_int_equal(s->ip.stats.reasm_timeouts, 2);
    struct ns_pkt *p = ns_stack_tx_pop(s, ifi);
    assert_non_null(p);
    assert_true(ns_pkt_linearize(p, 0));
    struct ns_ip_hdr h;
    assert_int_equal(ns_ip_parse(p->data + 14, p->len - 14, &h), NS_IP_OK);
    assert_int_equal(h.proto, 1);
    assert_int_equal(h.dst, SRC);
    assert_int_equal(h.src, DST);
    const uint8_t *ic = p->data + 34;
    assert_int_equal(ic[0], 11);
    assert_int_equal(ic[1], 1);
    assert_int_equal(h.tot_len, 20 + 8 + 548); /* Linux's 576-byte limit */
    assert_int_equal(ns_csum(ic, h.tot_len - 20u), 0);
    /* the quote starts with the first fragment's header */
    struct ns_ip_hdr q;
    assert_int_equal(ns_ip_parse(ic + 8, 20, &q), NS_IP_TRUNCATED);
    assert_int_equal(q.id, 0x77);
    assert_int_equal(q.frag, NS_IP_MF);
    assert_memory_equal(ic + 8 + 20, udp, 548 - 20);
    assert_int_equal(ns_rd16(ic + 8 + 2), 1020);
    ns_pkt_free(p);
    assert_null(ns_stack_tx_pop(s, ifi));
    assert_int_equal(s->ip.icmp_stats.out_time_excds, 1);
    assert_int_equal(s->ip.reass.mem, 0);
    ns_stack_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reverse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shuffled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interleaved_datagrams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlap_and_duplicate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inconsistent_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_cap_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fragment_bigger_than_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_frags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tiny_and_oversize, setup, teardown),
        cmocka_unit_test(test_stack_echo_reassembled),
        cmocka_unit_test(test_stack_time_exceeded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
