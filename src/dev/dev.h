/* Devices: where frames meet the outside world. A device moves whole
 * Ethernet frames; it knows nothing of the stack. The embedder's loop reads
 * frames from a device into ns_stack_input_pkt() and writes the stack's
 * transmit queue to the device.
 *
 *   tap:NAME        a TAP interface (IFF_TAP | IFF_NO_PI), created if absent
 *   afpacket:IFNAME an existing interface (e.g. a veth end) via AF_PACKET
 *   memlink         an in-process link between two stacks (dev/memlink.h)
 *   pcap tracer     wraps any device and records both directions (dev/pcap.h)
 */
#ifndef NS_DEV_DEV_H
#define NS_DEV_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "core/pkt.h"
#include "link/eth.h"

struct ns_dev;

struct ns_dev_ops {
    /* Read up to max frames without blocking; each comes back as a packet
     * with data at the Ethernet header and NS_PKT_HEADROOM headroom.
     * Returns the count (0 when nothing is waiting) or -errno. */
    int (*recv)(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now);
    /* Write frames without blocking; returns how many were taken (the
     * device frees those) or -errno. A full device takes fewer. */
    int (*send)(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now);
    void (*close)(struct ns_dev *d);
};

struct ns_dev {
    const struct ns_dev_ops *ops;
    char name[16];
    struct ns_mac mac;  /* the address the stack should use on this link */
    uint32_t mtu;
    int fd;             /* readable when frames wait; -1 for memlink */
};

/* Open "tap:NAME" or "afpacket:IFNAME". On failure returns NULL and writes a
 * one-line reason to err (e.g. "cannot open /dev/net/tun: Permission denied
 * (nstack needs root or CAP_NET_ADMIN)"). */
struct ns_dev *ns_dev_open(const char *spec, char *err, size_t errlen);

static inline int ns_dev_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    return d->ops->recv(d, pkts, max, now);
}
static inline int ns_dev_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    return d->ops->send(d, pkts, n, now);
}
static inline void ns_dev_close(struct ns_dev *d)
{
    if (d)
        d->ops->close(d);
}

#endif
