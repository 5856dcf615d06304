/* Packet buffers (core/pkt.h): head operations, fragments, clone/copy
 * sharing rules, queues and allocation-failure injection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/pkt.h"
#include "core/rng.h"

static uint32_t refs(const struct ns_buf *b)
{
    return atomic_load(&((struct ns_buf *)b)->refcnt);
}

static void fill(uint8_t *p, uint32_t n, uint8_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7);
}

/* A buffer of cap bytes filled with a pattern. */
static struct ns_buf *pattern_buf(uint32_t cap, uint8_t seed)
{
    struct ns_buf *b = ns_buf_alloc(cap);
    assert_non_null(b);
    fill(b->data, cap, seed);
    return b;
}

/* The packet's bytes, flattened with copy_out (caller frees). */
static uint8_t *flat(const struct ns_pkt *p)
{
    uint32_t n = ns_pkt_len(p);
    uint8_t *d = malloc(n ? n : 1);
    assert_true(ns_pkt_copy_out(p, 0, d, n));
    return d;
}

static void test_alloc_and_rooms(void **st)
{
    (void)st;
    struct ns_pkt *p = ns_pkt_alloc(64, 100);
    assert_non_null(p);
    assert_int_equal(ns_pkt_len(p), 0);
    assert_int_equal(ns_pkt_headroom(p), 64);
    assert_int_equal(ns_pkt_tailroom(p), 100);
    assert_int_equal(p->nfrags, 0);
    assert_int_equal(refs(p->buf), 1);
    ns_pkt_free(p);
    ns_pkt_free(NULL);
}

static void test_push_pull_put(void **st)
{
    (void)st;
    struct ns_pkt *p = ns_pkt_alloc(20, 30);
    uint8_t *t = ns_pkt_put(p, 10);
    assert_ptr_equal(t, p->data);
    memset(t, 0xaa, 10);
    assert_int_equal(p->len, 10);
    assert_int_equal(ns_pkt_tailroom(p), 20);
    assert_null(ns_pkt_put(p, 21));
    assert_int_equal(p->len, 10);

    uint8_t *h = ns_pkt_push(p, 14);
    assert_non_null(h);
    assert_ptr_equal(h, p->data);
    assert_int_equal(p->len, 24);
    assert_int_equal(ns_pkt_headroom(p), 6);
    memset(h, 0x11, 14);
    assert_null(ns_pkt_push(p, 7));
    assert_int_equal(p->len, 24);
    assert_int_equal(ns_pkt_headroom(p), 6);
    assert_non_null(ns_pkt_push(p, 6));
    assert_int_equal(ns_pkt_headroom(p), 0);
    assert_null(ns_pkt_push(p, 1));

    assert_non_null(ns_pkt_pull(p, 6));
    uint8_t *after = ns_pkt_pull(p, 14);
    assert_ptr_equal(after, p->data);
    assert_int_equal(p->len, 10);
    assert_int_equal(after[0], 0xaa);
    assert_null(ns_pkt_pull(p, 11));
    assert_int_equal(p->len, 10);
    assert_non_null(ns_pkt_pull(p, 10));
    assert_int_equal(p->len, 0);
    ns_pkt_free(p);
}

static void test_put_refused_with_frags(void **st)
{
    (void)st;
    struct ns_pkt *p = ns_pkt_alloc(0, 64);
    ns_pkt_put(p, 4);
    struct ns_buf *b = pattern_buf(16, 1);
    assert_true(ns_pkt_add_frag(p, b, 0, 16));
    assert_null(ns_pkt_put(p, 1));
    assert_int_equal(p->len, 4);
    ns_pkt_free(p);
    ns_buf_put(b);
}

static void test_from(void **st)
{
    (void)st;
    uint8_t d[77];
    fill(d, sizeof(d), 3);
    struct ns_pkt *p = ns_pkt_from(d, sizeof(d));
    assert_int_equal(ns_pkt_len(p), 77);
    assert_int_equal(ns_pkt_headroom(p), NS_PKT_HEADROOM);
    assert_memory_equal(p->data, d, 77);
    ns_pkt_free(p);
    p = ns_pkt_from(NULL, 0);
    assert_non_null(p);
    assert_int_equal(ns_pkt_len(p), 0);
    ns_pkt_free(p);
}

static void test_add_frag_bounds(void **st)
{
    (void)st;
    struct ns_pkt *p = ns_pkt_alloc(0, 0);
    struct ns_buf *b = pattern_buf(10, 0);
    assert_false(ns_pkt_add_frag(p, b, 11, 0));
    assert_false(ns_pkt_add_frag(p, b, 5, 6));
    assert_false(ns_pkt_add_frag(p, b, 0, 11));
    /* off + len overflowing 32 bits must not pass the check */
    assert_false(ns_pkt_add_frag(p, b, 5, UINT32_MAX - 2));
    assert_int_equal(refs(b), 1);
    assert_true(ns_pkt_add_frag(p, b, 10, 0));
    assert_true(ns_pkt_add_frag(p, b, 0, 10));
    for (int i = 2; i < NS_PKT_MAX_FRAGS; i++)
        assert_true(ns_pkt_add_frag(p, b, 1, 2));
    assert_int_equal(p->nfrags, NS_PKT_MAX_FRAGS);
    assert_false(ns_pkt_add_frag(p, b, 0, 1));
    assert_int_equal(refs(b), 1 + NS_PKT_MAX_FRAGS);
    assert_int_equal(p->frag_len, 10 + 2 * (NS_PKT_MAX_FRAGS - 2));
    ns_pkt_free(p);
    assert_int_equal(refs(b), 1);
    ns_buf_put(b);
}

/* head "H0..H5" (6 bytes) + frag A (5 bytes) + frag B (7 bytes) */
static struct ns_pkt *three_piece(struct ns_buf **a, struct ns_buf **b)
{
    struct ns_pkt *p = ns_pkt_alloc(16, 6);
    fill(ns_pkt_put(p, 6), 6, 100);
    *a = pattern_buf(20, 1);
    *b = pattern_buf(30, 2);
    assert_true(ns_pkt_add_frag(p, *a, 3, 5));
    assert_true(ns_pkt_add_frag(p, *b, 10, 7));
    return p;
}

static void test_copy_out(void **st)
{
    (void)st;
    struct ns_buf *a, *b;
    struct ns_pkt *p = three_piece(&a, &b);
    assert_int_equal(ns_pkt_len(p), 18);
    uint8_t ref[18];
    fill(ref, 6, 100);
    memcpy(ref + 6, a->data + 3, 5);
    memcpy(ref + 11, b->data + 10, 7);
    for (uint32_t off = 0; off <= 18; off++) {
        for (uint32_t len = 0; off + len <= 18; len++) {
            uint8_t out[18];
            memset(out, 0xee, sizeof(out));
            assert_true(ns_pkt_copy_out(p, off, out, len));
            if (len)
                assert_memory_equal(out, ref + off, len);
            if (len < 18)
                assert_int_equal(out[len], 0xee);
        }
    }
    uint8_t out[20];
    assert_false(ns_pkt_copy_out(p, 0, out, 19));
    assert_false(ns_pkt_copy_out(p, 18, out, 1));
    assert_false(ns_pkt_copy_out(p, 19, out, 0));
    assert_false(ns_pkt_copy_out(p, UINT32_MAX, out, 2));
    ns_pkt_free(p);
    ns_buf_put(a);
    ns_buf_put(b);
}

static void test_trim(void **st)
{
    (void)st;
    struct ns_buf *a, *b;
    struct ns_pkt *p = three_piece(&a, &b);
    uint8_t *before = flat(p);

    ns_pkt_trim(p, 100); /* longer: nothing */
    assert_int_equal(ns_pkt_len(p), 18);
    ns_pkt_trim(p, 18);
    assert_int_equal(ns_pkt_len(p), 18);
    assert_int_equal(p->nfrags, 2);

    ns_pkt_trim(p, 14); /* into frag B */
    assert_int_equal(ns_pkt_len(p), 14);
    assert_int_equal(p->nfrags, 2);
    assert_int_equal(p->frags[1].len, 3);
    assert_int_equal(p->frag_len, 8);

    ns_pkt_trim(p, 11); /* exactly the end of frag A: B released */
    assert_int_equal(ns_pkt_len(p), 11);
    assert_int_equal(p->nfrags, 1);
    assert_int_equal(refs(b), 1);

    uint8_t *after = flat(p);
    assert_memory_equal(after, before, 11);
    free(after);

    ns_pkt_trim(p, 4); /* into the head: every frag released */
    assert_int_equal(ns_pkt_len(p), 4);
    assert_int_equal(p->len, 4);
    assert_int_equal(p->nfrags, 0);
    assert_int_equal(p->frag_len, 0);
    assert_int_equal(refs(a), 1);
    assert_memory_equal(p->data, before, 4);
    ns_pkt_trim(p, 0);
    assert_int_equal(ns_pkt_len(p), 0);
    free(before);
    ns_pkt_free(p);
    ns_buf_put(a);
    ns_buf_put(b);
}

static void test_linearize(void **st)
{
    (void)st;
    struct ns_buf *a, *b;
    struct ns_pkt *p = three_piece(&a, &b);
    uint8_t *before = flat(p);
    assert_true(ns_pkt_linearize(p, 40));
    assert_int_equal(p->nfrags, 0);
    assert_int_equal(p->frag_len, 0);
    assert_int_equal(p->len, 18);
    assert_true(ns_pkt_headroom(p) >= 40);
    assert_memory_equal(p->data, before, 18);
    assert_int_equal(refs(a), 1);
    assert_int_equal(refs(b), 1);

    /* Linear with enough headroom: untouched, same storage. */
    struct ns_buf *same = p->buf;
    uint8_t *data = p->data;
    assert_true(ns_pkt_linearize(p, 40));
    assert_ptr_equal(p->buf, same);
    assert_ptr_equal(p->data, data);

    /* Linear with too little headroom: moved. */
    assert_true(ns_pkt_linearize(p, 100));
    assert_true(ns_pkt_headroom(p) >= 100);
    assert_memory_equal(p->data, before, 18);
    free(before);
    ns_pkt_free(p);
    ns_buf_put(a);
    ns_buf_put(b);
}

static void test_clone_never_writes_shared(void **st)
{
    (void)st;
    struct ns_buf *a, *b;
    struct ns_pkt *p = three_piece(&a, &b);
    p->ifindex = 3;
    p->nexthop = 0xc6120001;
    p->flags = NS_PKT_F_LOCAL;
    p->ts = 12345;
    p->l3_off = 14;
    p->l4_off = 34;
    uint8_t *before = flat(p);
    struct ns_buf *head = p->buf;

    struct ns_pkt *c = ns_pkt_clone(p);
    assert_non_null(c);
    assert_int_equal(ns_pkt_len(c), 18);
    assert_int_equal(refs(head), 2);
    assert_int_equal(refs(a), 3); /* test + p + c */
    assert_int_equal(refs(b), 3);
    assert_int_equal(c->ifindex, 3);
    assert_int_equal(c->nexthop, 0xc6120001);
    assert_int_equal(c->flags, NS_PKT_F_LOCAL);
    assert_int_equal(c->ts, 12345);
    assert_int_equal(c->l3_off, 14);
    assert_int_equal(c->l4_off, 34);
    uint8_t *cb = flat(c);
    assert_memory_equal(cb, before, 18);
    free(cb);

    /* Headers pushed onto the clone land in its own head. */
    uint8_t *h = ns_pkt_push(c, NS_PKT_HEADROOM);
    assert_non_null(h);
    memset(h, 0x5a, NS_PKT_HEADROOM);
    assert_true(ns_pkt_linearize(c, 0));
    assert_int_equal(ns_pkt_len(c), NS_PKT_HEADROOM + 18);
    memset(c->data, 0x77, c->len); /* the clone is now private: scribble */
    uint8_t *again = flat(p);
    assert_memory_equal(again, before, 18);
    free(again);
    assert_int_equal(refs(head), 1);
    ns_pkt_free(c);
    assert_int_equal(refs(a), 2);

    /* The original's headroom is not the clone's: push on p still works and
     * a second clone sees p's new header. */
    uint8_t *ph = ns_pkt_push(p, 2);
    ph[0] = 0xde;
    ph[1] = 0xad;
    struct ns_pkt *c2 = ns_pkt_clone(p);
    uint8_t x[2];
    assert_true(ns_pkt_copy_out(c2, 0, x, 2));
    assert_int_equal(x[0], 0xde);
    assert_int_equal(x[1], 0xad);
    ns_pkt_free(c2);
    free(before);
    ns_pkt_free(p);
    assert_int_equal(refs(a), 1);
    assert_int_equal(refs(b), 1);
    ns_buf_put(a);
    ns_buf_put(b);
}

static void test_clone_full_frags_copies(void **st)
{
    (void)st;
    struct ns_pkt *p = ns_pkt_alloc(0, 3);
    fill(ns_pkt_put(p, 3), 3, 9);
    struct ns_buf *b = pattern_buf(64, 4);
    for (int i = 0; i < NS_PKT_MAX_FRAGS; i++)
        assert_true(ns_pkt_add_frag(p, b, (uint32_t)i * 8, 8));
    uint8_t *before = flat(p);
    struct ns_pkt *c = ns_pkt_clone(p);
    assert_non_null(c);
    assert_int_equal(c->nfrags, 0);
    assert_int_equal(c->len, 3 + 8 * NS_PKT_MAX_FRAGS);
    assert_memory_equal(c->data, before, c->len);
    assert_int_equal(refs(b), 1 + NS_PKT_MAX_FRAGS);
    assert_true(ns_pkt_headroom(c) >= NS_PKT_HEADROOM);
    free(before);
    ns_pkt_free(c);
    ns_pkt_free(p);
    assert_int_equal(refs(b), 1);
    ns_buf_put(b);
}

static void test_copy_is_deep(void **st)
{
    (void)st;
    struct ns_buf *a, *b;
    struct ns_pkt *p = three_piece(&a, &b);
    p->ifindex = 7;
    p->ts = 99;
    uint8_t *before = flat(p);
    struct ns_pkt *c = ns_pkt_copy(p);
    assert_non_null(c);
    assert_int_equal(c->nfrags, 0);
    assert_int_equal(c->len, 18);
    assert_int_equal(ns_pkt_headroom(c), NS_PKT_HEADROOM);
    assert_int_equal(c->ifindex, 7);
    assert_int_equal(c->ts, 99);
    assert_int_equal(refs(a), 2);
    memset(c->data, 0, c->len);
    uint8_t *after = flat(p);
    assert_memory_equal(after, before, 18);
    free(after);
    free(before);
    ns_pkt_free(c);
    ns_pkt_free(p);
    ns_buf_put(a);
    ns_buf_put(b);
}

static void test_iov(void **st)
{
    (void)st;
    struct ns_buf *a, *b;
    struct ns_pkt *p = three_piece(&a, &b);
    struct iovec iov[NS_PKT_MAX_FRAGS + 1];
    int n = ns_pkt_iov(p, iov, NS_PKT_MAX_FRAGS + 1);
    assert_int_equal(n, 3);
    assert_ptr_equal(iov[0].iov_base, p->data);
    assert_int_equal(iov[0].iov_len, 6);
    assert_ptr_equal(iov[1].iov_base, a->data + 3);
    assert_int_equal(iov[1].iov_len, 5);
    assert_ptr_equal(iov[2].iov_base, b->data + 10);
    assert_int_equal(iov[2].iov_len, 7);
    assert_int_equal(ns_pkt_iov(p, iov, 2), 2);
    assert_int_equal(ns_pkt_iov(p, iov, 0), 0);
    /* An empty head contributes no entry. */
    ns_pkt_pull(p, 6);
    n = ns_pkt_iov(p, iov, NS_PKT_MAX_FRAGS + 1);
    assert_int_equal(n, 2);
    assert_ptr_equal(iov[0].iov_base, a->data + 3);
    ns_pkt_free(p);
    ns_buf_put(a);
    ns_buf_put(b);
}

static void test_random_layouts(void **st)
{
    (void)st;
    /* Random heads and fragments; every operation checked against a flat
     * reference copy. */
    struct ns_rng r;
    ns_rng_seed(&r, 42);
    struct ns_buf *pool = pattern_buf(4096, 17);
    for (int iter = 0; iter < 500; iter++) {
        uint32_t hl = (uint32_t)ns_rng_below(&r, 40);
        struct ns_pkt *p = ns_pkt_alloc(32, hl);
        fill(ns_pkt_put(p, hl), hl, (uint8_t)iter);
        int nf = (int)ns_rng_below(&r, NS_PKT_MAX_FRAGS + 1);
        for (int i = 0; i < nf; i++) {
            uint32_t off = (uint32_t)ns_rng_below(&r, 4000);
            uint32_t len = (uint32_t)ns_rng_below(&r, 97);
            assert_true(ns_pkt_add_frag(p, pool, off, len));
        }
        uint32_t total = ns_pkt_len(p);
        uint8_t *ref = flat(p);
        uint32_t off = (uint32_t)ns_rng_below(&r, total + 1);
        uint32_t len = (uint32_t)ns_rng_below(&r, total - off + 1);
        uint8_t *out = malloc(len + 1);
        assert_true(ns_pkt_copy_out(p, off, out, len));
        if (len)
            assert_memory_equal(out, ref + off, len);
        free(out);
        uint32_t keep = (uint32_t)ns_rng_below(&r, total + 1);
        ns_pkt_trim(p, keep);
        assert_int_equal(ns_pkt_len(p), keep);
        uint32_t sum = 0;
        for (int i = 0; i < p->nfrags; i++)
            sum += p->frags[i].len;
        assert_int_equal(sum, p->frag_len);
        struct ns_pkt *c = ns_pkt_clone(p);
        assert_true(ns_pkt_linearize(c, 16));
        assert_int_equal(c->len, keep);
        if (keep)
            assert_memory_equal(c->data, ref, keep);
        ns_pkt_free(c);
        free(ref);
        ns_pkt_free(p);
    }
    assert_int_equal(refs(pool), 1);
    ns_buf_put(pool);
}

static struct ns_pkt *numbered(uint32_t len)
{
    struct ns_pkt *p = ns_pkt_alloc(0, len);
    ns_pkt_put(p, len);
    return p;
}

static void test_queue(void **st)
{
    (void)st;
    struct ns_pktq q;
    ns_pktq_init(&q);
    assert_null(ns_pktq_pop(&q));
    struct ns_pkt *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = numbered((uint32_t)(10 + i));
        ns_pktq_push(&q, p[i]);
    }
    assert_int_equal(q.count, 4);
    assert_int_equal(q.bytes, 10 + 11 + 12 + 13);
    for (int i = 0; i < 4; i++) {
        struct ns_pkt *x = ns_pktq_pop(&q);
        assert_ptr_equal(x, p[i]);
        assert_null(x->next);
        assert_int_equal(q.count, 3 - i);
        ns_pkt_free(x);
    }
    assert_int_equal(q.bytes, 0);
    assert_null(q.head);
    assert_null(q.tail);
    /* Reusable after draining. */
    ns_pktq_push(&q, numbered(5));
    assert_int_equal(q.count, 1);
    ns_pktq_purge(&q);
    assert_int_equal(q.count, 0);
    assert_int_equal(q.bytes, 0);
    assert_null(q.head);
}

static void test_queue_splice(void **st)
{
    (void)st;
    struct ns_pktq a, b;
    ns_pktq_init(&a);
    ns_pktq_init(&b);
    ns_pktq_splice(&a, &b); /* empty into empty */
    assert_int_equal(a.count, 0);
    assert_null(a.head);

    struct ns_pkt *x[5];
    for (int i = 0; i < 5; i++)
        x[i] = numbered((uint32_t)(i + 1));
    ns_pktq_push(&b, x[0]);
    ns_pktq_push(&b, x[1]);
    ns_pktq_splice(&a, &b); /* into empty */
    assert_int_equal(a.count, 2);
    assert_int_equal(a.bytes, 3);
    assert_int_equal(b.count, 0);
    assert_int_equal(b.bytes, 0);
    assert_null(b.head);
    assert_null(b.tail);

    ns_pktq_push(&b, x[2]);
    ns_pktq_push(&b, x[3]);
    ns_pktq_splice(&a, &b); /* into non-empty */
    ns_pktq_splice(&a, &b); /* from empty: nothing */
    ns_pktq_push(&a, x[4]); /* the tail is right after a splice */
    assert_int_equal(a.count, 5);
    assert_int_equal(a.bytes, 15);
    for (int i = 0; i < 5; i++) {
        struct ns_pkt *p = ns_pktq_pop(&a);
        assert_ptr_equal(p, x[i]);
        ns_pkt_free(p);
    }
    assert_null(a.tail);
}

static void test_alloc_failure(void **st)
{
    (void)st;
    ns_alloc_fail_set(1, 0);
    assert_null(ns_pkt_alloc(0, 10));
    struct ns_pkt *p = ns_pkt_alloc(0, 10); /* only the first failed */
    assert_non_null(p);
    ns_pkt_free(p);

    /* nth = 2, then every 3rd: allocation calls 2, 5, 8 fail. Each
     * ns_buf_alloc counts as one call. */
    ns_alloc_fail_set(2, 3);
    bool got[9];
    for (int i = 0; i < 9; i++) {
        struct ns_buf *b = ns_buf_alloc(8);
        got[i] = b != NULL;
        ns_buf_put(b);
    }
    ns_alloc_fail_set(0, 0);
    bool want[9] = {true, false, true, true, false, true, true, false, true};
    for (int i = 0; i < 9; i++)
        assert_int_equal(got[i], want[i]);

    /* ns_pkt_alloc is two allocations: the second failing must not leak. */
    ns_alloc_fail_set(2, 0);
    assert_null(ns_pkt_alloc(0, 10));
    ns_alloc_fail_set(0, 0);

    /* Failed linearize leaves the packet as it was. */
    struct ns_buf *a, *b;
    p = three_piece(&a, &b);
    uint8_t *before = flat(p);
    ns_alloc_fail_set(1, 0);
    assert_false(ns_pkt_linearize(p, 0));
    ns_alloc_fail_set(0, 0);
    assert_int_equal(p->nfrags, 2);
    uint8_t *after = flat(p);
    assert_memory_equal(after, before, 18);
    free(after);

    /* Failed clone and copy return NULL and take no references. */
    ns_alloc_fail_set(1, 0);
    assert_null(ns_pkt_clone(p));
    ns_alloc_fail_set(1, 0);
    assert_null(ns_pkt_copy(p));
    ns_alloc_fail_set(0, 0);
    assert_int_equal(refs(p->buf), 1);
    assert_int_equal(refs(a), 2);
    assert_int_equal(refs(b), 2);

    ns_alloc_fail_set(1, 0);
    assert_null(ns_pkt_from(before, 18));
    ns_alloc_fail_set(0, 0);
    free(before);
    ns_pkt_free(p);
    ns_buf_put(a);
    ns_buf_put(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_and_rooms),
        cmocka_unit_test(test_push_pull_put),
        cmocka_unit_test(test_put_refused_with_frags),
        cmocka_unit_test(test_from),
        cmocka_unit_test(test_add_frag_bounds),
        cmocka_unit_test(test_copy_out),
        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_linearize),
        cmocka_unit_test(test_clone_never_writes_shared),
        cmocka_unit_test(test_clone_full_frags_copies),
        cmocka_unit_test(test_copy_is_deep),
        cmocka_unit_test(test_iov),
        cmocka_unit_test(test_random_layouts),
        cmocka_unit_test(test_queue),
        cmocka_unit_test(test_queue_splice),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
