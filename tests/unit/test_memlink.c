/* memlink (dev/memlink.h): delivery times, ordering, impairments and their
 * determinism from the seed, queue and MTU limits, counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/timer.h"
#include "dev/memlink.h"

/* A 60-byte frame whose payload starts with a 32-bit sequence number. */
static struct ns_pkt *frame(uint32_t seq, uint32_t len)
{
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, len);
    uint8_t *d = ns_pkt_put(p, len);
    memset(d, 0, len);
    memset(d, 0xff, 6);
    d[6] = 0x02;
    d[12] = 0x88;
    d[13] = 0xb5;
    memcpy(d + 14, &seq, 4);
    for (uint32_t i = 18; i < len; i++)
        d[i] = (uint8_t)(seq + i);
    return p;
}

static uint32_t seq_of(const struct ns_pkt *p)
{
    uint32_t s;
    assert_true(ns_pkt_copy_out(p, 14, &s, 4));
    return s;
}

static void send1(struct ns_dev *d, struct ns_pkt *p, uint64_t now)
{
    assert_int_equal(ns_dev_send(d, &p, 1, now), 1);
}

/* Receive everything due at now; returns the count, seqs appended. */
static int drain(struct ns_dev *d, uint64_t now, uint32_t *seqs, int cap)
{
    struct ns_pkt *pk[16];
    int total = 0, n;
    while ((n = ns_dev_recv(d, pk, 16, now)) > 0) {
        for (int i = 0; i < n; i++) {
            if (total < cap)
                seqs[total] = seq_of(pk[i]);
            total++;
            ns_pkt_free(pk[i]);
        }
    }
    assert_int_equal(n, 0);
    return total;
}

static void test_basic_delay(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1, .delay_us = 1000};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    assert_int_equal(a->fd, -1);
    assert_int_equal(a->mtu, 1500);
    const struct ns_mac m0 = {{2, 0, 0, 0, 0, 1}}, m1 = {{2, 0, 0, 0, 0, 2}};
    assert_true(ns_mac_eq(&a->mac, &m0));
    assert_true(ns_mac_eq(&b->mac, &m1));
    assert_string_equal(a->name, "ml0");
    assert_int_equal(ns_memlink_next_deadline(l), NS_TIME_NEVER);

    struct ns_pkt *ps[3] = {frame(1, 60), frame(2, 60), frame(3, 60)};
    ps[1]->flags = NS_PKT_F_LOCAL;
    ps[1]->ifindex = 4;
    ps[1]->nexthop = 77;
    assert_int_equal(ns_dev_send(a, ps, 3, 0), 3);
    assert_int_equal(ns_memlink_next_deadline(l), 1000);
    assert_int_equal(ns_memlink_end_deadline(l, 1), 1000);
    assert_int_equal(ns_memlink_end_deadline(l, 0), NS_TIME_NEVER);
    assert_int_equal(ns_memlink_inflight(l, 1), 3);

    struct ns_pkt *got[8];
    assert_int_equal(ns_dev_recv(b, got, 8, 999), 0);
    assert_int_equal(ns_dev_recv(a, got, 8, 5000), 0); /* nothing goes back */
    assert_int_equal(ns_dev_recv(b, got, 2, 1000), 2); /* max respected */
    assert_int_equal(seq_of(got[0]), 1);
    assert_int_equal(seq_of(got[1]), 2);
    /* The wire carries bytes only. */
    assert_int_equal(got[1]->flags, 0);
    assert_int_equal(got[1]->ifindex, 0);
    assert_int_equal(got[1]->nexthop, 0);
    assert_int_equal(got[1]->ts, 1000);
    assert_true(ns_pkt_headroom(got[1]) >= NS_PKT_HEADROOM);
    struct ns_pkt *ref = frame(2, 60);
    assert_int_equal(ns_pkt_len(got[1]), 60);
    assert_memory_equal(got[1]->data, ref->data, 60);
    ns_pkt_free(ref);
    ns_pkt_free(got[0]);
    ns_pkt_free(got[1]);
    assert_int_equal(ns_dev_recv(b, got, 8, 1000), 1);
    ns_pkt_free(got[0]);
    assert_int_equal(ns_memlink_next_deadline(l), NS_TIME_NEVER);

    const struct ns_memlink_stats *s = ns_memlink_stats(l, 0);
    assert_int_equal(s->sent, 3);
    assert_int_equal(s->sent_bytes, 180);
    assert_int_equal(s->delivered, 3);
    assert_int_equal(s->delivered_bytes, 180);
    assert_int_equal(s->lost, 0);
    assert_int_equal(ns_memlink_stats(l, 1)->sent, 0);
    assert_int_equal(a->stats.tx_frames, 3);
    assert_int_equal(b->stats.rx_frames, 3);
    assert_int_equal(b->stats.rx_bytes, 180);
    ns_memlink_free(l);
}

static void test_next_deadline(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1, .delay_us = 500};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    send1(a, frame(1, 60), 0);
    send1(b, frame(2, 60), 100);
    send1(a, frame(3, 60), 50);
    assert_int_equal(ns_memlink_next_deadline(l), 500);
    assert_int_equal(ns_memlink_end_deadline(l, 1), 500);
    assert_int_equal(ns_memlink_end_deadline(l, 0), 600);
    uint32_t s[4];
    assert_int_equal(drain(b, 500, s, 4), 1);
    assert_int_equal(ns_memlink_next_deadline(l), 550);
    assert_int_equal(drain(b, 550, s, 4), 1);
    assert_int_equal(s[0], 3);
    assert_int_equal(ns_memlink_next_deadline(l), 600);
    assert_int_equal(drain(a, 10000, s, 4), 1);
    assert_int_equal(s[0], 2);
    assert_int_equal(ns_memlink_next_deadline(l), NS_TIME_NEVER);
    ns_memlink_free(l);
}

static void test_stable_ties(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 5, .delay_us = 10};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    for (uint32_t i = 0; i < 300; i++)
        send1(a, frame(i, 60), 0);
    uint32_t s[300];
    assert_int_equal(drain(b, 10, s, 300), 300);
    for (uint32_t i = 0; i < 300; i++)
        assert_int_equal(s[i], i);
    ns_memlink_free(l);
}

struct trace {
    uint32_t seq[20000];
    uint64_t at[20000];
    int n;
};

/* Send n frames, one every `gap` us, receiving as time advances. */
static void run_traffic(const struct ns_memlink_cfg *c, int n, uint64_t gap, struct trace *t,
                        struct ns_memlink_stats *out)
{
    struct ns_memlink *l = ns_memlink_new(c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    t->n = 0;
    uint64_t now = 0;
    for (int i = 0; i < n || ns_memlink_next_deadline(l) != NS_TIME_NEVER; i++) {
        if (i < n)
            send1(a, frame((uint32_t)i, 64), now);
        uint64_t next = i + 1 < n ? now + gap : ns_memlink_next_deadline(l);
        /* Visit every delivery time up to the next send. */
        for (uint64_t d = ns_memlink_next_deadline(l); d != NS_TIME_NEVER && d <= next;
             d = ns_memlink_next_deadline(l)) {
            struct ns_pkt *pk[16];
            int k = ns_dev_recv(b, pk, 16, d);
            assert_true(k > 0);
            for (int j = 0; j < k; j++) {
                assert_true(t->n < 20000);
                t->seq[t->n] = seq_of(pk[j]);
                t->at[t->n] = d;
                t->n++;
                ns_pkt_free(pk[j]);
            }
        }
        now = next;
    }
    *out = *ns_memlink_stats(l, 0);
    ns_memlink_free(l);
}

static struct trace t1, t2;

static void test_determinism(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1234,
                               .loss_ppm = NS_MEMLINK_PPM(0.1),
                               .dup_ppm = NS_MEMLINK_PPM(0.05),
                               .reorder_ppm = NS_MEMLINK_PPM(0.05),
                               .reorder_delay_us = 3000,
                               .delay_us = 2000,
                               .jitter_us = 700};
    struct ns_memlink_stats s1, s2;
    run_traffic(&c, 5000, 1000, &t1, &s1);
    run_traffic(&c, 5000, 1000, &t2, &s2);
    assert_int_equal(t1.n, t2.n);
    assert_memory_equal(t1.seq, t2.seq, sizeof(t1.seq[0]) * (size_t)t1.n);
    assert_memory_equal(t1.at, t2.at, sizeof(t1.at[0]) * (size_t)t1.n);
    assert_memory_equal(&s1, &s2, sizeof(s1));
    assert_int_equal(s1.delivered, (uint64_t)t1.n);
    assert_int_equal(s1.sent, 5000);
    assert_int_equal(s1.delivered, s1.sent - s1.lost + s1.duplicated);
    assert_true(s1.lost > 0 && s1.duplicated > 0 && s1.reordered > 0);

    /* Another seed: another history. */
    c.seed = 1235;
    run_traffic(&c, 5000, 1000, &t2, &s2);
    assert_true(t1.n != t2.n || memcmp(t1.seq, t2.seq, sizeof(t1.seq[0]) * (size_t)t1.n) != 0);
}

static void test_loss_rate(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 99, .loss_ppm = NS_MEMLINK_PPM(0.1), .delay_us = 1};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    enum { N = 100000 };
    uint32_t got = 0;
    for (uint32_t i = 0; i < N; i++) {
        send1(a, frame(i, 60), i);
        struct ns_pkt *pk[4];
        int k = ns_dev_recv(b, pk, 4, i);
        for (int j = 0; j < k; j++)
            ns_pkt_free(pk[j]);
        got += (uint32_t)k;
    }
    uint32_t s[1];
    got += (uint32_t)drain(b, N + 10, s, 0);
    const struct ns_memlink_stats *st1 = ns_memlink_stats(l, 0);
    assert_int_equal(st1->sent, N);
    assert_int_equal(st1->lost + got, N);
    assert_int_equal(st1->delivered, got);
    /* Binomial(100000, 0.1): sigma ~ 95; allow 5 sigma. */
    assert_in_range(st1->lost, 10000 - 475, 10000 + 475);
    ns_memlink_free(l);

    /* 0 and 100% are exact. */
    c.loss_ppm = NS_MEMLINK_MILLION;
    l = ns_memlink_new(&c);
    for (uint32_t i = 0; i < 1000; i++)
        send1(ns_memlink_end(l, 0), frame(i, 60), 0);
    assert_int_equal(ns_memlink_stats(l, 0)->lost, 1000);
    assert_int_equal(ns_memlink_next_deadline(l), NS_TIME_NEVER);
    ns_memlink_free(l);
}

/* The loss pattern for a seed does not depend on the other knobs. */
static void test_loss_pattern_independent(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 7, .loss_ppm = NS_MEMLINK_PPM(0.2), .delay_us = 100};
    struct ns_memlink_stats s1, s2;
    run_traffic(&c, 2000, 1000, &t1, &s1);
    c.dup_ppm = NS_MEMLINK_PPM(0.3);
    c.jitter_us = 50;
    run_traffic(&c, 2000, 1000, &t2, &s2);
    assert_int_equal(s1.lost, s2.lost);
    static uint8_t seen1[2000], seen2[2000];
    memset(seen1, 0, sizeof(seen1));
    memset(seen2, 0, sizeof(seen2));
    for (int i = 0; i < t1.n; i++)
        seen1[t1.seq[i]] = 1;
    for (int i = 0; i < t2.n; i++)
        seen2[t2.seq[i]] = 1;
    assert_memory_equal(seen1, seen2, sizeof(seen1));
}

static void test_dup(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 3, .dup_ppm = NS_MEMLINK_MILLION, .delay_us = 10};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    for (uint32_t i = 0; i < 50; i++)
        send1(a, frame(i, 60), 0);
    uint32_t s[200];
    assert_int_equal(drain(b, 10, s, 200), 100);
    /* Without jitter each copy directly follows its original. */
    for (uint32_t i = 0; i < 50; i++) {
        assert_int_equal(s[2 * i], i);
        assert_int_equal(s[2 * i + 1], i);
    }
    assert_int_equal(ns_memlink_stats(l, 0)->duplicated, 50);
    assert_int_equal(ns_memlink_stats(l, 0)->delivered, 100);
    ns_memlink_free(l);

    /* 20%: count consistent with deliveries and near the rate. */
    struct ns_memlink_stats sx;
    c.dup_ppm = NS_MEMLINK_PPM(0.2);
    run_traffic(&c, 10000, 100, &t1, &sx);
    assert_int_equal(sx.delivered, 10000 + sx.duplicated);
    assert_in_range(sx.duplicated, 2000 - 200, 2000 + 200);
}

static void test_reorder(void **st)
{
    (void)st;
    /* Frames 1 ms apart; a reordered one is held 5 ms, so every held frame
     * arrives after a later one. */
    struct ns_memlink_cfg c = {
        .seed = 11, .reorder_ppm = NS_MEMLINK_PPM(0.1), .reorder_delay_us = 5000, .delay_us = 1000};
    struct ns_memlink_stats sx;
    run_traffic(&c, 3000, 1000, &t1, &sx);
    assert_int_equal(t1.n, 3000);
    uint32_t maxseen = 0, late = 0;
    for (int i = 0; i < t1.n; i++) {
        if (i > 0 && t1.seq[i] < maxseen)
            late++;
        if (t1.seq[i] > maxseen)
            maxseen = t1.seq[i];
        /* Delivery time is exact: 1 ms, or 6 ms when held back. */
        uint64_t sent = (uint64_t)t1.seq[i] * 1000;
        assert_true(t1.at[i] == sent + 1000 || t1.at[i] == sent + 6000);
    }
    assert_true(sx.reordered > 0);
    /* The last frames' hold may not be overtaken by anything. */
    assert_in_range(late, sx.reordered - 5, sx.reordered);
    assert_in_range(sx.reordered, 300 - 80, 300 + 80);
}

static void test_jitter_bounds(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 17, .delay_us = 2000, .jitter_us = 500};
    struct ns_memlink_stats sx;
    run_traffic(&c, 4000, 100, &t1, &sx);
    assert_int_equal(t1.n, 4000);
    uint64_t minj = UINT64_MAX, maxj = 0;
    for (int i = 0; i < t1.n; i++) {
        uint64_t j = t1.at[i] - (uint64_t)t1.seq[i] * 100 - 2000;
        assert_true(j <= 500);
        if (j < minj)
            minj = j;
        if (j > maxj)
            maxj = j;
    }
    assert_true(minj < 20);
    assert_true(maxj > 480);
}

static void test_rate(void **st)
{
    (void)st;
    /* 1 MB/s: a 1000-byte frame takes 1 ms on the wire. */
    struct ns_memlink_cfg c = {.seed = 1, .delay_us = 100, .rate_bytes_per_s = 1000000};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    for (uint32_t i = 0; i < 5; i++)
        send1(a, frame(i, 1000), 0);
    uint32_t s[8];
    for (uint32_t i = 0; i < 5; i++) {
        assert_int_equal(ns_memlink_next_deadline(l), 1000 * (i + 1) + 100);
        assert_int_equal(drain(b, 1000 * (i + 1) + 99, s, 8), 0);
        assert_int_equal(drain(b, 1000 * (i + 1) + 100, s, 8), 1);
        assert_int_equal(s[0], i);
    }
    /* An idle link starts serialising at once. */
    send1(a, frame(9, 500), 20000);
    assert_int_equal(ns_memlink_next_deadline(l), 20000 + 500 + 100);
    ns_memlink_free(l);
}

static void test_queue_limit(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1, .delay_us = 100, .queue_limit = 10};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    for (uint32_t i = 0; i < 15; i++)
        send1(a, frame(i, 60), 0);
    assert_int_equal(ns_memlink_stats(l, 0)->drop_queue_full, 5);
    assert_int_equal(ns_memlink_inflight(l, 1), 10);
    uint32_t s[16];
    assert_int_equal(drain(b, 100, s, 16), 10);
    assert_int_equal(s[9], 9);
    send1(a, frame(20, 60), 200); /* room again */
    assert_int_equal(drain(b, 300, s, 16), 1);
    ns_memlink_free(l);
}

static void test_mtu(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1, .mtu = 1500};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    send1(a, frame(1, 1514), 0);
    send1(a, frame(2, 1515), 0);
    uint32_t s[4];
    assert_int_equal(drain(b, 0, s, 4), 1);
    assert_int_equal(s[0], 1);
    assert_int_equal(ns_memlink_stats(l, 0)->drop_oversize, 1);
    ns_memlink_free(l);
}

static void test_frags_and_headroom(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    /* A head plus a fragment whose buffer the sender keeps. */
    struct ns_pkt *p = frame(42, 20);
    struct ns_buf *payload = ns_buf_alloc(40);
    memset(payload->data, 0x3c, 40);
    assert_true(ns_pkt_add_frag(p, payload, 0, 40));
    send1(a, p, 0);
    memset(payload->data, 0, 40); /* the sender reuses its buffer */
    struct ns_pkt *got;
    assert_int_equal(ns_dev_recv(b, &got, 1, 0), 1);
    assert_int_equal(got->nfrags, 0);
    assert_int_equal(ns_pkt_len(got), 60);
    assert_true(ns_pkt_headroom(got) >= NS_PKT_HEADROOM);
    assert_int_equal(seq_of(got), 42);
    assert_int_equal(got->data[59], 0x3c);
    ns_pkt_free(got);
    ns_buf_put(payload);

    /* A linear frame with little headroom is re-homed too. */
    struct ns_pkt *q = ns_pkt_alloc(0, 60);
    memcpy(ns_pkt_put(q, 60), "abc", 3);
    send1(a, q, 0);
    assert_int_equal(ns_dev_recv(b, &got, 1, 0), 1);
    assert_true(ns_pkt_headroom(got) >= NS_PKT_HEADROOM);
    assert_memory_equal(got->data, "abc", 3);
    ns_pkt_free(got);

    /* Copy failure: counted, nothing leaks. */
    q = ns_pkt_alloc(0, 60);
    ns_pkt_put(q, 60);
    ns_alloc_fail_set(1, 0);
    send1(a, q, 0);
    ns_alloc_fail_set(0, 0);
    assert_int_equal(ns_memlink_stats(l, 0)->drop_nomem, 1);
    assert_int_equal(ns_dev_recv(b, &got, 1, 0), 0);
    ns_memlink_free(l);
}

static void test_close_and_free_inflight(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1, .delay_us = 100};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    send1(a, frame(1, 60), 0);
    send1(a, frame(2, 60), 0);
    send1(b, frame(3, 60), 0);
    ns_dev_close(b);
    assert_int_equal(ns_memlink_stats(l, 0)->drop_closed, 2);
    assert_int_equal(ns_memlink_inflight(l, 1), 0);
    send1(a, frame(4, 60), 10);
    assert_int_equal(ns_memlink_stats(l, 0)->drop_closed, 3);
    /* b's frame towards a still arrives. */
    uint32_t s[2];
    assert_int_equal(drain(a, 100, s, 2), 1);
    /* Frames left in flight are freed with the link (ASan checks). */
    send1(b, frame(5, 60), 200);
    ns_memlink_free(l);
}

static void test_names_macs_set_impairments(void **st)
{
    (void)st;
    struct ns_memlink_cfg c = {.seed = 1, .mtu = 9000, .name = {"left", "right"}};
    c.mac[0] = (struct ns_mac){{0x02, 0xaa, 0, 0, 0, 1}};
    c.mac[1] = (struct ns_mac){{0x02, 0xbb, 0, 0, 0, 2}};
    struct ns_memlink *l = ns_memlink_new(&c);
    struct ns_dev *a = ns_memlink_end(l, 0), *b = ns_memlink_end(l, 1);
    assert_string_equal(a->name, "left");
    assert_string_equal(b->name, "right");
    assert_true(ns_mac_eq(&a->mac, &c.mac[0]));
    assert_true(ns_mac_eq(&b->mac, &c.mac[1]));
    assert_int_equal(b->mtu, 9000);
    /* Cut the link, then restore it. */
    struct ns_memlink_cfg cut = {.loss_ppm = NS_MEMLINK_MILLION};
    ns_memlink_set_impairments(l, &cut);
    send1(a, frame(1, 60), 0);
    assert_int_equal(ns_memlink_stats(l, 0)->lost, 1);
    struct ns_memlink_cfg ok = {.delay_us = 5};
    ns_memlink_set_impairments(l, &ok);
    send1(a, frame(2, 60), 0);
    assert_int_equal(ns_memlink_next_deadline(l), 5);
    assert_int_equal(b->mtu, 9000);
    ns_memlink_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_delay),
        cmocka_unit_test(test_next_deadline),
        cmocka_unit_test(test_stable_ties),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_loss_rate),
        cmocka_unit_test(test_loss_pattern_independent),
        cmocka_unit_test(test_dup),
        cmocka_unit_test(test_reorder),
        cmocka_unit_test(test_jitter_bounds),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_queue_limit),
        cmocka_unit_test(test_mtu),
        cmocka_unit_test(test_frags_and_headroom),
        cmocka_unit_test(test_close_and_free_inflight),
        cmocka_unit_test(test_names_macs_set_impairments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
