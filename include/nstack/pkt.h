/* Packets at the API: frames handed to and taken from a stack, SCTP packets
 * of a transport the application supplies. A packet is opaque: build one
 * from bytes, read its bytes out, free it. Whoever holds a packet owns it;
 * every function that takes one says so. */
#ifndef NSTACK_PKT_H
#define NSTACK_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nstack/types.h"

struct ns_pkt;

/* The most pieces (iovecs) one packet has. */
#define NS_PKT_MAX_IOV 9

/* A packet holding a copy of len bytes (with headroom in front for the
 * headers the stack pushes). NULL on allocation failure. */
NS_API struct ns_pkt *ns_pkt_from(const void *data, uint32_t len);
NS_API void ns_pkt_free(struct ns_pkt *p);
/* Its length in bytes. */
NS_API uint32_t ns_pkt_size(const struct ns_pkt *p);
/* Copy len bytes from offset off to dst; false if they are not there. */
NS_API bool ns_pkt_copy_out(const struct ns_pkt *p, uint32_t off, void *dst, uint32_t len);
/* Its pieces as iovecs for writev/sendmsg (at most max); returns how many,
 * or -1 if max is too small. */
NS_API int ns_pkt_iov(const struct ns_pkt *p, struct iovec *iov, int max);

#endif
