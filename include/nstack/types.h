/* nstack's public types: the export macro, time, MAC and SCTP transport
 * addresses, counter groups. Everything an embedder may touch is declared
 * under include/nstack; the structures of the stack itself stay opaque. */
#ifndef NSTACK_TYPES_H
#define NSTACK_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Functions of the public API: the shared library exports these and
 * nothing else (it is built with -fvisibility=hidden). */
#if defined(__GNUC__)
#define NS_API __attribute__((visibility("default")))
#else
#define NS_API
#endif

/* Time is microseconds from any monotonic origin the embedder chooses,
 * passed into every entry point; deadlines come back in the same unit. */
#define NS_TIME_NEVER UINT64_MAX
#define NS_MS         1000ULL
#define NS_SEC        1000000ULL

#define NS_ETH_ALEN 6
struct ns_mac {
    uint8_t b[NS_ETH_ALEN];
};

/* A transport address of an SCTP path. Over IPv4 `addr` is the IPv4
 * address (host order) and `port` 0; over UDP encapsulation (RFC 6951)
 * `port` is the peer's UDP encapsulation port; a transport the application
 * supplies may use `addr` as an opaque handle.
 *
 * Identity: a path is its family and address. The encapsulation port is a
 * property of the path, not part of its name: RFC 6951 section 5.4 makes
 * it follow the UDP source port of the last verified packet received on
 * the path (a NAT may rebind it). */
struct ns_sctp_addr {
    uint8_t family; /* NS_SCTP_AF_INET4 (the only one for now) */
    uint16_t port;
    uint32_t addr;
};
#define NS_SCTP_AF_INET4 4

/* A named group of counters (`nstack stats` prints one per group):
 * vals[i] is the counter named names[i]. */
struct ns_ctr_group {
    const char *name;
    const char *const *names;
    const uint64_t *vals;
    size_t n;
};

#endif
