/* SCTP over UDP encapsulation (RFC 6951) on a host UDP socket: the
 * transport of nstack's hosted mode, usable under a runtime of one's own
 * (nstack/socket.h: ns_rt_config.output = ns_udp_host_output, and the
 * socket's fd watched with ns_rt_add_fd calling ns_udp_host_recv). Batched
 * recvmmsg/sendmmsg; runs of equal datagrams go as one UDP_SEGMENT send
 * and UDP_GRO buffers are split, so datagrams on the wire, in a capture
 * and at the engine are the same as without offload. ICMP errors about
 * our datagrams (IP_RECVERR) reach the engine's RFC 9260 Appendix C
 * checks. */
#ifndef NSTACK_UDP_HOST_H
#define NSTACK_UDP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nstack/pkt.h"
#include "nstack/types.h"

struct ns_sctp; /* the engine of a runtime: ns_rt_sctp() */

struct ns_udp_host;

struct ns_udp_host_opts {
    uint32_t addr;      /* host order; 0 = any */
    uint16_t port;      /* 0 = NS_UDP_HOST_DEFAULT_PORT */
    bool ephemeral;     /* port 0 really means "kernel picks" (tests) */
    int sndbuf, rcvbuf; /* SO_SNDBUF / SO_RCVBUF bytes; 0 = the system's */
    bool no_offload;    /* neither UDP_SEGMENT nor UDP_GRO (tests, A/B runs) */
};

/* Open and bind the socket. NULL with *err = -errno on failure. */
NS_API struct ns_udp_host *ns_udp_host_open(uint32_t addr, uint16_t port, int *err);
NS_API struct ns_udp_host *ns_udp_host_open_opts(const struct ns_udp_host_opts *o, int *err);
/* Sends what is queued, then closes. */
NS_API void ns_udp_host_close(struct ns_udp_host *h, uint64_t now);

NS_API int ns_udp_host_fd(const struct ns_udp_host *h);
/* The bound port and address (host order). */
NS_API uint16_t ns_udp_host_port(const struct ns_udp_host *h);
NS_API uint32_t ns_udp_host_addr(const struct ns_udp_host *h);
/* Whether sends use UDP_SEGMENT now (off after a fallback) and whether the
 * socket accepts UDP_GRO buffers. */
NS_API bool ns_udp_host_gso(const struct ns_udp_host *h);
NS_API bool ns_udp_host_gro(const struct ns_udp_host *h);

/* Read up to max_batches batches (0 = 1) of datagrams and hand each to
 * ns_sctp_input. Returns the number of datagrams handed over, 0 when
 * nothing was waiting. */
NS_API unsigned ns_udp_host_recv(struct ns_udp_host *h, struct ns_sctp *sctp, unsigned max_batches,
                                 uint64_t now);

/* ns_sctp_ops.output: ctx is the ns_udp_host. Takes p. */
NS_API void ns_udp_host_output(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                               const struct ns_sctp_addr *dst, uint64_t now);
/* sendmmsg everything queued. Datagrams the kernel refuses are dropped
 * and counted (SCTP retransmits). */
NS_API void ns_udp_host_flush(struct ns_udp_host *h, uint64_t now);
/* Datagrams queued and not yet sent. */
NS_API unsigned ns_udp_host_pending(const struct ns_udp_host *h);

/* A capture (e.g. dev/pcap.h's ns_pcap_capture with a struct ns_pcap):
 * every datagram sent and received, as the Ethernet/IPv4/UDP frame the
 * wire would carry (UDP checksum 0, IPv4 checksum real), one per datagram
 * whatever offload did. fn returns < 0 on a write error (pcap_errors).
 * NULL turns it off. */
typedef int (*ns_udp_host_capture_fn)(void *ctx, const void *frame, uint32_t len, uint64_t now);
NS_API void ns_udp_host_set_capture(struct ns_udp_host *h, ns_udp_host_capture_fn fn, void *ctx);

/* Counters (group "udp_host"): fills up to max groups, returns how many. */
NS_API size_t ns_udp_host_counters(const struct ns_udp_host *h, struct ns_ctr_group *out,
                                   size_t max);

#endif
