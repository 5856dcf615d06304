/* ICMP (RFC 792, RFC 1122 section 3.2.2). Echo reply, rate-limited as Linux
 * does (icmp_ratelimit per destination for the types in icmp_ratemask plus a
 * global token bucket icmp_msgs_per_sec / icmp_msgs_burst); echo requests for
 * `nstack ping`; destination unreachable for unknown protocols/ports;
 * incoming errors (unreachable, fragmentation needed, time exceeded) parsed
 * and handed to the protocol of the quoted datagram. */
#ifndef NS_IPV4_ICMP_H
#define NS_IPV4_ICMP_H

#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"

#define NS_ICMP_ECHOREPLY 0
#define NS_ICMP_DEST_UNREACH 3
#define NS_ICMP_ECHO 8
#define NS_ICMP_TIME_EXCEEDED 11
#define NS_ICMP_PARAMETERPROB 12
#define NS_ICMP_NET_UNREACH 0
#define NS_ICMP_HOST_UNREACH 1
#define NS_ICMP_PROT_UNREACH 2
#define NS_ICMP_PORT_UNREACH 3
#define NS_ICMP_FRAG_NEEDED 4
#define NS_ICMP_EXC_FRAGTIME 1

#define NS_ICMP_COUNTERS(X)                                                                 \
    X(in_msgs) X(in_errors) X(in_csum_errors) X(in_echos) X(in_echo_reps) X(in_dest_unreachs) \
    X(in_frag_needed) X(in_time_excds) X(in_unknown_types) X(out_msgs) X(out_echos)          \
    X(out_echo_reps) X(out_dest_unreachs) X(out_time_excds) X(out_rate_limited)              \
    X(echo_ignored)

struct ns_icmp_stats {
    NS_ICMP_COUNTERS(NS_CTR_FIELD)
};

/* Per-destination rate-limit memory for rate-limited ICMP types. */
#define NS_ICMP_RL_SLOTS 64
struct ns_icmp_rl {
    uint32_t dst[NS_ICMP_RL_SLOTS];
    uint64_t last[NS_ICMP_RL_SLOTS];
    uint64_t tokens_us; /* global bucket, in microseconds of credit */
    uint64_t tokens_at;
};

/* What the embedder hears about its echo requests (and errors quoting them). */
enum ns_icmp_event_kind { NS_ICMP_EV_ECHO_REPLY, NS_ICMP_EV_ERROR };
struct ns_icmp_event {
    enum ns_icmp_event_kind kind;
    uint32_t from;     /* replying host, or the host that reported the error */
    uint16_t id, seq;
    uint8_t ttl;
    uint8_t type, code;/* for errors; local resolution failure: 3/1 from our own address */
    uint32_t bytes;    /* ICMP bytes (header + payload), as ping prints */
    uint64_t rtt_us;   /* replies: now - the send time carried in the payload */
    int err;           /* errors: the errno a socket would see (EHOSTUNREACH, ...) */
};

struct ns_stack;
struct ns_iface;

void ns_icmp_input(struct ns_stack *s, struct ns_iface *ifc, struct ns_pkt *pkt,
                   uint32_t src, uint32_t dst, uint8_t ttl, uint64_t now);
/* Send an ICMP error about `orig` (data at its IPv4 header), subject to
 * rate limiting and RFC 1122's never-about-an-error/broadcast/fragment rules.
 * `info` is the next-hop MTU for fragmentation-needed. Does not take orig. */
void ns_icmp_send_error(struct ns_stack *s, const struct ns_pkt *orig, uint8_t type, uint8_t code,
                        uint32_t info, uint64_t now);
/* Send an echo request with `size` payload bytes (the first 8 carry `now`
 * for the RTT, like iputils). Returns 0 or -errno from ns_ip_output. */
int ns_icmp_echo_send(struct ns_stack *s, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size,
                      uint8_t ttl, uint64_t now);

#endif
