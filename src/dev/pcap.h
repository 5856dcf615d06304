/* Classic pcap capture files (the libpcap savefile format: 24-byte file
 * header, 16-byte record headers, LINKTYPE_ETHERNET), written without
 * libpcap.
 *
 * Timestamps are the `now` the caller passes (microseconds) plus an optional
 * signed offset. The daemon's `now` is CLOCK_MONOTONIC-based, which tshark
 * would show as dates in 1970; give wall_offset_us = ns_pcap_wall_offset_us(now)
 * once at open to record real dates instead. Simulations leave it 0 and get
 * virtual time since the epoch.
 *
 * Flushing: records are buffered in memory and written as whole records, so
 * the file is always readable up to the last flush. A buffered record is
 * written at the latest one second of `now` after it was added, provided
 * the writer is called (any write, or ns_pcap_poll at the deadline it
 * returns), and on close.
 */
#ifndef NS_DEV_PCAP_H
#define NS_DEV_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pkt.h"
#include "dev/dev.h"

#define NS_PCAP_MAGIC_US          0xa1b2c3d4u
#define NS_PCAP_MAGIC_NS          0xa1b23c4du
#define NS_PCAP_LINKTYPE_ETHERNET 1
#define NS_PCAP_SNAPLEN           65535
#define NS_PCAP_FLUSH_US          1000000ULL

struct ns_pcap;

struct ns_pcap_opts {
    bool nanosec;           /* nanosecond-resolution variant (magic 0xa1b23c4d) */
    uint32_t snaplen;       /* 0 = 65535; longer frames are recorded truncated */
    int64_t wall_offset_us; /* added to `now` to form the record timestamps */
};

/* Create (truncate) path and write the file header. NULL with errno set on
 * failure. ns_pcap_open uses the defaults (microseconds, 65535, offset 0). */
struct ns_pcap *ns_pcap_open(const char *path);
struct ns_pcap *ns_pcap_open_opts(const char *path, const struct ns_pcap_opts *o);
/* Record one frame: the whole packet (head and fragments) or len bytes.
 * Returns 0 or -errno (a write error is sticky: later calls return it). */
int ns_pcap_write(struct ns_pcap *pc, const struct ns_pkt *pkt, uint64_t now);
int ns_pcap_write_bytes(struct ns_pcap *pc, const void *data, uint32_t len, uint64_t now);
/* Flush if something has been buffered for a second or more; returns the
 * time by which the next call is due (NS_TIME_NEVER when nothing waits). */
uint64_t ns_pcap_poll(struct ns_pcap *pc, uint64_t now);
int ns_pcap_flush(struct ns_pcap *pc);
/* Flush and close; returns 0 or the first write error as -errno. */
int ns_pcap_close(struct ns_pcap *pc);
uint64_t ns_pcap_records(const struct ns_pcap *pc);
/* ns_pcap_write_bytes for hooks that take a context pointer (ctx: the
 * struct ns_pcap), such as ns_udp_host_set_capture. */
int ns_pcap_capture(void *ctx, const void *frame, uint32_t len, uint64_t now);

/* CLOCK_REALTIME minus `now`, for embedders whose `now` is not wall time.
 * (This reads a clock: call it from the embedder, never from protocol code.) */
int64_t ns_pcap_wall_offset_us(uint64_t now);

/* A tracer: a device that passes every call through to `inner` and records
 * each frame received, and each frame the inner device accepted for
 * sending, with the `now` of the call. It takes ownership of inner and pc;
 * closing it closes both. name, mac, mtu and fd are copied from inner and
 * stats mirror inner's. NULL (nothing taken) on allocation failure. */
struct ns_dev *ns_pcap_tracer_new(struct ns_dev *inner, struct ns_pcap *pc);
/* The same, opening path; NULL with a one-line reason in err (inner is then
 * not taken). */
struct ns_dev *ns_pcap_trace(struct ns_dev *inner, const char *path, const struct ns_pcap_opts *o,
                             char *err, size_t errlen);
struct ns_pcap *ns_pcap_tracer_pcap(struct ns_dev *tracer);
struct ns_dev *ns_pcap_tracer_inner(struct ns_dev *tracer);
/* ns_pcap_poll for a tracer's file. */
uint64_t ns_pcap_tracer_poll(struct ns_dev *tracer, uint64_t now);

#endif
