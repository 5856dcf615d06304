/* Byte-level helpers the protocol tests share to build and read frames. */
#ifndef NS_TEST_WIRE_H
#define NS_TEST_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "core/checksum.h"

#define IP4(a, b, c, d)                                                                            \
    (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

/* Reference one's complement sum, written apart from core/checksum.c so
 * tests check one against the other: 16-bit big-endian words, an odd tail
 * padded with zero, a 64-bit accumulator folded at the end (not
 * complemented). */
static inline uint16_t wire_ref_sum(const uint8_t *b, size_t n, uint64_t init)
{
    uint64_t s = init;
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint64_t)(b[i] << 8 | b[i + 1]);
    if (n & 1)
        s += (uint64_t)b[n - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)s;
}

/* A 20-byte IPv4 header with a valid checksum. */
static inline void wire_iphdr(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
                              uint16_t frag, uint16_t tot_len, uint8_t ttl)
{
    ip[0] = 0x45;
    ip[1] = 0;
    ns_wr16(ip + 2, tot_len);
    ns_wr16(ip + 4, id);
    ns_wr16(ip + 6, frag);
    ip[8] = ttl;
    ip[9] = proto;
    ip[10] = ip[11] = 0;
    ns_wr32(ip + 12, src);
    ns_wr32(ip + 16, dst);
    ns_wr16(ip + 10, ns_csum(ip, 20));
}

#endif
