#include "core/rng.h"

#include <sys/random.h>
#include <time.h>

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ns_rng_seed(struct ns_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t ns_rng_u64(struct ns_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t ns_rng_below(struct ns_rng *r, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Rejection sampling keeps the draw unbiased for any n. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do {
        v = ns_rng_u64(r);
    } while (v >= limit);
    return v % n;
}

uint64_t ns_rng_os_seed(void)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof(seed), 0) == (ssize_t)sizeof(seed))
        return seed;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32);
}
