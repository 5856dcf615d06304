/* CRC32c (Castagnoli) and the SCTP packet checksum: RFC 9260 section 6.8 and
 * appendix A, RFC 3720 appendix B.4 for the test vectors.
 *
 * ns_crc32c() follows the zlib convention: the value passed in and returned
 * is the finished CRC (pre- and post-inversion are done inside), so
 * ns_crc32c(ns_crc32c(0, a, na), b, nb) == ns_crc32c(0, a||b, na+nb) and the
 * checksum of a scattered packet is a chain of calls over its pieces.
 *
 * On x86-64 CPUs with SSE4.2 the crc32 instruction is used (detected at run
 * time on every call: the check is a load and a bit test, and keeping no
 * cached dispatch pointer keeps the module free of global mutable state);
 * elsewhere a slicing-by-8 table (literal constants in crc32c.c) is used.
 */
#ifndef NS_SCTP_CRC32C_H
#define NS_SCTP_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ns_pkt;

/* The CRC32c of len bytes, continuing from `crc` (0 to start). */
uint32_t ns_crc32c(uint32_t crc, const void *buf, size_t len);

/* The two implementations, exposed so tests can force each one. */
uint32_t ns_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* Only call when ns_crc32c_hw_available(); falls back to software otherwise. */
uint32_t ns_crc32c_hw(uint32_t crc, const void *buf, size_t len);
bool ns_crc32c_hw_available(void);

/* Offset of the checksum field in the SCTP common header. */
#define NS_SCTP_CSUM_OFF 8

/* The SCTP checksum of a linear packet (starting at the common header), the
 * checksum field counted as zero. The returned value is the CRC itself; on
 * the wire it is stored least significant byte first (RFC 9260 appendix A:
 * the CRC's bit order makes its first transmitted byte the low-order one),
 * which ns_sctp_checksum_fill/verify do. Packets shorter than the common
 * header give 0. */
uint32_t ns_sctp_checksum(const void *pkt, size_t len);
/* Same over a packet buffer (head then frags); p->data is the common header. */
uint32_t ns_sctp_checksum_pkt(const struct ns_pkt *p);
/* Compute and store the checksum; false if the head is shorter than the
 * common header (the checksum field must be in the head). */
bool ns_sctp_checksum_fill(struct ns_pkt *p);
/* True if the stored checksum matches. */
bool ns_sctp_checksum_verify(const struct ns_pkt *p);
bool ns_sctp_checksum_verify_buf(const void *pkt, size_t len);

#endif
