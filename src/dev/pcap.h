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
#include "nstack/dev.h"

#define NS_PCAP_MAGIC_US          0xa1b2c3d4u
#define NS_PCAP_MAGIC_NS          0xa1b23c4du
#define NS_PCAP_LINKTYPE_ETHERNET 1
#define NS_PCAP_SNAPLEN           65535
#define NS_PCAP_FLUSH_US          1000000ULL

/* The writer and the tracer's API are public (nstack/dev.h); a tracer's
 * name, mac, mtu and fd are copied from inner and its stats mirror
 * inner's. These two reach inside one. */
struct ns_pcap *ns_pcap_tracer_pcap(struct ns_dev *tracer);
struct ns_dev *ns_pcap_tracer_inner(struct ns_dev *tracer);

#endif
