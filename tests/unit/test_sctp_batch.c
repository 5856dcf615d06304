/* The engine's throughput paths: input batches (events after the batch,
 * SACKs at once), the WRITABLE event only once the refused message fits,
 * and sending a message by reference (ns_sctp_send_buf) without a copy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/chunk.h"
#include "sctp_pipe.h"

#define DELAY (10 * NS_MS)

static size_t count_chunks(struct sp_node *n, int type)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_out; i++) {
        uint32_t len;
        const uint8_t *b = sp_out_bytes(n, i, &len);
        for (int c = 0; c < sp_chunk_count(b, len); c++)
            k += sp_chunk_type(b, len, c) == type;
    }
    return k;
}

/* a sends n one-chunk packets, captured and returned in a's out list. */
static void capture_data(struct sp_pair *p, int n)
{
    p->a->capture = true;
    for (int i = 0; i < n; i++) {
        char m[1200];
        memset(m, 'a' + i % 26, sizeof(m));
        /* 1200 bytes: one message per packet. */
        assert_int_equal(ns_sctp_send(p->aa, 0, 0, 0, m, sizeof(m), 0, p->net->now), 0);
    }
}

/* In a batch the receiver still SACKs as RFC 9260 6.2 says (every second
 * packet, at once), but the data-ready event comes once, after the batch;
 * unbatched it comes with the first packet. */
static void test_batch_defers_events_only(void **state)
{
    (void)state;
    for (int batched = 0; batched < 2; batched++) {
        struct ns_sctp_params pa;
        ns_sctp_params_default(&pa);
        pa.nodelay = 1;
        struct sp_pair p;
        assert_true(sp_pair_setup(&p, 91, &pa, NULL, 1, 1, DELAY));
        capture_data(&p, 4);
        size_t n = p.a->n_out; /* the initial cwnd lets all 4 go */
        assert_int_equal(n, 4);
        p.b->capture = true;
        sp_clear_ev(p.b);
        struct ns_sctp_addr sa = sp_addr(SP_IP_A), sb = sp_addr(SP_IP_B);
        if (batched)
            ns_sctp_batch_begin(&p.b->sctp);
        for (size_t i = 0; i < n; i++) {
            uint32_t len;
            const uint8_t *k = sp_out_bytes(p.a, i, &len);
            sp_inject(p.net, p.b, k, len, &sa, &sb);
            /* SACKs leave at once either way. */
            assert_int_equal(count_chunks(p.b, NS_SCTP_CT_SACK), (i + 1) / 2);
            assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_DATA_READY), batched ? 0 : 1);
        }
        if (batched)
            ns_sctp_batch_end(&p.b->sctp, p.net->now);
        assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_DATA_READY), 1);
        uint32_t len;
        const uint8_t *k = sp_out_bytes(p.b, p.b->n_out - 1, &len);
        struct ns_sctp_assoc_info ia;
        ns_sctp_assoc_info(p.aa, &ia);
        assert_int_equal(k[12], NS_SCTP_CT_SACK);
        assert_int_equal(sp_rd32(k + 16), ia.next_tsn - 1);
        assert_int_equal(sp_drain(p.net, p.ab), n);
        sp_out_clear(p.a);
        sp_pair_free(&p);
    }
}

/* An association that ends inside a batch (ABORT) is reported and freed
 * after it; the data before the ABORT was SACKed at once. */
static void test_batch_abort_inside(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.nodelay = 1;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 92, &pa, NULL, 1, 1, DELAY));
    capture_data(&p, 2);
    size_t n = p.a->n_out;
    assert_int_equal(n, 2);
    p.b->capture = true;
    struct ns_sctp_addr sa = sp_addr(SP_IP_A), sb = sp_addr(SP_IP_B);
    ns_sctp_batch_begin(&p.b->sctp);
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const uint8_t *k = sp_out_bytes(p.a, i, &len);
        sp_inject(p.net, p.b, k, len, &sa, &sb);
    }
    sp_out_clear(p.a);
    ns_sctp_abort(p.aa, NULL, 0, p.net->now);
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    sp_inject(p.net, p.b, k, len, &sa, &sb);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_LOST), 0);
    ns_sctp_batch_end(&p.b->sctp, p.net->now);
    assert_int_equal(count_chunks(p.b, NS_SCTP_CT_SACK), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_LOST), 1);
    sp_out_clear(p.a);
    sp_pair_free(&p);
}

/* A refused 64 KiB message is not retried (no WRITABLE) for every SACK's
 * worth of space, only once it fits. */
static void test_writable_when_it_fits(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.sndbuf_bytes = 100000;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 93, &pa, NULL, 1, 1, DELAY));
    static uint8_t big[65536];
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, 60000, 0, p.net->now), 0);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, sizeof(big), 0, p.net->now), -EAGAIN);
    uint32_t last_space = ns_sctp_send_space(p.aa);
    bool saw_partial = false;
    for (int i = 0; i < 400 && !sp_count_ev(p.a, NS_SCTP_EV_WRITABLE); i++) {
        sp_run_for(p.net, NS_MS);
        sp_drain(p.net, p.ab);
        uint32_t sp = ns_sctp_send_space(p.aa);
        if (sp > last_space && sp < sizeof(big) && !sp_count_ev(p.a, NS_SCTP_EV_WRITABLE))
            saw_partial = true;
        last_space = sp;
    }
    /* Space grew by SACKs without a WRITABLE, then one when it fit. */
    assert_true(saw_partial);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_WRITABLE), 1);
    assert_true(ns_sctp_send_space(p.aa) >= sizeof(big));
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, sizeof(big), 0, p.net->now), 0);
    sp_pair_free(&p);
}

/* ns_sctp_send_buf: the engine holds a reference, not a copy, until the
 * peer acknowledges; the peer gets the bytes intact. */
static void test_send_buf_by_reference(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 94, NULL, NULL, 1, 1, DELAY));
    struct ns_buf *b = ns_buf_alloc(16 + 20000);
    assert_non_null(b);
    for (uint32_t i = 0; i < 20000; i++)
        b->data[16 + i] = (uint8_t)(i * 7 + 1);
    assert_int_equal(ns_sctp_send_buf(p.aa, 0, 42, 0, NULL, 0, 1, 0, p.net->now), -EINVAL);
    assert_int_equal(ns_sctp_send_buf(p.aa, 0, 42, 0, b, 16, 20001, 0, p.net->now), -EINVAL);
    assert_int_equal(ns_sctp_send_buf(p.aa, 0, 42, 0, b, 16, 20000, 0, p.net->now), 0);
    assert_true(atomic_load(&b->refcnt) > 1);
    ns_buf_put(b); /* the caller's reference: the engine keeps its own */
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    for (int i = 0; i < 100 && !q.head; i++) {
        sp_run_for(p.net, 10 * NS_MS);
        ns_sctp_recv_take(p.ab, &q);
    }
    struct ns_sctp_rmsg *m = ns_sctp_rmsgq_pop(&q);
    assert_non_null(m);
    assert_null(q.head);
    assert_int_equal(m->len, 20000);
    assert_int_equal(m->ppid, 42);
    uint8_t *out = malloc(20000);
    assert_int_equal(ns_sctp_rmsg_copy(m, 0, out, 20000), 20000);
    for (uint32_t i = 0; i < 20000; i++)
        assert_int_equal(out[i], (uint8_t)(i * 7 + 1));
    free(out);
    ns_sctp_msg_free(p.ab, m, p.net->now);
    sp_run_for(p.net, NS_SEC);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.outstanding_chunks, 0);
    sp_pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_defers_events_only),
        cmocka_unit_test(test_batch_abort_inside),
        cmocka_unit_test(test_writable_when_it_fits),
        cmocka_unit_test(test_send_buf_by_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
