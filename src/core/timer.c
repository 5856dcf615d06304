#include "core/timer.h"

#include <stdlib.h>

void ns_timers_init(struct ns_timers *ts)
{
    ts->heap = NULL;
    ts->n = ts->cap = 0;
}

void ns_timers_free(struct ns_timers *ts)
{
    for (uint32_t i = 0; i < ts->n; i++)
        ts->heap[i]->heap_idx = 0;
    free(ts->heap);
    ns_timers_init(ts);
}

static void place(struct ns_timers *ts, uint32_t i, struct ns_timer *t)
{
    ts->heap[i] = t;
    t->heap_idx = i + 1;
}

static void sift_up(struct ns_timers *ts, uint32_t i)
{
    struct ns_timer *t = ts->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (ts->heap[parent]->expires <= t->expires)
            break;
        place(ts, i, ts->heap[parent]);
        i = parent;
    }
    place(ts, i, t);
}

static void sift_down(struct ns_timers *ts, uint32_t i)
{
    struct ns_timer *t = ts->heap[i];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        uint64_t best = t->expires;
        if (l < ts->n && ts->heap[l]->expires < best) {
            m = l;
            best = ts->heap[l]->expires;
        }
        if (r < ts->n && ts->heap[r]->expires < best)
            m = r;
        if (m == i)
            break;
        place(ts, i, ts->heap[m]);
        i = m;
    }
    place(ts, i, t);
}

bool ns_timer_arm(struct ns_timers *ts, struct ns_timer *t, uint64_t when)
{
    if (ns_timer_armed(t)) {
        uint64_t old = t->expires;
        t->expires = when;
        if (when < old)
            sift_up(ts, t->heap_idx - 1);
        else
            sift_down(ts, t->heap_idx - 1);
        return true;
    }
    if (ts->n == ts->cap) {
        uint32_t ncap = ts->cap ? ts->cap * 2 : 64;
        struct ns_timer **nh = realloc(ts->heap, ncap * sizeof(*nh));
        if (!nh)
            return false;
        ts->heap = nh;
        ts->cap = ncap;
    }
    t->expires = when;
    place(ts, ts->n++, t);
    sift_up(ts, ts->n - 1);
    return true;
}

void ns_timer_cancel(struct ns_timers *ts, struct ns_timer *t)
{
    if (!ns_timer_armed(t))
        return;
    uint32_t i = t->heap_idx - 1;
    t->heap_idx = 0;
    t->expires = NS_TIME_NEVER;
    ts->n--;
    if (i == ts->n)
        return;
    struct ns_timer *last = ts->heap[ts->n];
    place(ts, i, last);
    sift_down(ts, i);
    sift_up(ts, last->heap_idx - 1);
}

unsigned ns_timers_run(struct ns_timers *ts, uint64_t now)
{
    unsigned fired = 0;
    while (ts->n && ts->heap[0]->expires <= now) {
        struct ns_timer *t = ts->heap[0];
        ns_timer_cancel(ts, t);
        fired++;
        t->fn(t, now);
    }
    return fired;
}
