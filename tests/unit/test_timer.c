/* Timers on injected time (core/timer.h): heap order against a sorted
 * reference, cancel, re-arm, callbacks that arm and cancel timers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/rng.h"
#include "core/timer.h"

#define container_of(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

struct item {
    struct ns_timer t;
    int id;
    uint64_t fired_at;
    int fired;
};

/* Firing log shared by the callbacks of one test. */
static int log_ids[8192];
static uint64_t log_times[8192];
static int log_n;

static void on_fire(struct ns_timer *t, uint64_t now)
{
    struct item *it = container_of(t, struct item, t);
    it->fired++;
    it->fired_at = now;
    assert_true(log_n < 8192);
    log_ids[log_n] = it->id;
    log_times[log_n] = now;
    log_n++;
}

static void check_heap(const struct ns_timers *ts)
{
    for (uint32_t i = 0; i < ts->n; i++) {
        assert_int_equal(ts->heap[i]->heap_idx, i + 1);
        if (i > 0)
            assert_true(ts->heap[(i - 1) / 2]->expires <= ts->heap[i]->expires);
    }
}

static void setup_log(void)
{
    log_n = 0;
}

static int cmp_item_expiry(const void *a, const void *b)
{
    const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
    if (x->t.expires != y->t.expires)
        return x->t.expires < y->t.expires ? -1 : 1;
    return x->id - y->id;
}

static void test_empty(void **st)
{
    (void)st;
    struct ns_timers ts;
    ns_timers_init(&ts);
    assert_int_equal(ns_timers_next(&ts), NS_TIME_NEVER);
    assert_int_equal(ns_timers_run(&ts, 1000), 0);
    struct item it = {.id = 1};
    ns_timer_init(&it.t, on_fire);
    assert_false(ns_timer_armed(&it.t));
    assert_int_equal(it.t.expires, NS_TIME_NEVER);
    ns_timer_cancel(&ts, &it.t); /* unarmed: nothing */
    assert_int_equal(ts.n, 0);
    ns_timers_free(&ts);
}

static void test_random_vs_sorted(void **st)
{
    (void)st;
    enum { N = 3000 };
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct ns_rng r;
    ns_rng_seed(&r, 7);
    struct item *items = calloc(N, sizeof(*items));
    uint64_t *when = calloc(N, sizeof(*when));
    struct item *sorted[N];
    setup_log();
    for (int i = 0; i < N; i++) {
        items[i].id = i;
        ns_timer_init(&items[i].t, on_fire);
        /* A narrow range so plenty of expiries collide. */
        when[i] = 1 + ns_rng_below(&r, 5000);
        assert_true(ns_timer_arm(&ts, &items[i].t, when[i]));
        sorted[i] = &items[i];
    }
    check_heap(&ts);
    assert_int_equal(ts.n, N);
    qsort(sorted, N, sizeof(sorted[0]), cmp_item_expiry);
    assert_int_equal(ns_timers_next(&ts), when[sorted[0]->id]);

    /* Run in uneven steps; each run fires exactly the timers now due. */
    uint64_t now = 0;
    int fired_total = 0;
    while (ts.n) {
        uint64_t prev = now;
        now += 1 + ns_rng_below(&r, 97);
        int due = 0;
        for (int i = fired_total; i < N && when[sorted[i]->id] <= now; i++)
            due++;
        assert_int_equal(ns_timers_run(&ts, now), due);
        for (int i = fired_total; i < fired_total + due; i++) {
            /* Fired in the first run that reached its expiry. */
            assert_int_equal(log_times[i], now);
            assert_true(when[log_ids[i]] > prev && when[log_ids[i]] <= now);
        }
        fired_total += due;
        assert_int_equal(log_n, fired_total);
        check_heap(&ts);
        if (ts.n)
            assert_int_equal(ns_timers_next(&ts), when[sorted[fired_total]->id]);
    }
    assert_int_equal(fired_total, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(items[i].fired, 1);
        assert_false(ns_timer_armed(&items[i].t));
        if (i > 0)
            assert_true(when[log_ids[i - 1]] <= when[log_ids[i]]);
        /* Same expiry sequence as the sorted reference. */
        assert_int_equal(when[log_ids[i]], when[sorted[i]->id]);
    }
    free(when);
    free(items);
    ns_timers_free(&ts);
}

/* Expiry is reset to NEVER once fired, so keep the armed times aside. */
static void test_order_exact(void **st)
{
    (void)st;
    enum { N = 1000 };
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct ns_rng r;
    ns_rng_seed(&r, 99);
    static struct item items[N];
    static uint64_t when[N];
    setup_log();
    for (int i = 0; i < N; i++) {
        items[i] = (struct item){.id = i};
        ns_timer_init(&items[i].t, on_fire);
        when[i] = ns_rng_below(&r, 100000);
        ns_timer_arm(&ts, &items[i].t, when[i]);
    }
    assert_int_equal(ns_timers_run(&ts, 100000), N);
    for (int i = 0; i < N; i++) {
        if (i > 0)
            assert_true(when[log_ids[i - 1]] <= when[log_ids[i]]);
        assert_int_equal(log_times[i], 100000);
    }
    /* Every timer fired exactly once. */
    for (int i = 0; i < N; i++)
        assert_int_equal(items[i].fired, 1);
    ns_timers_free(&ts);
}

static void test_not_early(void **st)
{
    (void)st;
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct item a = {.id = 1};
    ns_timer_init(&a.t, on_fire);
    setup_log();
    ns_timer_arm(&ts, &a.t, 500);
    assert_int_equal(ns_timers_run(&ts, 499), 0);
    assert_int_equal(a.fired, 0);
    assert_int_equal(ns_timers_next(&ts), 500);
    assert_int_equal(ns_timers_run(&ts, 500), 1);
    assert_int_equal(a.fired_at, 500);
    assert_false(ns_timer_armed(&a.t));
    assert_int_equal(ns_timers_next(&ts), NS_TIME_NEVER);
    ns_timers_free(&ts);
}

static void test_cancel(void **st)
{
    (void)st;
    enum { N = 500 };
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct ns_rng r;
    ns_rng_seed(&r, 3);
    static struct item items[N];
    setup_log();
    for (int i = 0; i < N; i++) {
        items[i] = (struct item){.id = i};
        ns_timer_init(&items[i].t, on_fire);
        ns_timer_arm(&ts, &items[i].t, 10 + ns_rng_below(&r, 1000));
    }
    int cancelled = 0;
    for (int i = 0; i < N; i += 3) {
        ns_timer_cancel(&ts, &items[i].t);
        assert_false(ns_timer_armed(&items[i].t));
        assert_int_equal(items[i].t.expires, NS_TIME_NEVER);
        check_heap(&ts);
        cancelled++;
    }
    ns_timer_cancel(&ts, &items[0].t); /* twice: nothing */
    assert_int_equal(ts.n, N - cancelled);
    assert_int_equal(ns_timers_run(&ts, 2000), N - cancelled);
    for (int i = 0; i < N; i++)
        assert_int_equal(items[i].fired, i % 3 == 0 ? 0 : 1);
    ns_timers_free(&ts);
}

static void test_rearm(void **st)
{
    (void)st;
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct item a = {.id = 1}, b = {.id = 2}, c = {.id = 3};
    ns_timer_init(&a.t, on_fire);
    ns_timer_init(&b.t, on_fire);
    ns_timer_init(&c.t, on_fire);
    setup_log();
    ns_timer_arm(&ts, &a.t, 100);
    ns_timer_arm(&ts, &b.t, 200);
    ns_timer_arm(&ts, &c.t, 300);
    assert_int_equal(ns_timers_next(&ts), 100);
    ns_timer_arm(&ts, &c.t, 50); /* earlier */
    assert_int_equal(ts.n, 3);   /* re-armed, not added twice */
    assert_int_equal(ns_timers_next(&ts), 50);
    ns_timer_arm(&ts, &c.t, 400); /* later */
    ns_timer_arm(&ts, &a.t, 250); /* later, past b */
    check_heap(&ts);
    assert_int_equal(ns_timers_next(&ts), 200);
    assert_int_equal(ns_timers_run(&ts, 1000), 3);
    assert_int_equal(log_n, 3);
    assert_int_equal(log_ids[0], 2);
    assert_int_equal(log_ids[1], 1);
    assert_int_equal(log_ids[2], 3);
    ns_timers_free(&ts);
}

/* A periodic timer, and one that manipulates others. */
struct ctl {
    struct ns_timer periodic, boss, victim, spawned, late;
    struct ns_timers *ts;
    int periodic_runs, victim_runs, spawned_runs, late_runs, boss_runs;
    uint64_t spawned_at, late_at;
};
static struct ctl ctl;

static void periodic_fn(struct ns_timer *t, uint64_t now)
{
    ctl.periodic_runs++;
    if (ctl.periodic_runs < 5)
        assert_true(ns_timer_arm(ctl.ts, t, now + 10));
}
static void victim_fn(struct ns_timer *t, uint64_t now)
{
    ctl.victim_runs++;
}
static void spawned_fn(struct ns_timer *t, uint64_t now)
{
    ctl.spawned_runs++;
    ctl.spawned_at = now;
}
static void late_fn(struct ns_timer *t, uint64_t now)
{
    ctl.late_runs++;
    ctl.late_at = now;
}
static void boss_fn(struct ns_timer *t, uint64_t now)
{
    ctl.boss_runs++;
    ns_timer_cancel(ctl.ts, &ctl.victim);        /* due at the same instant */
    ns_timer_arm(ctl.ts, &ctl.spawned, now);     /* due now: fires in this run */
    ns_timer_arm(ctl.ts, &ctl.late, now + 1000); /* pushed later */
}

static void test_callbacks(void **st)
{
    (void)st;
    struct ns_timers ts;
    ns_timers_init(&ts);
    memset(&ctl, 0, sizeof(ctl));
    ctl.ts = &ts;
    ns_timer_init(&ctl.periodic, periodic_fn);
    ns_timer_init(&ctl.boss, boss_fn);
    ns_timer_init(&ctl.victim, victim_fn);
    ns_timer_init(&ctl.spawned, spawned_fn);
    ns_timer_init(&ctl.late, late_fn);
    ns_timer_arm(&ts, &ctl.periodic, 10);
    ns_timer_arm(&ts, &ctl.boss, 19);
    ns_timer_arm(&ts, &ctl.victim, 20);
    ns_timer_arm(&ts, &ctl.late, 25);

    assert_int_equal(ns_timers_run(&ts, 10), 1);
    assert_int_equal(ctl.periodic_runs, 1);
    assert_int_equal(ns_timers_next(&ts), 19);

    /* Boss (19) runs first: it cancels victim, due later in this same run,
     * arms a timer due now (fires in this run) and pushes late back. */
    assert_int_equal(ns_timers_run(&ts, 20), 3);
    assert_int_equal(ctl.boss_runs, 1);
    assert_int_equal(ctl.victim_runs, 0);
    assert_false(ns_timer_armed(&ctl.victim));
    assert_int_equal(ctl.spawned_runs, 1);
    assert_int_equal(ctl.spawned_at, 20);
    assert_int_equal(ctl.periodic_runs, 2);
    assert_int_equal(ns_timers_next(&ts), 30);

    /* A late run: callbacks see the run's now, so the periodic timer
     * re-arms from 1000, not from its missed expiry. */
    assert_int_equal(ns_timers_run(&ts, 1000), 1);
    assert_int_equal(ctl.periodic_runs, 3);
    assert_int_equal(ns_timers_next(&ts), 1010);
    assert_int_equal(ns_timers_run(&ts, 1010), 1);
    assert_int_equal(ns_timers_next(&ts), 1020);
    assert_int_equal(ns_timers_run(&ts, 1020), 2); /* periodic's last, and late */
    assert_int_equal(ctl.periodic_runs, 5);
    assert_false(ns_timer_armed(&ctl.periodic));
    assert_int_equal(ctl.late_runs, 1);
    assert_int_equal(ctl.late_at, 1020);
    assert_int_equal(ts.n, 0);
    assert_int_equal(ns_timers_next(&ts), NS_TIME_NEVER);
    ns_timers_free(&ts);
}

static void test_free_disarms(void **st)
{
    (void)st;
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct item a = {.id = 1}, b = {.id = 2};
    ns_timer_init(&a.t, on_fire);
    ns_timer_init(&b.t, on_fire);
    ns_timer_arm(&ts, &a.t, 5);
    ns_timer_arm(&ts, &b.t, 6);
    ns_timers_free(&ts);
    assert_false(ns_timer_armed(&a.t));
    assert_false(ns_timer_armed(&b.t));
    assert_int_equal(ts.n, 0);
    assert_int_equal(ns_timers_next(&ts), NS_TIME_NEVER);
    /* Usable again after free. */
    ns_timer_arm(&ts, &a.t, 7);
    assert_int_equal(ns_timers_next(&ts), 7);
    ns_timers_free(&ts);
}

static void test_never_and_max(void **st)
{
    (void)st;
    struct ns_timers ts;
    ns_timers_init(&ts);
    struct item a = {.id = 1};
    ns_timer_init(&a.t, on_fire);
    setup_log();
    ns_timer_arm(&ts, &a.t, NS_TIME_NEVER - 1);
    assert_int_equal(ns_timers_run(&ts, NS_TIME_NEVER - 2), 0);
    assert_int_equal(ns_timers_run(&ts, NS_TIME_NEVER - 1), 1);
    ns_timers_free(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),         cmocka_unit_test(test_random_vs_sorted),
        cmocka_unit_test(test_order_exact),   cmocka_unit_test(test_not_early),
        cmocka_unit_test(test_cancel),        cmocka_unit_test(test_rearm),
        cmocka_unit_test(test_callbacks),     cmocka_unit_test(test_free_disarms),
        cmocka_unit_test(test_never_and_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
