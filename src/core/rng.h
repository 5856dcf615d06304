/* Deterministic pseudo-random source (xoshiro256**), seeded by the embedder.
 * Protocol code draws jitter, IP IDs and the like from here so simulations
 * and tests replay exactly from a seed; the daemon seeds it from the OS. */
#ifndef NS_CORE_RNG_H
#define NS_CORE_RNG_H

#include <stdint.h>

struct ns_rng {
    uint64_t s[4];
};

void ns_rng_seed(struct ns_rng *r, uint64_t seed);
uint64_t ns_rng_u64(struct ns_rng *r);
/* Uniform in [0, n); n == 0 gives 0. */
uint64_t ns_rng_below(struct ns_rng *r, uint64_t n);
/* A seed from the operating system's entropy (getrandom). */
uint64_t ns_rng_os_seed(void);

#endif
