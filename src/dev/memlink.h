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
#include "nstack/dev.h"

/* Counters per direction, indexed by the sending end. */
/* clang-format off */
#define NS_MEMLINK_COUNTERS(X)                                                              \
    X(sent) X(sent_bytes) X(lost) X(duplicated) X(reordered) X(delivered)                   \
    X(delivered_bytes) X(drop_queue_full) X(drop_oversize) X(drop_nomem) X(drop_closed)
/* clang-format on */

struct ns_memlink_stats {
    NS_MEMLINK_COUNTERS(NS_CTR_FIELD)
};

/* Counters of the direction whose sender is end `side`. */
const struct ns_memlink_stats *ns_memlink_stats(const struct ns_memlink *l, int side);

#endif
