/* nstack's public API: one header for embedders.
 *
 * A stack instance (stack/stack.h) is sans-I/O: feed it frames with
 * ns_stack_input(), drain ns_stack_tx_pop() to a device, and call
 * ns_stack_poll() at ns_stack_next_deadline(). Devices (dev/) move frames
 * between a stack and a TAP, an AF_PACKET socket, an in-process memlink, or a
 * pcap tracer. Build flags: `pkg-config --cflags --libs nstack`.
 */
#ifndef NSTACK_NSTACK_H
#define NSTACK_NSTACK_H

#include "dev/afpacket.h"
#include "dev/dev.h"
#include "dev/memlink.h"
#include "dev/pcap.h"
#include "dev/tap.h"
#include "stack/stack.h"
#include "transport/udp_host.h"
#include "socket.h"

#endif
