/* Devices: where frames meet the outside world. A device moves whole
 * Ethernet frames; it knows nothing of the stack. The embedder's loop reads
 * frames from a device into ns_stack_input_pkt() and writes the stack's
 * transmit queue to the device.
 *
 *   tap:NAME        a TAP interface (IFF_TAP | IFF_NO_PI), created if absent
 *   tap:NAME,offload  the same with a virtio-net header and UDP segmentation
 *                   offload (dev/vnet.h): runs of equal UDP datagrams go as
 *                   one frame
 *   afpacket:IFNAME an existing interface (e.g. a veth end) via AF_PACKET
 *   memlink         an in-process link between two stacks (dev/memlink.h)
 *   pcap tracer     wraps any device and records both directions (dev/pcap.h)
 */
#ifndef NS_DEV_DEV_H
#define NS_DEV_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "core/mac.h"
#include "nstack/dev.h"

struct ns_dev;

/* Device-level counters: what happened below the stack (frames the kernel
 * gave us that did not fit, writes the kernel refused). rx_/tx_frames count
 * reads and writes (a USO frame is one); *_gso_segs and tx_errors count
 * datagrams; tx_gso_refused counts runs the kernel refused as one frame
 * (their datagrams then went one by one). */
/* clang-format off */
#define NS_DEV_COUNTERS(X)                                                                  \
    X(rx_frames) X(rx_bytes) X(rx_errors) X(rx_drop_oversize) X(rx_drop_nomem)              \
    X(tx_frames) X(tx_bytes) X(tx_errors) X(tx_busy)                                        \
    X(rx_gso_frames) X(rx_gso_segs) X(rx_drop_gso) X(rx_csum_done) X(tx_gso_frames) X(tx_gso_segs)  \
    X(tx_gso_refused)
/* clang-format on */

struct ns_dev_stats {
    NS_DEV_COUNTERS(NS_CTR_FIELD)
};

struct ns_dev_ops {
    /* Read up to max frames without blocking; each comes back as a packet
     * with data at the Ethernet header and NS_PKT_HEADROOM headroom (a
     * frame may come back as up to rx_burst packets: give max >= rx_burst).
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
    struct ns_mac mac; /* the address the stack should use on this link */
    uint32_t mtu;
    uint32_t rx_burst;    /* packets one frame can become (1; 128 with offload) */
    bool tx_csum_offload; /* finishes NS_PKT_F_CSUM_PARTIAL checksums */
    int fd;               /* readable when frames wait; -1 for memlink */
    struct ns_dev_stats stats;
};

/* The default MAC for a device name: locally administered unicast
 * (02:xx:xx:xx:xx:xx) from a hash of the name, so a restarted daemon keeps
 * its address and neighbours' caches stay valid. */
void ns_dev_mac_from_name(const char *name, struct ns_mac *mac);

/* Shared by the kernel-backed devices (tap.c, afpacket.c). */
/* Bring ifname up if it is down and read its MTU (1500 if unknown).
 * Returns 0, or -errno with a one-line reason in err. */
int ns_dev_if_up(const char *ifname, uint32_t *mtu, char *err, size_t errlen);
/* Validate an interface name for kind ("tap", "afpacket"): non-empty, at
 * most 15 characters, no '/', ':', blanks or control characters (as Linux's
 * dev_valid_name). Returns 0 or -EINVAL with err. */
int ns_dev_check_ifname(const char *kind, const char *name, char *err, size_t errlen);
/* " (nstack needs root or CAP_NET_ADMIN)" for EPERM/EACCES, else "". */
const char *ns_dev_perm_hint(int err);

#endif
