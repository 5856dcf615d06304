/* Segmentation offload for TAP (IFF_VNET_HDR, virtio 1.x section 5.1.6).
 *
 * With a virtio-net header in front of each frame the kernel takes and gives
 * UDP segmentation offload (USO) frames: one IPv4/UDP frame of up to 64 KiB
 * whose payload is cut into gso_size datagrams somewhere later (by the
 * kernel, or not at all when the other TAP also takes USO). A frame then
 * costs one system call and one trip through the bridge for up to 44 full
 * datagrams, where plain frames cost one each. SCTP over UDP (RFC 6951) is
 * what fills such runs.
 *
 * Both directions are pure functions over bytes and packets (no fd), so the
 * unit tests and the fuzzer drive them directly; dev/tap.c does the I/O.
 */
#ifndef NS_DEV_VNET_H
#define NS_DEV_VNET_H

#include <stdint.h>
#include <sys/uio.h>

#include "core/pkt.h"

/* struct virtio_net_hdr, in the host's byte order (what a TAP uses unless
 * TUNSETVNETLE/BE says otherwise). */
struct ns_vnet_hdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
};
#define NS_VNET_HLEN 10

#define NS_VNET_F_NEEDS_CSUM 1 /* checksum at csum_start+csum_offset is partial */
#define NS_VNET_F_DATA_VALID 2 /* the kernel verified the checksum */
#define NS_VNET_GSO_NONE     0
#define NS_VNET_GSO_UDP_L4   5

/* The kernel refuses USO frames of more than 128 datagrams (UDP_MAX_SEGMENTS);
 * we neither build nor accept more. */
#define NS_VNET_MAX_SEGS 128
/* A run's iovec stays within what writev takes (IOV_MAX). */
#define NS_VNET_MAX_IOV 1024
/* Ethernet + IPv4 without options + UDP: the only headers a run repeats. */
#define NS_VNET_RUN_HLEN (14 + 20 + 8)

struct ns_vnet_rx_stats {
    uint64_t gso_frames; /* USO frames split */
    uint64_t gso_segs;   /* datagrams they held */
    uint64_t csum_done;  /* partial checksums completed */
    uint64_t bad;        /* frames whose header does not describe them */
    uint64_t nomem;      /* frames dropped for want of a buffer */
};

/* One frame read from the TAP, its header already taken off: the packets it
 * stands for, each with NS_PKT_HEADROOM headroom and data at the Ethernet
 * header. A plain frame gives one packet (its partial checksum, if any,
 * completed); a USO frame gives one IPv4/UDP datagram per gso_size bytes of
 * payload with its own IP length, ID and checksum and a UDP checksum of zero
 * (the kernel marked the data as not yet summed and locally made; zero says
 * "no checksum" in IPv4 and keeps captures of the datagrams truthful).
 * Returns the count (at most max), or 0 with the frame counted in st when it
 * cannot be taken apart. */
int ns_vnet_rx(const struct ns_vnet_hdr *h, const uint8_t *frame, uint32_t len, struct ns_pkt **out,
               int max, struct ns_vnet_rx_stats *st);

/* A plan for writing pkts[0..n) to a TAP: how many of the leading packets
 * go as one frame, and the header for it. */
struct ns_vnet_tx_plan {
    struct ns_vnet_hdr h;
    int count;                     /* packets in this frame (>= 1) */
    uint32_t hlen;                 /* bytes of hdr below; 0 when count == 1 */
    uint8_t hdr[NS_VNET_RUN_HLEN]; /* the run's headers, lengths fixed */
};

/* Group the leading packets into one USO frame when they can be: IPv4/UDP
 * without options or fragments, identical addresses, ports, TOS and TTL,
 * every UDP payload the size of the first but the last no larger, at most
 * NS_VNET_MAX_SEGS and 64 KiB in all, its iovec within NS_VNET_MAX_IOV,
 * each packet's headers linear in its head. Otherwise count is 1 and h is
 * all zero (a plain frame) or, for a packet marked NS_PKT_F_CSUM_PARTIAL,
 * asks the kernel to finish its UDP checksum. */
void ns_vnet_tx_plan(struct ns_pkt *const *pkts, int n, struct ns_vnet_tx_plan *plan);

/* The iovec for a planned frame: the virtio header, then (for a run) the
 * run's headers and every packet past its own headers. Returns the entries
 * used, or -1 if max is too small. */
int ns_vnet_tx_iov(const struct ns_vnet_tx_plan *plan, struct ns_pkt *const *pkts,
                   struct iovec *iov, int max);

#endif
