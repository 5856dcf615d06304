/* SCTP reassembly and inbound streams: fragments in any order, ordered and
 * unordered delivery, SSN wrap, interleaved streams, the memory bound,
 * partial delivery and receive window accounting (RFC 9260 6.2, 6.5, 6.6,
 * 6.9; RFC 6458 8.1.21). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/reasm.h"

#define BIG (1u << 20)

static struct ns_buf *pbuf; /* pattern bytes every chunk points into */

static struct ns_sctp_params params(void)
{
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    return p;
}

static enum ns_sctp_rx_verdict feed_x(struct ns_sctp_reasm *r, uint32_t tsn, uint16_t sid,
                                      uint16_t ssn, uint8_t flags, uint32_t off, uint32_t len,
                                      bool in_seq)
{
    struct ns_sctp_chunk_data d = {.tsn = tsn,
                                   .sid = sid,
                                   .ssn = ssn,
                                   .ppid = 1000u + sid,
                                   .flags = flags,
                                   .buf = pbuf,
                                   .off = off,
                                   .len = len};
    return ns_sctp_reasm_rx(r, &d, in_seq);
}

static enum ns_sctp_rx_verdict feed(struct ns_sctp_reasm *r, uint32_t tsn, uint16_t sid,
                                    uint16_t ssn, uint8_t flags, uint32_t off, uint32_t len)
{
    return feed_x(r, tsn, sid, ssn, flags, off, len, false);
}

#define BE (NS_SCTP_DATA_B | NS_SCTP_DATA_E)

/* Take the next delivered message, check its header and that its payload
 * is pattern bytes [off, off + len). */
static void expect_msg(struct ns_sctp_reasm *r, struct ns_sctp_rmsgq *q, uint16_t sid, uint16_t ssn,
                       uint16_t flags, uint32_t off, uint32_t len)
{
    if (!q->head)
        ns_sctp_reasm_take(r, q);
    struct ns_sctp_rmsg *m = ns_sctp_rmsgq_pop(q);
    assert_non_null(m);
    assert_int_equal(m->sid, sid);
    assert_int_equal(m->ssn, ssn);
    assert_int_equal(m->ppid, 1000u + sid);
    assert_int_equal(m->flags, flags);
    assert_int_equal(m->len, len);
    uint8_t *tmp = malloc(len + 1);
    assert_non_null(tmp);
    assert_int_equal(ns_sctp_rmsg_copy(m, 0, tmp, len + 1), len);
    assert_memory_equal(tmp, pbuf->data + off, len);
    free(tmp);
    ns_sctp_reasm_msg_free(r, m);
}

static void expect_none(struct ns_sctp_reasm *r, struct ns_sctp_rmsgq *q)
{
    ns_sctp_reasm_take(r, q);
    assert_null(q->head);
}

static int setup(void **state)
{
    (void)state;
    pbuf = ns_buf_alloc(BIG + 65536);
    for (uint32_t i = 0; i < pbuf->cap; i++)
        pbuf->data[i] = (uint8_t)(i * 13 + (i >> 9));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(pbuf->refcnt, 1); /* every chunk reference released */
    ns_buf_put(pbuf);
    return 0;
}

static void test_ordered_single(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 2), 0);
    assert_int_equal(feed(&r, 1, 0, 0, BE, 0, 30), NS_SCTP_RX_OK);
    assert_true(ns_sctp_reasm_has_ready(&r));
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 0, 30);
    /* SSN 2 before 1: held until 1 arrives, then both in order. */
    assert_int_equal(feed(&r, 3, 0, 2, BE, 100, 20), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 4, 0, 3, BE, 200, 20), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 2, 0, 1, BE, 50, 10), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 1, NS_SCTP_RMSG_EOR, 50, 10);
    expect_msg(&r, &q, 0, 2, NS_SCTP_RMSG_EOR, 100, 20);
    expect_msg(&r, &q, 0, 3, NS_SCTP_RMSG_EOR, 200, 20);
    expect_none(&r, &q);
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 0), 4);
    assert_int_equal(r.stats.msgs_delivered, 4);
    assert_int_equal(r.held_bytes, 0);
    assert_int_equal(r.unread_bytes, 0);
    ns_sctp_reasm_free(&r);
}

static void test_fragments_every_order(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    static const uint8_t fl[4] = {NS_SCTP_DATA_B, 0, 0, NS_SCTP_DATA_E};
    static const uint32_t lens[4] = {100, 200, 300, 50};
    static const uint32_t offs[4] = {1000, 1100, 1300, 1600};
    int perm[4] = {0, 1, 2, 3};
    int count = 0;
    /* All 24 permutations (Heap's algorithm, iterative). */
    int c[4] = {0};
    int i = 0;
    for (;;) {
        struct ns_sctp_reasm r;
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        assert_int_equal(ns_sctp_reasm_init(&r, &p, 4), 0);
        for (int k = 0; k < 4; k++) {
            int f = perm[k];
            assert_int_equal(feed(&r, 10 + (uint32_t)f, 3, 0, fl[f], offs[f], lens[f]),
                             NS_SCTP_RX_OK);
            if (k < 3)
                expect_none(&r, &q);
        }
        expect_msg(&r, &q, 3, 0, NS_SCTP_RMSG_EOR, 1000, 650);
        expect_none(&r, &q);
        assert_int_equal(r.held_bytes, 0);
        assert_int_equal(r.held_mem, 0);
        assert_int_equal(r.chunk_pool.in_use, 0);
        ns_sctp_reasm_free(&r);
        count++;
        /* next permutation */
        while (i < 4 && c[i] >= i) {
            c[i] = 0;
            i++;
        }
        if (i >= 4)
            break;
        int j = (i % 2) ? c[i] : 0;
        int t = perm[j];
        perm[j] = perm[i];
        perm[i] = t;
        c[i]++;
        i = 0;
    }
    assert_int_equal(count, 24);
}

static void test_unordered(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 2), 0);
    /* Ordered SSN 0 is incomplete (TSN 1 missing). */
    assert_int_equal(feed(&r, 2, 0, 0, NS_SCTP_DATA_E, 10, 10), NS_SCTP_RX_OK);
    /* Unordered messages go out at once, fragmented or not, in arrival order. */
    assert_int_equal(feed(&r, 5, 0, 0, BE | NS_SCTP_DATA_U, 300, 7), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR | NS_SCTP_RMSG_UNORDERED, 300, 7);
    assert_int_equal(feed(&r, 4, 0, 0, NS_SCTP_DATA_E | NS_SCTP_DATA_U, 250, 5), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 3, 0, 0, NS_SCTP_DATA_B | NS_SCTP_DATA_U, 200, 50), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR | NS_SCTP_RMSG_UNORDERED, 200, 55);
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 0), 0);
    assert_int_equal(feed(&r, 1, 0, 0, NS_SCTP_DATA_B, 0, 10), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 0, 20);
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 0), 1);
    ns_sctp_reasm_free(&r);
}

static void test_ssn_wrap(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 1), 0);
    r.streams[0].next_ssn = 65534;
    assert_int_equal(feed(&r, 3, 0, 0, BE, 30, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 2, 0, 65535, BE, 20, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 4, 0, 1, BE, 40, 10), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 1, 0, 65534, BE, 10, 10), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 65534, NS_SCTP_RMSG_EOR, 10, 10);
    expect_msg(&r, &q, 0, 65535, NS_SCTP_RMSG_EOR, 20, 10);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 30, 10);
    expect_msg(&r, &q, 0, 1, NS_SCTP_RMSG_EOR, 40, 10);
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 0), 2);
    /* 65535 is now behind: reusing it is a protocol violation. */
    assert_int_equal(feed(&r, 5, 0, 65535, BE, 0, 10), NS_SCTP_RX_INVALID);
    ns_sctp_reasm_free(&r);
}

static void test_interleaved_streams(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 3), 0);
    /* Stream 0: TSN 1-3, stream 2: TSN 4-6, arriving 4 1 5 2 6 3. */
    assert_int_equal(feed(&r, 4, 2, 0, NS_SCTP_DATA_B, 400, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 1, 0, 0, NS_SCTP_DATA_B, 100, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 5, 2, 0, 0, 410, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 2, 0, 0, 0, 110, 10), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 6, 2, 0, NS_SCTP_DATA_E, 420, 10), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 2, 0, NS_SCTP_RMSG_EOR, 400, 30);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 3, 0, 0, NS_SCTP_DATA_E, 120, 10), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 100, 30);
    /* Stream 1 unaffected. */
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 1), 0);
    ns_sctp_reasm_free(&r);
}

static void test_invalid_input(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 2), 0);
    assert_int_equal(feed(&r, 1, 2, 0, BE, 0, 10), NS_SCTP_RX_BAD_SID);
    assert_int_equal(feed(&r, 1, 65535, 0, BE, 0, 10), NS_SCTP_RX_BAD_SID);
    assert_int_equal(feed(&r, 1, 0, 0, BE, 0, 0), NS_SCTP_RX_INVALID);
    assert_int_equal(feed(&r, 1, 0, 0, BE, pbuf->cap - 5, 6), NS_SCTP_RX_INVALID);
    /* B then B at the next TSN: the first message can never end. */
    assert_int_equal(feed(&r, 5, 0, 0, NS_SCTP_DATA_B, 0, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 5, 0, 0, NS_SCTP_DATA_B, 0, 10), NS_SCTP_RX_DUP);
    assert_int_equal(feed(&r, 6, 0, 1, NS_SCTP_DATA_B, 0, 10), NS_SCTP_RX_INVALID);
    /* Middle fragment with another SSN, or flipping U. */
    assert_int_equal(feed(&r, 6, 0, 1, 0, 0, 10), NS_SCTP_RX_INVALID);
    assert_int_equal(feed(&r, 6, 0, 0, NS_SCTP_DATA_U, 0, 10), NS_SCTP_RX_INVALID);
    /* E at 8, then a middle fragment at 9 (no B after an E). */
    assert_int_equal(feed(&r, 8, 0, 0, NS_SCTP_DATA_E, 20, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 9, 0, 0, 0, 0, 10), NS_SCTP_RX_INVALID);
    /* Nothing was delivered or leaked by the rejects. */
    assert_int_equal(feed(&r, 6, 0, 0, 0, 10, 5), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 7, 0, 0, 0, 15, 5), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 0, 30);
    assert_int_equal(r.stats.bad_sid, 2);
    assert_int_equal(r.stats.invalid, 6);
    assert_int_equal(r.stats.dup, 1);
    assert_int_equal(r.held_bytes, 0);
    ns_sctp_reasm_free(&r);
}

static void test_memory_bound(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    const uint32_t cost = 100 + (uint32_t)sizeof(struct ns_sctp_rchunk);
    p.reasm_max_bytes = 5 * cost;
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 1), 0);
    /* Out-of-order fragments fill the bound; the sixth is refused. */
    for (uint32_t t = 2; t <= 6; t++)
        assert_int_equal(feed(&r, t, 0, 0, 0, 100 * t, 100), NS_SCTP_RX_OK);
    assert_int_equal(r.held_mem, 5 * cost);
    assert_int_equal(feed(&r, 7, 0, 0, 0, 700, 100), NS_SCTP_RX_NOMEM);
    assert_int_equal(r.stats.nomem, 1);
    assert_int_equal(r.held_mem, 5 * cost);
    /* The next TSN in sequence always gets in. */
    assert_int_equal(feed_x(&r, 1, 0, 0, NS_SCTP_DATA_B, 100, 100, true), NS_SCTP_RX_OK);
    assert_int_equal(r.held_mem, 6 * cost);
    assert_int_equal(feed_x(&r, 7, 0, 0, NS_SCTP_DATA_E, 700, 100, true), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 100, 700);
    assert_int_equal(r.held_mem, 0);
    assert_int_equal(feed(&r, 8, 0, 1, BE, 0, 100), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 1, NS_SCTP_RMSG_EOR, 0, 100);
    /* Allocation failure is a NOMEM verdict too. */
    ns_sctp_reasm_free(&r);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 1), 0);
    ns_alloc_fail_set(1, 0);
    assert_int_equal(feed(&r, 1, 0, 0, BE, 0, 10), NS_SCTP_RX_NOMEM);
    ns_alloc_fail_set(0, 0);
    assert_int_equal(feed(&r, 1, 0, 0, BE, 0, 10), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_EOR, 0, 10);
    ns_sctp_reasm_free(&r);
}

static void test_rwnd_accounting(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.rcvbuf_bytes = 10000;
    p.pd_point_bytes = 100000; /* capped at rcvbuf / 2 = 5000 */
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 1), 0);
    assert_int_equal(r.pd_point, 5000);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 10000);
    assert_int_equal(ns_sctp_reasm_advertise(&r, 1500), 10000);
    /* Held in reassembly. */
    assert_int_equal(feed(&r, 1, 0, 0, NS_SCTP_DATA_B, 0, 1000), NS_SCTP_RX_OK);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 9000);
    /* Delivered but not read. */
    assert_int_equal(feed(&r, 2, 0, 0, NS_SCTP_DATA_E, 1000, 1000), NS_SCTP_RX_OK);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 8000);
    assert_int_equal(r.unread_bytes, 2000);
    assert_int_equal(r.held_bytes, 0);
    ns_sctp_reasm_take(&r, &q);
    assert_int_equal(q.count, 1);
    assert_int_equal(q.bytes, 2000);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 8000);
    /* Fill to 1000 free: below min(rcvbuf/2, MTU) = 1500 -> advertise 0. */
    assert_int_equal(feed(&r, 3, 0, 1, BE, 0, 4000), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 4, 0, 2, BE, 0, 3000), NS_SCTP_RX_OK);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 1000);
    assert_int_equal(ns_sctp_reasm_advertise(&r, 1500), 0);
    assert_false(ns_sctp_reasm_window_update_due(&r, 1500));
    /* Reading 2000 bytes opens 3000 >= 1500: a window update is due. */
    ns_sctp_reasm_msg_free(&r, ns_sctp_rmsgq_pop(&q));
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 3000);
    assert_true(ns_sctp_reasm_window_update_due(&r, 1500));
    assert_int_equal(ns_sctp_reasm_advertise(&r, 1500), 3000);
    assert_false(ns_sctp_reasm_window_update_due(&r, 1500));
    /* Overrun by a peer ignoring the window: rwnd is 0, never wraps. */
    assert_int_equal(feed(&r, 5, 0, 3, BE, 0, 5000), NS_SCTP_RX_OK);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 0);
    ns_sctp_reasm_take(&r, &q);
    assert_int_equal(q.count, 3);
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&q)))
        ns_sctp_reasm_msg_free(&r, m);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 10000);
    assert_int_equal(r.unread_bytes, 0);
    ns_sctp_reasm_free(&r);
}

/* A 1 MiB message through a 64 KiB receive buffer, with a peer that never
 * exceeds the advertised window and an application that reads whatever is
 * delivered. A message on stream 1 completes while the big one is being
 * partially delivered and must come out only after its last piece. Some
 * fragments are sent out of order. */
static void test_partial_delivery_1mib(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.rcvbuf_bytes = 65536;
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 2), 0);
    assert_int_equal(r.pd_point, 32768);
    const uint32_t fsz = 1024, nfrag = BIG / fsz;
    const uint32_t small_tsn = 1 + nfrag; /* stream 1's message, after the big one */
    uint8_t *out = malloc(BIG);
    assert_non_null(out);
    uint32_t got = 0, pieces = 0, next = 0; /* next fragment index to send */
    bool small_sent = false, small_seen = false, eor_seen = false;
    while (!small_seen) {
        /* Peer: send while the window has room for a fragment. Fragments
         * k+1 and k go in swapped pairs every 50 fragments. */
        bool sent_any = false;
        while (next < nfrag && ns_sctp_reasm_rwnd(&r) >= 2 * fsz) {
            sent_any = true;
            uint32_t order[2] = {next, next + 1};
            uint32_t n = (next % 50 == 10 && next + 1 < nfrag) ? 2 : 1;
            if (n == 2) {
                order[0] = next + 1;
                order[1] = next;
            }
            for (uint32_t k = 0; k < n; k++) {
                uint32_t f = order[k];
                uint8_t fl = (f == 0 ? NS_SCTP_DATA_B : 0) | (f == nfrag - 1 ? NS_SCTP_DATA_E : 0);
                assert_int_equal(feed(&r, 1 + f, 0, 0, fl, f * fsz, fsz), NS_SCTP_RX_OK);
            }
            next += n;
            assert_true(r.held_bytes + r.unread_bytes <= p.rcvbuf_bytes);
            if (next > nfrag / 2 && !small_sent) {
                assert_int_equal(feed(&r, small_tsn, 1, 0, BE, BIG, 77), NS_SCTP_RX_OK);
                small_sent = true;
                /* Complete, but waits behind the partial delivery. */
                assert_int_equal(r.held.count, 1);
            }
        }
        /* Application: read everything delivered. */
        ns_sctp_reasm_take(&r, &q);
        struct ns_sctp_rmsg *m;
        bool progress = false;
        while ((m = ns_sctp_rmsgq_pop(&q))) {
            progress = true;
            if (m->sid == 1) {
                assert_true(eor_seen);
                assert_int_equal(m->flags, NS_SCTP_RMSG_EOR);
                assert_int_equal(m->len, 77);
                small_seen = true;
            } else {
                assert_false(eor_seen);
                assert_int_equal(m->sid, 0);
                assert_int_equal(m->ssn, 0);
                assert_true(m->flags & NS_SCTP_RMSG_PARTIAL);
                assert_int_equal(m->tsn, 1 + got / fsz);
                assert_true(got + m->len <= BIG);
                assert_int_equal(ns_sctp_rmsg_copy(m, 0, out + got, m->len), m->len);
                got += m->len;
                pieces++;
                if (m->flags & NS_SCTP_RMSG_EOR) {
                    assert_int_equal(got, BIG);
                    eor_seen = true;
                }
            }
            ns_sctp_reasm_msg_free(&r, m);
        }
        assert_true(progress || sent_any); /* else it would spin: stalled */
    }
    assert_memory_equal(out, pbuf->data, BIG);
    assert_true(small_sent);
    assert_false(ns_sctp_reasm_pd_active(&r));
    assert_int_equal(r.stats.pd_started, 1);
    assert_int_equal(r.stats.pd_pieces, pieces);
    assert_true(pieces > 20);
    assert_int_equal(r.stats.msgs_delivered, 1);
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 0), 1);
    assert_int_equal(ns_sctp_reasm_next_ssn(&r, 1), 1);
    assert_int_equal(r.held_bytes, 0);
    assert_int_equal(r.unread_bytes, 0);
    assert_int_equal(ns_sctp_reasm_rwnd(&r), 65536);
    free(out);
    ns_sctp_reasm_free(&r);
}

/* Partial delivery step by step: exact pieces, and the stream's own next
 * message waiting behind it. */
static void test_partial_delivery_pieces(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.rcvbuf_bytes = 100000;
    p.pd_point_bytes = 3000;
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 2), 0);
    /* SSN 1 of stream 0 is complete before SSN 0 starts. */
    assert_int_equal(feed(&r, 20, 0, 1, BE, 9000, 10), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 10, 0, 0, NS_SCTP_DATA_B, 0, 1000), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 12, 0, 0, 0, 2000, 1000), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 13, 0, 0, 0, 3000, 1000), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    /* 11 makes a 4000-byte prefix: the first piece. */
    assert_int_equal(feed(&r, 11, 0, 0, 0, 1000, 1000), NS_SCTP_RX_OK);
    assert_true(ns_sctp_reasm_pd_active(&r));
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_PARTIAL, 0, 4000);
    /* Stream 1 completes a message meanwhile: it waits. */
    assert_int_equal(feed(&r, 30, 1, 0, BE, 8000, 5), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 15, 0, 0, 0, 5000, 500), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 14, 0, 0, 0, 4000, 1000), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_PARTIAL, 4000, 1500);
    /* A B fragment where the next piece must go is rejected. */
    assert_int_equal(feed(&r, 16, 0, 0, NS_SCTP_DATA_B, 0, 10), NS_SCTP_RX_INVALID);
    assert_int_equal(feed(&r, 16, 0, 0, NS_SCTP_DATA_E, 5500, 100), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 0, 0, NS_SCTP_RMSG_PARTIAL | NS_SCTP_RMSG_EOR, 5500, 100);
    /* Then what waited, in completion order: stream 0 SSN 1 became
     * deliverable when the partial delivery started, stream 1 later. */
    expect_msg(&r, &q, 0, 1, NS_SCTP_RMSG_EOR, 9000, 10);
    expect_msg(&r, &q, 1, 0, NS_SCTP_RMSG_EOR, 8000, 5);
    expect_none(&r, &q);
    assert_false(ns_sctp_reasm_pd_active(&r));
    assert_int_equal(r.stats.pd_pieces, 3);

    /* Unordered messages go through partial delivery as well; a second
     * large message that crossed the point meanwhile starts right after. */
    assert_int_equal(feed(&r, 40, 1, 0, NS_SCTP_DATA_B | NS_SCTP_DATA_U, 0, 3000), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 1, 0, NS_SCTP_RMSG_PARTIAL | NS_SCTP_RMSG_UNORDERED, 0, 3000);
    assert_int_equal(feed(&r, 50, 0, 2, NS_SCTP_DATA_B, 100, 3500), NS_SCTP_RX_OK);
    expect_none(&r, &q);
    assert_int_equal(feed(&r, 41, 1, 0, NS_SCTP_DATA_E | NS_SCTP_DATA_U, 3000, 1), NS_SCTP_RX_OK);
    expect_msg(&r, &q, 1, 0, NS_SCTP_RMSG_PARTIAL | NS_SCTP_RMSG_UNORDERED | NS_SCTP_RMSG_EOR, 3000,
               1);
    expect_msg(&r, &q, 0, 2, NS_SCTP_RMSG_PARTIAL, 100, 3500);
    assert_true(ns_sctp_reasm_pd_active(&r));
    assert_int_equal(r.stats.pd_started, 3);
    /* Freeing with a partial delivery in progress releases everything. */
    assert_int_equal(feed(&r, 52, 0, 2, NS_SCTP_DATA_E, 0, 10), NS_SCTP_RX_OK);
    ns_sctp_reasm_free(&r);
}

/* The window fills with a message below the partial delivery point (other
 * data unread): partial delivery starts anyway so the association cannot
 * stall. */
static void test_partial_delivery_window_full(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    p.rcvbuf_bytes = 10000;
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, 1), 0);
    assert_int_equal(feed(&r, 1, 0, 0, BE, 0, 7000), NS_SCTP_RX_OK);
    assert_int_equal(feed(&r, 2, 0, 1, NS_SCTP_DATA_B, 0, 2000), NS_SCTP_RX_OK);
    ns_sctp_reasm_take(&r, &q); /* the application holds on to message 0 */
    assert_false(ns_sctp_reasm_pd_active(&r));
    assert_int_equal(feed(&r, 3, 0, 1, 0, 2000, 1000), NS_SCTP_RX_OK);
    assert_true(ns_sctp_reasm_pd_active(&r));
    struct ns_sctp_rmsgq q2;
    ns_sctp_rmsgq_init(&q2);
    expect_msg(&r, &q2, 0, 1, NS_SCTP_RMSG_PARTIAL, 0, 3000);
    ns_sctp_reasm_msg_free(&r, ns_sctp_rmsgq_pop(&q));
    ns_sctp_reasm_free(&r);
}

/* Random messages on several streams, ordered and unordered, fragments
 * reordered within a sliding window, a small buffer so partial delivery
 * happens often. Checks: every message delivered exactly once with its
 * bytes, ordered ones in SSN order per stream, and nothing but the pieces
 * of a partially delivered message in between its first and last piece. */
struct rmodel {
    uint16_t sid, ssn;
    bool unordered;
    uint32_t off, len, tsn, nfrags;
    bool done;
};

static void test_random_streams(void **state)
{
    (void)state;
    enum { NMSG = 3000, NSTREAM = 4 };
    static struct rmodel msgs[NMSG];
    static uint32_t msg_of_tsn[NMSG * 6 + 1];
    static struct ns_sctp_chunk_data chunks[NMSG * 6];
    uint32_t seed = 777, nchunks = 0, off = 0;
    uint16_t ssn_out[NSTREAM] = {0}, ssn_in[NSTREAM] = {0};
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 8))
    for (uint32_t i = 0; i < NMSG; i++) {
        struct rmodel *m = &msgs[i];
        m->sid = (uint16_t)(RND() % NSTREAM);
        m->unordered = RND() % 5 == 0;
        m->ssn = m->unordered ? 0 : ssn_out[m->sid]++;
        m->nfrags = 1 + RND() % 6;
        if (off + 6 * 400 > BIG)
            off = 0; /* messages may share bytes; each stays contiguous */
        m->off = off;
        m->tsn = 1 + nchunks;
        m->len = 0;
        for (uint32_t f = 0; f < m->nfrags; f++) {
            uint32_t len = 1 + RND() % 400;
            uint8_t fl = (f == 0 ? NS_SCTP_DATA_B : 0) | (f + 1 == m->nfrags ? NS_SCTP_DATA_E : 0) |
                         (m->unordered ? NS_SCTP_DATA_U : 0);
            chunks[nchunks] = (struct ns_sctp_chunk_data){.tsn = 1 + nchunks,
                                                          .sid = m->sid,
                                                          .ssn = m->ssn,
                                                          .ppid = 1000u + m->sid,
                                                          .flags = fl,
                                                          .buf = pbuf,
                                                          .off = off,
                                                          .len = len};
            msg_of_tsn[1 + nchunks] = i;
            nchunks++;
            off += len;
            m->len += len;
        }
    }
    assert_true(off <= pbuf->cap);
    /* Reorder within windows of 16 chunks. */
    for (uint32_t base = 0; base < nchunks; base += 16) {
        uint32_t n = nchunks - base < 16 ? nchunks - base : 16;
        for (uint32_t k = n - 1; k > 0; k--) {
            uint32_t j = RND() % (k + 1);
            struct ns_sctp_chunk_data t = chunks[base + k];
            chunks[base + k] = chunks[base + j];
            chunks[base + j] = t;
        }
    }
#undef RND
    struct ns_sctp_params p = params();
    p.rcvbuf_bytes = 1200; /* pd point 600 */
    struct ns_sctp_reasm r;
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    assert_int_equal(ns_sctp_reasm_init(&r, &p, NSTREAM), 0);
    uint8_t *tmp = malloc(3000);
    assert_non_null(tmp);
    int64_t pd_msg = -1; /* message being partially delivered */
    uint32_t pd_got = 0, pd_tsn = 0, delivered = 0;
    for (uint32_t c = 0; c < nchunks; c++) {
        assert_int_equal(ns_sctp_reasm_rx(&r, &chunks[c], false), NS_SCTP_RX_OK);
        ns_sctp_reasm_take(&r, &q);
        struct ns_sctp_rmsg *d;
        while ((d = ns_sctp_rmsgq_pop(&q))) {
            struct rmodel *m;
            uint32_t at;
            if (pd_msg >= 0) {
                m = &msgs[pd_msg];
                assert_true(d->flags & NS_SCTP_RMSG_PARTIAL);
                assert_int_equal(d->tsn, pd_tsn);
                at = pd_got;
            } else {
                assert_int_equal(d->tsn < NMSG * 6 + 1, 1);
                m = &msgs[msg_of_tsn[d->tsn]];
                assert_int_equal(d->tsn, m->tsn);
                assert_false(m->done);
                at = 0;
                if (!m->unordered) {
                    assert_int_equal(m->ssn, ssn_in[m->sid]);
                    ssn_in[m->sid]++;
                }
            }
            assert_int_equal(d->sid, m->sid);
            assert_int_equal(d->ssn, m->ssn);
            assert_int_equal(!!(d->flags & NS_SCTP_RMSG_UNORDERED), m->unordered);
            assert_true(at + d->len <= m->len);
            assert_int_equal(ns_sctp_rmsg_copy(d, 0, tmp, d->len), d->len);
            assert_memory_equal(tmp, pbuf->data + m->off + at, d->len);
            if (d->flags & NS_SCTP_RMSG_EOR) {
                assert_int_equal(at + d->len, m->len);
                m->done = true;
                delivered++;
                pd_msg = -1;
                pd_got = 0;
            } else {
                assert_true(d->flags & NS_SCTP_RMSG_PARTIAL);
                pd_msg = m - msgs;
                pd_got = at + d->len;
                pd_tsn = d->tsn + d->nchunks;
            }
            ns_sctp_reasm_msg_free(&r, d);
        }
    }
    assert_int_equal(delivered, NMSG);
    assert_true(r.stats.pd_started > 10);
    assert_int_equal(r.held_bytes, 0);
    assert_int_equal(r.held_mem, 0);
    assert_int_equal(r.unread_bytes, 0);
    assert_int_equal(r.chunk_pool.in_use, 0);
    assert_int_equal(r.msg_pool.in_use, 0);
    free(tmp);
    ns_sctp_reasm_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordered_single),
        cmocka_unit_test(test_fragments_every_order),
        cmocka_unit_test(test_unordered),
        cmocka_unit_test(test_ssn_wrap),
        cmocka_unit_test(test_interleaved_streams),
        cmocka_unit_test(test_invalid_input),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_rwnd_accounting),
        cmocka_unit_test(test_partial_delivery_1mib),
        cmocka_unit_test(test_partial_delivery_pieces),
        cmocka_unit_test(test_partial_delivery_window_full),
        cmocka_unit_test(test_random_streams),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
