/* SCTP send queue: SSNs per stream, fragmentation at pull time, bundling
 * limits, scheduling and send-buffer accounting (RFC 9260 6.1, 6.6, 6.9). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/sendq.h"

static struct ns_sctp_params params(void)
{
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    return p;
}

static uint8_t pattern[300000];

static void fill_pattern(void)
{
    for (size_t i = 0; i < sizeof(pattern); i++)
        pattern[i] = (uint8_t)(i * 7 + i / 251);
}

static void done(struct ns_sctp_sendq *q, struct ns_sctp_txchunk *c)
{
    ns_sctp_sendq_chunk_done(q, c);
}

static void test_ssn_and_fields(void **state)
{
    (void)state;
    fill_pattern();
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 3), 0);
    static const uint16_t sids[] = {0, 1, 0, 2, 0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(ns_sctp_sendq_enqueue(&q, sids[i], pattern + i, 30, 100 + i, 0, i), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 10, 7, NS_SCTP_SEND_UNORDERED, 9), 0);
    assert_int_equal(ns_sctp_sendq_next_ssn(&q, 0), 3);
    assert_int_equal(ns_sctp_sendq_next_ssn(&q, 1), 1);
    assert_int_equal(ns_sctp_sendq_next_ssn(&q, 2), 1);
    assert_int_equal(q.queued_bytes, 160);
    static const uint16_t ssns[] = {0, 0, 1, 0, 2};
    for (int i = 0; i < 5; i++) {
        struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, 1452);
        assert_non_null(c);
        assert_int_equal(c->d.sid, sids[i]);
        assert_int_equal(c->d.ssn, ssns[i]);
        assert_int_equal(c->d.ppid, 100 + i);
        assert_int_equal(c->d.flags, NS_SCTP_DATA_B | NS_SCTP_DATA_E);
        assert_int_equal(c->d.len, 30);
        assert_int_equal(c->context, i);
        assert_int_equal(c->d.tsn, 0);
        assert_memory_equal(c->d.buf->data + c->d.off, pattern + i, 30);
        done(&q, c);
    }
    struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, 1452);
    assert_non_null(c);
    assert_int_equal(c->d.flags, NS_SCTP_DATA_B | NS_SCTP_DATA_E | NS_SCTP_DATA_U);
    assert_int_equal(c->d.ssn, 0);
    assert_int_equal(c->d.sid, 1);
    done(&q, c);
    assert_null(ns_sctp_sendq_pull(&q, 1500, 1452));
    assert_true(ns_sctp_sendq_empty(&q));
    assert_int_equal(q.inflight_bytes, 0);
    assert_int_equal(q.queued_bytes, 0);
    assert_int_equal(q.stats.chunks_pulled, 6);
    assert_int_equal(q.stats.msgs_queued, 6);
    /* SSN wrap. */
    q.streams[2].next_ssn = 65535;
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 2, pattern, 5, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 2, pattern, 5, 0, 0, 0), 0);
    c = ns_sctp_sendq_pull(&q, 1500, 1452);
    assert_int_equal(c->d.ssn, 65535);
    done(&q, c);
    c = ns_sctp_sendq_pull(&q, 1500, 1452);
    assert_int_equal(c->d.ssn, 0);
    done(&q, c);
    assert_int_equal(ns_sctp_sendq_next_ssn(&q, 2), 1);
    ns_sctp_sendq_free(&q);
}

static void test_fragmentation(void **state)
{
    (void)state;
    fill_pattern();
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 1), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 3000, 5, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_peek_len(&q, 1200), 16 + 1200);
    static const uint32_t lens[] = {1200, 1200, 600};
    static const uint8_t flags[] = {NS_SCTP_DATA_B, 0, NS_SCTP_DATA_E};
    uint8_t out[3000];
    uint32_t got = 0;
    for (int i = 0; i < 3; i++) {
        /* Room one byte short of the chunk: nothing comes out. */
        assert_null(ns_sctp_sendq_pull(&q, ns_sctp_data_wire_len(lens[i]) - 1, 1200));
        struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, ns_sctp_data_wire_len(lens[i]), 1200);
        assert_non_null(c);
        assert_int_equal(c->d.len, lens[i]);
        assert_int_equal(c->d.flags, flags[i]);
        assert_int_equal(c->d.ssn, 0);
        assert_int_equal(c->d.ppid, 5);
        memcpy(out + got, c->d.buf->data + c->d.off, c->d.len);
        got += c->d.len;
        done(&q, c);
    }
    assert_memory_equal(out, pattern, 3000);
    assert_int_equal(q.stats.msgs_fragmented, 1);

    /* The PMTU drops after the first fragment: the rest uses the new size. */
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 2800, 6, 0, 0), 0);
    static const uint32_t lens2[] = {1200, 500, 500, 500, 100};
    uint32_t sizes[2] = {1200, 500};
    got = 0;
    for (int i = 0; i < 5; i++) {
        struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, sizes[i > 0]);
        assert_non_null(c);
        assert_int_equal(c->d.len, lens2[i]);
        assert_int_equal(c->d.ssn, 1);
        assert_int_equal(c->d.flags, (i == 0 ? NS_SCTP_DATA_B : 0) | (i == 4 ? NS_SCTP_DATA_E : 0));
        memcpy(out + got, c->d.buf->data + c->d.off, c->d.len);
        got += c->d.len;
        done(&q, c);
    }
    assert_memory_equal(out, pattern, 2800);
    assert_null(ns_sctp_sendq_pull(&q, 1500, 1200));
    assert_int_equal(ns_sctp_sendq_peek_len(&q, 1200), 0);
    ns_sctp_sendq_free(&q);
}

/* Without I-DATA a message's fragments take consecutive TSNs: nothing may
 * be pulled between them. */
static void test_fragments_not_interleaved(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 2), 0);
    assert_int_equal(ns_sctp_sendq_set_sched(&q, NS_SCTP_SCHED_RR), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 2000, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 8, 0, 0, 0), 0);
    struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, 1000);
    assert_int_equal(c->d.flags, NS_SCTP_DATA_B);
    done(&q, c);
    /* Room for stream 1's small message but not for the next fragment. */
    assert_int_equal(ns_sctp_sendq_peek_len(&q, 1000), 1016);
    assert_null(ns_sctp_sendq_pull(&q, 100, 1000));
    c = ns_sctp_sendq_pull(&q, 1500, 1000);
    assert_int_equal(c->d.sid, 0);
    assert_int_equal(c->d.flags, NS_SCTP_DATA_E);
    done(&q, c);
    c = ns_sctp_sendq_pull(&q, 100, 1000);
    assert_int_equal(c->d.sid, 1);
    done(&q, c);
    ns_sctp_sendq_free(&q);
}

static void test_bundling_room(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 1), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 30, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_data_wire_len(30), 48);
    assert_int_equal(ns_sctp_data_wire_len(1), 20);
    assert_int_equal(ns_sctp_data_wire_len(32), 48);
    uint32_t room = 100;
    struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, room, 1452);
    assert_non_null(c);
    room -= ns_sctp_data_wire_len(c->d.len);
    done(&q, c);
    c = ns_sctp_sendq_pull(&q, room, 1452); /* 52 left: fits */
    assert_non_null(c);
    room -= ns_sctp_data_wire_len(c->d.len);
    done(&q, c);
    assert_int_equal(room, 4);
    assert_null(ns_sctp_sendq_pull(&q, room, 1452));
    c = ns_sctp_sendq_pull(&q, 48, 1452);
    assert_non_null(c);
    done(&q, c);
    assert_null(ns_sctp_sendq_pull(&q, 1500, 0));
    ns_sctp_sendq_free(&q);
}

static void test_limits(void **state)
{
    (void)state;
    fill_pattern();
    struct ns_sctp_params p = params();
    p.sndbuf_bytes = 1000;
    p.max_message_bytes = 5000;
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 2), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 2, pattern, 10, 0, 0, 0), -EINVAL);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 0, 0, 0, 0), -EINVAL);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 5001, 0, 0, 0), -EMSGSIZE);
    assert_int_equal(ns_sctp_sendq_space(&q), 1000);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 600, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 401, 0, 0, 0), -EAGAIN);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 400, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_space(&q), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 1, 0, 0, 0), -EAGAIN);
    /* Pulled but unacknowledged bytes still occupy the buffer. */
    struct ns_sctp_txchunk *c1 = ns_sctp_sendq_pull(&q, 1500, 1452);
    assert_int_equal(c1->d.len, 600);
    assert_int_equal(q.queued_bytes, 400);
    assert_int_equal(q.inflight_bytes, 600);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 1, 0, 0, 0), -EAGAIN);
    ns_sctp_sendq_chunk_done(&q, c1);
    assert_int_equal(ns_sctp_sendq_space(&q), 600);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 600, 0, 0, 0), 0);
    struct ns_sctp_txchunk *c;
    while ((c = ns_sctp_sendq_pull(&q, 1500, 1452)))
        done(&q, c);
    /* An empty buffer takes a message larger than sndbuf. */
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 4000, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 1, 0, 0, 0), -EAGAIN);
    assert_int_equal(q.stats.eagain, 4);
    assert_int_equal(q.stats.einval, 2);
    assert_int_equal(q.stats.emsgsize, 1);
    /* The scheduler cannot change under queued data. */
    assert_int_equal(ns_sctp_sendq_set_sched(&q, NS_SCTP_SCHED_RR), -EBUSY);
    ns_sctp_sendq_free(&q); /* frees the queued message */
}

static void test_round_robin(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 3), 0);
    assert_int_equal(ns_sctp_sendq_set_sched(&q, NS_SCTP_SCHED_RR), 0);
    /* Enqueue order 0a 0b 0c 1a 2a; the ppid names the message. */
    static const uint16_t sids[] = {0, 0, 0, 1, 2};
    for (int i = 0; i < 5; i++)
        assert_int_equal(ns_sctp_sendq_enqueue(&q, sids[i], pattern, 10, (uint32_t)i, 0, 0), 0);
    /* Stream 1 runs dry after 1a and rejoins (ppid 9) at the end of the
     * round in progress: after 2, then 0 again. */
    static const uint32_t order[] = {0, 3, 4, 1, 9, 2};
    static const uint16_t ssn[] = {0, 0, 0, 1, 1, 2};
    for (int i = 0; i < 6; i++) {
        struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, 1452);
        assert_non_null(c);
        assert_int_equal(c->d.ppid, order[i]);
        assert_int_equal(c->d.ssn, ssn[i]);
        done(&q, c);
        if (i == 1)
            assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 10, 9, 0, 0), 0);
    }
    assert_null(ns_sctp_sendq_pull(&q, 1500, 1452));
    assert_false(q.rr_any);
    ns_sctp_sendq_free(&q);
}

static void test_buffers_shared(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 1), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 30, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 30, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 5000, 0, 0, 0), 0);
    struct ns_sctp_txchunk *a = ns_sctp_sendq_pull(&q, 1500, 1452);
    struct ns_sctp_txchunk *b = ns_sctp_sendq_pull(&q, 1500, 1452);
    struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, 1452);
    /* Small messages share the arena, one copy each, back to back. */
    assert_ptr_equal(a->d.buf, b->d.buf);
    assert_ptr_equal(a->d.buf, q.arena);
    assert_int_equal(b->d.off, a->d.off + 30);
    /* arena (sendq) + a + b */
    assert_int_equal(a->d.buf->refcnt, 3);
    /* The large one has a buffer of its own, held by the message and c. */
    assert_ptr_not_equal(c->d.buf, a->d.buf);
    assert_int_equal(c->d.buf->cap, 5000);
    assert_int_equal(c->d.buf->refcnt, 2);
    done(&q, a);
    done(&q, b);
    done(&q, c);
    assert_int_equal(q.arena->refcnt, 1);
    struct ns_sctp_txchunk *d;
    while ((d = ns_sctp_sendq_pull(&q, 1500, 1452)))
        done(&q, d);
    assert_int_equal(q.chunk_pool.in_use, 0);
    assert_int_equal(q.msg_pool.in_use, 0);
    ns_sctp_sendq_free(&q);
}

static void test_streams_and_nomem(void **state)
{
    (void)state;
    struct ns_sctp_params p = params();
    struct ns_sctp_sendq q;
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 2), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 10, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_set_streams(&q, 5), 0);
    assert_int_equal(ns_sctp_sendq_next_ssn(&q, 1), 1);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 4, pattern, 10, 0, 0, 0), 0);
    assert_int_equal(ns_sctp_sendq_set_streams(&q, 1), 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 1, pattern, 10, 0, 0, 0), -EINVAL);
    /* Queued data on a removed stream still goes out. */
    struct ns_sctp_txchunk *c = ns_sctp_sendq_pull(&q, 1500, 1452);
    assert_int_equal(c->d.sid, 1);
    done(&q, c);
    c = ns_sctp_sendq_pull(&q, 1500, 1452);
    assert_int_equal(c->d.sid, 4);
    done(&q, c);
    ns_sctp_sendq_free(&q);

    /* Allocation failures are reported, not fatal. */
    assert_int_equal(ns_sctp_sendq_init(&q, &p, 1), 0);
    ns_alloc_fail_set(1, 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 10, 0, 0, 0), -ENOMEM);
    ns_alloc_fail_set(2, 0);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 10, 0, 0, 0), -ENOMEM);
    assert_int_equal(q.stats.enomem, 2);
    assert_int_equal(ns_sctp_sendq_enqueue(&q, 0, pattern, 10, 0, 0, 0), 0);
    assert_int_equal(q.queued_bytes, 10);
    ns_sctp_sendq_free(&q);
    ns_alloc_fail_set(0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ssn_and_fields),
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_fragments_not_interleaved),
        cmocka_unit_test(test_bundling_room),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_buffers_shared),
        cmocka_unit_test(test_streams_and_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
