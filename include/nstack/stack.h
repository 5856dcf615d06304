/* A stack instance: interfaces, the ARP neighbour engine, IPv4 with ICMP
 * and UDP, and SCTP over IPv4 (and over UDP, RFC 6951). Opaque; no global
 * state, so a process may run any number of them.
 *
 * Sans-I/O: the embedder feeds received Ethernet frames with
 * ns_stack_input(), drains each interface's transmit queue with
 * ns_stack_tx_pop() to its device, and calls ns_stack_poll() when
 * ns_stack_next_deadline() passes. Every entry point takes `now` in
 * microseconds; nothing inside reads a clock, sleeps or does I/O. One
 * thread at a time may call into a stack (ns_rt_new_stack in
 * nstack/socket.h gives it a thread of its own and SCTP sockets).
 *
 * Errors: functions returning int return 0 (or a count, or an index) or a
 * negative errno. */
#ifndef NSTACK_STACK_H
#define NSTACK_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nstack/pkt.h"
#include "nstack/types.h"

struct ns_stack;
struct ns_params; /* tunables: set them by name with ns_sysctl_set */

struct ns_stack_config {
    uint64_t seed;                  /* random source; 0 = from the OS */
    const struct ns_params *params; /* NULL = Linux defaults */
};

/* NULL on allocation failure. */
NS_API struct ns_stack *ns_stack_new(const struct ns_stack_config *cfg, uint64_t now);
NS_API void ns_stack_free(struct ns_stack *s);

/* Interfaces: returns the new ifindex (1-based), or -ENOSPC, -EINVAL (name
 * of 16 or more bytes, MTU outside 68-65535), -EEXIST. */
NS_API int ns_stack_add_iface(struct ns_stack *s, const char *name, const struct ns_mac *mac,
                              uint32_t mtu);
/* The ifindex of an interface by name, or -ENODEV. */
NS_API int ns_stack_ifindex(struct ns_stack *s, const char *name);
/* Assign an IPv4 address (host order); with the interface up this
 * announces it (gratuitous ARP). -ENODEV, -EINVAL. */
NS_API int ns_stack_set_addr(struct ns_stack *s, uint32_t ifindex, uint32_t addr, uint8_t plen,
                             uint64_t now);
/* The default route's next hop (0: none). */
NS_API int ns_stack_set_gateway(struct ns_stack *s, uint32_t gw);
NS_API int ns_stack_iface_up(struct ns_stack *s, uint32_t ifindex, uint64_t now);

/* A received Ethernet frame; the bytes are copied. */
NS_API void ns_stack_input(struct ns_stack *s, uint32_t ifindex, const void *frame, uint32_t len,
                           uint64_t now);
/* The same, handing over a packet whose data starts at the Ethernet header. */
NS_API void ns_stack_input_pkt(struct ns_stack *s, uint32_t ifindex, struct ns_pkt *pkt,
                               uint64_t now);
/* Run due timers; returns the next deadline (NS_TIME_NEVER if none). */
NS_API uint64_t ns_stack_poll(struct ns_stack *s, uint64_t now);
NS_API uint64_t ns_stack_next_deadline(const struct ns_stack *s);
/* The next frame to transmit on ifindex, or NULL. The caller owns it. */
NS_API struct ns_pkt *ns_stack_tx_pop(struct ns_stack *s, uint32_t ifindex);

/* Hooks, each with its own context; NULL fn removes one. */
/* A frame was queued on ifindex (wake the device writer). */
typedef void (*ns_stack_tx_ready_fn)(void *ctx, uint32_t ifindex);
NS_API void ns_stack_set_tx_ready(struct ns_stack *s, ns_stack_tx_ready_fn fn, void *ctx);

/* What the embedder hears about its echo requests (and errors quoting them). */
enum ns_icmp_event_kind { NS_ICMP_EV_ECHO_REPLY, NS_ICMP_EV_ERROR };
struct ns_icmp_event {
    enum ns_icmp_event_kind kind;
    uint32_t from; /* replying host, or the host that reported the error */
    uint16_t id, seq;
    uint8_t ttl;
    uint8_t type, code; /* for errors; local resolution failure: 3/1 from our own address */
    uint32_t bytes;     /* ICMP bytes (header + payload), as ping prints */
    uint64_t rtt_us;    /* replies: now - the send time carried in the payload */
    int err;            /* errors: the errno a socket would see (EHOSTUNREACH, ...) */
};
typedef void (*ns_stack_icmp_event_fn)(void *ctx, const struct ns_icmp_event *ev, uint64_t now);
NS_API void ns_stack_set_icmp_event(struct ns_stack *s, ns_stack_icmp_event_fn fn, void *ctx);
/* An ICMP echo request with size payload bytes (iputils' pattern, the
 * first 8 carrying `now` for the RTT), ttl 0 = the default. 0 or -errno
 * (-EMSGSIZE, -ENETUNREACH, ...). Replies come to the ICMP event hook. */
NS_API int ns_stack_ping(struct ns_stack *s, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size,
                         uint8_t ttl, uint64_t now);

/* Counters, in the order `nstack stats` prints them: fills up to max
 * groups, returns how many. Valid until the stack is freed. */
NS_API size_t ns_stack_counters(struct ns_stack *s, struct ns_ctr_group *out, size_t max);

/* Tunables by `nstack sysctl` key (Linux's names with the unit appended,
 * e.g. neigh.default.retrans_time_ms, sctp.rto_initial_ms). */
struct ns_sysctl_info {
    const char *key;
    uint32_t min, max;
    const char *help;
};
NS_API int ns_sysctl_get(struct ns_stack *s, const char *key, uint32_t *val);
/* -ENOENT unknown key, -ERANGE outside [min, max], -EINVAL in range but
 * in conflict with another key (sctp.rto_min_ms > sctp.rto_max_ms) or
 * fixed (sctp.udp_port in hosted mode); sctp.udp_port: the bind's error
 * (-EADDRINUSE...), the old port kept. */
NS_API int ns_sysctl_set(struct ns_stack *s, const char *key, uint32_t val, uint64_t now);
/* The i-th tunable, NULL past the end. */
NS_API const struct ns_sysctl_info *ns_sysctl_at(size_t i);

#endif
