/* Big-endian (network order) byte readers and writers: one home for the
 * helpers every wire format needs. They take byte pointers with no
 * alignment assumed and build values with shifts, which compilers turn
 * into a load and a byte swap; they never read or write outside the 2, 4
 * or 8 bytes named.
 *
 * The two little-endian 32-bit helpers are for the few fields stored least
 * significant byte first (the SCTP checksum, RFC 9260 Appendix B). */
#ifndef NS_CORE_BYTES_H
#define NS_CORE_BYTES_H

#include <stdint.h>

static inline uint16_t ns_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ns_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t ns_rd64(const uint8_t *p)
{
    return (uint64_t)ns_rd32(p) << 32 | ns_rd32(p + 4);
}

static inline void ns_wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void ns_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void ns_wr64(uint8_t *p, uint64_t v)
{
    ns_wr32(p, (uint32_t)(v >> 32));
    ns_wr32(p + 4, (uint32_t)v);
}

static inline uint32_t ns_rd32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void ns_wr32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
