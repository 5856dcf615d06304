/* Devices: where a stack's Ethernet frames come from and go to. A TAP
 * (/dev/net/tun), an existing interface through AF_PACKET (one end of a
 * veth pair), an in-process simulated link (memlink, seeded impairments,
 * no threads and no clock), and a pcap tracer wrapping any of them.
 * Devices never block: recv and send return what is ready. */
#ifndef NSTACK_DEV_H
#define NSTACK_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "nstack/pkt.h"
#include "nstack/types.h"

struct ns_dev;

/* Open "tap:NAME[,offload]" or "afpacket:IFNAME". NULL on failure with a
 * one-line reason in err (e.g. "cannot open /dev/net/tun: Permission
 * denied (nstack needs root or CAP_NET_ADMIN)"). */
NS_API struct ns_dev *ns_dev_open(const char *spec, char *err, size_t errlen);
/* A TAP interface NAME, or NAME,offload for the virtio-net header and UDP
 * segmentation offload (Linux 6.2 or later); created if absent. */
NS_API struct ns_dev *ns_tap_open(const char *spec, char *err, size_t errlen);
/* An existing Ethernet interface through a raw packet socket (put in
 * promiscuous mode while open). */
NS_API struct ns_dev *ns_afpacket_open(const char *ifname, char *err, size_t errlen);
NS_API void ns_dev_close(struct ns_dev *d);

/* Read up to max frames without blocking; each a packet with data at the
 * Ethernet header (a frame may come back as several packets on an offload
 * TAP: give max >= 128). Returns the count (0: nothing waiting) or -errno. */
NS_API int ns_dev_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now);
/* Write frames without blocking; returns how many were taken (the device
 * owns those) or -errno. A full device takes fewer. */
NS_API int ns_dev_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now);
/* Readable when frames wait; -1 for a memlink end. */
NS_API int ns_dev_fd(const struct ns_dev *d);
NS_API const char *ns_dev_name(const struct ns_dev *d);
/* The address the stack should use on this link (derived from the name:
 * locally administered, stable across restarts). */
NS_API struct ns_mac ns_dev_mac(const struct ns_dev *d);
NS_API uint32_t ns_dev_mtu(const struct ns_dev *d);

/* ---- memlink ------------------------------------------------------------ */

#define NS_MEMLINK_PPM(p)       ((uint32_t)((p)*1000000.0 + 0.5))
#define NS_MEMLINK_MILLION      1000000u
#define NS_MEMLINK_DEFAULT_QLEN 1000

/* Probabilities in parts per million, so a configuration means the same
 * on every platform. */
struct ns_memlink_cfg {
    uint64_t seed;        /* random source for the impairments */
    uint32_t loss_ppm;    /* each frame lost with this probability */
    uint32_t dup_ppm;     /* a surviving frame delivered twice */
    uint32_t reorder_ppm; /* a frame held back by reorder_delay_us */
    uint64_t reorder_delay_us;
    uint64_t delay_us;         /* one-way propagation delay */
    uint64_t jitter_us;        /* uniform extra delay in [0, jitter_us] per frame */
    uint64_t rate_bytes_per_s; /* serialisation rate per direction; 0 = infinite */
    uint32_t queue_limit;      /* frames in flight per direction; 0 = 1000 */
    uint32_t mtu;              /* 0 = 1500; larger frames are dropped */
    struct ns_mac mac[2];      /* the ends' addresses; zero = 02:00:00:00:00:01 / :02 */
    const char *name[2];       /* the ends' names; NULL = "ml0" / "ml1" */
};

struct ns_memlink;

NS_API struct ns_memlink *ns_memlink_new(const struct ns_memlink_cfg *cfg);
/* Frees the link, both ends and every frame in flight. Close ends (or not)
 * before this, never after. */
NS_API void ns_memlink_free(struct ns_memlink *l);
/* End 0 or 1. Closing an end only marks it closed: frames towards it are
 * then dropped. */
NS_API struct ns_dev *ns_memlink_end(struct ns_memlink *l, int side);
/* Change the impairments (loss, dup, reorder, delays, rate, queue limit)
 * of a running link, e.g. to cut it. Seed, mtu, macs and names are kept. */
NS_API void ns_memlink_set_impairments(struct ns_memlink *l, const struct ns_memlink_cfg *cfg);
/* The earliest pending delivery in either direction, NS_TIME_NEVER if none. */
NS_API uint64_t ns_memlink_next_deadline(const struct ns_memlink *l);
/* The same for frames travelling towards end `side`. */
NS_API uint64_t ns_memlink_end_deadline(const struct ns_memlink *l, int side);
/* Frames in flight towards end `side`. */
NS_API uint32_t ns_memlink_inflight(const struct ns_memlink *l, int side);

/* ---- pcap capture files ----------------------------------------------------
 * The classic libpcap format (LINKTYPE_ETHERNET), written without libpcap.
 * Record timestamps are the `now` passed plus wall_offset_us; buffered
 * records reach the file within a second of `now` and on close. */

struct ns_pcap;
struct ns_pcap_opts {
    bool nanosec;           /* nanosecond-resolution variant (magic 0xa1b23c4d) */
    uint32_t snaplen;       /* 0 = 65535; longer frames are recorded truncated */
    int64_t wall_offset_us; /* added to `now` to form the record timestamps */
};

/* Create (truncate) path. NULL with errno set on failure. */
NS_API struct ns_pcap *ns_pcap_open(const char *path);
NS_API struct ns_pcap *ns_pcap_open_opts(const char *path, const struct ns_pcap_opts *o);
/* Record one frame. 0 or -errno (a write error is sticky). */
NS_API int ns_pcap_write(struct ns_pcap *pc, const struct ns_pkt *pkt, uint64_t now);
NS_API int ns_pcap_write_bytes(struct ns_pcap *pc, const void *data, uint32_t len, uint64_t now);
/* Flush what waited a second or more; returns when the next call is due. */
NS_API uint64_t ns_pcap_poll(struct ns_pcap *pc, uint64_t now);
NS_API int ns_pcap_flush(struct ns_pcap *pc);
/* Flush and close; 0 or the first write error as -errno. */
NS_API int ns_pcap_close(struct ns_pcap *pc);
NS_API uint64_t ns_pcap_records(const struct ns_pcap *pc);
/* ns_pcap_write_bytes for hooks with a context pointer (ctx: the ns_pcap),
 * such as ns_udp_host_set_capture. */
NS_API int ns_pcap_capture(void *ctx, const void *frame, uint32_t len, uint64_t now);
/* CLOCK_REALTIME minus `now`, for embedders whose `now` is not wall time. */
NS_API int64_t ns_pcap_wall_offset_us(uint64_t now);
/* A device that passes every call through to inner and records each frame
 * received and each frame inner accepted for sending. Takes inner and pc;
 * closing it closes both. NULL (nothing taken) on allocation failure. */
NS_API struct ns_dev *ns_pcap_tracer_new(struct ns_dev *inner, struct ns_pcap *pc);
/* The same, opening path; NULL with a reason in err (inner not taken). */
NS_API struct ns_dev *ns_pcap_trace(struct ns_dev *inner, const char *path,
                                    const struct ns_pcap_opts *o, char *err, size_t errlen);
NS_API uint64_t ns_pcap_tracer_poll(struct ns_dev *tracer, uint64_t now);

#endif
