/* nstack's public API: one header for embedders.
 *
 *   nstack/stack.h     a stack instance (sans-I/O: frames and time in,
 *                      frames and deadlines out)
 *   nstack/dev.h       devices: TAP, AF_PACKET, memlink, pcap tracer
 *   nstack/socket.h    SCTP sockets (RFC 6458 style) on a stack thread
 *   nstack/udp_host.h  SCTP over UDP (RFC 6951) on a host UDP socket
 *   nstack/pkt.h       packets, nstack/types.h the shared types
 *
 * Everything else is internal: the shared library exports exactly the
 * functions these headers declare (NS_API). Build flags:
 * `pkg-config --cflags --libs nstack`, or find_package(nstack) with the
 * target nstack::nstack (nstack::nstack_static for the static library). */
#ifndef NSTACK_NSTACK_H
#define NSTACK_NSTACK_H

#include "nstack/dev.h"
#include "nstack/pkt.h"
#include "nstack/socket.h"
#include "nstack/stack.h"
#include "nstack/types.h"
#include "nstack/udp_host.h"

#endif
