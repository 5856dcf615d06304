/* Two SCTP engines over a simulated lossy network on a virtual clock
 * (tests/support/sctp_pipe.h): bulk transfer of messages from 1 byte to
 * 256 KiB on 10 streams, ordered and unordered, with 0 %, 1 % and 5 % loss
 * plus reordering and duplication; every message must arrive exactly
 * once, intact, and in order per stream when ordered. Also: determinism
 * from the seed, INIT collisions, and shutdown / abort in every state under
 * loss. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sctp_pipe.h"

#define NSTREAMS 10
#define MAX_MSG  262144u

/* ---- Bulk transfer ------------------------------------------------------ */

struct xfer {
    struct sp_pair p;
    uint32_t n_msgs;    /* to send */
    uint32_t next;      /* next id to send */
    uint32_t *len;      /* per id */
    uint8_t *unordered; /* per id */
    uint8_t *seen;      /* per id: delivered */
    uint32_t delivered;
    int64_t last_ordered[NSTREAMS]; /* last ordered id per stream */
    /* Reassembly of partial-delivery pieces. */
    uint8_t *cur;
    uint32_t cur_len;
    bool in_piece;
    uint64_t bytes;
    uint8_t *scratch;
    struct ns_rng rng;
    bool failed;
    char why[160];
};

/* Message id's payload: a slice of a fixed random pattern starting at an
 * offset derived from the id, so a misplaced, shifted or mixed-up chunk
 * shows, and checking is a memcmp. */
static uint8_t pattern[2 * MAX_MSG];

static void pattern_init(void)
{
    struct ns_rng r;
    ns_rng_seed(&r, 424242);
    for (size_t i = 0; i < sizeof(pattern); i++)
        pattern[i] = (uint8_t)ns_rng_u64(&r);
}

static const uint8_t *pat(uint32_t id)
{
    return pattern + (id * 2654435761u) % MAX_MSG;
}

static uint32_t pick_len(struct ns_rng *r, uint32_t id)
{
    if (id == 0)
        return 1;
    if (id == 1)
        return MAX_MSG;
    uint64_t u = ns_rng_below(r, 1000);
    if (u < 950)
        return 1 + (uint32_t)ns_rng_below(r, 300);
    if (u < 999)
        return 300 + (uint32_t)ns_rng_below(r, 3700);
    return 4000 + (uint32_t)ns_rng_below(r, MAX_MSG - 4000 + 1);
}

static void xfail(struct xfer *x, const char *what, uint32_t id)
{
    if (!x->failed)
        snprintf(x->why, sizeof(x->why), "%s (id %u)", what, id);
    x->failed = true;
}

static void check_msg(struct xfer *x, uint32_t id, uint16_t sid, bool unordered,
                      const uint8_t *data, uint32_t len)
{
    if (id >= x->n_msgs) {
        xfail(x, "unknown id", id);
        return;
    }
    if (x->seen[id]) {
        xfail(x, "delivered twice", id);
        return;
    }
    x->seen[id] = 1;
    x->delivered++;
    x->bytes += len;
    if (len != x->len[id])
        xfail(x, "wrong length", id);
    if (sid != id % NSTREAMS)
        xfail(x, "wrong stream", id);
    if (unordered != (x->unordered[id] != 0))
        xfail(x, "wrong U flag", id);
    if (len == x->len[id] && memcmp(data, pat(id), len) != 0)
        xfail(x, "corrupt payload", id);
    if (!unordered) {
        if ((int64_t)id <= x->last_ordered[sid])
            xfail(x, "out of order", id);
        x->last_ordered[sid] = id;
    }
}

static void drain(struct xfer *x, uint64_t now)
{
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    ns_sctp_recv_take(x->p.ab, &q);
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&q))) {
        if (m->assoc_id != ns_sctp_assoc_id(x->p.ab))
            xfail(x, "wrong assoc id", m->ppid);
        bool eor = (m->flags & NS_SCTP_RMSG_EOR) != 0;
        bool unordered = (m->flags & NS_SCTP_RMSG_UNORDERED) != 0;
        if (!eor || x->in_piece) {
            /* Partial delivery: pieces of one message arrive back to back. */
            if (x->cur_len + m->len > MAX_MSG)
                xfail(x, "oversized pieces", m->ppid);
            else
                ns_sctp_rmsg_copy(m, 0, x->cur + x->cur_len, m->len);
            x->cur_len += m->len;
            x->in_piece = !eor;
            if (eor) {
                check_msg(x, m->ppid, m->sid, unordered, x->cur, x->cur_len);
                x->cur_len = 0;
            }
        } else {
            ns_sctp_rmsg_copy(m, 0, x->scratch, m->len);
            check_msg(x, m->ppid, m->sid, unordered, x->scratch, m->len);
        }
        ns_sctp_msg_free(x->p.ab, m, now);
    }
}

static void pump(struct xfer *x, uint64_t now)
{
    while (x->next < x->n_msgs) {
        uint32_t id = x->next, len = x->len[id];
        int r = ns_sctp_send(x->p.aa, (uint16_t)(id % NSTREAMS), id,
                             x->unordered[id] ? NS_SCTP_SEND_UNORDERED : 0, pat(id), len, id, now);
        if (r == -EAGAIN)
            return;
        if (r != 0) {
            xfail(x, "send failed", id);
            return;
        }
        x->next++;
    }
}

static void on_a(void *ctx, struct sp_node *n, const struct ns_sctp_event *ev, uint64_t now)
{
    (void)n;
    struct xfer *x = ctx;
    if (ev->type == NS_SCTP_EV_WRITABLE || ev->type == NS_SCTP_EV_COMM_UP)
        pump(x, now);
    if (ev->type == NS_SCTP_EV_COMM_LOST)
        xfail(x, "a lost the association", ev->reason);
}

static void on_b(void *ctx, struct sp_node *n, const struct ns_sctp_event *ev, uint64_t now)
{
    (void)n;
    struct xfer *x = ctx;
    if (ev->type == NS_SCTP_EV_COMM_UP)
        x->p.ab = ev->assoc;
    if (ev->type == NS_SCTP_EV_DATA_READY)
        drain(x, now);
    if (ev->type == NS_SCTP_EV_COMM_LOST)
        xfail(x, "b lost the association", ev->reason);
}

static bool xfer_done(void *ctx)
{
    struct xfer *x = ctx;
    return x->failed || x->delivered == x->n_msgs;
}

struct xfer_result {
    uint32_t a_next_tsn, a_cum_ack, b_cum_tsn;
    struct ns_sctp_assoc_stats a, b;
    uint64_t end_time;
    uint64_t bytes;
};

static void run_xfer(uint64_t seed, uint32_t n, uint32_t loss_ppm, uint32_t dup_ppm,
                     struct xfer_result *res)
{
    struct xfer *x = calloc(1, sizeof(*x));
    x->n_msgs = n;
    x->len = calloc(n, sizeof(uint32_t));
    x->unordered = calloc(n, 1);
    x->seen = calloc(n, 1);
    x->cur = malloc(MAX_MSG);
    x->scratch = malloc(MAX_MSG);
    for (int i = 0; i < NSTREAMS; i++)
        x->last_ordered[i] = -1;
    ns_rng_seed(&x->rng, seed * 7919 + 1);
    for (uint32_t i = 0; i < n; i++) {
        x->len[i] = pick_len(&x->rng, i);
        x->unordered[i] = ns_rng_below(&x->rng, 4) == 0;
    }
    sp_pair_nodes(&x->p, seed, NULL, NULL, 1, 1, 5 * NS_MS);
    /* One packet in 20 is held up to 2 ms: it overtakes nothing sent more
     * than 2 ms before it and is overtaken by what follows. */
    x->p.net->link.jitter_us = 2 * NS_MS;
    x->p.net->link.reorder_ppm = 50000;
    x->p.net->link.loss_ppm = loss_ppm;
    x->p.net->link.dup_ppm = dup_ppm;
    x->p.a->on_event = on_a;
    x->p.a->ev_ctx = x;
    x->p.b->on_event = on_b;
    x->p.b->ev_ctx = x;
    struct ns_sctp_addr pb = sp_addr(SP_IP_B);
    x->p.aa = ns_sctp_connect(x->p.ea, &pb, 1, SP_PORT_B, x->p.net->now, NULL);
    assert_non_null(x->p.aa);
    bool ok = sp_run_until_pred(x->p.net, x->p.net->now + 100000 * NS_SEC, xfer_done, x);
    if (x->failed)
        fail_msg("seed %llu loss %u: %s", (unsigned long long)seed, loss_ppm, x->why);
    assert_true(ok);
    assert_int_equal(x->delivered, n);
    for (uint32_t i = 0; i < n; i++)
        assert_true(x->seen[i]);
    assert_false(x->in_piece);
    /* Then a clean shutdown. */
    ns_sctp_shutdown(x->p.aa, x->p.net->now);
    sp_run_for(x->p.net, 600 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(x->p.aa), NS_SCTP_CLOSED);
    assert_int_equal(ns_sctp_assoc_state(x->p.ab), NS_SCTP_CLOSED);
    assert_int_equal(sp_count_ev(x->p.a, NS_SCTP_EV_SEND_FAILED), 0);
    struct ns_sctp_assoc_info ia, ib;
    ns_sctp_assoc_info(x->p.aa, &ia);
    ns_sctp_assoc_info(x->p.ab, &ib);
    res->a_next_tsn = ia.next_tsn;
    res->a_cum_ack = ia.cum_ack;
    res->b_cum_tsn = ib.peer_cum_tsn;
    res->a = ia.stats;
    res->b = ib.stats;
    res->end_time = x->p.net->now;
    res->bytes = x->bytes;
    assert_int_equal(ia.cum_ack, ia.next_tsn - 1);
    assert_int_equal(ib.peer_cum_tsn, ia.next_tsn - 1);
    print_message("    seed %llu loss %u ppm: %u msgs, %llu bytes, %llu TSNs, %llu rtx "
                  "(%llu fast, %llu T3), virtual %.1f s, %llu packets\n",
                  (unsigned long long)seed, loss_ppm, n, (unsigned long long)x->bytes,
                  (unsigned long long)(ia.next_tsn - ia.local_initial_tsn),
                  (unsigned long long)ia.stats.retransmissions,
                  (unsigned long long)ia.stats.fast_retransmits,
                  (unsigned long long)ia.stats.t3_timeouts, (double)(x->p.net->now - 1000000) / 1e6,
                  (unsigned long long)x->p.net->sent);
    sp_pair_free(&x->p);
    free(x->len);
    free(x->unordered);
    free(x->seen);
    free(x->cur);
    free(x->scratch);
    free(x);
}

static void test_bulk_no_loss(void **state)
{
    (void)state;
    struct xfer_result r;
    run_xfer(1, 100000, 0, 5000, &r);
    assert_int_equal(r.a.t3_timeouts, 0);
}

static void test_bulk_1pct(void **state)
{
    (void)state;
    struct xfer_result r;
    run_xfer(2, 100000, 10000, 5000, &r);
    assert_true(r.a.retransmissions > 0);
}

static void test_bulk_5pct(void **state)
{
    (void)state;
    struct xfer_result r;
    run_xfer(3, 100000, 50000, 10000, &r);
    assert_true(r.a.retransmissions > 0);
    assert_true(r.a.fast_retransmits > 0);
}

/* Same seed, same everything: final TSNs, counters and end time. */
static void test_deterministic(void **state)
{
    (void)state;
    struct xfer_result r1, r2, r3;
    run_xfer(4, 3000, 20000, 5000, &r1);
    run_xfer(4, 3000, 20000, 5000, &r2);
    assert_int_equal(r1.a_next_tsn, r2.a_next_tsn);
    assert_int_equal(r1.b_cum_tsn, r2.b_cum_tsn);
    assert_int_equal(r1.end_time, r2.end_time);
    assert_memory_equal(&r1.a, &r2.a, sizeof(r1.a));
    assert_memory_equal(&r1.b, &r2.b, sizeof(r1.b));
    /* And another seed differs. */
    run_xfer(5, 3000, 20000, 5000, &r3);
    assert_true(r3.a_next_tsn != r1.a_next_tsn || r3.end_time != r1.end_time);
}

/* ---- INIT collisions ------------------------------------------------------ */

static void test_collisions(void **state)
{
    (void)state;
    int collided = 0;
    uint64_t case_b = 0, case_d = 0;
    for (uint64_t seed = 100; seed < 140; seed++) {
        struct sp_pair p;
        sp_pair_nodes(&p, seed, NULL, NULL, 1, 1, 1 * NS_MS);
        p.net->link.jitter_us = 3 * NS_MS;
        p.net->link.loss_ppm = seed % 2 ? 100000 : 0;
        ns_sctp_ep_listen(p.ea, true);
        struct ns_sctp_addr pa = sp_addr(SP_IP_A), pb = sp_addr(SP_IP_B);
        struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
        /* b starts a little later, inside the first round trip. */
        sp_run_for(p.net, ns_rng_below(&p.net->rng, 3 * NS_MS));
        struct ns_sctp_assoc *ab = ns_sctp_connect(p.eb, &pa, 1, SP_PORT_A, p.net->now, NULL);
        if (!ab) {
            /* a's INIT already made b an association: the same thing. */
            sp_pair_free(&p);
            continue;
        }
        sp_run_for(p.net, 120 * NS_SEC);
        assert_int_equal(p.a->sctp.n_assocs, 1);
        assert_int_equal(p.b->sctp.n_assocs, 1);
        assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
        assert_int_equal(ns_sctp_assoc_state(ab), NS_SCTP_ESTABLISHED);
        assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_UP), 1);
        assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_UP), 1);
        assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_RESTART), 0);
        struct ns_sctp_assoc_info ia, ib;
        ns_sctp_assoc_info(aa, &ia);
        ns_sctp_assoc_info(ab, &ib);
        assert_int_equal(ia.local_vtag, ib.peer_vtag);
        assert_int_equal(ia.peer_vtag, ib.local_vtag);
        collided += p.a->sctp.stats.collisions + p.b->sctp.stats.collisions > 0;
        case_b += p.a->sctp.stats.cookie_collision + p.b->sctp.stats.cookie_collision;
        case_d += p.a->sctp.stats.cookie_duplicate + p.b->sctp.stats.cookie_duplicate;
        for (int i = 0; i < 20; i++) {
            ns_sctp_send(aa, (uint16_t)(i % 10), (uint32_t)i, 0, "a->b", 4, 0, p.net->now);
            ns_sctp_send(ab, (uint16_t)(i % 10), (uint32_t)i, 0, "b->a", 4, 0, p.net->now);
        }
        sp_run_for(p.net, 120 * NS_SEC);
        assert_int_equal(sp_drain(p.net, ab), 20);
        assert_int_equal(sp_drain(p.net, aa), 20);
        sp_pair_free(&p);
    }
    assert_true(collided >= 10);
    /* Both ways a collision resolves (5.2.4 B and D) were taken. */
    assert_true(case_b > 0);
    assert_true(case_d > 0);
    print_message("    %d collisions: %llu cookies case B, %llu case D\n", collided,
                  (unsigned long long)case_b, (unsigned long long)case_d);
}

/* ---- Shutdown and abort in every state, under loss ----------------------- */

struct st_ctx {
    struct sp_pair *p;
    enum ns_sctp_state want;
};

static bool in_state(void *ctx)
{
    struct st_ctx *c = ctx;
    return ns_sctp_assoc_state(c->p->aa) == c->want;
}

static bool run_to(struct sp_pair *p, enum ns_sctp_state st)
{
    struct st_ctx c = {p, st};
    return sp_run_until_pred(p->net, p->net->now + 120 * NS_SEC, in_state, &c);
}

static void test_end_every_state(void **state)
{
    (void)state;
    const enum ns_sctp_state states[] = {
        NS_SCTP_COOKIE_WAIT,       NS_SCTP_COOKIE_ECHOED, NS_SCTP_ESTABLISHED,
        NS_SCTP_SHUTDOWN_PENDING,  NS_SCTP_SHUTDOWN_SENT, NS_SCTP_SHUTDOWN_RECEIVED,
        NS_SCTP_SHUTDOWN_ACK_SENT,
    };
    int reached = 0;
    for (int abort = 0; abort <= 1; abort++) {
        for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
            for (uint64_t seed = 0; seed < 4; seed++) {
                struct sp_pair p;
                sp_pair_nodes(&p, 1000 + 100 * k + seed + 50 * abort, NULL, NULL, 1, 1, 5 * NS_MS);
                p.net->link.jitter_us = NS_MS;
                p.net->link.loss_ppm = 20000;
                struct ns_sctp_addr pb = sp_addr(SP_IP_B);
                enum ns_sctp_state want = states[k];
                p.aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
                bool ok = true;
                if (want >= NS_SCTP_ESTABLISHED)
                    ok = run_to(&p, NS_SCTP_ESTABLISHED);
                if (ok && want >= NS_SCTP_ESTABLISHED) {
                    const struct ns_sctp_event *up = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP);
                    p.ab = up ? up->assoc : NULL;
                    static char blob[20000];
                    if (want == NS_SCTP_SHUTDOWN_PENDING) {
                        ns_sctp_send(p.aa, 0, 0, 0, blob, sizeof(blob), 1, p.net->now);
                        ns_sctp_shutdown(p.aa, p.net->now);
                    } else if (want == NS_SCTP_SHUTDOWN_SENT) {
                        ns_sctp_shutdown(p.aa, p.net->now);
                    } else if (want >= NS_SCTP_SHUTDOWN_RECEIVED && p.ab) {
                        if (want == NS_SCTP_SHUTDOWN_RECEIVED)
                            ns_sctp_send(p.aa, 0, 0, 0, blob, sizeof(blob), 1, p.net->now);
                        ns_sctp_shutdown(p.ab, p.net->now);
                    }
                }
                ok = ok && (want == NS_SCTP_COOKIE_WAIT || run_to(&p, want));
                if (ok) {
                    reached++;
                    if (abort)
                        assert_int_equal(ns_sctp_abort(p.aa, "sim", 3, p.net->now), 0);
                    else
                        assert_int_equal(ns_sctp_shutdown(p.aa, p.net->now), 0);
                }
                /* Whatever happened, both ends must come to rest. */
                sp_run_for(p.net, 3600 * NS_SEC);
                assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
                const struct ns_sctp_event *up = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP);
                if (up)
                    assert_int_equal(ns_sctp_assoc_state(up->assoc), NS_SCTP_CLOSED);
                if (ok && !abort) {
                    /* Graceful unless the handshake itself failed. */
                    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 0);
                    assert_true(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN_COMPLETE) +
                                    sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC) ==
                                1);
                }
                if (ok && abort)
                    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN_COMPLETE), 0);
                assert_int_equal(ns_timers_next(&p.a->timers), NS_TIME_NEVER);
                assert_int_equal(ns_timers_next(&p.b->timers), NS_TIME_NEVER);
                sp_pair_free(&p);
            }
        }
    }
    /* Most attempts catch the state they aim at (transient ones may be
     * skipped by a lost packet). */
    assert_true(reached >= 40);
}

int main(void)
{
    pattern_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bulk_no_loss), cmocka_unit_test(test_bulk_1pct),
        cmocka_unit_test(test_bulk_5pct),    cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_collisions),   cmocka_unit_test(test_end_every_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
