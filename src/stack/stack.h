/* One stack instance: it composes the layers (link/iface.h with its
 * interfaces, link/arp.h, ipv4/layer.h, the SCTP engine) with one timer
 * heap, one random source and one set of tunables, and wires them up at
 * start: each layer registers with the one below it. No global mutable state: a process may run
 * many instances (simulations run several over memlink).
 *
 * The stack is sans-I/O. The embedder feeds received frames with
 * ns_stack_input(), calls ns_stack_poll() at the deadline it returns, and
 * drains each interface's transmit queue (ns_stack_tx_pop) to its device.
 * Every entry point takes `now` in microseconds; nothing inside reads a
 * clock, sleeps or does I/O. One thread at a time may call into a stack.
 */
#ifndef NS_STACK_STACK_H
#define NS_STACK_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "core/rng.h"
#include "core/timer.h"
#include "ipv4/layer.h"
#include "link/arp.h"
#include "link/iface.h"
#include "link/neigh.h"
#include "sctp/sctp.h"
#include "nstack/stack.h"
#include "stack/params.h"

/* The SCTP glue's hooks, each with its context. (The ICMP event and
 * tx-ready hooks live with the layers that call them: link.tx_ready,
 * ip.icmp_event, set with ns_stack_set_*.) */
struct ns_stack_hooks {
    /* SCTP association events (sctp/sctp.h), delivered after the stack's
     * own handling (PMTU of new paths). Same rules as ns_sctp_ops.event: it
     * may call any ns_sctp_* function. */
    void (*sctp_event)(void *ctx, const struct ns_sctp_event *ev, uint64_t now);
    void *sctp_ctx;
    /* Hosted mode (see ns_stack_sctp_hosted): SCTP packets for
     * UDP-encapsulated paths go here (e.g. a host UDP socket's
     * ns_udp_host_output) instead of nstack's own UDP. Takes p. */
    void (*sctp_udp_output)(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                            const struct ns_sctp_addr *dst, uint64_t now);
    void *sctp_udp_ctx;
};

/* The transport glue between the SCTP engine and IPv4 (stack/sctp_glue.c).
 * sctp_glue counters in `nstack stats`. */
#define NS_SCTP_GLUE_COUNTERS(X)                                                                   \
    X(rx_packets)               /* protocol-132 packets handed to the engine */                    \
    X(rx_drop_bcast)            /* dropped: sent to a broadcast address */                         \
    X(tx_packets)               /* engine packets handed to IPv4 */                                \
    X(tx_errors)                /* ns_ip_output refused (no route, no memory) */                   \
    X(tx_frag_fallback)         /* packets above the route MTU sent without DF */                  \
    X(icmp_frag_needed)         /* frag-needed quoting one of our associations */                  \
    X(icmp_pmtu_lowered)        /* ... that lowered a path MTU */                                  \
    X(icmp_no_assoc)            /* ICMP errors quoting no known association */                     \
    X(icmp_prot_unreach_aborts) /* protocol unreachable ending an association */                   \
    X(icmp_other)               /* other ICMP errors about SCTP packets (ignored) */               \
    X(path_confirms)            /* neighbour confirmations from SACKs */                           \
    X(pmtu_syncs)               /* path MTUs set from the route's MTU */

struct ns_sctp_glue_stats {
    NS_SCTP_GLUE_COUNTERS(NS_CTR_FIELD)
};

/* SCTP over nstack's own UDP (RFC 6951, stack/sctp_udp_glue.c): group
 * sctp_udp in `nstack stats`. */
#define NS_SCTP_UDP_COUNTERS(X)                                                                    \
    X(rx_packets)        /* UDP datagrams on sctp.udp_port handed to the engine */                 \
    X(rx_short)          /* dropped: shorter than an SCTP common header */                         \
    X(rx_drop_bcast)     /* dropped: sent to a broadcast or multicast address */                   \
    X(tx_packets)        /* engine packets sent as UDP (or to the hosted transport) */             \
    X(tx_errors)         /* ns_ip_output refused (no route, no memory) */                          \
    X(tx_no_port)        /* dropped: a UDP path but sctp.udp_port is 0 */                          \
    X(tx_frag_fallback)  /* datagrams above the route MTU sent without DF */                       \
    X(bind_errors)       /* sctp.udp_port could not be bound */                                    \
    X(icmp_errors)       /* ICMP errors quoting our encapsulated packets */                        \
    X(icmp_port_unreach) /* ... port unreachable, taken as protocol unreachable (5.6) */           \
    X(icmp_bad_port)     /* ... quoting a UDP port no path of the association uses */              \
    X(raw_tx_dropped)    /* hosted mode: a path over raw IP has nowhere to go */

struct ns_sctp_udp_stats {
    NS_SCTP_UDP_COUNTERS(NS_CTR_FIELD)
};

/* The RFC 6951 port (IANA sctp-tunneling). */
#define NS_SCTP_UDP_PORT 9899
/* Peers with a remote encapsulation port of their own
 * (ns_stack_sctp_set_encap_port). */
#define NS_SCTP_ENCAP_PEERS 16

struct ns_sctp_encap_peer {
    uint32_t addr; /* 0 = free slot */
    uint16_t port;
};

/* Current values, not counters: group "gauges" in `nstack stats`, read from
 * the live structures each time ns_stack_counters is called (so a hostile
 * peer's effect on table and reassembly sizes can be watched from outside). */
#define NS_STACK_GAUGES(X)                                                                         \
    X(arp_cache_entries)    /* neighbour entries, PERMANENT ones included */                       \
    X(arp_cache_gc_entries) /* ... those counted against gc_thresh2/3 */                           \
    X(ip_reasm_datagrams)   /* incomplete datagrams held for reassembly */                         \
    X(ip_reasm_mem_bytes)   /* bytes they charge against ipv4.ipfrag_high_thresh */                \
    X(txq_frames)           /* frames waiting on the interfaces' transmit queues */

struct ns_stack_gauges {
    NS_STACK_GAUGES(NS_CTR_FIELD)
};

struct ns_stack {
    struct ns_params params;
    struct ns_timers timers;
    struct ns_rng rng;
    struct ns_stack_hooks hooks;

    struct ns_link link; /* interfaces, Ethernet in and out */
    struct ns_arp arp;   /* arp.tbl: the neighbour table of IPv4 */
    struct ns_ipv4 ip;   /* routes, PMTU, reassembly, ICMP, UDP */

    /* SCTP over IPv4 protocol 132 (stack/sctp_glue.c). */
    struct ns_sctp sctp;
    struct ns_sctp_glue_stats sctp_glue_stats;
    bool sctp_pmtu_dirty; /* a packet outgrew its route: resync path MTUs */
    /* SCTP over UDP (stack/sctp_udp_glue.c): nstack's UDP socket bound to
     * params.sctp.udp_port, or the hosted transport (hooks.sctp_udp_output,
     * packets of sctp_udp_pmtu bytes). */
    struct ns_udp_sock *sctp_udp_sock;
    uint16_t sctp_udp_bound; /* the port sctp_udp_sock is bound to */
    uint32_t sctp_udp_pmtu;
    struct ns_sctp_encap_peer sctp_encap_peers[NS_SCTP_ENCAP_PEERS];
    struct ns_sctp_udp_stats sctp_udp_stats;

    struct ns_stack_gauges gauges; /* refreshed by ns_stack_counters */
};

/* The interface structures (internal; the public API speaks ifindex). */
struct ns_iface *ns_stack_iface(struct ns_stack *s, uint32_t ifindex);
struct ns_iface *ns_stack_iface_by_name(struct ns_stack *s, const char *name);
/* The interface whose address is addr, or NULL. */
struct ns_iface *ns_stack_iface_by_addr(struct ns_stack *s, uint32_t addr);

/* ---- SCTP over IPv4 (stack/sctp_glue.c) ----------------------------
 * s->sctp is the engine instance: use the ns_sctp_* API on it (endpoints,
 * connect, send, receive...). IPv4 carries its packets as protocol 132
 * with DF set; path MTUs come from the route MTU minus the IPv4 header and
 * from ICMP fragmentation-needed. Events reach s->hooks.sctp_event. */

/* Engine lifetime, called by ns_stack_new / ns_stack_free. replayable:
 * the cookie secret comes from the stack's rng (ns_stack_new passes true
 * for a seeded stack so simulations replay byte for byte; such a secret is
 * predictable, so production stacks are not seeded). */
int ns_stack_sctp_init(struct ns_stack *s, bool replayable, uint64_t now);
void ns_stack_sctp_free(struct ns_stack *s);
/* ns_sctp_connect to one IPv4 peer, with the path MTU set from the route
 * before the first packet. NULL with *err as ns_sctp_connect. */
struct ns_sctp_assoc *ns_stack_sctp_connect(struct ns_stack *s, struct ns_sctp_ep *ep,
                                            uint32_t peer, uint16_t peer_port, uint64_t now,
                                            int *err);
/* After timers ran (ns_stack_poll): apply path-MTU changes the output
 * path had to defer (it may not call into the engine). */
void ns_stack_sctp_poll(struct ns_stack *s, uint64_t now);
/* IPv4 input of protocol 132 (registered with ns_ipv4_register): data at
 * the SCTP common header. Takes pkt. ctx: the stack. */
void ns_stack_sctp_input(void *ctx, struct ns_pkt *pkt, uint32_t src, uint32_t dst, bool bcast,
                         uint64_t now);
/* An ICMP error quoting an SCTP packet we sent from src to dst (the
 * protocol's error handler); l4 holds the first l4_len (>= 8) quoted bytes
 * of it from the common header on (ports and verification tag; an INIT's
 * initiate tag needs 20). mtu: the next-hop MTU of a fragmentation-needed
 * (0 for other errors). Fragmentation-needed lowers the path MTU, protocol
 * unreachable ends the association like a peer ABORT, the rest is ignored
 * (RFC 9260 App. C). ctx: the stack. */
void ns_stack_sctp_icmp_error(void *ctx, uint32_t src, uint32_t dst, const uint8_t *l4,
                              uint32_t l4_len, uint8_t type, uint8_t code, uint32_t mtu, int err,
                              uint64_t now);
/* The association with these ports and peer whose peer verification tag
 * (the tag in the packets we send) is vtag; NULL if none. */
struct ns_sctp_assoc *ns_stack_sctp_find(struct ns_stack *s, uint16_t local_port, uint32_t peer,
                                         uint16_t peer_port, uint32_t vtag);

/* ---- SCTP over UDP encapsulation (RFC 6951, stack/sctp_udp_glue.c) ---
 * A path whose ns_sctp_addr.port is nonzero is UDP-encapsulated: its
 * packets leave as UDP from params.sctp.udp_port to that port. The engine
 * updates the port from each verified packet (RFC 6951 5.4). New
 * associations (ns_stack_sctp_connect) use the peer's port from
 * ns_stack_sctp_set_encap_port, else sysctl sctp.encap_port (0: raw IP). */

/* (Re)bind nstack's UDP socket to params.sctp.udp_port (0 closes it).
 * Called by ns_sysctl_set. 0 or -errno (the port stays closed). */
int ns_stack_sctp_udp_sync(struct ns_stack *s);
/* Hosted mode: no IPv4 under the engine; every path is UDP-encapsulated
 * and its packets go to out(ctx, ...), a transport the embedder drives
 * (the daemon's host UDP socket, bound to local_port), which hands what
 * it receives to ns_sctp_input(&s->sctp, ...). Sets sctp.udp_port to
 * local_port and, if 0, sctp.encap_port to NS_SCTP_UDP_PORT; pmtu is the
 * SCTP packet size of every path (0: NS_SCTP_DEFAULT_PMTU). */
void ns_stack_sctp_hosted(struct ns_stack *s,
                          void (*out)(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                                      const struct ns_sctp_addr *dst, uint64_t now),
                          void *ctx, uint16_t local_port, uint32_t pmtu);
static inline bool ns_stack_sctp_is_hosted(const struct ns_stack *s)
{
    return s->hooks.sctp_udp_output != NULL;
}
/* The remote encapsulation port new associations to peer use (port 0
 * forgets it). 0, -ENOSPC (table full). */
int ns_stack_sctp_set_encap_port(struct ns_stack *s, uint32_t peer, uint16_t port);
/* The port an association to peer starts with: 0 = raw IP. */
uint16_t ns_stack_sctp_encap_port(const struct ns_stack *s, uint32_t peer);
/* The engine's output for a path with a nonzero port (takes p). */
void ns_stack_sctp_udp_output(struct ns_stack *s, struct ns_pkt *p, const struct ns_sctp_addr *src,
                              const struct ns_sctp_addr *dst, uint64_t now);
/* SCTP bytes one packet to dst carries unfragmented below hdrs bytes of
 * IPv4 (and UDP) headers: the route MTU less hdrs, at least
 * NS_SCTP_MIN_PMTU (0: no route). */
uint32_t ns_stack_sctp_route_pmtu(struct ns_stack *s, uint32_t dst, uint32_t hdrs, uint64_t now);
/* SCTP bytes one encapsulated packet to dst carries (0: no route). */
uint32_t ns_stack_sctp_udp_pmtu(struct ns_stack *s, uint32_t dst, uint64_t now);
/* Shared with sctp_glue.c: ICMP for SCTP with the quoted SCTP header at
 * l4; encap_port is the quoted UDP destination port (0: raw IP), which a
 * path of the association must use. */
void ns_stack_sctp_icmp_error_port(struct ns_stack *s, uint32_t src, uint32_t dst,
                                   uint16_t encap_port, const uint8_t *l4, uint32_t l4_len,
                                   uint8_t type, uint8_t code, uint32_t mtu, uint64_t now);

/* The SCTP event hook (internal: the socket runtime and tests use it). */
void ns_stack_set_sctp_event(struct ns_stack *s,
                             void (*fn)(void *ctx, const struct ns_sctp_event *ev, uint64_t now),
                             void *ctx);

#endif
