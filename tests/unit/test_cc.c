/* SCTP congestion control and RTO (RFC 9260 6.3.1, 7.2): every formula
 * with exact numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/timer.h"
#include "sctp/cc.h"

static struct ns_sctp_params params(void)
{
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    return p;
}

static void test_initial_cwnd(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 65536, 0);
    assert_int_equal(cc.cwnd, 4380); /* min(6000, max(3000, 4380)) */
    assert_int_equal(cc.ssthresh, 65536);
    assert_int_equal(cc.rto_us, 1000000);
    assert_int_equal(cc.flight, 0);
    assert_false(cc.rtt_measured);
    assert_int_equal(ns_sctp_cc_initial_cwnd(9000), 18000); /* min(36000, 18000) */
    assert_int_equal(ns_sctp_cc_initial_cwnd(1000), 4000);  /* min(4000, 4380) */
    assert_int_equal(ns_sctp_cc_initial_cwnd(2190), 4380);  /* min(8760, 4380) */
    ns_sctp_cc_init(&cc, &p, 1500, 0, 0);
    assert_int_equal(cc.ssthresh, UINT32_MAX);
}

static void test_slow_start(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 100000, 0);
    /* Window fully used, cum advanced: + min(acked, MTU). */
    ns_sctp_cc_on_send(&cc, 4380, 0);
    cc.flight -= 1452;
    ns_sctp_cc_on_sack(&cc, 1452, true, 4380, 1);
    assert_int_equal(cc.cwnd, 4380 + 1452);
    cc.flight -= 2928;
    ns_sctp_cc_on_sack(&cc, 2928, true, 5832, 2);
    assert_int_equal(cc.cwnd, 5832 + 1500);
    /* Window not fully used: no growth. */
    ns_sctp_cc_on_send(&cc, 3000, 0);
    cc.flight -= 1000;
    ns_sctp_cc_on_sack(&cc, 1000, true, 3000, 3);
    assert_int_equal(cc.cwnd, 7332);
    /* Cum ack did not advance (gap ack only): no growth. */
    ns_sctp_cc_on_send(&cc, 6000, 0);
    cc.flight -= 1000;
    ns_sctp_cc_on_sack(&cc, 1000, false, 8000, 3);
    assert_int_equal(cc.cwnd, 7332);
    assert_int_equal(cc.pba, 0);
}

static void test_congestion_avoidance(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 100000, 0);
    cc.cwnd = 6000;
    cc.ssthresh = 5000;
    cc.flight = 6000;
    cc.flight -= 3000;
    ns_sctp_cc_on_sack(&cc, 3000, true, 6000, 10);
    assert_int_equal(cc.pba, 3000);
    assert_int_equal(cc.cwnd, 6000);
    cc.flight = 6000;
    cc.flight -= 3000;
    ns_sctp_cc_on_sack(&cc, 3000, true, 6000, 11);
    /* pba reached cwnd with a full window: pba -= cwnd, cwnd += MTU. */
    assert_int_equal(cc.pba, 0);
    assert_int_equal(cc.cwnd, 7500);
    /* pba >= cwnd but cum did not advance: no growth yet. */
    cc.flight = 7500;
    cc.pba = 7000;
    cc.flight -= 1000;
    ns_sctp_cc_on_sack(&cc, 1000, false, 7500, 11);
    assert_int_equal(cc.pba, 8000);
    assert_int_equal(cc.cwnd, 7500);
    /* Window not full: pba capped at cwnd, no growth. */
    cc.flight = 2000;
    cc.flight -= 1000;
    ns_sctp_cc_on_sack(&cc, 1000, true, 2000, 12);
    assert_int_equal(cc.pba, 7500);
    assert_int_equal(cc.cwnd, 7500);
    /* Everything acknowledged: pba back to 0. */
    cc.flight = 0;
    ns_sctp_cc_on_sack(&cc, 1000, true, 1000, 13);
    assert_int_equal(cc.pba, 0);
}

static void test_fast_recovery(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 100000, 0);
    cc.cwnd = 10000;
    cc.ssthresh = 8000;
    cc.pba = 500;
    cc.flight = 10000;
    assert_true(ns_sctp_cc_fast_rtx(&cc, 120));
    assert_int_equal(cc.ssthresh, 6000); /* max(5000, 4*1500) */
    assert_int_equal(cc.cwnd, 6000);
    assert_int_equal(cc.pba, 0);
    assert_true(cc.in_fast_recovery);
    assert_int_equal(cc.fr_exit_tsn, 120);
    /* A second loss in the same recovery changes nothing. */
    assert_false(ns_sctp_cc_fast_rtx(&cc, 130));
    assert_int_equal(cc.cwnd, 6000);
    assert_int_equal(cc.fr_exit_tsn, 120);
    /* No growth while recovering (cwnd <= ssthresh would be slow start). */
    cc.flight = 6000 - 1000;
    ns_sctp_cc_on_sack(&cc, 1000, true, 6000, 119);
    assert_true(cc.in_fast_recovery);
    assert_int_equal(cc.cwnd, 6000);
    /* The cum ack reaches the exit point: recovery ends, growth resumes. */
    cc.flight = 6000 - 1000;
    ns_sctp_cc_on_sack(&cc, 1000, true, 6000, 120);
    assert_false(cc.in_fast_recovery);
    assert_int_equal(cc.cwnd, 7000);
    /* Large window: half of it. */
    cc.cwnd = 40000;
    assert_true(ns_sctp_cc_fast_rtx(&cc, 200));
    assert_int_equal(cc.ssthresh, 20000);
    assert_int_equal(cc.cwnd, 20000);
}

static void test_t3_and_backoff(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 100000, 0);
    cc.cwnd = 20000;
    cc.pba = 100;
    cc.in_fast_recovery = true;
    ns_sctp_cc_t3_expired(&cc);
    assert_int_equal(cc.ssthresh, 10000);
    assert_int_equal(cc.cwnd, 1500);
    assert_int_equal(cc.pba, 0);
    assert_false(cc.in_fast_recovery);
    assert_int_equal(cc.rto_us, 2000000);
    ns_sctp_cc_t3_expired(&cc);
    assert_int_equal(cc.ssthresh, 6000); /* max(750, 6000) */
    assert_int_equal(cc.cwnd, 1500);
    assert_int_equal(cc.rto_us, 4000000);
    static const uint64_t seq[] = {8000000, 16000000, 32000000, 60000000, 60000000};
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        ns_sctp_cc_t3_expired(&cc);
        assert_int_equal(cc.rto_us, seq[i]);
    }
    /* A fresh measurement ends the back-off. */
    ns_sctp_cc_rtt_sample(&cc, 100000);
    assert_int_equal(cc.rto_us, 1000000); /* 300 ms clamped to rto_min */
    ns_sctp_cc_backoff(&cc);
    assert_int_equal(cc.rto_us, 2000000);
}

static void test_rto_sequence(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.rto_min_ms = 10;
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 100000, 0);
    assert_int_equal(cc.rto_us, 1000000); /* RTO.Initial */
    ns_sctp_cc_rtt_sample(&cc, 100000);
    assert_int_equal(cc.srtt_us, 100000);
    assert_int_equal(cc.rttvar_us, 50000);
    assert_int_equal(cc.rto_us, 300000);
    ns_sctp_cc_rtt_sample(&cc, 200000);
    /* RTTVAR = (3*50000 + |100000-200000|)/4, SRTT = (7*100000 + 200000)/8 */
    assert_int_equal(cc.rttvar_us, 62500);
    assert_int_equal(cc.srtt_us, 112500);
    assert_int_equal(cc.rto_us, 362500);
    ns_sctp_cc_rtt_sample(&cc, 50000);
    assert_int_equal(cc.rttvar_us, 62500); /* (187500 + 62500)/4 */
    assert_int_equal(cc.srtt_us, 104687);  /* (787500 + 50000)/8, truncated */
    assert_int_equal(cc.rto_us, 354687);
    /* A steady RTT converges; the variance floor is 1 us. */
    for (int i = 0; i < 200; i++)
        ns_sctp_cc_rtt_sample(&cc, 20000);
    assert_int_equal(cc.srtt_us, 20000);
    assert_int_equal(cc.rttvar_us, 1);
    assert_int_equal(cc.rto_us, 20004);
    ns_sctp_cc_rtt_sample(&cc, 1000);
    assert_int_equal(cc.rttvar_us, 4750); /* (3 + 19000)/4 */
    assert_int_equal(cc.srtt_us, 17625);  /* (140000 + 1000)/8 */
    assert_int_equal(cc.rto_us, 36625);
    /* Clamps. */
    ns_sctp_cc_rtt_sample(&cc, 100000000);
    assert_int_equal(cc.rto_us, 60000000);
    struct ns_sctp_cc c2;
    ns_sctp_cc_init(&c2, &p, 1500, 0, 0);
    ns_sctp_cc_rtt_sample(&c2, 2000);
    assert_int_equal(c2.rto_us, 10000); /* 2000 + 4000 < rto_min 10 ms */
}

static void test_idle_decay(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_cc cc;
    ns_sctp_cc_init(&cc, &p, 1500, 100000, 0);
    cc.cwnd = 20000;
    ns_sctp_cc_on_send(&cc, 1000, 5 * NS_SEC);
    cc.flight = 0;
    ns_sctp_cc_idle_check(&cc, 5 * NS_SEC + 999999);
    assert_int_equal(cc.cwnd, 20000);
    ns_sctp_cc_idle_check(&cc, 6 * NS_SEC);
    assert_int_equal(cc.cwnd, 10000);
    /* The same idle second is not counted twice. */
    ns_sctp_cc_idle_check(&cc, 6 * NS_SEC + 500000);
    assert_int_equal(cc.cwnd, 10000);
    /* Two more RTOs: 10000 -> 6000 (4*MTU floor) -> stays. */
    ns_sctp_cc_idle_check(&cc, 8 * NS_SEC);
    assert_int_equal(cc.cwnd, 6000);
    /* The floor never raises a small window. */
    cc.cwnd = 1500;
    ns_sctp_cc_idle_check(&cc, 20 * NS_SEC);
    assert_int_equal(cc.cwnd, 1500);
    /* Data in flight: not idle. */
    cc.cwnd = 20000;
    ns_sctp_cc_on_send(&cc, 100, 30 * NS_SEC);
    ns_sctp_cc_idle_check(&cc, 40 * NS_SEC);
    assert_int_equal(cc.cwnd, 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_cwnd),         cmocka_unit_test(test_slow_start),
        cmocka_unit_test(test_congestion_avoidance), cmocka_unit_test(test_fast_recovery),
        cmocka_unit_test(test_t3_and_backoff),       cmocka_unit_test(test_rto_sequence),
        cmocka_unit_test(test_idle_decay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
