/* SCTP over UDP encapsulation on a host UDP socket (RFC 6951).
 *
 * A non-blocking IPv4 UDP socket whose datagrams carry SCTP packets: the
 * SCTP common header starts the UDP payload and the SCTP checksum is still
 * computed (RFC 6951 section 5.5); the UDP source port of what we send is
 * our encapsulation port (the socket's port).
 *
 * The caller's loop drives it, no threads inside:
 *
 *     poll(ns_udp_host_fd(h), timeout = ns_timers_next(...) - now);
 *     ns_udp_host_recv(h, &sctp, now);   // a batch into ns_sctp_input
 *     ns_timers_run(&timers, now);
 *     ns_udp_host_flush(h, now);         // sendmmsg what the engine queued
 *
 * ns_udp_host_output is an ns_sctp_ops.output (ctx = the ns_udp_host): it
 * queues the packet for a batched sendmmsg to dst.addr:dst.port, flushing
 * by itself when the batch is full.
 *
 * Addresses handed to the engine: src = {4, UDP source port, IPv4 source
 * (host order)}, dst = {4, our port, the datagram's destination address
 * (IP_PKTINFO; our bound address when bound to one)}.
 *
 * Remote encapsulation port (RFC 6951 section 5.4: it follows the UDP
 * source port of the last packet received on a path): src.port is the
 * datagram's source port as is; the engine matches paths on the address
 * alone and moves a path's port to it once the packet passed the
 * verification tag check (sctp/types.h, sctp/sctp.c).
 *
 * Segmentation offload (Linux UDP_SEGMENT / UDP_GRO, on unless
 * opts.no_offload): at flush, consecutive queued datagrams to the same
 * address and port whose size equals the first one's form one run (a
 * shorter one may end it), up to NS_UDP_HOST_GSO_SEGS datagrams and
 * NS_UDP_HOST_MAX_DGRAM bytes, which goes to the kernel as one sendmmsg
 * entry with the segment size; the kernel sends them as separate
 * datagrams. If the kernel refuses a run with EIO or EINVAL, the run goes
 * again as plain datagrams (gso_fallbacks); on EIO (no checksum offload
 * on the socket's path) the socket also stops using UDP_SEGMENT, while
 * EINVAL (no UDP checksums, a segment above one route's MTU) may concern
 * that run only; any other refusal (EAGAIN...) also resends the run
 * plain, so that what fits leaves and each drop is counted as without
 * offload, but keeps UDP_SEGMENT on. A received buffer
 * the kernel coalesced (UDP_GRO cmsg) is split at its segment size, and
 * each piece reaches ns_sctp_input as its own packet, in order.
 *
 * ICMP (RFC 6951 section 5.6, RFC 9260 Appendix C): the socket has
 * IP_RECVERR, so the kernel queues ICMP errors about datagrams we sent
 * with the UDP payload of the offending datagram (our SCTP packet, as far
 * as the ICMP quoted it) and its destination. ns_udp_host_recv drains that
 * queue first (one MSG_ERRQUEUE recvmsg when it is empty) and hands each
 * port unreachable (as protocol unreachable) and fragmentation needed (the
 * MTU less the IPv4 and UDP headers) to ns_sctp_icmp_error, which checks
 * the quoted tag. Until drained, a pending report also fails one send or
 * receive with its error (ECONNREFUSED...): such a send is tried once
 * more (tx_retries), such a receive drains the queue and reads again.
 */
#ifndef NS_TRANSPORT_UDP_HOST_H
#define NS_TRANSPORT_UDP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "sctp/sctp.h"
#include "nstack/udp_host.h"

#define NS_UDP_HOST_DEFAULT_PORT 9899
/* Datagrams per recvmmsg / sendmmsg call. */
#define NS_UDP_HOST_BATCH 32
/* Largest UDP payload over IPv4. */
#define NS_UDP_HOST_MAX_DGRAM 65507u
/* Datagrams per UDP_SEGMENT send (the kernel's limit on older kernels;
 * the queue of NS_UDP_HOST_BATCH datagrams is the tighter bound today). */
#define NS_UDP_HOST_GSO_SEGS 64
/* The SCTP common header (RFC 9260 section 3.1). */
#define NS_UDP_HOST_SCTP_HDR 12u

#define NS_UDP_HOST_COUNTERS(X)                                                                    \
    X(rx_datagrams)      /* datagrams handed to ns_sctp_input */                                   \
    X(rx_bytes)          /* their UDP payload bytes */                                             \
    X(rx_batches)        /* recvmmsg calls that returned datagrams */                              \
    X(rx_short)          /* dropped: shorter than an SCTP common header */                         \
    X(rx_trunc)          /* dropped: longer than the receive buffer (MSG_TRUNC) */                 \
    X(rx_nomem)          /* dropped: no packet buffer */                                           \
    X(rx_errors)         /* recvmmsg failures other than EAGAIN */                                 \
    X(tx_datagrams)      /* datagrams the kernel accepted */                                       \
    X(tx_bytes)          /* their UDP payload bytes */                                             \
    X(tx_batches)        /* sendmmsg calls */                                                      \
    X(tx_bad_dst)        /* dropped: destination not IPv4 or port 0 */                             \
    X(tx_errors)         /* dropped: sendmmsg refused the datagram (EAGAIN included) */            \
    X(tx_eagain)         /* ... of which the socket buffer was full */                             \
    X(pcap_errors)       /* capture writes that failed */                                          \
    X(tx_gso_runs)       /* runs the kernel took as one UDP_SEGMENT send */                        \
    X(tx_gso_segs)       /* ... the datagrams in them */                                           \
    X(rx_gro_buffers)    /* received buffers holding several coalesced datagrams (UDP_GRO) */      \
    X(rx_gro_segs)       /* ... the datagrams split out of them */                                 \
    X(gso_fallbacks)     /* UDP_SEGMENT refused (EIO/EINVAL): run resent plain; EIO: GSO off */    \
    X(tx_retries)        /* sends failed by a pending ICMP report (ECONNREFUSED...), resent */     \
    X(icmp_errors)       /* reports read from the IP_RECVERR queue */                              \
    X(icmp_port_unreach) /* ... port unreachable: protocol unreachable (RFC 6951 5.6) */           \
    X(icmp_frag_needed)  /* ... fragmentation needed (ICMP or local EMSGSIZE) */                   \
    X(icmp_ignored)      /* ... anything else: other ICMP types and codes, other origins */        \
    X(icmp_unverified)   /* port unreach/frag needed for no association, tag or port of ours */    \
    X(icmp_aborts)       /* associations ended by a verified port unreachable */                   \
    X(icmp_pmtu_lowered) /* path MTUs lowered by a verified fragmentation needed */

struct ns_udp_host_stats {
    NS_UDP_HOST_COUNTERS(NS_CTR_FIELD)
};

/* The API (open, recv, output, flush, capture) is public: nstack/udp_host.h. */

const struct ns_udp_host_stats *ns_udp_host_stats(const struct ns_udp_host *h);

#endif
