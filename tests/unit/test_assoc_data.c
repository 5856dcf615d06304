/* SCTP data transfer of an association (RFC 9260 sections 6, 7, 8):
 * delayed SACK timing, T3-rtx, fast retransmit, Max.Burst, the bundling
 * delay, send errors, invalid streams, empty DATA, zero window, partial
 * delivery, heartbeats (timing, RTT, failure), multi-homed failover, PMTU
 * and the SEND_FAILED / WRITABLE / path-confirm callbacks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/chunk.h"
#include "sctp_pipe.h"

#define DELAY (10 * NS_MS)

static struct ns_sctp_addr A(void) {
    return sp_addr(SP_IP_A);
} static struct ns_sctp_addr B(void) {
    return sp_addr(SP_IP_B);
}

static const uint8_t *
first_of(struct sp_node *n, int type, size_t *idx)
{
    for (size_t i = 0; i < n->n_out; i++) {
        uint32_t len;
        const uint8_t *k = sp_out_bytes(n, i, &len);
        for (int c = 0; c < sp_chunk_count(k, len); c++) {
            if (sp_chunk_type(k, len, c) == type) {
                if (idx)
                    *idx = i;
                return k + sp_chunk_off(k, len, c);
            }
        }
    }
    return NULL;
}

static void test_delayed_sack(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.nodelay = 1;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 51, &pa, NULL, 1, 1, DELAY));
    p.b->capture = true;
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    uint64_t t0 = p.net->now;
    ns_sctp_send(p.aa, 0, 0, 0, "hello", 5, 0, t0);
    /* One packet: the SACK waits sack_timeout (200 ms) after its arrival. */
    sp_run_until(p.net, t0 + DELAY + 200 * NS_MS - 1);
    assert_int_equal(p.b->n_out, 0);
    sp_run_until(p.net, t0 + DELAY + 200 * NS_MS);
    assert_int_equal(p.b->n_out, 1);
    const uint8_t *c = first_of(p.b, NS_SCTP_CT_SACK, NULL);
    assert_non_null(c);
    assert_int_equal(sp_rd32(c + 4), ia.next_tsn);
    assert_int_equal(sp_rd32(c + 8), 212992 - 5); /* the unread message counts */
    assert_int_equal(sp_rd16(c + 12), 0);
    sp_out_clear(p.b);
    /* Two packets: SACK on the second at once. */
    uint64_t t1 = p.net->now;
    ns_sctp_send(p.aa, 0, 0, 0, "one", 3, 0, t1);
    ns_sctp_send(p.aa, 0, 0, 0, "two", 3, 0, t1);
    sp_run_until(p.net, t1 + DELAY);
    assert_int_equal(p.b->n_out, 1);
    assert_int_equal(p.b->out[0].at, t1 + DELAY);
    c = first_of(p.b, NS_SCTP_CT_SACK, NULL);
    assert_int_equal(sp_rd32(c + 4), ia.next_tsn + 2);
    sp_out_clear(p.b);
    /* Out of order: the second of two arrives alone, SACK at once with a
     * gap block {2, 2}. */
    p.a->capture = true;
    uint64_t t2 = p.net->now;
    ns_sctp_send(p.aa, 0, 0, 0, "three", 5, 0, t2);
    ns_sctp_send(p.aa, 0, 0, 0, "four", 4, 0, t2);
    assert_int_equal(p.a->n_out, 2);
    sp_out_drop(p.a, 0);
    sp_out_forward(p.a, 0);
    sp_run_until(p.net, t2 + DELAY);
    assert_int_equal(p.b->n_out, 1);
    c = first_of(p.b, NS_SCTP_CT_SACK, NULL);
    assert_int_equal(sp_rd32(c + 4), ia.next_tsn + 2);
    assert_int_equal(sp_rd16(c + 12), 1);
    assert_int_equal(sp_rd16(c + 16), 2);
    assert_int_equal(sp_rd16(c + 18), 2);
    struct ns_sctp_assoc_info ib;
    ns_sctp_assoc_info(p.ab, &ib);
    assert_int_equal(ib.stats.tx_sacks, 3);
    sp_pair_free(&p);
}

/* A lost DATA chunk is retransmitted when T3 expires, one RTO (1 s) after
 * it was sent; cwnd falls to one MTU (7.2.3). */
static void test_t3_retransmit(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 52, NULL, NULL, 1, 1, DELAY));
    p.a->capture = true;
    uint64_t t0 = p.net->now;
    ns_sctp_send(p.aa, 2, 0, 0, "lost once", 9, 0, t0);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    uint32_t tsn = sp_rd32(k + 16);
    sp_out_clear(p.a);
    sp_run_until(p.net, t0 + NS_SEC - 1);
    assert_int_equal(p.a->n_out, 0);
    sp_run_until(p.net, t0 + NS_SEC);
    assert_int_equal(p.a->n_out, 1);
    k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_DATA);
    assert_int_equal(sp_rd32(k + 16), tsn);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.t3_timeouts, 1);
    assert_int_equal(ia.stats.retransmissions, 1);
    assert_int_equal(ia.cwnd, 1472);
    assert_int_equal(ia.rto_us, 2 * NS_SEC);
    assert_int_equal(ia.errors, 1);
    p.a->capture = false;
    sp_out_forward(p.a, 0);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.outstanding_chunks, 0);
    assert_int_equal(ia.errors, 0);
    assert_int_equal(ia.paths[0].errors, 0);
    assert_true(p.a->confirms > 0);
    sp_pair_free(&p);
}

/* Three packets lost: T3 expiry resends only what fits in one packet, the
 * earliest chunk (6.3.3 E3); the others follow on its SACK. */
static void test_t3_one_packet(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.nodelay = 1;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 53, &pa, NULL, 1, 1, DELAY));
    p.a->capture = true;
    uint64_t t0 = p.net->now;
    static uint8_t big[1000];
    for (int i = 0; i < 3; i++)
        assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, sizeof(big), 0, t0), 0);
    assert_int_equal(p.a->n_out, 3);
    uint32_t len;
    uint32_t tsn = sp_rd32(sp_out_bytes(p.a, 0, &len) + 16);
    sp_out_clear(p.a);
    sp_run_until(p.net, t0 + NS_SEC);
    assert_int_equal(p.a->n_out, 1);
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_DATA);
    assert_int_equal(sp_rd32(k + 16), tsn);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.t3_timeouts, 1);
    assert_int_equal(ia.stats.retransmissions, 1);
    p.a->capture = false;
    sp_out_forward(p.a, 0);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 3);
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.outstanding_chunks, 0);
    assert_int_equal(ia.stats.retransmissions, 3);
    assert_int_equal(ia.stats.t3_timeouts, 1);
    sp_pair_free(&p);
}

static int dropped_first;
static bool drop_first_data(void *ctx, struct sp_net *net, const uint8_t *pkt, uint32_t len,
                            const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst)
{
    (void)ctx;
    (void)net;
    (void)src;
    (void)dst;
    if (!dropped_first && sp_chunk_type(pkt, len, 0) == NS_SCTP_CT_DATA) {
        dropped_first = 1;
        return false;
    }
    return true;
}

/* Three SACKs reporting the same hole: fast retransmit long before T3. */
static void test_fast_retransmit(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.nodelay = 1;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 53, &pa, NULL, 1, 1, DELAY));
    dropped_first = 0;
    p.net->filter = drop_first_data;
    uint64_t t0 = p.net->now;
    char buf[1000];
    for (int i = 0; i < 12; i++) {
        memset(buf, i, sizeof(buf));
        assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, buf, sizeof(buf), 0, t0), 0);
    }
    sp_run_until(p.net, t0 + 500 * NS_MS);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.fast_retransmits, 1);
    assert_int_equal(ia.stats.retransmissions, 1);
    assert_int_equal(ia.stats.t3_timeouts, 0);
    sp_run_until(p.net, t0 + 2 * NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 12);
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.t3_timeouts, 0);
    assert_int_equal(ia.outstanding_chunks, 0);
    sp_pair_free(&p);
}

/* One output pass sends at most Max.Burst (4) packets, though the initial
 * cwnd (4380 bytes) would let a fifth 1000-byte chunk go. */
static void test_max_burst(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.nodelay = 1;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 54, &pa, NULL, 1, 1, DELAY));
    p.a->capture = true;
    char buf[1000] = {0};
    for (int i = 0; i < 9; i++)
        ns_sctp_send(p.aa, 0, 0, NS_SCTP_SEND_MORE, buf, sizeof(buf), 0, p.net->now);
    assert_int_equal(p.a->n_out, 0); /* corked */
    ns_sctp_send(p.aa, 0, 0, 0, buf, sizeof(buf), 0, p.net->now);
    assert_int_equal(p.a->n_out, 4);
    sp_pair_free(&p);
}

/* The bundling delay: a second small message waits for the SACK of the
 * first unless nodelay is set. */
static void test_nagle(void **state)
{
    (void)state;
    for (int nodelay = 0; nodelay <= 1; nodelay++) {
        struct ns_sctp_params pa;
        ns_sctp_params_default(&pa);
        pa.nodelay = (uint32_t)nodelay;
        struct sp_pair p;
        assert_true(sp_pair_setup(&p, 55, &pa, NULL, 1, 1, DELAY));
        p.a->capture = true;
        uint64_t t0 = p.net->now;
        ns_sctp_send(p.aa, 0, 0, 0, "first", 5, 0, t0);
        ns_sctp_send(p.aa, 0, 0, 0, "second", 6, 0, t0);
        ns_sctp_send(p.aa, 0, 0, 0, "third", 5, 0, t0);
        if (nodelay) {
            assert_int_equal(p.a->n_out, 3);
        } else {
            assert_int_equal(p.a->n_out, 1);
            /* After the (delayed) SACK the two wait no longer, together. */
            p.a->capture = false;
            sp_out_forward(p.a, 0);
            p.a->capture = true;
            sp_run_until(p.net, t0 + 2 * DELAY + 200 * NS_MS);
            assert_int_equal(p.a->n_out, 1);
            uint32_t len;
            const uint8_t *k = sp_out_bytes(p.a, 0, &len);
            assert_int_equal(sp_chunk_count(k, len), 2);
        }
        sp_pair_free(&p);
    }
}

static void test_send_errors(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.max_message_bytes = 250000;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 56, &pa, NULL, 1, 1, DELAY));
    static char big[250001];
    assert_int_equal(ns_sctp_send(p.aa, 10, 0, 0, "x", 1, 0, p.net->now), -EINVAL);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 0, 0, p.net->now), -EINVAL);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, 250001, 0, p.net->now), -EMSGSIZE);
    /* An empty send buffer takes a message larger than itself. */
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, 250000, 0, p.net->now), 0);
    assert_int_equal(ns_sctp_send_space(p.aa), 0);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 1, 0, p.net->now), -EAGAIN);
    for (int i = 0; i < 20; i++) {
        sp_run_for(p.net, 50 * NS_MS);
        sp_drain(p.net, p.ab);
    }
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_WRITABLE), 1);
    assert_true(ns_sctp_send_space(p.aa) > 0);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 1, 0, p.net->now), 0);
    ns_sctp_shutdown(p.aa, p.net->now);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 1, 0, p.net->now), -EPIPE);
    for (int i = 0; i < 20; i++) {
        sp_run_for(p.net, 50 * NS_MS);
        sp_drain(p.net, p.ab);
    }
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 1, 0, p.net->now), -ENOTCONN);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    sp_pair_free(&p);
}

static struct ns_pkt *data_pkt(uint32_t vtag, uint32_t tsn, uint16_t sid, const char *s)
{
    struct ns_buf *b = ns_buf_alloc(64);
    size_t n = strlen(s);
    memcpy(b->data, s, n);
    struct ns_sctp_chunk_data d = {.tsn = tsn,
                                   .sid = sid,
                                   .flags = NS_SCTP_DATA_B | NS_SCTP_DATA_E,
                                   .buf = b,
                                   .len = (uint32_t)n};
    struct ns_sctp_writer w;
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, vtag);
    ns_sctp_wr_data(&w, &d);
    ns_buf_put(b);
    return ns_sctp_wr_finish(&w);
}

/* 6.5: DATA for a stream that does not exist is acknowledged, dropped and
 * reported in an ERROR bundled with the SACK. */
static void test_invalid_stream(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 57, NULL, NULL, 1, 1, DELAY));
    p.a->capture = p.b->capture = true;
    struct ns_sctp_assoc_info ia, ib;
    ns_sctp_assoc_info(p.aa, &ia);
    ns_sctp_assoc_info(p.ab, &ib);
    struct ns_sctp_addr src = A(), dst = B();
    ns_sctp_input(&p.b->sctp, data_pkt(ib.local_vtag, ia.next_tsn, 20, "nowhere"), &src, &dst,
                  p.net->now);
    assert_int_equal(p.b->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(sp_chunk_count(k, len), 2);
    assert_int_equal(sp_chunk_type(k, len, 0), NS_SCTP_CT_ERROR);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_INVALID_STREAM);
    assert_int_equal(sp_rd16(k + 18), 8);
    assert_int_equal(sp_rd16(k + 20), 20);
    uint32_t off = sp_chunk_off(k, len, 1);
    assert_int_equal(k[off], NS_SCTP_CT_SACK);
    assert_int_equal(sp_rd32(k + off + 4), ia.next_tsn);
    ns_sctp_assoc_info(p.ab, &ib);
    assert_int_equal(ib.stats.drop_bad_sid, 1);
    assert_int_equal(sp_drain(p.net, p.ab), 0);
    sp_pair_free(&p);
}

/* 6.2: an empty DATA chunk aborts with No User Data naming its TSN. */
static void test_no_user_data(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 58, NULL, NULL, 1, 1, DELAY));
    p.b->capture = true;
    struct ns_sctp_assoc_info ia, ib;
    ns_sctp_assoc_info(p.aa, &ia);
    ns_sctp_assoc_info(p.ab, &ib);
    uint8_t raw[28] = {0};
    raw[0] = SP_PORT_A >> 8;
    raw[1] = SP_PORT_A & 0xff;
    raw[2] = SP_PORT_B >> 8;
    raw[3] = SP_PORT_B & 0xff;
    for (int i = 0; i < 4; i++) {
        raw[4 + i] = (uint8_t)(ib.local_vtag >> (24 - 8 * i));
        raw[16 + i] = (uint8_t)(ia.next_tsn >> (24 - 8 * i));
    }
    raw[12] = NS_SCTP_CT_DATA;
    raw[13] = 3;
    raw[15] = 16;
    sp_fix_csum(raw, sizeof(raw));
    struct ns_sctp_addr src = A(), dst = B();
    sp_inject(p.net, p.b, raw, sizeof(raw), &src, &dst);
    assert_int_equal(ns_sctp_assoc_state(p.ab), NS_SCTP_CLOSED);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(sp_rd32(k + 4), ib.peer_vtag);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_NO_USER_DATA);
    assert_int_equal(sp_rd32(k + 20), ia.next_tsn);
    const struct ns_sctp_event *e = sp_last_ev(p.b, NS_SCTP_EV_COMM_LOST);
    assert_int_equal(e->reason, NS_SCTP_R_PROTOCOL);
    assert_int_equal(e->cause, NS_SCTP_CAUSE_NO_USER_DATA);
    sp_out_forward(p.b, 0);
    sp_run_for(p.net, DELAY);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    sp_pair_free(&p);
}

/* A reader that stops reading closes the window; the sender probes without
 * counting errors, and everything arrives once the reader resumes. */
static void test_zero_window(void **state)
{
    (void)state;
    struct ns_sctp_params pb;
    ns_sctp_params_default(&pb);
    pb.rcvbuf_bytes = 8000;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 59, NULL, &pb, 1, 1, DELAY));
    char buf[1000];
    for (int i = 0; i < 20; i++) {
        memset(buf, i, sizeof(buf));
        assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, buf, sizeof(buf), 0, p.net->now), 0);
    }
    sp_run_for(p.net, 120 * NS_SEC);
    struct ns_sctp_assoc_info ia, ib;
    ns_sctp_assoc_info(p.aa, &ia);
    ns_sctp_assoc_info(p.ab, &ib);
    assert_int_equal(ia.state, NS_SCTP_ESTABLISHED);
    assert_int_equal(ia.peer_rwnd, 0);
    assert_int_equal(ia.errors, 0);
    assert_true(ib.rcv_unread >= 4000);
    assert_true(ib.stats.drop_zero_window > 0);
    uint32_t got = 0;
    for (int i = 0; i < 60 && got < 20; i++) {
        got += sp_drain(p.net, p.ab);
        sp_run_for(p.net, NS_SEC);
    }
    assert_int_equal(got, 20);
    sp_pair_free(&p);
}

/* Found by tests/integration/test_hostile_sctp.sh: with the RTO at
 * rto_max (no more back-off), a T3 timer run later than its deadline by more
 * than the probe's round trip found the last SACK "older than an RTO", so
 * every zero-window probe counted as an error although the peer SACKed each
 * one (6.1 A says they should not count): the association would die after
 * association_max_retrans probes. Here the event loop wakes up 3 * DELAY
 * after each of A's deadlines, the daemon's situation under load. */
static void test_zero_window_late_timers(void **state)
{
    (void)state;
    struct ns_sctp_params pa, pb;
    ns_sctp_params_default(&pa);
    pa.rto_initial_ms = pa.rto_min_ms = pa.rto_max_ms = 1000;
    pa.hb_interval_ms = 86400000;
    pa.nodelay = 1;
    ns_sctp_params_default(&pb);
    pb.rcvbuf_bytes = 8000;
    pb.hb_interval_ms = 86400000;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 61, &pa, &pb, 1, 1, DELAY));
    char buf[1000];
    for (int i = 0; i < 20; i++) {
        memset(buf, i, sizeof(buf));
        assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, buf, sizeof(buf), 0, p.net->now), 0);
    }
    sp_run_for(p.net, 500 * NS_MS);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.peer_rwnd, 0);
    for (int i = 0; i < 15; i++) {
        uint64_t d = sp_next_deadline(p.a);
        if (d == NS_TIME_NEVER)
            break; /* A gave up: checked below */
        sp_run_until(p.net, d - 1);
        p.net->now = d + 3 * DELAY;
        sp_timers(p.net);
        sp_run_until(p.net, p.net->now);
    }
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.state, NS_SCTP_ESTABLISHED);
    assert_true(ia.stats.t3_timeouts >= 12);
    assert_int_equal(ia.errors, 0);
    assert_int_equal(ia.peer_rwnd, 0);
    sp_pair_free(&p);
}

/* A message larger than half the receive buffer is delivered in pieces. */
static void test_partial_delivery(void **state)
{
    (void)state;
    struct ns_sctp_params pb;
    ns_sctp_params_default(&pb);
    pb.rcvbuf_bytes = 65536;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 60, NULL, &pb, 1, 1, DELAY));
    enum { N = 200000 };
    uint8_t *msg = malloc(N), *got = malloc(N);
    for (uint32_t i = 0; i < N; i++)
        msg[i] = (uint8_t)(i * 7 + (i >> 9));
    assert_int_equal(ns_sctp_send(p.aa, 1, 99, 0, msg, N, 0, p.net->now), 0);
    uint32_t off = 0, pieces = 0;
    bool eor = false;
    for (int i = 0; i < 200 && !eor; i++) {
        sp_run_for(p.net, 50 * NS_MS);
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_recv_take(p.ab, &q);
        struct ns_sctp_rmsg *m;
        while ((m = ns_sctp_rmsgq_pop(&q))) {
            assert_false(eor);
            assert_int_equal(m->sid, 1);
            assert_int_equal(m->ppid, 99);
            assert_true(off + m->len <= N);
            ns_sctp_rmsg_copy(m, 0, got + off, m->len);
            off += m->len;
            pieces++;
            if (m->flags & NS_SCTP_RMSG_EOR)
                eor = true;
            else
                assert_true(m->flags & NS_SCTP_RMSG_PARTIAL);
            ns_sctp_msg_free(p.ab, m, p.net->now);
        }
    }
    assert_true(eor);
    assert_int_equal(off, N);
    assert_true(pieces > 1);
    assert_memory_equal(got, msg, N);
    free(msg);
    free(got);
    sp_pair_free(&p);
}

/* Heartbeats on an idle path every RTO + HB.interval with +-50% RTO of
 * jitter; the HEARTBEAT ACK gives an RTT sample. */
static void test_heartbeat(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 61, NULL, NULL, 1, 1, DELAY));
    uint64_t up = p.net->now - DELAY; /* a went ESTABLISHED on the COOKIE ACK */
    p.a->capture = true;
    sp_run_until(p.net, up + 30 * NS_SEC + NS_SEC / 2 - 1);
    assert_null(first_of(p.a, NS_SCTP_CT_HEARTBEAT, NULL));
    sp_run_until(p.net, up + 30 * NS_SEC + 3 * NS_SEC / 2);
    size_t i;
    const uint8_t *hb = first_of(p.a, NS_SCTP_CT_HEARTBEAT, &i);
    assert_non_null(hb);
    uint64_t sent = p.a->out[i].at;
    assert_int_equal(sp_rd16(hb + 4), NS_SCTP_PT_HEARTBEAT_INFO);
    assert_int_equal(sp_rd16(hb + 6), 4 + 28);
    p.a->capture = false;
    /* The RTT includes the time the test held the HEARTBEAT. */
    uint64_t rtt = p.net->now - sent + 2 * DELAY;
    sp_out_forward(p.a, i);
    sp_out_clear(p.a);
    sp_run_for(p.net, 3 * DELAY);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.hb_sent, 1);
    assert_int_equal(ia.stats.hb_acked, 1);
    assert_int_equal(ia.srtt_us, rtt);
    assert_int_equal(ia.paths[0].rttvar_us, rtt / 2);
    assert_int_equal(ia.rto_us, rtt * 3 > NS_SEC ? rtt * 3 : NS_SEC); /* RTO.Min 1 s */
    /* The next one: within [RTO/2, 3 RTO/2] + 30 s of the last. */
    p.a->capture = true;
    sp_run_until(p.net, sent + 30 * NS_SEC + NS_SEC / 2 - 1);
    assert_null(first_of(p.a, NS_SCTP_CT_HEARTBEAT, NULL));
    sp_run_until(p.net, sent + 30 * NS_SEC + 3 * NS_SEC / 2);
    assert_non_null(first_of(p.a, NS_SCTP_CT_HEARTBEAT, NULL));
    sp_out_clear(p.a);
    /* A path carrying data is not idle: no heartbeats while it flows. */
    p.a->capture = false;
    ns_sctp_assoc_info(p.aa, &ia);
    uint64_t hb0 = ia.stats.hb_sent;
    for (int k = 0; k < 30; k++) {
        ns_sctp_send(p.aa, 0, 0, 0, "tick", 4, 0, p.net->now);
        sp_run_for(p.net, 5 * NS_SEC);
        sp_drain(p.net, p.ab);
    }
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.hb_sent, hb0);
    sp_pair_free(&p);
}

/* Unanswered heartbeats: the path goes inactive after Path.Max.Retrans
 * (5) errors, the association dies after Association.Max.Retrans (10). */
static void test_heartbeat_failure(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 62, NULL, NULL, 1, 1, DELAY));
    sp_addr_down(p.net, SP_IP_B, true);
    sp_run_for(p.net, 3600 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.hb_sent, 11);
    assert_int_equal(ia.stats.hb_timeouts, 11);
    assert_int_equal(ia.stats.path_failures, 1);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_COMM_LOST);
    assert_int_equal(e->reason, NS_SCTP_R_MAX_RETRANS);
    /* UNREACHABLE came before COMM_LOST. */
    size_t iu = 0, il = 0;
    for (size_t i = 0; i < p.a->n_ev; i++) {
        if (p.a->ev[i].type == NS_SCTP_EV_PEER_ADDR_CHANGE)
            iu = i;
        if (p.a->ev[i].type == NS_SCTP_EV_COMM_LOST)
            il = i;
    }
    assert_true(iu > 0 && iu < il);
    sp_pair_free(&p);
}

static uint32_t last_dst;
static bool note_dst(void *ctx, struct sp_net *net, const uint8_t *pkt, uint32_t len,
                     const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst)
{
    (void)ctx;
    (void)net;
    (void)src;
    if (sp_chunk_type(pkt, len, 0) == NS_SCTP_CT_DATA)
        last_dst = dst->addr;
    return true;
}

/* b has two addresses: a confirms the second by heartbeat, and when the
 * primary is cut, retransmissions go to the alternate path (6.4), then new
 * data too once the primary is inactive (8.2). */
static void test_multihome_failover(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 63, NULL, NULL, 1, 2, DELAY));
    sp_run_for(p.net, NS_SEC);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.n_paths, 2);
    assert_int_equal(ia.paths[0].addr.addr, SP_IP_B);
    assert_true(ia.paths[0].primary);
    assert_int_equal(ia.paths[1].addr.addr, SP_IP_B2);
    assert_true(ia.paths[1].confirmed);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_PEER_ADDR_CHANGE);
    assert_non_null(e);
    assert_int_equal(e->addr.addr, SP_IP_B2);
    assert_int_equal(e->addr_state, NS_SCTP_ADDR_CONFIRMED);

    p.net->filter = note_dst;
    sp_addr_down(p.net, SP_IP_B, true);
    uint64_t t0 = p.net->now;
    ns_sctp_send(p.aa, 0, 0, 0, "via b2", 6, 0, t0);
    sp_run_until(p.net, t0 + NS_SEC + 3 * DELAY);
    assert_int_equal(last_dst, SP_IP_B2);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.paths[0].errors, 1);
    assert_int_equal(ia.paths[1].errors, 0);
    /* Keep sending until the primary is given up: then DATA goes to B2
     * directly. */
    uint32_t got = 1;
    for (int i = 0; i < 40; i++) {
        ns_sctp_send(p.aa, 0, 0, 0, "more", 4, 0, p.net->now);
        sp_run_for(p.net, 5 * NS_SEC);
        got += sp_drain(p.net, p.ab);
    }
    assert_int_equal(got, 41);
    ns_sctp_assoc_info(p.aa, &ia);
    assert_false(ia.paths[0].active);
    assert_true(ia.paths[1].active);
    assert_int_equal(ia.state, NS_SCTP_ESTABLISHED);
    sp_pair_free(&p);
}

static uint32_t max_len;
static bool note_len(void *ctx, struct sp_net *net, const uint8_t *pkt, uint32_t len,
                     const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst)
{
    (void)ctx;
    (void)net;
    (void)pkt;
    (void)dst;
    if (src->addr == SP_IP_A && len > max_len)
        max_len = len;
    return true;
}

static void test_pmtu(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 64, NULL, NULL, 1, 1, DELAY));
    struct ns_sctp_addr pb = B(), nowhere = sp_addr(SP_IP(198, 18, 9, 9));
    assert_int_equal(ns_sctp_set_pmtu(p.aa, &nowhere, 600), -ENOENT);
    assert_int_equal(ns_sctp_set_pmtu(p.aa, &pb, 100), -EINVAL);
    assert_int_equal(ns_sctp_set_pmtu(p.aa, &pb, 600), 0);
    max_len = 0;
    p.net->filter = note_len;
    enum { N = 5000 };
    static uint8_t msg[N];
    for (int i = 0; i < N; i++)
        msg[i] = (uint8_t)(i ^ 0x5a);
    ns_sctp_send(p.aa, 0, 0, 0, msg, N, 0, p.net->now);
    sp_run_for(p.net, NS_SEC);
    assert_true(max_len <= 600);
    assert_true(max_len > 500);
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    ns_sctp_recv_take(p.ab, &q);
    assert_int_equal(q.count, 1);
    assert_int_equal(q.head->len, N);
    assert_true(q.head->nchunks >= N / (600 - 28));
    static uint8_t got[N];
    ns_sctp_rmsg_copy(q.head, 0, got, N);
    assert_memory_equal(got, msg, N);
    ns_sctp_msg_free(p.ab, ns_sctp_rmsgq_pop(&q), p.net->now);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.paths[0].pmtu, 600);
    sp_pair_free(&p);
}

/* Messages that never left are reported with their contexts, in order. */
static void test_send_failed_unsent(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 65, NULL, NULL, 1, 1, DELAY);
    p.a->capture = true;
    struct ns_sctp_addr pb = B();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
    for (uint32_t i = 1; i <= 3; i++)
        assert_int_equal(ns_sctp_send(aa, (uint16_t)i, 100 + i, 0, "queued", 6, i, p.net->now), 0);
    static char big[5000];
    assert_int_equal(ns_sctp_send(aa, 0, 0, 0, big, sizeof(big), 4, p.net->now), 0);
    ns_sctp_abort(aa, NULL, 0, p.net->now);
    uint32_t ctx = 1;
    for (size_t i = 0; i < p.a->n_ev; i++) {
        const struct ns_sctp_event *e = &p.a->ev[i];
        if (e->type != NS_SCTP_EV_SEND_FAILED)
            continue;
        assert_int_equal(e->context, ctx);
        assert_int_equal(e->flags, NS_SCTP_SF_UNSENT);
        assert_int_equal(e->len, ctx == 4 ? 5000 : 6);
        if (ctx < 4) {
            assert_int_equal(e->sid, ctx);
            assert_int_equal(e->ppid, 100 + ctx);
        }
        ctx++;
    }
    assert_int_equal(ctx, 5);
    assert_int_equal(p.a->ev[p.a->n_ev - 1].type, NS_SCTP_EV_CANT_STR_ASSOC);
    sp_pair_free(&p);
}

/* Counters and info for `nstack sctp show`. */
static void test_info_counters(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 66, NULL, NULL, 1, 1, DELAY));
    ns_sctp_send(p.aa, 0, 0, 0, "count me", 8, 0, p.net->now);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    struct ns_ctr_group g[8];
    size_t n = ns_sctp_assoc_counters(p.aa, g, 8);
    assert_int_equal(n, 5);
    assert_string_equal(g[0].name, "assoc");
    assert_string_equal(g[0].names[0], "rx_packets");
    assert_string_equal(g[1].name, "retx");
    bool found = false;
    for (size_t i = 0; i < g[0].n; i++) {
        if (!strcmp(g[0].names[i], "tx_data")) {
            assert_int_equal(g[0].vals[i], 1);
            found = true;
        }
    }
    assert_true(found);
    n = ns_sctp_counters(&p.a->sctp, g, 8);
    assert_int_equal(n, 1);
    assert_string_equal(g[0].name, "sctp");
    assert_int_equal(g[0].n, sizeof(struct ns_sctp_stats) / sizeof(uint64_t));
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.local_port, SP_PORT_A);
    assert_int_equal(ia.peer_port, SP_PORT_B);
    assert_int_equal(ia.flight, 0);
    assert_int_equal(ia.cum_ack, ia.next_tsn - 1);
    assert_int_equal(ia.next_tsn, ia.local_initial_tsn + 1);
    assert_int_equal(ia.stats.tx_data, 1);
    assert_true(ia.stats.rx_sacks >= 1);
    assert_string_equal(ns_sctp_state_name(ia.state), "ESTABLISHED");
    assert_ptr_equal(ns_sctp_assoc_next(&p.a->sctp, NULL), p.aa);
    assert_null(ns_sctp_assoc_next(&p.a->sctp, p.aa));
    sp_pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delayed_sack),
        cmocka_unit_test(test_t3_retransmit),
        cmocka_unit_test(test_t3_one_packet),
        cmocka_unit_test(test_fast_retransmit),
        cmocka_unit_test(test_max_burst),
        cmocka_unit_test(test_nagle),
        cmocka_unit_test(test_send_errors),
        cmocka_unit_test(test_invalid_stream),
        cmocka_unit_test(test_no_user_data),
        cmocka_unit_test(test_zero_window),
        cmocka_unit_test(test_zero_window_late_timers),
        cmocka_unit_test(test_partial_delivery),
        cmocka_unit_test(test_heartbeat),
        cmocka_unit_test(test_heartbeat_failure),
        cmocka_unit_test(test_multihome_failover),
        cmocka_unit_test(test_pmtu),
        cmocka_unit_test(test_send_failed_unsent),
        cmocka_unit_test(test_info_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
