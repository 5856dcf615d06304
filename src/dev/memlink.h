/* memlink: an in-process point-to-point Ethernet link between two devices,
 * for deterministic simulations. What one end sends is delivered to the
 * other end after a delay, subject to impairments drawn from a seeded
 * random source: loss, duplication, reordering (extra delay for the chosen
 * frames, so later ones overtake them), jitter, a serialisation rate and a
 * queue limit. No threads, no clock: frames become receivable when the
 * `now` passed to recv reaches their delivery time.
 *
 * Probabilities are integers in parts per million (NS_MEMLINK_PPM(0.1) is
 * 10%), so a configuration means the same on every platform.
 */
#ifndef NS_DEV_MEMLINK_H
#define NS_DEV_MEMLINK_H

#include <stdint.h>

#include "core/counters.h"
#include "dev/dev.h"

#define NS_MEMLINK_PPM(p)       ((uint32_t)((p)*1000000.0 + 0.5))
#define NS_MEMLINK_MILLION      1000000u
#define NS_MEMLINK_DEFAULT_QLEN 1000

struct ns_memlink_cfg {
    uint64_t seed;        /* random source for the impairments */
    uint32_t loss_ppm;    /* each frame lost with this probability */
    uint32_t dup_ppm;     /* a surviving frame delivered twice */
    uint32_t reorder_ppm; /* a frame held back by reorder_delay_us */
    uint64_t reorder_delay_us;
    uint64_t delay_us;         /* one-way propagation delay */
    uint64_t jitter_us;        /* uniform extra delay in [0, jitter_us] per frame */
    uint64_t rate_bytes_per_s; /* serialisation rate per direction; 0 = infinite */
    uint32_t queue_limit;      /* frames in flight per direction; 0 = 1000 */
    uint32_t mtu;              /* 0 = 1500; larger frames are dropped */
    struct ns_mac mac[2];      /* the ends' addresses; zero = 02:00:00:00:00:01 / :02 */
    const char *name[2];       /* the ends' names; NULL = "ml0" / "ml1" */
};

/* Counters per direction, indexed by the sending end. */
/* clang-format off */
#define NS_MEMLINK_COUNTERS(X)                                                              \
    X(sent) X(sent_bytes) X(lost) X(duplicated) X(reordered) X(delivered)                   \
    X(delivered_bytes) X(drop_queue_full) X(drop_oversize) X(drop_nomem) X(drop_closed)
/* clang-format on */

struct ns_memlink_stats {
    NS_MEMLINK_COUNTERS(NS_CTR_FIELD)
};

struct ns_memlink;

struct ns_memlink *ns_memlink_new(const struct ns_memlink_cfg *cfg);
/* Frees the link, both ends and every frame in flight. Close ends (or not)
 * before this, never after. */
void ns_memlink_free(struct ns_memlink *l);
/* End 0 or 1, an ns_dev (fd -1). Closing an end only marks it closed:
 * frames towards it are then dropped (drop_closed). */
struct ns_dev *ns_memlink_end(struct ns_memlink *l, int side);
/* Change the impairments (loss, dup, reorder, delays, rate, queue limit)
 * of a running link, e.g. to cut it. Seed, mtu, macs and names are kept;
 * frames in flight keep their delivery times. */
void ns_memlink_set_impairments(struct ns_memlink *l, const struct ns_memlink_cfg *cfg);
/* The earliest pending delivery in either direction, NS_TIME_NEVER if none. */
uint64_t ns_memlink_next_deadline(const struct ns_memlink *l);
/* The same for frames travelling towards end `side`. */
uint64_t ns_memlink_end_deadline(const struct ns_memlink *l, int side);
/* Frames in flight towards end `side`. */
uint32_t ns_memlink_inflight(const struct ns_memlink *l, int side);
/* Counters of the direction whose sender is end `side`. */
const struct ns_memlink_stats *ns_memlink_stats(const struct ns_memlink *l, int side);

#endif
