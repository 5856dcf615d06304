/* Timers on injected time.
 *
 * Protocol code never reads a clock: every entry point takes `now` in
 * microseconds, and the stack reports its next deadline so the embedder (the
 * daemon's event loop, or a test's virtual clock) knows when to call back.
 * A binary min-heap keeps arm/cancel O(log n) and next-deadline O(1); timers
 * are embedded in the objects that own them, so arming never allocates
 * except to grow the heap array.
 */
#ifndef NS_CORE_TIMER_H
#define NS_CORE_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "nstack/types.h"

struct ns_timer;
typedef void (*ns_timer_fn)(struct ns_timer *t, uint64_t now);

struct ns_timer {
    uint64_t expires;
    uint32_t heap_idx; /* 0 = not armed; otherwise position + 1 */
    ns_timer_fn fn;
};

struct ns_timers {
    struct ns_timer **heap;
    uint32_t n, cap;
};

void ns_timers_init(struct ns_timers *ts);
void ns_timers_free(struct ns_timers *ts);

static inline void ns_timer_init(struct ns_timer *t, ns_timer_fn fn)
{
    t->expires = NS_TIME_NEVER;
    t->heap_idx = 0;
    t->fn = fn;
}
static inline bool ns_timer_armed(const struct ns_timer *t)
{
    return t->heap_idx != 0;
}

/* Arm (or re-arm) t to fire at `when`. Returns false only if the heap could
 * not grow; the timer is then left unarmed. */
bool ns_timer_arm(struct ns_timers *ts, struct ns_timer *t, uint64_t when);
void ns_timer_cancel(struct ns_timers *ts, struct ns_timer *t);
/* Fire every timer with expires <= now, earliest first. A callback may arm
 * or cancel any timer, including itself. Returns the number fired. */
unsigned ns_timers_run(struct ns_timers *ts, uint64_t now);
static inline uint64_t ns_timers_next(const struct ns_timers *ts)
{
    return ts->n ? ts->heap[0]->expires : NS_TIME_NEVER;
}

#endif
