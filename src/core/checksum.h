/* The Internet checksum (RFC 1071), as used by IPv4, ICMP and UDP. */
#ifndef NS_CORE_CHECKSUM_H
#define NS_CORE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

struct ns_pkt;

/* Add len bytes to a running 32-bit one's-complement sum. Chaining calls is
 * only correct at even offsets; ns_csum_pkt handles pieces of odd length. */
uint32_t ns_csum_add(uint32_t sum, const void *data, size_t len);
uint16_t ns_csum_fold(uint32_t sum);
/* Checksum of a contiguous block, ready to store (already complemented). */
uint16_t ns_csum(const void *data, size_t len);
/* Sum over len bytes of a packet starting at off (head and fragments);
 * pieces of odd length are handled. */
uint32_t ns_csum_pkt(const struct ns_pkt *p, uint32_t off, uint32_t len, uint32_t sum);
/* The IPv4 pseudo-header sum for UDP/TCP (addresses in host order). */
uint32_t ns_csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);

#endif
