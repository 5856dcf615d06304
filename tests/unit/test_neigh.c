/* The neighbour engine (link/neigh.c) alone, with fake ops that record every
 * solicitation, transmission and error report, on a virtual clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/params.h"
#include "core/pkt.h"
#include "core/rng.h"
#include "core/timer.h"
#include "link/neigh.h"

#define T0     (1000 * NS_SEC) /* virtual time origin */
#define MS     NS_MS
#define MAXREC 256

static const uint8_t MAC_A[6] = {0x02, 0, 0, 0, 0, 0xa};
static const uint8_t MAC_B[6] = {0x02, 0, 0, 0, 0, 0xb};

struct sol {
    uint64_t t;
    bool bcast;
    uint8_t ll[6];
    uint8_t key[4];
    uint32_t skb_tag; /* 0: no packet given */
};
struct rec {
    uint64_t t;
    uint32_t tag;
    uint8_t ll[6];
    uint8_t key[4];
};

struct fix {
    struct ns_params params;
    struct ns_timers timers;
    struct ns_rng rng;
    struct ns_neigh_table tbl;
    uint64_t now;
    struct sol sol[MAXREC];
    int nsol;
    struct rec out[MAXREC];
    int nout;
    struct rec err[MAXREC];
    int nerr;
    /* Reentrancy hooks. */
    bool resend_on_error;   /* error_report sends a new packet to the same key */
    bool delete_on_solicit; /* solicit deletes the entry it is soliciting for */
};

static uint32_t tag_of(const struct ns_pkt *p)
{
    uint32_t t = 0;
    if (p && ns_pkt_len(p) >= 4)
        ns_pkt_copy_out(p, 0, &t, 4);
    return t;
}

static struct ns_pkt *mkpkt(uint32_t tag, uint32_t size)
{
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, size);
    assert_non_null(p);
    uint8_t *d = ns_pkt_put(p, size);
    memset(d, 0xab, size);
    if (size >= 4)
        memcpy(d, &tag, 4);
    return p;
}

static void fake_solicit(void *ctx, struct ns_neigh *n, const uint8_t *dst,
                         const struct ns_pkt *skb, uint64_t now)
{
    struct fix *f = ctx;
    assert_true(f->nsol < MAXREC);
    struct sol *s = &f->sol[f->nsol++];
    s->t = now;
    s->bcast = dst == NULL;
    memset(s->ll, 0, 6);
    if (dst)
        memcpy(s->ll, dst, 6);
    memcpy(s->key, n->key, 4);
    s->skb_tag = tag_of(skb);
    if (f->delete_on_solicit)
        assert_int_equal(ns_neigh_admin_del(&f->tbl, n->ifindex, n->key, now), 0);
}

static void fake_output(void *ctx, struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now)
{
    struct fix *f = ctx;
    assert_true(f->nout < MAXREC);
    struct rec *r = &f->out[f->nout++];
    r->t = now;
    r->tag = tag_of(pkt);
    memcpy(r->ll, n->lladdr, 6);
    memcpy(r->key, n->key, 4);
    ns_pkt_free(pkt);
}

static void fake_error(void *ctx, struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now)
{
    struct fix *f = ctx;
    assert_true(f->nerr < MAXREC);
    struct rec *r = &f->err[f->nerr++];
    r->t = now;
    r->tag = tag_of(pkt);
    memcpy(r->key, n->key, 4);
    ns_pkt_free(pkt);
    if (f->resend_on_error) {
        f->resend_on_error = false;
        uint8_t key[4];
        memcpy(key, n->key, 4);
        assert_int_equal(ns_neigh_output(&f->tbl, n->ifindex, key, mkpkt(999, 64), now), 0);
    }
}

static const struct ns_neigh_ops fake_ops = {fake_solicit, fake_output, fake_error};

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    ns_params_default(&f->params);
    ns_timers_init(&f->timers);
    ns_rng_seed(&f->rng, 42);
    f->now = T0;
    assert_int_equal(ns_neigh_table_init(&f->tbl, "test", 4, 6, &f->params.neigh, &f->timers,
                                         &f->rng, &fake_ops, f, f->now),
                     0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    ns_neigh_table_free(&f->tbl);
    assert_int_equal(f->timers.n, 0);
    ns_timers_free(&f->timers);
    free(f);
    return 0;
}

/* Advance the virtual clock to t, firing each timer at its own deadline. */
static void run_to(struct fix *f, uint64_t t)
{
    for (;;) {
        uint64_t next = ns_timers_next(&f->timers);
        if (next > t)
            break;
        if (next > f->now)
            f->now = next;
        ns_timers_run(&f->timers, f->now);
    }
    f->now = t;
}

static const uint8_t *key_of(uint8_t last)
{
    static uint8_t keys[256][4];
    keys[last][0] = 198;
    keys[last][1] = 18;
    keys[last][2] = 0;
    keys[last][3] = last;
    return keys[last];
}

static struct ns_neigh *get(struct fix *f, uint8_t last)
{
    struct ns_neigh *n = ns_neigh_lookup(&f->tbl, 1, key_of(last));
    assert_non_null(n);
    return n;
}

static int output(struct fix *f, uint8_t last, uint32_t tag, uint32_t size)
{
    return ns_neigh_output(&f->tbl, 1, key_of(last), mkpkt(tag, size), f->now);
}

/* An entry in `state` with lladdr MAC_A, made through the engine's own
 * transitions (INCOMPLETE then a reply). */
static struct ns_neigh *make_entry(struct fix *f, uint8_t last, uint8_t state)
{
    int err = 0;
    struct ns_neigh *n = ns_neigh_create(&f->tbl, 1, key_of(last), f->now, &err);
    assert_non_null(n);
    assert_int_equal(ns_neigh_update(n, MAC_A, state, NS_NEIGH_UPDATE_OVERRIDE, f->now), 0);
    assert_int_equal(n->state, state);
    return n;
}

/* ---- NONE -> INCOMPLETE ------------------------------------------------- */

static void test_immediate_probe(void **state)
{
    struct fix *f = *state;
    assert_int_equal(output(f, 1, 7, 100), 0);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->state, NS_NUD_INCOMPLETE);
    assert_int_equal(n->probes, 1);
    assert_int_equal(n->arp_queue.count, 1);
    /* The first solicitation leaves from the output call itself, at `now`,
     * broadcast, carrying the queued packet for its source address. */
    assert_int_equal(f->nsol, 1);
    assert_int_equal(f->sol[0].t, T0);
    assert_true(f->sol[0].bcast);
    assert_memory_equal(f->sol[0].key, key_of(1), 4);
    assert_int_equal(f->sol[0].skb_tag, 7);
    assert_true(ns_timer_armed(&n->timer));
    assert_int_equal(n->timer.expires, T0 + 1000 * MS);
    assert_int_equal(f->tbl.stats.probes_sent_mcast, 1);
    assert_int_equal(f->tbl.stats.allocs, 1);
    assert_int_equal(f->tbl.stats.lookups, 2); /* the output's and get()'s */
    assert_int_equal(f->tbl.stats.hits, 1);
    assert_int_equal(n->updated, T0);
    assert_int_equal(n->used, T0);
    /* More packets queue behind it without another solicitation. */
    assert_int_equal(output(f, 1, 8, 100), 0);
    assert_int_equal(f->nsol, 1);
    assert_int_equal(n->arp_queue.count, 2);
    assert_int_equal(f->nout, 0);
}

static void test_no_immediate_probe(void **state)
{
    struct fix *f = *state;
    f->params.neigh.immediate_probe = 0;
    assert_int_equal(output(f, 1, 7, 100), 0);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->state, NS_NUD_INCOMPLETE);
    assert_int_equal(f->nsol, 0);
    assert_int_equal(n->timer.expires, T0 + 10 * MS);
    run_to(f, T0 + 10 * MS - 1);
    assert_int_equal(f->nsol, 0);
    run_to(f, T0 + 10 * MS);
    assert_int_equal(f->nsol, 1);
    assert_int_equal(f->sol[0].t, T0 + 10 * MS);
    assert_true(f->sol[0].bcast);
    assert_int_equal(f->sol[0].skb_tag, 7);
    assert_int_equal(n->timer.expires, T0 + 1010 * MS);
}

/* Solicitation times and the failure time for retrans/floor/immediate. */
static void test_retransmit_intervals(void **state)
{
    struct fix *f = *state;
    static const struct {
        uint32_t retrans, floor, immediate, tick;
        uint64_t times_ms[3];
        uint64_t fail_ms;
    } cases[] = {
        {1000, 500, 1, 10, {0, 1000, 2000}, 3000},
        {10, 500, 1, 10, {0, 500, 1000}, 1500},
        {10, 0, 1, 10, {0, 10, 20}, 30},
        {1000, 0, 1, 10, {0, 1000, 2000}, 3000},
        {1000, 500, 0, 10, {10, 1010, 2010}, 3010},
        {10, 500, 0, 10, {10, 510, 1010}, 1510},
        {10, 0, 0, 100, {100, 110, 120}, 130},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        f->params.neigh.retrans_time_ms = cases[c].retrans;
        f->params.neigh.retrans_floor_ms = cases[c].floor;
        f->params.neigh.immediate_probe = cases[c].immediate;
        f->params.neigh.tick_ms = cases[c].tick;
        uint8_t last = (uint8_t)(10 + c);
        uint64_t start = f->now;
        int nsol0 = f->nsol, nerr0 = f->nerr;
        assert_int_equal(output(f, last, 100 + (uint32_t)c, 64), 0);
        run_to(f, start + 10 * NS_SEC);
        assert_int_equal(f->nsol - nsol0, 3);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(f->sol[nsol0 + i].t, start + cases[c].times_ms[i] * MS);
            assert_true(f->sol[nsol0 + i].bcast);
            assert_memory_equal(f->sol[nsol0 + i].key, key_of(last), 4);
        }
        assert_int_equal(f->nerr - nerr0, 1);
        assert_int_equal(f->err[nerr0].t, start + cases[c].fail_ms * MS);
        assert_int_equal(f->err[nerr0].tag, 100 + c);
        assert_int_equal(get(f, last)->state, NS_NUD_FAILED);
    }
}

static void test_fail_reports_queue_in_order(void **state)
{
    struct fix *f = *state;
    for (uint32_t i = 1; i <= 3; i++)
        assert_int_equal(output(f, 1, i, 100), 0);
    run_to(f, T0 + 3000 * MS - 1);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->state, NS_NUD_INCOMPLETE);
    assert_int_equal(f->nerr, 0);
    run_to(f, T0 + 3000 * MS);
    assert_int_equal(n->state, NS_NUD_FAILED);
    assert_int_equal(f->nsol, 3); /* exactly mcast_probes */
    assert_int_equal(f->nerr, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->err[i].tag, (uint32_t)i + 1);
        assert_int_equal(f->err[i].t, T0 + 3000 * MS);
    }
    assert_int_equal(n->arp_queue.count, 0);
    assert_int_equal(n->arp_queue.bytes, 0);
    assert_false(ns_timer_armed(&n->timer));
    assert_int_equal(n->updated, T0 + 3000 * MS);
    assert_int_equal(f->tbl.stats.res_failed, 1);
    assert_int_equal(f->tbl.stats.probes_sent_mcast, 3);
    assert_int_equal(f->tbl.stats.destroys, 0); /* kept as FAILED for GC */
    assert_int_equal(f->nout, 0);

    /* Sending to a FAILED entry starts over. */
    f->now += 100 * MS;
    assert_int_equal(output(f, 1, 4, 100), 0);
    assert_int_equal(n->state, NS_NUD_INCOMPLETE);
    assert_int_equal(n->probes, 1);
    assert_int_equal(f->nsol, 4);
    assert_int_equal(f->sol[3].t, f->now);
}

static void test_app_probes_extend_budget(void **state)
{
    struct fix *f = *state;
    f->params.neigh.mcast_probes = 2;
    f->params.neigh.app_probes = 1;
    assert_int_equal(output(f, 1, 1, 64), 0);
    run_to(f, T0 + 10 * NS_SEC);
    assert_int_equal(f->nsol, 3);
    assert_int_equal(f->err[0].t, T0 + 3000 * MS);
}

static void test_zero_mcast_probes_fails_at_once(void **state)
{
    struct fix *f = *state;
    f->params.neigh.mcast_probes = 0;
    assert_int_equal(output(f, 1, 5, 64), 0);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->state, NS_NUD_FAILED);
    assert_int_equal(f->nsol, 0);
    assert_int_equal(f->nerr, 1);
    assert_int_equal(f->err[0].tag, 5);
    assert_int_equal(f->err[0].t, T0);
    assert_int_equal(f->tbl.stats.res_failed, 1);
    assert_false(ns_timer_armed(&n->timer));
}

/* ---- resolution ---------------------------------------------------------- */

static void test_incomplete_to_reachable_flushes(void **state)
{
    struct fix *f = *state;
    for (uint32_t i = 1; i <= 3; i++)
        assert_int_equal(output(f, 1, i, 100), 0);
    struct ns_neigh *n = get(f, 1);
    f->now = T0 + 200 * MS;
    assert_int_equal(ns_neigh_update(n, MAC_A, NS_NUD_REACHABLE, NS_NEIGH_UPDATE_OVERRIDE, f->now),
                     0);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_int_equal(f->nout, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->out[i].tag, (uint32_t)i + 1);
        assert_memory_equal(f->out[i].ll, MAC_A, 6);
        assert_int_equal(f->out[i].t, T0 + 200 * MS);
    }
    assert_int_equal(n->arp_queue.count, 0);
    assert_int_equal(n->confirmed, T0 + 200 * MS);
    assert_int_equal(n->updated, T0 + 200 * MS);
    assert_int_equal(n->timer.expires, T0 + 200 * MS + f->tbl.reachable_time_us);
    /* No further solicitation, and new packets go straight out. */
    run_to(f, T0 + 5 * NS_SEC);
    assert_int_equal(f->nsol, 1);
    assert_int_equal(output(f, 1, 4, 100), 0);
    assert_int_equal(f->nout, 4);
    assert_int_equal(f->out[3].tag, 4);
    assert_int_equal(f->nerr, 0);
}

/* A STALE answer (a request from the neighbour) also flushes, and the
 * flushed packets move the entry on to DELAY as any send to STALE does. */
static void test_incomplete_to_stale_flushes_via_delay(void **state)
{
    struct fix *f = *state;
    assert_int_equal(output(f, 1, 1, 100), 0);
    assert_int_equal(output(f, 1, 2, 100), 0);
    struct ns_neigh *n = get(f, 1);
    f->now = T0 + 50 * MS;
    assert_int_equal(ns_neigh_update(n, MAC_A, NS_NUD_STALE, NS_NEIGH_UPDATE_OVERRIDE, f->now), 0);
    assert_int_equal(f->nout, 2);
    assert_int_equal(f->out[0].tag, 1);
    assert_int_equal(f->out[1].tag, 2);
    assert_int_equal(n->state, NS_NUD_DELAY);
    assert_int_equal(n->timer.expires, T0 + 50 * MS + 5 * NS_SEC);
    /* Never confirmed: the address came unsolicited. */
    assert_int_equal(n->confirmed, T0 + 50 * MS - 2 * 30 * NS_SEC);
}

static void test_queue_byte_limit(void **state)
{
    struct fix *f = *state;
    f->params.neigh.unres_qlen_bytes = 300;
    for (uint32_t i = 1; i <= 5; i++)
        assert_int_equal(output(f, 1, i, 100), 0);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->arp_queue.count, 3);
    assert_int_equal(n->arp_queue.bytes, 300);
    assert_int_equal(f->tbl.stats.unres_discards, 2);
    /* A packet that needs room drops just enough of the oldest. */
    assert_int_equal(output(f, 1, 6, 150), 0);
    assert_int_equal(n->arp_queue.count, 2); /* 5 (100) + 6 (150) */
    assert_int_equal(n->arp_queue.bytes, 250);
    assert_int_equal(f->tbl.stats.unres_discards, 4);
    /* A packet larger than the whole limit is dropped itself. */
    assert_int_equal(output(f, 1, 7, 301), 0);
    assert_int_equal(n->arp_queue.count, 2);
    assert_int_equal(f->tbl.stats.unres_discards, 5);
    assert_int_equal(ns_neigh_update(n, MAC_A, NS_NUD_REACHABLE, NS_NEIGH_UPDATE_OVERRIDE, f->now),
                     0);
    assert_int_equal(f->nout, 2);
    assert_int_equal(f->out[0].tag, 5);
    assert_int_equal(f->out[1].tag, 6);
    /* The solicitation carried the oldest packet at the time. */
    assert_int_equal(f->sol[0].skb_tag, 1);
}

/* Tiny packets are also bounded: at most unres_qlen_bytes / 64 of them. */
static void test_queue_count_limit(void **state)
{
    struct fix *f = *state;
    f->params.neigh.unres_qlen_bytes = 640;
    for (uint32_t i = 1; i <= 25; i++)
        assert_int_equal(output(f, 1, i, i % 2 ? 0 : 4), 0);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->arp_queue.count, 10);
    assert_int_equal(f->tbl.stats.unres_discards, 15);
    assert_int_equal(tag_of(n->arp_queue.head), 16); /* the 10 newest are kept */
    /* Below 64 bytes of limit nothing can wait. */
    f->params.neigh.unres_qlen_bytes = 63;
    assert_int_equal(output(f, 2, 1, 4), 0);
    assert_int_equal(get(f, 2)->arp_queue.count, 0);
    assert_int_equal(get(f, 2)->state, NS_NUD_INCOMPLETE);
    assert_int_equal(f->tbl.stats.unres_discards, 16);
}

/* ---- REACHABLE / STALE / DELAY / PROBE -------------------------------------- */

static void test_reachable_to_stale_at_drawn_time(void **state)
{
    struct fix *f = *state;
    uint64_t rt = f->tbl.reachable_time_us;
    assert_true(rt >= 15 * NS_SEC && rt < 45 * NS_SEC);
    /* A fixed seed gives a fixed draw. */
    struct fix *g = NULL;
    assert_int_equal(setup((void **)&g), 0);
    assert_int_equal(g->tbl.reachable_time_us, rt);
    teardown((void **)&g);

    f->now = T0 + 7 * MS;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_REACHABLE);
    uint64_t expiry = T0 + 7 * MS + rt;
    assert_int_equal(n->timer.expires, expiry);
    run_to(f, expiry - 1);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    run_to(f, expiry);
    assert_int_equal(n->state, NS_NUD_STALE);
    assert_int_equal(n->updated, expiry);
    assert_false(ns_timer_armed(&n->timer));
    assert_int_equal(f->nsol, 0);
    assert_int_equal(f->tbl.stats.probes_sent_ucast + f->tbl.stats.probes_sent_mcast, 0);
}

/* The draw stays in [0.5, 1.5) x base over many seeds and bases. */
static void test_reachable_time_bounds(void **state)
{
    (void)state;
    static const uint32_t bases[] = {1, 1000, 30000};
    for (size_t b = 0; b < 3; b++) {
        for (uint64_t seed = 1; seed <= 200; seed++) {
            struct ns_params p;
            ns_params_default(&p);
            p.neigh.base_reachable_time_ms = bases[b];
            struct ns_timers ts;
            struct ns_rng rng;
            struct ns_neigh_table tbl;
            ns_timers_init(&ts);
            ns_rng_seed(&rng, seed);
            assert_int_equal(
                ns_neigh_table_init(&tbl, "t", 4, 6, &p.neigh, &ts, &rng, &fake_ops, NULL, 0), 0);
            uint64_t base = (uint64_t)bases[b] * MS;
            assert_true(tbl.reachable_time_us >= base / 2);
            assert_true(tbl.reachable_time_us < base + base / 2);
            ns_neigh_table_free(&tbl);
            ns_timers_free(&ts);
        }
    }
}

/* Redrawn after 300 s (by the periodic GC run) and at once when the base
 * changes. */
static void test_reachable_time_redraw(void **state)
{
    struct fix *f = *state;
    uint64_t rt0 = f->tbl.reachable_time_us;
    make_entry(f, 1, NS_NUD_STALE); /* arms the gc timer */
    run_to(f, T0 + 300 * NS_SEC);
    assert_int_equal(f->tbl.reachable_time_us, rt0);
    assert_int_equal(f->tbl.last_rand, T0);
    run_to(f, T0 + 330 * NS_SEC); /* gc run at 330 s */
    assert_int_equal(f->tbl.stats.periodic_gc_runs, 11);
    assert_int_equal(f->tbl.last_rand, T0 + 330 * NS_SEC);
    assert_true(f->tbl.reachable_time_us != rt0);

    f->params.neigh.base_reachable_time_ms = 1000;
    struct ns_neigh *n = make_entry(f, 2, NS_NUD_REACHABLE);
    uint64_t rt = f->tbl.reachable_time_us;
    assert_true(rt >= 500 * MS && rt < 1500 * MS);
    assert_int_equal(n->timer.expires, f->now + rt);
}

static void test_stale_to_delay_on_output(void **state)
{
    struct fix *f = *state;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_STALE);
    assert_false(ns_timer_armed(&n->timer));
    f->now = T0 + 2 * NS_SEC;
    assert_int_equal(output(f, 1, 9, 100), 0);
    assert_int_equal(n->state, NS_NUD_DELAY);
    assert_int_equal(f->nout, 1); /* transmitted at once, not queued */
    assert_int_equal(f->out[0].tag, 9);
    assert_memory_equal(f->out[0].ll, MAC_A, 6);
    assert_int_equal(n->timer.expires, T0 + 7 * NS_SEC);
    assert_int_equal(n->used, T0 + 2 * NS_SEC);
    assert_int_equal(f->nsol, 0);
    /* More output in DELAY does not re-arm. */
    f->now += NS_SEC;
    assert_int_equal(output(f, 1, 10, 100), 0);
    assert_int_equal(f->nout, 2);
    assert_int_equal(n->timer.expires, T0 + 7 * NS_SEC);
}

static void test_delay_confirm_api_makes_reachable(void **state)
{
    struct fix *f = *state;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_STALE);
    assert_int_equal(output(f, 1, 1, 100), 0);
    assert_int_equal(n->state, NS_NUD_DELAY);
    f->now = T0 + 1 * NS_SEC;
    ns_neigh_confirm(&f->tbl, 1, key_of(1), f->now);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_int_equal(n->confirmed, T0 + NS_SEC);
    assert_int_equal(n->timer.expires, T0 + NS_SEC + f->tbl.reachable_time_us);
    run_to(f, T0 + 10 * NS_SEC);
    assert_int_equal(f->nsol, 0);
}

/* Linux's path: only `confirmed` moves (as neigh_confirm does), and the DELAY
 * timer finds the confirmation and returns to REACHABLE without probing. */
static void test_delay_timer_sees_confirmation(void **state)
{
    struct fix *f = *state;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_STALE);
    assert_int_equal(output(f, 1, 1, 100), 0);
    n->confirmed = T0 + 3 * NS_SEC;
    run_to(f, T0 + 5 * NS_SEC);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_int_equal(n->updated, T0 + 5 * NS_SEC);
    assert_int_equal(n->timer.expires, T0 + 3 * NS_SEC + f->tbl.reachable_time_us);
    assert_int_equal(f->nsol, 0);
}

static void test_delay_to_probe_to_failed(void **state)
{
    struct fix *f = *state;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_STALE);
    assert_int_equal(output(f, 1, 1, 100), 0);
    run_to(f, T0 + 5 * NS_SEC - 1);
    assert_int_equal(n->state, NS_NUD_DELAY);
    run_to(f, T0 + 5 * NS_SEC);
    assert_int_equal(n->state, NS_NUD_PROBE);
    assert_int_equal(f->nsol, 1);
    /* Packets sent while probing are transmitted, not queued. */
    f->now = T0 + 5500 * MS;
    assert_int_equal(output(f, 1, 2, 100), 0);
    assert_int_equal(f->nout, 2);
    assert_int_equal(n->arp_queue.count, 0);
    run_to(f, T0 + 8 * NS_SEC - 1);
    assert_int_equal(n->state, NS_NUD_PROBE);
    run_to(f, T0 + 8 * NS_SEC);
    assert_int_equal(n->state, NS_NUD_FAILED);
    assert_int_equal(f->nsol, 3);
    for (int i = 0; i < 3; i++) {
        assert_false(f->sol[i].bcast);
        assert_memory_equal(f->sol[i].ll, MAC_A, 6);
        assert_int_equal(f->sol[i].t, T0 + (5 + (uint64_t)i) * NS_SEC);
    }
    assert_int_equal(f->tbl.stats.probes_sent_ucast, 3);
    assert_int_equal(f->tbl.stats.probes_sent_mcast, 0);
    assert_int_equal(f->tbl.stats.res_failed, 1);
    assert_int_equal(f->nerr, 0);
}

static void test_probe_mcast_reprobes(void **state)
{
    struct fix *f = *state;
    f->params.neigh.ucast_probes = 2;
    f->params.neigh.mcast_reprobes = 1;
    make_entry(f, 1, NS_NUD_STALE);
    assert_int_equal(output(f, 1, 1, 100), 0);
    run_to(f, T0 + 20 * NS_SEC);
    assert_int_equal(f->nsol, 3);
    assert_false(f->sol[0].bcast);
    assert_false(f->sol[1].bcast);
    assert_true(f->sol[2].bcast);
    assert_int_equal(f->sol[2].t, T0 + 7 * NS_SEC);
    assert_int_equal(get(f, 1)->state, NS_NUD_FAILED);
    assert_int_equal(get(f, 1)->updated, T0 + 8 * NS_SEC);
}

static void test_probe_to_reachable_on_reply(void **state)
{
    struct fix *f = *state;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_STALE);
    assert_int_equal(output(f, 1, 1, 100), 0);
    run_to(f, T0 + 5 * NS_SEC + 300 * MS);
    assert_int_equal(n->state, NS_NUD_PROBE);
    assert_int_equal(ns_neigh_update(n, MAC_A, NS_NUD_REACHABLE, 0, f->now), 0);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
    assert_int_equal(n->confirmed, f->now);
    assert_int_equal(n->timer.expires, f->now + f->tbl.reachable_time_us);
    run_to(f, T0 + 10 * NS_SEC);
    assert_int_equal(f->nsol, 1);
    assert_int_equal(n->state, NS_NUD_REACHABLE);
}

/* Also with time starting at 0, where "confirmed long ago" wraps below 0. */
static void test_probe_from_time_zero(void **state)
{
    struct fix *f = *state;
    ns_neigh_table_free(&f->tbl);
    f->now = 0;
    assert_int_equal(ns_neigh_table_init(&f->tbl, "test", 4, 6, &f->params.neigh, &f->timers,
                                         &f->rng, &fake_ops, f, 0),
                     0);
    f->params.neigh.delay_first_probe_time_ms = 100;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_STALE);
    assert_int_equal(output(f, 1, 1, 100), 0);
    run_to(f, 100 * MS);
    assert_int_equal(n->state, NS_NUD_PROBE);
    assert_int_equal(f->nsol, 1);
}

static void test_confirm_keeps_reachable(void **state)
{
    struct fix *f = *state;
    struct ns_neigh *n = make_entry(f, 1, NS_NUD_REACHABLE);
    for (uint64_t t = 10; t <= 300; t += 10) {
        run_to(f, T0 + t * NS_SEC);
        assert_int_equal(output(f, 1, (uint32_t)t, 100), 0);
        ns_neigh_confirm(&f->tbl, 1, key_of(1), f->now);
        assert_int_equal(n->state, NS_NUD_REACHABLE);
    }
    assert_int_equal(f->nsol, 0);
    assert_int_equal(f->nout, 30);
    assert_int_equal(f->tbl.stats.probes_sent_ucast + f->tbl.stats.probes_sent_mcast, 0);
    /* Unknown or invalid entries are left alone. */
    ns_neigh_confirm(&f->tbl, 1, key_of(77), f->now);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(77)));
    assert_int_equal(output(f, 2, 1, 100), 0);
    ns_neigh_confirm(&f->tbl, 1, key_of(2), f->now);
    assert_int_equal(get(f, 2)->state, NS_NUD_INCOMPLETE);
    /* From STALE and PROBE too. */
    struct ns_neigh *s = make_entry(f, 3, NS_NUD_STALE);
    ns_neigh_confirm(&f->tbl, 1, key_of(3), f->now);
    assert_int_equal(s->state, NS_NUD_REACHABLE);
}

/* ---- update rules ---------------------------------------------------------- */

static void test_update_rules(void **state)
{
    struct fix *f = *state;
    enum { NOCHANGE = 0xff };
    static const struct {
        const char *what;
        uint8_t from;
        bool other_mac;
        uint8_t to;
        uint32_t flags;
        int rc;
        uint8_t want_state; /* NOCHANGE: as before */
        bool want_b;        /* lladdr is MAC_B afterwards */
    } cases[] = {
        {"different mac, no override: ignored", NS_NUD_REACHABLE, true, NS_NUD_REACHABLE, 0, 0,
         NOCHANGE, false},
        {"different mac, override", NS_NUD_REACHABLE, true, NS_NUD_REACHABLE,
         NS_NEIGH_UPDATE_OVERRIDE, 0, NS_NUD_REACHABLE, true},
        {"override to stale", NS_NUD_REACHABLE, true, NS_NUD_STALE, NS_NEIGH_UPDATE_OVERRIDE, 0,
         NS_NUD_STALE, true},
        {"weak override on connected: stale, mac kept", NS_NUD_REACHABLE, true, NS_NUD_REACHABLE,
         NS_NEIGH_UPDATE_WEAK_OVERRIDE, 0, NS_NUD_STALE, false},
        {"weak override on stale: ignored", NS_NUD_STALE, true, NS_NUD_REACHABLE,
         NS_NEIGH_UPDATE_WEAK_OVERRIDE, 0, NOCHANGE, false},
        {"same mac, stale on reachable: kept", NS_NUD_REACHABLE, false, NS_NUD_STALE, 0, 0,
         NOCHANGE, false},
        {"same mac, stale on reachable, admin", NS_NUD_REACHABLE, false, NS_NUD_STALE,
         NS_NEIGH_UPDATE_ADMIN, 0, NS_NUD_STALE, false},
        {"same mac, reachable on stale", NS_NUD_STALE, false, NS_NUD_REACHABLE, 0, 0,
         NS_NUD_REACHABLE, false},
        {"permanent without admin", NS_NUD_PERMANENT, false, NS_NUD_REACHABLE,
         NS_NEIGH_UPDATE_OVERRIDE, -EPERM, NOCHANGE, false},
        {"to permanent without admin", NS_NUD_STALE, false, NS_NUD_PERMANENT,
         NS_NEIGH_UPDATE_OVERRIDE, -EPERM, NOCHANGE, false},
        {"noarp without admin", NS_NUD_NOARP, true, NS_NUD_STALE, NS_NEIGH_UPDATE_OVERRIDE, -EPERM,
         NOCHANGE, false},
        {"permanent with admin", NS_NUD_PERMANENT, true, NS_NUD_REACHABLE,
         NS_NEIGH_UPDATE_ADMIN | NS_NEIGH_UPDATE_OVERRIDE, 0, NS_NUD_REACHABLE, true},
        {"not a state", NS_NUD_STALE, false, NS_NUD_STALE | NS_NUD_DELAY, 0, -EINVAL, NOCHANGE,
         false},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint8_t last = (uint8_t)(20 + c);
        int err;
        struct ns_neigh *n = ns_neigh_create(&f->tbl, 1, key_of(last), f->now, &err);
        assert_non_null(n);
        assert_int_equal(ns_neigh_update(n, MAC_A, cases[c].from,
                                         NS_NEIGH_UPDATE_ADMIN | NS_NEIGH_UPDATE_OVERRIDE, f->now),
                         0);
        uint64_t t_set = f->now;
        f->now += NS_SEC;
        int rc = ns_neigh_update(n, cases[c].other_mac ? MAC_B : MAC_A, cases[c].to, cases[c].flags,
                                 f->now);
        if (rc != cases[c].rc)
            fail_msg("%s: rc %d", cases[c].what, rc);
        uint8_t want = cases[c].want_state == NOCHANGE ? cases[c].from : cases[c].want_state;
        if (n->state != want)
            fail_msg("%s: state %s", cases[c].what, ns_nud_name(n->state));
        if ((memcmp(n->lladdr, MAC_B, 6) == 0) != cases[c].want_b)
            fail_msg("%s: lladdr", cases[c].what);
        /* `updated` moves only with a real change. */
        bool changed = want != cases[c].from || cases[c].want_b;
        if (n->updated != (changed ? f->now : t_set))
            fail_msg("%s: updated", cases[c].what);
    }
}

static void test_update_timestamps(void **state)
{
    struct fix *f = *state;
    int err;
    struct ns_neigh *n = ns_neigh_create(&f->tbl, 1, key_of(1), f->now, &err);
    /* Nothing to be valid with. */
    assert_int_equal(ns_neigh_update(n, NULL, NS_NUD_STALE, NS_NEIGH_UPDATE_OVERRIDE, f->now),
                     -EINVAL);
    assert_int_equal(n->state, NS_NUD_NONE);
    /* A new address that is not connected is "confirmed long ago". */
    assert_int_equal(ns_neigh_update(n, MAC_A, NS_NUD_STALE, NS_NEIGH_UPDATE_OVERRIDE, f->now), 0);
    assert_int_equal(n->confirmed, f->now - 60 * NS_SEC);
    f->now += NS_SEC;
    assert_int_equal(ns_neigh_update(n, NULL, NS_NUD_REACHABLE, 0, f->now), 0);
    assert_int_equal(n->confirmed, f->now);
    assert_int_equal(n->updated, f->now);
    assert_memory_equal(n->lladdr, MAC_A, 6);
    /* Even a refused address change counts as news from the neighbour. */
    f->now += NS_SEC;
    assert_int_equal(ns_neigh_update(n, MAC_B, NS_NUD_REACHABLE, 0, f->now), 0);
    assert_memory_equal(n->lladdr, MAC_A, 6);
    assert_int_equal(n->confirmed, f->now);
    assert_int_equal(n->updated, f->now - NS_SEC);
    /* Going invalid by hand. */
    assert_int_equal(ns_neigh_update(n, NULL, NS_NUD_FAILED, 0, f->now), 0);
    assert_int_equal(n->state, NS_NUD_FAILED);
    assert_false(ns_timer_armed(&n->timer));
    assert_int_equal(f->tbl.stats.res_failed, 0); /* it was not being resolved */
    /* An INCOMPLETE entry failed by hand reports its packets. */
    assert_int_equal(output(f, 2, 5, 100), 0);
    assert_int_equal(ns_neigh_update(get(f, 2), NULL, NS_NUD_FAILED, 0, f->now), 0);
    assert_int_equal(f->nerr, 1);
    assert_int_equal(f->err[0].tag, 5);
    assert_int_equal(f->tbl.stats.res_failed, 1);
    /* INCOMPLETE by hand starts soliciting from the timer. */
    int nsol = f->nsol;
    assert_int_equal(ns_neigh_update(get(f, 2), NULL, NS_NUD_INCOMPLETE, 0, f->now), 0);
    run_to(f, f->now);
    assert_int_equal(f->nsol, nsol + 1);
}

/* ---- administration ---------------------------------------------------------- */

static void test_admin_set_del_flush(void **state)
{
    struct fix *f = *state;
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(1), MAC_A, NS_NUD_PERMANENT, f->now), 0);
    struct ns_neigh *p = get(f, 1);
    assert_int_equal(p->state, NS_NUD_PERMANENT);
    assert_false(p->on_gc);
    assert_int_equal(f->tbl.gc_entries, 0);
    assert_int_equal(f->tbl.entries, 1);
    assert_false(ns_timer_armed(&p->timer));
    /* A permanent entry transmits at once and never solicits. */
    assert_int_equal(output(f, 1, 1, 100), 0);
    assert_int_equal(f->nout, 1);
    assert_memory_equal(f->out[0].ll, MAC_A, 6);
    run_to(f, T0 + 3600 * NS_SEC);
    assert_int_equal(p->state, NS_NUD_PERMANENT);
    assert_int_equal(f->nsol, 0);

    /* Replace keeps one entry; states other than these four are refused. */
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(1), MAC_B, NS_NUD_PERMANENT, f->now), 0);
    assert_memory_equal(p->lladdr, MAC_B, 6);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(1), MAC_B, NS_NUD_DELAY, f->now),
                     -EINVAL);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(9), MAC_B, NS_NUD_FAILED, f->now),
                     -EINVAL);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(9)));
    /* A failed set does not leave an empty entry behind. */
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(9), NULL, NS_NUD_STALE, f->now),
                     -EINVAL);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(9)));

    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(2), MAC_A, NS_NUD_NOARP, f->now), 0);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(3), MAC_A, NS_NUD_REACHABLE, f->now), 0);
    assert_int_equal(get(f, 3)->confirmed, f->now);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(4), MAC_A, NS_NUD_STALE, f->now), 0);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 2, key_of(5), MAC_A, NS_NUD_STALE, f->now), 0);
    assert_int_equal(output(f, 6, 2, 100), 0); /* INCOMPLETE with a queued packet */
    /* admin_set resolves an INCOMPLETE entry and flushes it. */
    assert_int_equal(output(f, 7, 3, 100), 0);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(7), MAC_B, NS_NUD_PERMANENT, f->now), 0);
    assert_int_equal(f->out[f->nout - 1].tag, 3);
    assert_int_equal(get(f, 7)->state, NS_NUD_PERMANENT);
    assert_int_equal(f->tbl.entries, 7);

    assert_int_equal(ns_neigh_admin_del(&f->tbl, 1, key_of(3), f->now), 0);
    assert_int_equal(ns_neigh_admin_del(&f->tbl, 1, key_of(3), f->now), -ENOENT);
    assert_int_equal(ns_neigh_admin_del(&f->tbl, 2, key_of(1), f->now), -ENOENT);
    assert_int_equal(f->tbl.entries, 6);

    uint64_t discards = f->tbl.stats.unres_discards;
    /* Flush interface 1, everything but PERMANENT and NOARP: 4 and 6. */
    uint8_t unpinned = (uint8_t) ~(NS_NUD_PERMANENT | NS_NUD_NOARP);
    assert_int_equal(ns_neigh_flush(&f->tbl, 1, unpinned, f->now), 2);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(4)));
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(6)));
    assert_non_null(ns_neigh_lookup(&f->tbl, 2, key_of(5)));
    assert_int_equal(f->tbl.stats.unres_discards, discards + 1); /* 6's queued packet */
    assert_int_equal(f->nerr, 0);
    /* All interfaces. */
    assert_int_equal(ns_neigh_flush(&f->tbl, 0, unpinned, f->now), 1);
    assert_int_equal(f->tbl.entries, 3); /* 1, 2 (NOARP), 7 */
    assert_int_equal(ns_neigh_flush(&f->tbl, 0, NS_NUD_NOARP, f->now), 1);
    assert_int_equal(ns_neigh_flush(&f->tbl, 0, 0xff, f->now), 2);
    assert_int_equal(f->tbl.entries, 0);
    assert_int_equal(f->tbl.stats.destroys, 8); /* with the failed set of 9 */
}

static void visit_count(void *arg, const struct ns_neigh *n)
{
    (void)n;
    (*(int *)arg)++;
}

static void test_foreach_and_names(void **state)
{
    struct fix *f = *state;
    for (uint8_t i = 1; i <= 40; i++)
        make_entry(f, i, NS_NUD_STALE);
    int count = 0;
    ns_neigh_foreach(&f->tbl, visit_count, &count);
    assert_int_equal(count, 40);

    static const struct {
        uint8_t st;
        const char *name;
    } names[] = {
        {NS_NUD_NONE, "NONE"},           {NS_NUD_INCOMPLETE, "INCOMPLETE"},
        {NS_NUD_REACHABLE, "REACHABLE"}, {NS_NUD_STALE, "STALE"},
        {NS_NUD_DELAY, "DELAY"},         {NS_NUD_PROBE, "PROBE"},
        {NS_NUD_FAILED, "FAILED"},       {NS_NUD_NOARP, "NOARP"},
        {NS_NUD_PERMANENT, "PERMANENT"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        assert_string_equal(ns_nud_name(names[i].st), names[i].name);
        assert_int_equal(ns_nud_parse(names[i].name), names[i].st);
    }
    assert_int_equal(ns_nud_parse("permanent"), NS_NUD_PERMANENT);
    assert_int_equal(ns_nud_parse("Reachable"), NS_NUD_REACHABLE);
    assert_int_equal(ns_nud_parse("bogus"), -1);
    assert_int_equal(ns_nud_parse(""), -1);
    assert_int_equal(ns_nud_parse(NULL), -1);
    assert_string_equal(ns_nud_name(0x03), "UNKNOWN");
}

/* ---- garbage collection --------------------------------------------------------- */

static void test_periodic_gc(void **state)
{
    struct fix *f = *state;
    f->params.neigh.gc_thresh1 = 0;
    /* gc timer armed at the first creation: runs at T0 + 30 s, 60 s, ... */
    struct ns_neigh *a = make_entry(f, 1, NS_NUD_STALE); /* used at T0 */
    (void)a;
    assert_int_equal(output(f, 2, 1, 64), 0); /* will be FAILED at T0 + 3 s */
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(3), MAC_A, NS_NUD_PERMANENT, f->now), 0);
    assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(4), MAC_A, NS_NUD_NOARP, f->now), 0);
    struct ns_neigh *e = make_entry(f, 5, NS_NUD_STALE);
    assert_int_equal(f->tbl.gc_timer.expires, T0 + 30 * NS_SEC);

    run_to(f, T0 + 30 * NS_SEC);
    assert_int_equal(f->tbl.stats.periodic_gc_runs, 1);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(2))); /* FAILED: gone */
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(1)));
    /* 5 carries traffic at T0 + 40 s (as a send would record). */
    f->now = T0 + 40 * NS_SEC;
    e->used = f->now;

    run_to(f, T0 + 60 * NS_SEC);
    assert_int_equal(f->tbl.stats.periodic_gc_runs, 2);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(1))); /* unused for 60 s */
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(5)));
    run_to(f, T0 + 90 * NS_SEC);
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(5))); /* 50 s */
    run_to(f, T0 + 120 * NS_SEC);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(5))); /* 80 s */
    /* Pinned entries stay; with nothing left to collect the timer stops. */
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(3)));
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(4)));
    assert_int_equal(f->tbl.gc_entries, 0);
    assert_false(ns_timer_armed(&f->tbl.gc_timer));
    assert_int_equal(f->tbl.stats.periodic_gc_runs, 4);
    assert_int_equal(f->tbl.stats.destroys, 3);
}

static void test_periodic_gc_spares_timed_and_small_tables(void **state)
{
    struct fix *f = *state;
    f->params.neigh.gc_thresh1 = 3;
    make_entry(f, 1, NS_NUD_STALE);
    make_entry(f, 2, NS_NUD_STALE);
    run_to(f, T0 + 120 * NS_SEC);
    /* Fewer than gc_thresh1 entries: the runs happen, nothing goes. */
    assert_int_equal(f->tbl.stats.periodic_gc_runs, 4);
    assert_int_equal(f->tbl.entries, 2);
    /* Now 3 entries, one REACHABLE kept alive by confirmations. */
    struct ns_neigh *r = make_entry(f, 3, NS_NUD_REACHABLE);
    for (uint64_t t = 130; t <= 240; t += 10) {
        run_to(f, T0 + t * NS_SEC);
        ns_neigh_confirm(&f->tbl, 1, key_of(3), f->now);
    }
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(1)));
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(2)));
    assert_int_equal(r->state, NS_NUD_REACHABLE);
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(3)));
}

static void test_forced_gc_thresh2(void **state)
{
    struct fix *f = *state;
    f->params.neigh.gc_thresh2 = 4;
    f->params.neigh.gc_thresh3 = 8;
    for (uint8_t i = 1; i <= 4; i++) {
        make_entry(f, i, NS_NUD_STALE);
        f->now += NS_SEC;
    }
    /* T0 + 4 s: the last forced gc (table init, T0) is not 5 s old yet. */
    make_entry(f, 5, NS_NUD_STALE);
    assert_int_equal(f->tbl.stats.forced_gc_runs, 0);
    assert_int_equal(f->tbl.entries, 5);
    /* T0 + 6 s: forced gc evicts the least recently updated entries older
     * than 5 s until below gc_thresh2: entries 1 and 2. */
    f->now = T0 + 6 * NS_SEC + 1;
    make_entry(f, 6, NS_NUD_STALE);
    assert_int_equal(f->tbl.stats.forced_gc_runs, 1);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(1)));
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(2)));
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(3)));
    assert_int_equal(f->tbl.entries, 4);
    assert_int_equal(f->tbl.last_flush, T0 + 6 * NS_SEC + 1);
    /* Within 5 s of that, no new forced gc below gc_thresh3. */
    f->now += NS_SEC;
    make_entry(f, 7, NS_NUD_STALE);
    assert_int_equal(f->tbl.stats.forced_gc_runs, 1);
    assert_int_equal(f->tbl.stats.table_fulls, 0);
}

/* Entries changed in the last 5 s survive a forced gc even when that
 * leaves the table above gc_thresh2; old and FAILED ones go. */
static void test_forced_gc_spares_fresh(void **state)
{
    struct fix *f = *state;
    f->params.neigh.gc_thresh2 = 2;
    f->params.neigh.gc_thresh3 = 8;
    f->now = T0 + 10 * NS_SEC;
    for (uint8_t i = 1; i <= 4; i++)
        make_entry(f, i, NS_NUD_STALE);
    /* Creating 3 forced a gc (2 >= gc_thresh2, last one at init) that found
     * only fresh entries. */
    assert_int_equal(f->tbl.stats.forced_gc_runs, 1);
    assert_int_equal(f->tbl.stats.destroys, 0);
    f->now = T0 + 14 * NS_SEC;
    make_entry(f, 5, NS_NUD_STALE);
    assert_int_equal(f->tbl.stats.forced_gc_runs, 1); /* within 5 s of the last */
    assert_int_equal(ns_neigh_update(get(f, 2), NULL, NS_NUD_FAILED, 0, f->now), 0);
    f->now = T0 + 16 * NS_SEC;
    static const uint8_t keep[] = {1, 3, 4};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(
            ns_neigh_update(get(f, keep[i]), MAC_B, NS_NUD_STALE, NS_NEIGH_UPDATE_OVERRIDE, f->now),
            0);
    f->now = T0 + 19 * NS_SEC + 1;
    make_entry(f, 6, NS_NUD_STALE);
    assert_int_equal(f->tbl.stats.forced_gc_runs, 2);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(5))); /* 5 s + 1 us old */
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(2))); /* FAILED */
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(1)));
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(3)));
    assert_non_null(ns_neigh_lookup(&f->tbl, 1, key_of(4)));
    assert_int_equal(f->tbl.entries, 4);
    assert_int_equal(f->tbl.stats.destroys, 2);
}

static void test_table_full(void **state)
{
    struct fix *f = *state;
    f->params.neigh.gc_thresh2 = 4;
    f->params.neigh.gc_thresh3 = 8;
    /* Entries being resolved are never evicted. */
    for (uint8_t i = 1; i <= 8; i++)
        assert_int_equal(output(f, i, i, 100), 0);
    assert_int_equal(f->tbl.entries, 8);
    assert_int_equal(output(f, 9, 9, 100), -ENOBUFS);
    assert_int_equal(f->tbl.stats.table_fulls, 1);
    assert_int_equal(f->tbl.stats.forced_gc_runs, 1);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(9)));
    int err = 0;
    assert_null(ns_neigh_create(&f->tbl, 1, key_of(9), f->now, &err));
    assert_int_equal(err, -ENOBUFS);
    assert_int_equal(f->tbl.stats.table_fulls, 2);
    /* Once they fail, forced gc takes them and creation works again. */
    run_to(f, T0 + 3 * NS_SEC);
    assert_int_equal(f->nerr, 8);
    assert_non_null(ns_neigh_create(&f->tbl, 1, key_of(9), f->now, &err));
    assert_int_equal(f->tbl.entries, 4);
    assert_int_equal(f->tbl.stats.destroys, 5);
    /* Permanent entries do not count against the thresholds. */
    for (uint8_t i = 100; i < 120; i++)
        assert_int_equal(ns_neigh_admin_set(&f->tbl, 1, key_of(i), MAC_A, NS_NUD_PERMANENT, f->now),
                         0);
    assert_int_equal(f->tbl.entries, 24);
    assert_int_equal(f->tbl.gc_entries, 4);
}

static void test_100k_entries(void **state)
{
    struct fix *f = *state;
    f->params.neigh.gc_thresh2 = 1000000;
    f->params.neigh.gc_thresh3 = 1000000;
    const uint32_t N = 100000;
    for (uint32_t i = 0; i < N; i++) {
        uint8_t key[4] = {10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
        int err = 0;
        struct ns_neigh *n = ns_neigh_create(&f->tbl, 1 + (i & 1), key, f->now, &err);
        assert_non_null(n);
    }
    assert_int_equal(f->tbl.entries, N);
    assert_int_equal(f->tbl.stats.allocs, N);
    assert_true(f->tbl.stats.hash_grows > 0);
    assert_true(f->tbl.hash_mask + 1 >= N);
    for (uint32_t i = 0; i < N; i++) {
        uint8_t key[4] = {10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
        struct ns_neigh *n = ns_neigh_lookup(&f->tbl, 1 + (i & 1), key);
        if (!n || memcmp(n->key, key, 4) != 0 || n->ifindex != 1 + (i & 1))
            fail_msg("lookup %u", i);
        /* Same key on the other interface is another entry (absent). */
        if (ns_neigh_lookup(&f->tbl, 2 - (i & 1), key))
            fail_msg("wrong interface %u", i);
    }
    assert_int_equal(f->tbl.stats.lookups, 2 * N);
    assert_int_equal(f->tbl.stats.hits, N);
    /* Chains stay short: no bucket longer than a handful. */
    uint32_t longest = 0;
    for (uint32_t b = 0; b <= f->tbl.hash_mask; b++) {
        uint32_t len = 0;
        for (struct ns_neigh *n = f->tbl.buckets[b]; n; n = n->hnext)
            len++;
        if (len > longest)
            longest = len;
    }
    assert_true(longest <= 12);
}

/* ---- reentrancy ---------------------------------------------------------------- */

static void test_resend_from_error_report(void **state)
{
    struct fix *f = *state;
    assert_int_equal(output(f, 1, 1, 100), 0);
    assert_int_equal(output(f, 1, 2, 100), 0);
    f->resend_on_error = true;
    run_to(f, T0 + 3 * NS_SEC);
    /* Both old packets reported; the retry started a new resolution with
     * only its own packet queued. */
    assert_int_equal(f->nerr, 2);
    struct ns_neigh *n = get(f, 1);
    assert_int_equal(n->state, NS_NUD_INCOMPLETE);
    assert_int_equal(n->arp_queue.count, 1);
    assert_int_equal(tag_of(n->arp_queue.head), 999);
    assert_int_equal(f->nsol, 4);
    assert_int_equal(f->sol[3].t, T0 + 3 * NS_SEC);
}

static void test_delete_from_solicit(void **state)
{
    struct fix *f = *state;
    f->delete_on_solicit = true;
    assert_int_equal(output(f, 1, 1, 100), 0);
    assert_null(ns_neigh_lookup(&f->tbl, 1, key_of(1)));
    assert_int_equal(f->tbl.entries, 0);
    assert_int_equal(f->tbl.stats.destroys, 1);
    assert_int_equal(f->tbl.stats.unres_discards, 1);
    assert_int_equal(f->timers.n, 1); /* only the gc timer */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_immediate_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_immediate_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retransmit_intervals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail_reports_queue_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_app_probes_extend_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_mcast_probes_fails_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incomplete_to_reachable_flushes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incomplete_to_stale_flushes_via_delay, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_queue_byte_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_count_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reachable_to_stale_at_drawn_time, setup, teardown),
        cmocka_unit_test(test_reachable_time_bounds),
        cmocka_unit_test_setup_teardown(test_reachable_time_redraw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_to_delay_on_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delay_confirm_api_makes_reachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delay_timer_sees_confirmation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delay_to_probe_to_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_mcast_reprobes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_to_reachable_on_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_from_time_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_confirm_keeps_reachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_timestamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admin_set_del_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreach_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_periodic_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_periodic_gc_spares_timed_and_small_tables, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_forced_gc_thresh2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forced_gc_spares_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_100k_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resend_from_error_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_from_solicit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
