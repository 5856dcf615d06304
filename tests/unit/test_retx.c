/* SCTP outstanding data: cum and gap acks, reneging, miss indications with
 * HTNA, fast retransmit once, T3 marking, Karn, peer rwnd and zero-window
 * probes (RFC 9260 6.1-6.3, 6.2.1, 7.2.4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/timer.h"
#include "sctp/reasm.h"
#include "sctp/retx.h"
#include "sctp/tsnmap.h"

static uint8_t data[4096];

struct fx {
    struct ns_sctp_params p;
    struct ns_sctp_sendq sq;
    struct ns_sctp_retx rx;
    struct ns_sctp_cc cc[2];
    struct ns_sctp_txchunk *c[64]; /* by TSN - initial */
    uint32_t n;
};

static struct fx *fx_new(uint32_t initial_tsn, uint32_t peer_rwnd)
{
    static struct fx f;
    memset(&f, 0, sizeof(f));
    ns_sctp_params_default(&f.p);
    assert_int_equal(ns_sctp_sendq_init(&f.sq, &f.p, 4), 0);
    ns_sctp_retx_init(&f.rx, &f.p, &f.sq, initial_tsn, peer_rwnd);
    ns_sctp_cc_init(&f.cc[0], &f.p, 1500, peer_rwnd, 0);
    ns_sctp_cc_init(&f.cc[1], &f.p, 1500, peer_rwnd, 0);
    ns_sctp_retx_set_path(&f.rx, 0, &f.cc[0]);
    ns_sctp_retx_set_path(&f.rx, 1, &f.cc[1]);
    return &f;
}

static void fx_free(struct fx *f)
{
    ns_sctp_retx_free(&f->rx);
    assert_int_equal(f->sq.inflight_bytes, 0);
    assert_int_equal(f->sq.chunk_pool.in_use, 0);
    ns_sctp_sendq_free(&f->sq);
}

/* Queue and send n chunks of len bytes to path at time now. */
static void send_n(struct fx *f, uint32_t n, uint32_t len, uint8_t path, uint64_t now)
{
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(ns_sctp_sendq_enqueue(&f->sq, 0, data, len, 0, 0, 0), 0);
        struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&f->sq, 1500, 1452);
        assert_non_null(c);
        uint32_t tsn = ns_sctp_retx_send_new(&f->rx, c, path, now);
        assert_int_equal(tsn, c->d.tsn);
        f->c[f->n++] = c;
    }
}

static enum ns_sctp_sack_verdict sack(struct fx *f, uint32_t cum, uint32_t a_rwnd,
                                      const uint16_t (*gaps)[2], uint16_t ngaps, uint64_t now,
                                      struct ns_sctp_sack_result *r)
{
    return ns_sctp_retx_sack(&f->rx, cum, a_rwnd, gaps, ngaps, now, r);
}

static void test_cum_ack(void **state)
{
    (void)state;
    struct fx *f = fx_new(1000, 100000);
    send_n(f, 5, 100, 0, 0);
    assert_int_equal(f->c[0]->d.tsn, 1000);
    assert_int_equal(f->c[4]->d.tsn, 1004);
    assert_int_equal(ns_sctp_retx_next_tsn(&f->rx), 1005);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 500);
    assert_int_equal(f->cc[0].flight, 500);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 99500);
    assert_int_equal(ns_sctp_retx_path_outstanding(&f->rx, 0), 5);

    struct ns_sctp_sack_result r;
    assert_int_equal(sack(f, 1002, 100000, NULL, 0, 10, &r), NS_SCTP_SACK_OK);
    assert_true(r.cum_advanced);
    assert_int_equal(r.bytes_acked, 300);
    assert_int_equal(r.chunks_freed, 3);
    assert_false(r.fast_rtx);
    assert_int_equal(r.t3_restart, 1);
    assert_int_equal(r.t3_stop, 0xfe); /* paths without data */
    assert_false(r.all_acked);
    assert_int_equal(ns_sctp_retx_cum_ack(&f->rx), 1002);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 200);
    assert_int_equal(f->cc[0].flight, 200);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 99800);
    assert_int_equal(f->sq.inflight_bytes, 200);
    /* The same cum again: accepted, nothing new. */
    assert_int_equal(sack(f, 1002, 50000, NULL, 0, 11, &r), NS_SCTP_SACK_OK);
    assert_false(r.cum_advanced);
    assert_int_equal(r.bytes_acked, 0);
    assert_int_equal(r.t3_restart, 0);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 49800);
    /* Older: ignored, rwnd untouched. */
    assert_int_equal(sack(f, 1001, 1, NULL, 0, 12, &r), NS_SCTP_SACK_STALE);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 49800);
    /* Acknowledging what was never sent. */
    assert_int_equal(sack(f, 1005, 1, NULL, 0, 13, &r), NS_SCTP_SACK_INVALID);
    assert_int_equal(f->rx.stats.sack_stale, 1);
    assert_int_equal(f->rx.stats.sack_invalid, 1);
    assert_int_equal(sack(f, 1004, 100000, NULL, 0, 14, &r), NS_SCTP_SACK_OK);
    assert_true(r.all_acked);
    assert_int_equal(r.t3_stop, 0xff);
    assert_true(ns_sctp_retx_all_acked(&f->rx));
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 0);
    assert_int_equal(f->sq.inflight_bytes, 0);
    fx_free(f);
}

static void test_gap_ack_and_renege(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    send_n(f, 10, 100, 0, 0);
    struct ns_sctp_sack_result r;
    /* cum 2, blocks 4-5 and 8. */
    const uint16_t g1[][2] = {{2, 3}, {6, 6}};
    assert_int_equal(sack(f, 2, 100000, g1, 2, 10, &r), NS_SCTP_SACK_OK);
    assert_int_equal(r.bytes_acked, 500);
    assert_int_equal(r.chunks_freed, 2);
    assert_int_equal(f->rx.n_gap_acked, 3);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 500); /* 3, 6, 7, 9, 10 */
    assert_int_equal(ns_sctp_retx_path_outstanding(&f->rx, 0), 5);
    static const uint8_t st1[] = {
        0, 0, 0, NS_SCTP_TXC_GAP_ACKED, NS_SCTP_TXC_GAP_ACKED, 0, 0, NS_SCTP_TXC_GAP_ACKED, 0, 0};
    static const uint8_t miss1[] = {0, 0, 1, 0, 0, 1, 1, 0, 0, 0}; /* below HTNA 8 */
    for (int i = 2; i < 10; i++) {
        assert_int_equal(f->c[i]->state & ~NS_SCTP_TXC_TIMED, st1[i]);
        assert_int_equal(f->c[i]->misses, miss1[i]);
    }
    /* The peer reneges on 5 and 8: outstanding again, one miss each. */
    const uint16_t g2[][2] = {{2, 2}};
    assert_int_equal(sack(f, 2, 100000, g2, 1, 20, &r), NS_SCTP_SACK_OK);
    assert_int_equal(r.reneged, 2);
    assert_int_equal(r.bytes_acked, 0);
    assert_int_equal(r.t3_start, 1);
    assert_int_equal(f->rx.stats.reneged, 2);
    assert_int_equal(f->rx.n_gap_acked, 1);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 700);
    assert_int_equal(f->cc[0].flight, 700);
    assert_int_equal(ns_sctp_retx_path_outstanding(&f->rx, 0), 7);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 100000 - 700);
    /* No TSN newly acknowledged: HTNA adds nothing to 3, 6, 7. */
    static const uint8_t miss2[] = {0, 0, 1, 0, 1, 1, 1, 1, 0, 0};
    for (int i = 2; i < 10; i++)
        assert_int_equal(f->c[i]->misses, miss2[i]);
    assert_int_equal(f->c[3]->state & NS_SCTP_TXC_GAP_ACKED, NS_SCTP_TXC_GAP_ACKED);
    assert_int_equal(f->c[4]->state & NS_SCTP_TXC_GAP_ACKED, 0);
    /* The cum ack covering a gap-acked chunk does not count it twice. */
    assert_int_equal(sack(f, 4, 100000, NULL, 0, 30, &r), NS_SCTP_SACK_OK);
    assert_int_equal(r.bytes_acked, 100); /* only 3 */
    assert_int_equal(f->rx.n_gap_acked, 0);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 600);
    fx_free(f);
}

static void test_fast_retransmit_once(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    send_n(f, 10, 100, 0, 0);
    struct ns_sctp_sack_result r;
    const uint16_t g[][2] = {{2, 2}, {2, 3}, {2, 4}, {2, 5}, {2, 6}};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sack(f, 1, 100000, &g[i], 1, 10 + i, &r), NS_SCTP_SACK_OK);
        assert_false(r.fast_rtx);
        assert_int_equal(f->c[1]->misses, i + 1);
    }
    assert_false(ns_sctp_retx_has_rtx(&f->rx));
    uint32_t cwnd = f->cc[0].cwnd;
    assert_int_equal(sack(f, 1, 100000, &g[2], 1, 12, &r), NS_SCTP_SACK_OK);
    assert_true(r.fast_rtx);
    assert_int_equal(f->c[1]->misses, 3);
    assert_int_equal(f->c[1]->state & (NS_SCTP_TXC_RTX | NS_SCTP_TXC_FAST_DONE),
                     NS_SCTP_TXC_RTX | NS_SCTP_TXC_FAST_DONE);
    assert_true(ns_sctp_retx_has_rtx(&f->rx));
    assert_int_equal(f->rx.stats.fast_rtx_marked, 1);
    /* Marked data leaves the flight: 10 - 1 cum - 3 gap - 1 marked. */
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 500);
    assert_true(f->cc[0].in_fast_recovery);
    assert_int_equal(f->cc[0].fr_exit_tsn, 10);
    assert_int_equal(f->cc[0].ssthresh, cwnd / 2 > 6000 ? cwnd / 2 : 6000);
    assert_int_equal(f->cc[0].cwnd, f->cc[0].ssthresh);

    struct ns_sctp_txchunk *c = ns_sctp_retx_next_rtx(&f->rx, 1500);
    assert_ptr_equal(c, f->c[1]);
    assert_null(ns_sctp_retx_next_rtx(&f->rx, ns_sctp_data_wire_len(100) - 1));
    ns_sctp_retx_resent(&f->rx, c, 0, 20);
    assert_false(ns_sctp_retx_has_rtx(&f->rx));
    assert_null(ns_sctp_retx_next_rtx(&f->rx, 1500));
    assert_int_equal(f->c[1]->state & NS_SCTP_TXC_RESENT, NS_SCTP_TXC_RESENT);
    assert_int_equal(f->rx.stats.chunks_resent, 1);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 600);

    /* More miss reports never fast-retransmit it again. */
    for (int i = 3; i < 5; i++) {
        assert_int_equal(sack(f, 1, 100000, &g[i], 1, 30 + i, &r), NS_SCTP_SACK_OK);
        assert_false(r.fast_rtx);
    }
    assert_int_equal(f->rx.stats.fast_rtx_marked, 1);
    assert_int_equal(f->c[1]->misses, 3);
    /* TSN 3 (c[2]) was gap-acked all along: no misses. */
    assert_int_equal(f->c[2]->misses, 0);
    /* Cum ack past the exit point ends recovery. */
    assert_int_equal(sack(f, 10, 100000, NULL, 0, 40, &r), NS_SCTP_SACK_OK);
    assert_false(f->cc[0].in_fast_recovery);
    assert_true(r.all_acked);
    fx_free(f);
}

static void test_htna(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    send_n(f, 6, 100, 0, 0);
    struct ns_sctp_sack_result r;
    const uint16_t a[][2] = {{3, 3}};
    const uint16_t b[][2] = {{3, 3}, {5, 5}};
    const uint16_t c[][2] = {{2, 3}, {5, 5}};
    assert_int_equal(sack(f, 0, 100000, a, 1, 1, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->c[0]->misses, 1);
    assert_int_equal(f->c[1]->misses, 1);
    /* Same report again: nothing newly acked, no indications. */
    assert_int_equal(sack(f, 0, 100000, a, 1, 2, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->c[0]->misses, 1);
    assert_int_equal(f->c[1]->misses, 1);
    /* 5 newly acked: everything missing below it. */
    assert_int_equal(sack(f, 0, 100000, b, 2, 3, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->c[0]->misses, 2);
    assert_int_equal(f->c[1]->misses, 2);
    assert_int_equal(f->c[3]->misses, 1);
    assert_int_equal(f->c[5]->misses, 0);
    /* Only 2 newly acked: HTNA is 2, so only TSN 1 gets an indication. */
    assert_int_equal(sack(f, 0, 100000, c, 2, 4, &r), NS_SCTP_SACK_OK);
    assert_true(r.fast_rtx);
    assert_int_equal(f->c[0]->misses, 3);
    assert_int_equal(f->c[3]->misses, 1);
    assert_int_equal(f->c[0]->state & NS_SCTP_TXC_RTX, NS_SCTP_TXC_RTX);
    assert_int_equal(f->c[3]->state & NS_SCTP_TXC_RTX, 0);
    fx_free(f);
}

static void test_bad_gap_blocks(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    send_n(f, 5, 100, 0, 0);
    struct ns_sctp_sack_result r;
    /* start 0, start > end, past the last TSN sent, overlapping/unsorted. */
    const uint16_t g[][2] = {{0, 1}, {3, 2}, {4, 9}, {2, 2}, {2, 2}, {1, 1}};
    assert_int_equal(sack(f, 0, 100000, g, 6, 1, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->rx.stats.gap_bad, 5);
    assert_int_equal(f->rx.n_gap_acked, 1);
    assert_int_equal(f->c[1]->state & NS_SCTP_TXC_GAP_ACKED, NS_SCTP_TXC_GAP_ACKED);
    assert_int_equal(r.bytes_acked, 100);
    fx_free(f);
}

static void test_t3_marks_path(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    send_n(f, 4, 100, 0, 0); /* 1-4 to path 0 */
    send_n(f, 2, 200, 1, 0); /* 5-6 to path 1 */
    send_n(f, 2, 100, 0, 0); /* 7-8 to path 0 */
    struct ns_sctp_sack_result r;
    const uint16_t g[][2] = {{2, 2}}; /* TSN 3 */
    assert_int_equal(sack(f, 1, 100000, g, 1, 5, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->cc[0].flight, 400);
    assert_int_equal(f->cc[1].flight, 400);
    f->cc[0].cwnd = 20000;
    assert_int_equal(ns_sctp_retx_t3_expired(&f->rx, 0, NS_SEC), 4); /* 2, 4, 7, 8 */
    assert_int_equal(f->cc[0].flight, 0);
    assert_int_equal(f->cc[1].flight, 400);
    assert_int_equal(ns_sctp_retx_flight(&f->rx), 400);
    assert_int_equal(f->cc[0].cwnd, 1500);
    assert_int_equal(f->cc[0].ssthresh, 10000);
    assert_int_equal(f->cc[0].rto_us, 2 * NS_SEC);
    assert_int_equal(f->cc[1].rto_us, NS_SEC);
    assert_int_equal(f->rx.n_rtx, 4);
    assert_int_equal(f->c[2]->state & NS_SCTP_TXC_RTX, 0); /* gap-acked: kept */
    /* A second expiry does not mark them twice. */
    assert_int_equal(ns_sctp_retx_t3_expired(&f->rx, 0, 2 * NS_SEC), 0);
    /* Retransmissions come lowest TSN first, as room allows; they may go
     * to another path. */
    static const int order[] = {1, 3, 6, 7};
    for (int i = 0; i < 4; i++) {
        struct ns_sctp_txchunk *c = ns_sctp_retx_next_rtx(&f->rx, 1500);
        assert_ptr_equal(c, f->c[order[i]]);
        ns_sctp_retx_resent(&f->rx, c, i == 3 ? 1 : 0, 3 * NS_SEC);
    }
    assert_null(ns_sctp_retx_next_rtx(&f->rx, 1500));
    assert_int_equal(f->cc[0].flight, 300);
    assert_int_equal(f->cc[1].flight, 500);
    assert_int_equal(ns_sctp_retx_path_outstanding(&f->rx, 0), 3);
    assert_int_equal(ns_sctp_retx_path_outstanding(&f->rx, 1), 3);
    /* Acking everything: no RTT sample from retransmitted chunks, and the
     * only never-retransmitted timed chunk (TSN 1 on path 0, TSN 5 on 1)
     * were acked or marked before. */
    uint64_t samples = f->rx.stats.rtt_samples;
    assert_int_equal(sack(f, 8, 100000, NULL, 0, 4 * NS_SEC, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->rx.stats.rtt_samples, samples + 1); /* TSN 5 on path 1 */
    assert_int_equal(f->cc[1].srtt_us, 4 * NS_SEC);
    assert_true(r.all_acked);
    fx_free(f);
}

static void test_karn(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    struct ns_sctp_sack_result r;
    send_n(f, 1, 100, 0, 0);    /* TSN 1, timed */
    send_n(f, 1, 100, 0, 1000); /* TSN 2, not timed: one measurement at a time */
    assert_int_equal(f->c[0]->state & NS_SCTP_TXC_TIMED, NS_SCTP_TXC_TIMED);
    assert_int_equal(f->c[1]->state & NS_SCTP_TXC_TIMED, 0);
    assert_int_equal(sack(f, 2, 100000, NULL, 0, 50000, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->rx.stats.rtt_samples, 1);
    assert_int_equal(f->cc[0].srtt_us, 50000);
    assert_int_equal(f->cc[0].rttvar_us, 25000);

    send_n(f, 1, 100, 0, 100000); /* TSN 3, timed */
    assert_int_equal(f->c[2]->state & NS_SCTP_TXC_TIMED, NS_SCTP_TXC_TIMED);
    ns_sctp_retx_t3_expired(&f->rx, 0, 1100000);
    assert_int_equal(f->c[2]->state & NS_SCTP_TXC_TIMED, 0);
    struct ns_sctp_txchunk *c = ns_sctp_retx_next_rtx(&f->rx, 1500);
    ns_sctp_retx_resent(&f->rx, c, 0, 1100000);
    /* A new chunk can be timed while the retransmitted one is out. */
    send_n(f, 1, 100, 0, 1200000); /* TSN 4 */
    assert_int_equal(f->c[3]->state & NS_SCTP_TXC_TIMED, NS_SCTP_TXC_TIMED);
    assert_int_equal(sack(f, 3, 100000, NULL, 0, 1210000, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->rx.stats.rtt_samples, 1); /* nothing from TSN 3 */
    assert_int_equal(f->cc[0].srtt_us, 50000);
    assert_int_equal(sack(f, 4, 100000, NULL, 0, 1230000, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->rx.stats.rtt_samples, 2);
    assert_int_equal(f->cc[0].srtt_us, (7 * 50000 + 30000) / 8);
    fx_free(f);
}

static void test_rwnd_and_probe(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 1000);
    struct ns_sctp_sack_result r;
    assert_true(ns_sctp_retx_rwnd_allows(&f->rx, 500));
    send_n(f, 1, 500, 0, 0);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 500);
    assert_true(ns_sctp_retx_rwnd_allows(&f->rx, 500));
    assert_false(ns_sctp_retx_rwnd_allows(&f->rx, 501));
    send_n(f, 1, 500, 0, 0);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 0);
    assert_false(ns_sctp_retx_rwnd_allows(&f->rx, 1));
    /* Peer took both but its buffer is full. */
    assert_int_equal(sack(f, 2, 0, NULL, 0, 10, &r), NS_SCTP_SACK_OK);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 0);
    assert_int_equal(f->rx.stats.zwp, 0);
    /* Nothing in flight: one probe may go. */
    assert_true(ns_sctp_retx_rwnd_allows(&f->rx, 100));
    assert_int_equal(f->rx.stats.zwp, 1);
    send_n(f, 1, 100, 0, 20);
    assert_false(ns_sctp_retx_rwnd_allows(&f->rx, 100));
    /* A window update while the probe is out: a_rwnd minus the flight. */
    assert_int_equal(sack(f, 2, 3000, NULL, 0, 30, &r), NS_SCTP_SACK_OK);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 2900);
    /* a_rwnd below the flight: 0, not a wrap. */
    assert_int_equal(sack(f, 2, 50, NULL, 0, 40, &r), NS_SCTP_SACK_OK);
    assert_int_equal(ns_sctp_retx_peer_rwnd(&f->rx), 0);
    fx_free(f);
}

static void test_cwnd_burst_and_growth(void **state)
{
    (void)state;
    struct fx *f = fx_new(1, 100000);
    struct ns_sctp_sack_result r;
    assert_int_equal(f->cc[0].cwnd, 4380);
    assert_true(ns_sctp_retx_cwnd_allows(&f->rx, 0, 0));
    assert_true(ns_sctp_retx_cwnd_allows(&f->rx, 0, 3));
    assert_false(ns_sctp_retx_cwnd_allows(&f->rx, 0, 4)); /* Max.Burst */
    send_n(f, 3, 1452, 0, 0);
    assert_true(ns_sctp_retx_cwnd_allows(&f->rx, 0, 0)); /* 4356 < 4380 */
    send_n(f, 1, 1452, 0, 0);
    assert_false(ns_sctp_retx_cwnd_allows(&f->rx, 0, 0));
    assert_true(ns_sctp_retx_cwnd_allows(&f->rx, 1, 0)); /* other path */
    /* 2 chunks acked with the window full: + min(2904, MTU). */
    assert_int_equal(sack(f, 2, 100000, NULL, 0, 100, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->cc[0].cwnd, 4380 + 1500);
    assert_int_equal(f->cc[0].flight, 2904);
    assert_true(ns_sctp_retx_cwnd_allows(&f->rx, 0, 0));
    /* Gap acks alone do not grow the window. */
    const uint16_t g[][2] = {{2, 2}};
    assert_int_equal(sack(f, 2, 100000, g, 1, 200, &r), NS_SCTP_SACK_OK);
    assert_int_equal(f->cc[0].cwnd, 5880);
    fx_free(f);
}

/* The data path end to end on a virtual clock, as the association will
 * drive it: sender (sendq, retx, cc) and receiver (tsnmap, reasm) joined by
 * a lossy 10 ms link in both directions. Every message must arrive once,
 * in order and intact; flight and window accounting must stay consistent. */
struct simpkt {
    struct simpkt *next;
    uint64_t at;
    uint32_t n;
    struct ns_sctp_chunk_data ch[96];
};
struct simsack {
    struct simsack *next;
    uint64_t at;
    struct ns_sctp_sack_info s;
};

static uint32_t sim_seed;
static bool sim_lost(uint32_t percent)
{
    sim_seed = sim_seed * 1103515245u + 12345u;
    return (sim_seed >> 8) % 100 < percent;
}

static uint32_t msg_len(uint32_t i)
{
    return 1 + (i * 37u) % 3000u;
}

static void sim_run(uint32_t loss, uint32_t nmsg)
{
    static uint8_t big[8192];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 31 + i / 7);
    sim_seed = 42 + loss;
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    p.rcvbuf_bytes = 30000;
    p.rto_min_ms = 100;
    p.rto_initial_ms = 300;
    struct ns_sctp_sendq sq;
    struct ns_sctp_retx rx;
    struct ns_sctp_cc cc;
    struct ns_sctp_tsnmap tm;
    struct ns_sctp_reasm ra;
    assert_int_equal(ns_sctp_sendq_init(&sq, &p, 1), 0);
    ns_sctp_retx_init(&rx, &p, &sq, 5000, p.rcvbuf_bytes);
    ns_sctp_cc_init(&cc, &p, 1500, p.rcvbuf_bytes, 0);
    ns_sctp_retx_set_path(&rx, 0, &cc);
    assert_int_equal(ns_sctp_tsnmap_init(&tm, 5000, 0, &p), 0);
    assert_int_equal(ns_sctp_reasm_init(&ra, &p, 1), 0);

    struct simpkt *dq = NULL, **dq_tail = &dq;
    struct simsack *sk = NULL, **sk_tail = &sk;
    uint64_t now = 0, t3 = NS_TIME_NEVER;
    uint32_t queued = 0, recv = 0, recv_off = 0, pkts = 0;
    bool fast = false;
    const uint32_t budget = 1500 - 20 - 12, frag = 1500 - 20 - 12 - 16;
    static uint8_t got[3000];

    while (recv < nmsg) {
        assert_true(now < 600 * NS_SEC); /* it must finish */
        /* Application sends as the buffer allows. */
        while (queued < nmsg && ns_sctp_sendq_enqueue(&sq, 0, big + queued % 4096, msg_len(queued),
                                                      queued, 0, 0) == 0)
            queued++;
        /* Output routine. */
        ns_sctp_cc_idle_check(&cc, now);
        for (uint32_t np = 0; fast || ns_sctp_retx_cwnd_allows(&rx, 0, np); np++) {
            struct simpkt *pk = calloc(1, sizeof(*pk));
            assert_non_null(pk);
            uint32_t room = budget;
            struct ns_sctp_txchunk *c;
            while (pk->n < 96 && (c = ns_sctp_retx_next_rtx(&rx, room))) {
                room -= ns_sctp_data_wire_len(c->d.len);
                ns_sctp_retx_resent(&rx, c, 0, now);
                pk->ch[pk->n++] = c->d;
            }
            while (!fast && pk->n < 96 && ns_sctp_sendq_peek_len(&sq, frag) &&
                   ns_sctp_retx_rwnd_allows(&rx, ns_sctp_sendq_peek_len(&sq, frag) - 16) &&
                   (c = ns_sctp_sendq_pull(&sq, room, frag))) {
                room -= ns_sctp_data_wire_len(c->d.len);
                ns_sctp_retx_send_new(&rx, c, 0, now);
                pk->ch[pk->n++] = c->d;
            }
            fast = false;
            if (pk->n == 0) {
                free(pk);
                break;
            }
            for (uint32_t k = 0; k < pk->n; k++)
                ns_buf_get(pk->ch[k].buf);
            if (t3 == NS_TIME_NEVER)
                t3 = now + cc.rto_us;
            pkts++;
            if (sim_lost(loss)) {
                for (uint32_t k = 0; k < pk->n; k++)
                    ns_buf_put(pk->ch[k].buf);
                free(pk);
                continue;
            }
            pk->at = now + 10 * NS_MS;
            *dq_tail = pk;
            dq_tail = &pk->next;
        }
        /* Invariants. */
        assert_int_equal(ns_sctp_retx_flight(&rx), cc.flight);
        assert_true(rx.flight <= rx.outstanding_bytes);
        assert_true(sq.inflight_bytes >= rx.outstanding_bytes);
        assert_true(rx.n_rtx <= rx.n_chunks);

        now += NS_MS;

        /* Receiver. */
        while (dq && dq->at <= now) {
            struct simpkt *pk = dq;
            dq = pk->next;
            if (!dq)
                dq_tail = &dq;
            for (uint32_t k = 0; k < pk->n; k++) {
                struct ns_sctp_chunk_data *d = &pk->ch[k];
                if (ns_sctp_tsnmap_check(&tm, d->tsn) == NS_SCTP_TSN_NEW) {
                    bool in_seq = d->tsn == ns_sctp_tsnmap_cum(&tm) + 1;
                    enum ns_sctp_rx_verdict v = ns_sctp_reasm_rx(&ra, d, in_seq);
                    if (v == NS_SCTP_RX_OK)
                        ns_sctp_tsnmap_mark(&tm, d->tsn, false);
                    else
                        ns_sctp_tsnmap_dropped(&tm);
                }
                ns_buf_put(d->buf);
            }
            free(pk);
            ns_sctp_tsnmap_packet_done(&tm, now, NULL);
        }
        /* The application reads everything; each message is checked. */
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_reasm_take(&ra, &q);
        struct ns_sctp_rmsg *m;
        while ((m = ns_sctp_rmsgq_pop(&q))) {
            assert_int_equal(m->ssn, (uint16_t)recv);
            assert_int_equal(m->ppid, recv);
            uint32_t len = msg_len(recv);
            assert_true(recv_off + m->len <= len);
            ns_sctp_rmsg_copy(m, 0, got + recv_off, m->len);
            recv_off += m->len;
            if (m->flags & NS_SCTP_RMSG_EOR) {
                assert_int_equal(recv_off, len);
                assert_memory_equal(got, big + recv % 4096, len);
                recv++;
                recv_off = 0;
            }
            ns_sctp_reasm_msg_free(&ra, m);
        }
        if (ns_sctp_tsnmap_sack_deadline(&tm) <= now ||
            ns_sctp_reasm_window_update_due(&ra, 1500)) {
            struct simsack *s = calloc(1, sizeof(*s));
            assert_non_null(s);
            ns_sctp_tsnmap_build_sack(&tm, &s->s, 100, 16);
            s->s.a_rwnd = ns_sctp_reasm_advertise(&ra, 1500);
            if (sim_lost(loss)) {
                free(s);
            } else {
                s->at = now + 10 * NS_MS;
                *sk_tail = s;
                sk_tail = &s->next;
            }
        }
        /* Sender: SACKs, then the T3 timer. */
        while (sk && sk->at <= now) {
            struct simsack *s = sk;
            sk = s->next;
            if (!sk)
                sk_tail = &sk;
            struct ns_sctp_sack_result r;
            assert_int_equal(
                ns_sctp_retx_sack(&rx, s->s.cum_tsn, s->s.a_rwnd, s->s.gaps, s->s.n_gaps, now, &r),
                NS_SCTP_SACK_OK);
            free(s);
            if (r.t3_stop & 1)
                t3 = NS_TIME_NEVER;
            else if ((r.t3_restart & 1) || ((r.t3_start & 1) && t3 == NS_TIME_NEVER))
                t3 = now + cc.rto_us;
            if (r.fast_rtx)
                fast = true;
        }
        if (t3 <= now) {
            ns_sctp_retx_t3_expired(&rx, 0, now);
            t3 = NS_TIME_NEVER; /* re-armed by the next transmission */
        }
    }
    assert_int_equal(recv, nmsg);
    print_message("loss %u%%: %u packets, %llu resent, %llu fast, %llu t3, %llu reneged, "
                  "%llu zwp, cwnd %u, %.1f s\n",
                  loss, pkts, (unsigned long long)rx.stats.chunks_resent,
                  (unsigned long long)rx.stats.fast_rtx_marked,
                  (unsigned long long)rx.stats.t3_expiries, (unsigned long long)rx.stats.reneged,
                  (unsigned long long)rx.stats.zwp, cc.cwnd, (double)now / NS_SEC);
    if (loss) {
        assert_true(rx.stats.fast_rtx_marked > 0);
        assert_true(rx.stats.t3_expiries > 0);
    }
    while (dq) {
        struct simpkt *pk = dq;
        dq = pk->next;
        for (uint32_t k = 0; k < pk->n; k++)
            ns_buf_put(pk->ch[k].buf);
        free(pk);
    }
    while (sk) {
        struct simsack *s = sk;
        sk = s->next;
        free(s);
    }
    ns_sctp_retx_free(&rx);
    assert_int_equal(sq.inflight_bytes, 0);
    ns_sctp_sendq_free(&sq);
    ns_sctp_tsnmap_free(&tm);
    ns_sctp_reasm_free(&ra);
}

static void test_sim_clean(void **state)
{
    (void)state;
    sim_run(0, 3000);
}

static void test_sim_lossy(void **state)
{
    (void)state;
    sim_run(5, 3000);
    sim_run(20, 500);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)i;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cum_ack),
        cmocka_unit_test(test_gap_ack_and_renege),
        cmocka_unit_test(test_fast_retransmit_once),
        cmocka_unit_test(test_htna),
        cmocka_unit_test(test_bad_gap_blocks),
        cmocka_unit_test(test_t3_marks_path),
        cmocka_unit_test(test_karn),
        cmocka_unit_test(test_rwnd_and_probe),
        cmocka_unit_test(test_cwnd_burst_and_growth),
        cmocka_unit_test(test_sim_clean),
        cmocka_unit_test(test_sim_lossy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
