/* SCTP receive TSN map: cumulative TSN, gap blocks, duplicates, window
 * limits and SACK timing (RFC 9260 6.2, 6.7). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/timer.h"
#include "sctp/tsnmap.h"

static struct ns_sctp_params params(void)
{
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    return p;
}

/* Receive a TSN as the association would: check, then mark if new. */
static enum ns_sctp_tsn_verdict rx(struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    enum ns_sctp_tsn_verdict v = ns_sctp_tsnmap_check(m, tsn);
    if (v == NS_SCTP_TSN_NEW)
        ns_sctp_tsnmap_mark(m, tsn, false);
    return v;
}

static struct ns_sctp_sack_info sack;

static void test_in_order(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_tsnmap m;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 100, 0, &p), 0);
    assert_int_equal(ns_sctp_tsnmap_cum(&m), 99);
    assert_int_equal(m.span, 65536);
    uint8_t why;
    assert_int_equal(rx(&m, 100), NS_SCTP_TSN_NEW);
    assert_false(ns_sctp_tsnmap_packet_done(&m, 1000, &why));
    assert_int_equal(why, 0);
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), 1000 + 200 * NS_MS);
    assert_int_equal(rx(&m, 101), NS_SCTP_TSN_NEW);
    assert_int_equal(rx(&m, 102), NS_SCTP_TSN_NEW);
    /* Second packet with DATA: SACK now (sack_freq 2). */
    assert_true(ns_sctp_tsnmap_packet_done(&m, 5000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_FREQ);
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), 5000);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.cum_tsn, 102);
    assert_int_equal(sack.n_gaps, 0);
    assert_int_equal(sack.n_dups, 0);
    assert_int_equal(sack.a_rwnd, 0);
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), NS_TIME_NEVER);
    assert_false(ns_sctp_tsnmap_has_gaps(&m));
    assert_int_equal(m.stats.rx_new, 3);
    assert_int_equal(m.stats.sacks_built, 1);
    /* A packet without DATA changes nothing. */
    assert_false(ns_sctp_tsnmap_packet_done(&m, 6000, &why));
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), NS_TIME_NEVER);
    ns_sctp_tsnmap_free(&m);
}

static void test_gap_blocks(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_tsnmap m;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 0, &p), 0);
    static const uint32_t tsns[] = {1, 2, 4, 5, 7, 10, 11, 12};
    for (size_t i = 0; i < sizeof(tsns) / sizeof(tsns[0]); i++)
        assert_int_equal(rx(&m, tsns[i]), NS_SCTP_TSN_NEW);
    uint8_t why;
    assert_true(ns_sctp_tsnmap_packet_done(&m, 0, &why));
    assert_true(why & NS_SCTP_SACKWHY_GAP);
    assert_int_equal(ns_sctp_tsnmap_highest(&m), 12);
    assert_true(ns_sctp_tsnmap_is_received(&m, 5));
    assert_false(ns_sctp_tsnmap_is_received(&m, 6));
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.cum_tsn, 2);
    assert_int_equal(sack.n_gaps, 3);
    assert_int_equal(sack.gaps[0][0], 2);
    assert_int_equal(sack.gaps[0][1], 3);
    assert_int_equal(sack.gaps[1][0], 5);
    assert_int_equal(sack.gaps[1][1], 5);
    assert_int_equal(sack.gaps[2][0], 8);
    assert_int_equal(sack.gaps[2][1], 10);
    /* The caller's limit keeps the lowest blocks. */
    ns_sctp_tsnmap_build_sack(&m, &sack, 2, 16);
    assert_int_equal(sack.n_gaps, 2);
    assert_int_equal(sack.gaps[1][0], 5);
    assert_int_equal(m.stats.gaps_truncated, 1);
    /* Filling 3 moves cum to 5; the rest shifts. */
    assert_int_equal(rx(&m, 3), NS_SCTP_TSN_NEW);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 0, &why));
    assert_int_equal(why & (NS_SCTP_SACKWHY_FILL | NS_SCTP_SACKWHY_GAP),
                     NS_SCTP_SACKWHY_FILL | NS_SCTP_SACKWHY_GAP);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.cum_tsn, 5);
    assert_int_equal(sack.n_gaps, 2);
    assert_int_equal(sack.gaps[0][0], 2);
    assert_int_equal(sack.gaps[0][1], 2);
    assert_int_equal(sack.gaps[1][0], 5);
    assert_int_equal(sack.gaps[1][1], 7);
    assert_int_equal(rx(&m, 6), NS_SCTP_TSN_NEW);
    assert_int_equal(rx(&m, 8), NS_SCTP_TSN_NEW);
    assert_int_equal(rx(&m, 9), NS_SCTP_TSN_NEW);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 0, &why));
    assert_int_equal(why & NS_SCTP_SACKWHY_GAP, 0);
    assert_true(why & NS_SCTP_SACKWHY_FILL);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.cum_tsn, 12);
    assert_int_equal(sack.n_gaps, 0);
    assert_int_equal(m.held, 0);
    ns_sctp_tsnmap_free(&m);
}

/* A restart (5.2.4) starts the map over at the new initial TSN without
 * allocating: the old TSNs and gaps are gone, the counters stay. */
static void test_reset(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_tsnmap m;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 0, &p), 0);
    assert_int_equal(rx(&m, 1), NS_SCTP_TSN_NEW);
    assert_int_equal(rx(&m, 3), NS_SCTP_TSN_NEW);
    assert_int_equal(rx(&m, 1), NS_SCTP_TSN_DUP);
    uint8_t why;
    assert_true(ns_sctp_tsnmap_packet_done(&m, 0, &why));
    uint64_t dups = m.stats.rx_dup;
    assert_true(dups >= 1);
    const uint64_t *bits = m.bits;
    ns_sctp_tsnmap_reset(&m, 5000, &p);
    assert_ptr_equal(m.bits, bits);
    assert_int_equal(m.stats.rx_dup, dups);
    assert_int_equal(m.held, 0);
    assert_false(ns_sctp_tsnmap_has_gaps(&m));
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), NS_TIME_NEVER);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.cum_tsn, 4999);
    assert_int_equal(sack.n_gaps, 0);
    assert_int_equal(sack.n_dups, 0);
    /* The TSN on the bit TSN 3 had (span 64 Ki) is not marked from before. */
    assert_int_equal(m.span, 65536);
    assert_false(ns_sctp_tsnmap_is_received(&m, 65536 + 3));
    assert_int_equal(rx(&m, 5000), NS_SCTP_TSN_NEW);
    ns_sctp_tsnmap_packet_done(&m, 0, &why);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.cum_tsn, 5000);
    assert_int_equal(sack.n_gaps, 0);
    ns_sctp_tsnmap_free(&m);
}

static void test_dups(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.sack_freq = 10;
    struct ns_sctp_tsnmap m;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 0, &p), 0);
    assert_int_equal(rx(&m, 1), NS_SCTP_TSN_NEW);
    assert_int_equal(rx(&m, 3), NS_SCTP_TSN_NEW);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    uint8_t why;
    ns_sctp_tsnmap_packet_done(&m, 0, &why);
    /* A duplicate packet: SACK at once, each arrival listed. */
    assert_int_equal(rx(&m, 1), NS_SCTP_TSN_DUP);
    assert_int_equal(rx(&m, 3), NS_SCTP_TSN_DUP);
    assert_int_equal(rx(&m, 1), NS_SCTP_TSN_DUP);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 10, &why));
    assert_true(why & NS_SCTP_SACKWHY_DUP);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.n_dups, 3);
    assert_int_equal(sack.dups[0], 1);
    assert_int_equal(sack.dups[1], 3);
    assert_int_equal(sack.dups[2], 1);
    /* Reported once: the next SACK has none. */
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.n_dups, 0);
    /* Limits: the caller's, then the list's own. */
    for (int i = 0; i < 5; i++)
        rx(&m, 1);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 2);
    assert_int_equal(sack.n_dups, 2);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 16);
    assert_int_equal(sack.n_dups, 0);
    for (int i = 0; i < NS_SCTP_SACK_MAX_DUPS + 7; i++)
        rx(&m, 1);
    assert_int_equal(m.stats.dup_overflow, 7);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 1000);
    assert_int_equal(sack.n_dups, NS_SCTP_SACK_MAX_DUPS);
    assert_int_equal(m.stats.rx_dup, 3 + 5 + NS_SCTP_SACK_MAX_DUPS + 7);
    ns_sctp_tsnmap_free(&m);
}

static void test_window_limits(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_tsnmap m;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 50, &p), 0);
    assert_int_equal(m.span, 64);
    /* cum 0: the window is 1..64. */
    assert_int_equal(ns_sctp_tsnmap_check(&m, 65), NS_SCTP_TSN_OUT_OF_WINDOW);
    assert_int_equal(ns_sctp_tsnmap_check(&m, 0x70000000u), NS_SCTP_TSN_OUT_OF_WINDOW);
    /* More than 2^31 ahead is behind in serial arithmetic: an old TSN. */
    assert_int_equal(ns_sctp_tsnmap_check(&m, 0x90000000u), NS_SCTP_TSN_DUP);
    assert_int_equal(rx(&m, 64), NS_SCTP_TSN_NEW);
    assert_int_equal(m.stats.rx_out_window, 2);
    for (uint32_t t = 1; t <= 10; t++)
        assert_int_equal(rx(&m, t), NS_SCTP_TSN_NEW);
    assert_int_equal(ns_sctp_tsnmap_cum(&m), 10);
    assert_int_equal(ns_sctp_tsnmap_check(&m, 75), NS_SCTP_TSN_OUT_OF_WINDOW);
    assert_int_equal(rx(&m, 74), NS_SCTP_TSN_NEW);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 0);
    assert_int_equal(sack.cum_tsn, 10);
    assert_int_equal(sack.n_gaps, 2);
    assert_int_equal(sack.gaps[0][0], 54);
    assert_int_equal(sack.gaps[0][1], 54);
    assert_int_equal(sack.gaps[1][0], 64);
    assert_int_equal(sack.gaps[1][1], 64);
    /* Everything up to 63 closes the first gap and runs into 64. */
    for (uint32_t t = 11; t <= 63; t++)
        rx(&m, t);
    assert_int_equal(ns_sctp_tsnmap_cum(&m), 64);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 0);
    assert_int_equal(sack.n_gaps, 1);
    assert_int_equal(sack.gaps[0][0], 10);
    assert_int_equal(sack.gaps[0][1], 10);
    ns_sctp_tsnmap_free(&m);

    /* Gap offsets are 16 bits: blocks beyond cum + 65535 are left out. */
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 1u << 17, &p), 0);
    rx(&m, 5);
    rx(&m, 70000);
    ns_sctp_tsnmap_build_sack(&m, &sack, 100, 0);
    assert_int_equal(sack.n_gaps, 1);
    assert_int_equal(sack.gaps[0][0], 5);
    assert_int_equal(sack.gaps[0][1], 5);
    ns_sctp_tsnmap_free(&m);
}

/* Random arrival order over several window spans and the 2^32 wrap,
 * checked against a plain array. */
static void test_random_against_model(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_tsnmap m;
    const uint32_t base = 0xFFFFFF00u, n = 2000;
    assert_int_equal(ns_sctp_tsnmap_init(&m, base, 128, &p), 0);
    bool *got = calloc(n, sizeof(bool));
    assert_non_null(got);
    uint32_t seed = 12345, cum_idx = 0; /* TSNs base .. base+cum_idx-1 received */
    while (cum_idx < n) {
        seed = seed * 1103515245u + 12345u;
        uint32_t off = (seed >> 8) % 140; /* sometimes past the window */
        uint32_t i = cum_idx + off;
        if (i >= n)
            continue;
        enum ns_sctp_tsn_verdict v = rx(&m, base + i);
        if (off >= 128)
            assert_int_equal(v, NS_SCTP_TSN_OUT_OF_WINDOW);
        else if (got[i])
            assert_int_equal(v, NS_SCTP_TSN_DUP);
        else
            assert_int_equal(v, NS_SCTP_TSN_NEW);
        if (v == NS_SCTP_TSN_NEW)
            got[i] = true;
        while (cum_idx < n && got[cum_idx])
            cum_idx++;
        assert_int_equal(ns_sctp_tsnmap_cum(&m), base + cum_idx - 1);
        ns_sctp_tsnmap_build_sack(&m, &sack, NS_SCTP_SACK_MAX_GAPS, 0);
        /* Rebuild the blocks from the model. */
        uint16_t k = 0;
        for (uint32_t j = cum_idx + 1; j < n && j < cum_idx + 129; j++) {
            if (got[j] && !got[j - 1]) {
                assert_true(k < sack.n_gaps);
                assert_int_equal(sack.gaps[k][0], j - cum_idx + 1);
            }
            if (got[j] && (j + 1 >= n || !got[j + 1])) {
                assert_int_equal(sack.gaps[k][1], j - cum_idx + 1);
                k++;
            }
        }
        assert_int_equal(sack.n_gaps, k);
    }
    assert_int_equal(ns_sctp_tsnmap_cum(&m), base + n - 1);
    assert_int_equal(m.held, 0);
    free(got);
    ns_sctp_tsnmap_free(&m);
}

static void test_sack_timing(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.sack_freq = 4;
    struct ns_sctp_tsnmap m;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 0, &p), 0);
    uint8_t why;
    /* The deadline is set by the first unacknowledged packet only. */
    rx(&m, 1);
    assert_false(ns_sctp_tsnmap_packet_done(&m, 0, &why));
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), 200000);
    rx(&m, 2);
    assert_false(ns_sctp_tsnmap_packet_done(&m, 150000, &why));
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), 200000);
    rx(&m, 3);
    assert_false(ns_sctp_tsnmap_packet_done(&m, 160000, &why));
    rx(&m, 4);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 170000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_FREQ);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    assert_int_equal(m.stats.sack_delayed, 3);
    assert_int_equal(m.stats.sack_immediate, 1);

    /* The delayed SACK timer built the SACK: the count starts over. */
    rx(&m, 5);
    assert_false(ns_sctp_tsnmap_packet_done(&m, 300000, &why));
    assert_int_equal(ns_sctp_tsnmap_sack_deadline(&m), 500000);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    assert_int_equal(sack.cum_tsn, 5);

    /* Out of order: immediate; then the fill: immediate again. */
    rx(&m, 7);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 400000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_GAP);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    rx(&m, 6);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 410000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_FILL);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    assert_int_equal(sack.cum_tsn, 7);

    /* The I bit. */
    assert_int_equal(ns_sctp_tsnmap_check(&m, 8), NS_SCTP_TSN_NEW);
    ns_sctp_tsnmap_mark(&m, 8, true);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 420000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_IBIT);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);

    /* A packet of duplicates only. */
    assert_int_equal(ns_sctp_tsnmap_check(&m, 8), NS_SCTP_TSN_DUP);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 430000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_DUP);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    assert_int_equal(sack.n_dups, 1);
    assert_int_equal(sack.dups[0], 8);

    /* Out of window, or dropped by the caller: the peer hears at once. */
    assert_int_equal(ns_sctp_tsnmap_check(&m, 100000), NS_SCTP_TSN_OUT_OF_WINDOW);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 440000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_DROP);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    assert_int_equal(ns_sctp_tsnmap_check(&m, 9), NS_SCTP_TSN_NEW);
    ns_sctp_tsnmap_dropped(&m);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 450000, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_DROP);
    ns_sctp_tsnmap_build_sack(&m, &sack, 10, 10);
    assert_int_equal(sack.cum_tsn, 8);

    /* sack_freq 1: every packet. */
    ns_sctp_tsnmap_free(&m);
    p.sack_freq = 1;
    assert_int_equal(ns_sctp_tsnmap_init(&m, 1, 0, &p), 0);
    rx(&m, 1);
    assert_true(ns_sctp_tsnmap_packet_done(&m, 0, &why));
    assert_int_equal(why, NS_SCTP_SACKWHY_FREQ);
    ns_sctp_tsnmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),      cmocka_unit_test(test_gap_blocks),
        cmocka_unit_test(test_dups),          cmocka_unit_test(test_reset),
        cmocka_unit_test(test_window_limits), cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_sack_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
