/* Internet checksum (core/checksum.h, RFC 1071): the RFC's worked example,
 * odd lengths, chaining, and sums over fragmented packets whose pieces have
 * odd sizes, each against a straightforward reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/checksum.h"
#include "core/pkt.h"
#include "core/rng.h"
#include "wire.h"

static void test_rfc1071_example(void **st)
{
    (void)st;
    /* RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to dd f2. */
    const uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    assert_int_equal(ns_csum_fold(ns_csum_add(0, d, sizeof(d))), 0xddf2);
    assert_int_equal(ns_csum(d, sizeof(d)), 0x220d);
    /* Byte-order independence (RFC 1071 section 2(B)): the sum of the
     * byte-swapped data is the byte-swapped sum. */
    const uint8_t sw[] = {0x01, 0x00, 0x03, 0xf2, 0xf5, 0xf4, 0xf7, 0xf6};
    assert_int_equal(ns_csum_fold(ns_csum_add(0, sw, sizeof(sw))), 0xf2dd);
}

static void test_ipv4_header(void **st)
{
    (void)st;
    uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                     0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    uint16_t c = ns_csum(h, sizeof(h));
    assert_int_equal(c, 0xb861);
    h[10] = (uint8_t)(c >> 8);
    h[11] = (uint8_t)c;
    /* A header carrying its checksum verifies to zero. */
    assert_int_equal(ns_csum(h, sizeof(h)), 0);
    assert_int_equal(ns_csum_fold(ns_csum_add(0, h, sizeof(h))), 0xffff);
}

static void test_odd_lengths(void **st)
{
    (void)st;
    const uint8_t one[] = {0xab};
    assert_int_equal(ns_csum_fold(ns_csum_add(0, one, 1)), 0xab00);
    const uint8_t three[] = {0x12, 0x34, 0x56};
    assert_int_equal(ns_csum_fold(ns_csum_add(0, three, 3)), 0x1234 + 0x5600);
    assert_int_equal(ns_csum_fold(ns_csum_add(0, three, 0)), 0);
    assert_int_equal(ns_csum(three, 0), 0xffff);
    struct ns_rng r;
    ns_rng_seed(&r, 1);
    uint8_t buf[301];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)ns_rng_u64(&r);
    for (size_t n = 0; n <= sizeof(buf); n++)
        assert_int_equal(ns_csum_fold(ns_csum_add(0, buf, n)), wire_ref_sum(buf, n, 0));
}

static void test_carries(void **st)
{
    (void)st;
    /* 64 KiB of 0xff: many end-around carries. */
    size_t n = 65536;
    uint8_t *b = malloc(n);
    memset(b, 0xff, n);
    assert_int_equal(ns_csum_fold(ns_csum_add(0, b, n)), 0xffff);
    assert_int_equal(ns_csum_fold(ns_csum_add(0xffffffffu, b, n)), wire_ref_sum(b, n, 0xffffffffu));
    free(b);
}

static void test_chain_even(void **st)
{
    (void)st;
    struct ns_rng r;
    ns_rng_seed(&r, 2);
    uint8_t buf[500];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)ns_rng_u64(&r);
    for (size_t cut = 0; cut <= sizeof(buf); cut += 2) {
        uint32_t s = ns_csum_add(0, buf, cut);
        s = ns_csum_add(s, buf + cut, sizeof(buf) - cut);
        assert_int_equal(ns_csum_fold(s), wire_ref_sum(buf, sizeof(buf), 0));
    }
}

static void test_pseudo(void **st)
{
    (void)st;
    uint32_t src = 0xc6120001, dst = 0xc6130102; /* 198.18.0.1, 198.19.1.2 */
    uint8_t ph[12] = {0xc6, 0x12, 0x00, 0x01, 0xc6, 0x13, 0x01, 0x02, 0, 17, 0x01, 0x2c};
    assert_int_equal(ns_csum_fold(ns_csum_pseudo(src, dst, 17, 300)), wire_ref_sum(ph, 12, 0));
    /* A full UDP checksum: pseudo header chained with the datagram. */
    uint8_t udp[11] = {0x30, 0x39, 0x00, 0x35, 0x00, 0x0b, 0x00, 0x00, 'a', 'b', 'c'};
    uint32_t s = ns_csum_pseudo(src, dst, 17, sizeof(udp));
    uint16_t c = (uint16_t)~ns_csum_fold(ns_csum_add(s, udp, sizeof(udp)));
    uint8_t all[23];
    memcpy(all, ph, 10);
    all[10] = 0;
    all[11] = sizeof(udp);
    memcpy(all + 12, udp, sizeof(udp));
    assert_int_equal(c, (uint16_t)~wire_ref_sum(all, sizeof(all), 0));
}

/* A packet of random pieces (some odd-sized, some empty) and its flat copy. */
static struct ns_pkt *random_pkt(struct ns_rng *r, struct ns_buf *pool, uint8_t **flat)
{
    uint32_t hl = (uint32_t)ns_rng_below(r, 24);
    struct ns_pkt *p = ns_pkt_alloc(0, hl);
    uint8_t *h = ns_pkt_put(p, hl);
    for (uint32_t i = 0; i < hl; i++)
        h[i] = (uint8_t)ns_rng_u64(r);
    int nf = (int)ns_rng_below(r, NS_PKT_MAX_FRAGS + 1);
    for (int i = 0; i < nf; i++) {
        uint32_t off = (uint32_t)ns_rng_below(r, pool->cap - 64);
        assert_true(ns_pkt_add_frag(p, pool, off, (uint32_t)ns_rng_below(r, 64)));
    }
    *flat = malloc(ns_pkt_len(p) + 1);
    assert_true(ns_pkt_copy_out(p, 0, *flat, ns_pkt_len(p)));
    return p;
}

static void test_pkt_fragments(void **st)
{
    (void)st;
    struct ns_rng r;
    ns_rng_seed(&r, 3);
    struct ns_buf *pool = ns_buf_alloc(2048);
    for (uint32_t i = 0; i < pool->cap; i++)
        pool->data[i] = (uint8_t)ns_rng_u64(&r);
    for (int iter = 0; iter < 2000; iter++) {
        uint8_t *flat;
        struct ns_pkt *p = random_pkt(&r, pool, &flat);
        uint32_t total = ns_pkt_len(p);
        uint32_t off = (uint32_t)ns_rng_below(&r, total + 1);
        uint32_t len = (uint32_t)ns_rng_below(&r, total - off + 1);
        uint32_t init = (uint32_t)ns_rng_below(&r, 0x30000);
        uint16_t got = ns_csum_fold(ns_csum_pkt(p, off, len, init));
        uint16_t want = wire_ref_sum(flat + off, len, init);
        assert_int_equal(got, want);
        free(flat);
        ns_pkt_free(p);
    }
    ns_buf_put(pool);
}

static void test_pkt_known_layout(void **st)
{
    (void)st;
    /* RFC 1071 example split 3 + 1 + 3 + 1: every piece boundary odd/even. */
    const uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    struct ns_pkt *p = ns_pkt_alloc(0, 3);
    memcpy(ns_pkt_put(p, 3), d, 3);
    struct ns_buf *b = ns_buf_alloc(8);
    memcpy(b->data, d, 8);
    assert_true(ns_pkt_add_frag(p, b, 3, 1));
    assert_true(ns_pkt_add_frag(p, b, 4, 3));
    assert_true(ns_pkt_add_frag(p, b, 7, 1));
    assert_int_equal(ns_csum_fold(ns_csum_pkt(p, 0, 8, 0)), 0xddf2);
    /* Starting at an odd offset: f2 03 f4 f5 f6 f7 preceded by 01. */
    assert_int_equal(ns_csum_fold(ns_csum_pkt(p, 1, 7, 0)), wire_ref_sum(d + 1, 7, 0));
    /* Past the end: only what exists is summed. */
    assert_int_equal(ns_csum_fold(ns_csum_pkt(p, 8, 0, 0)), 0);
    ns_pkt_free(p);
    ns_buf_put(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc1071_example), cmocka_unit_test(test_ipv4_header),
        cmocka_unit_test(test_odd_lengths),     cmocka_unit_test(test_carries),
        cmocka_unit_test(test_chain_even),      cmocka_unit_test(test_pseudo),
        cmocka_unit_test(test_pkt_fragments),   cmocka_unit_test(test_pkt_known_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
