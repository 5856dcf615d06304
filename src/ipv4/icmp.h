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
#include "nstack/stack.h"

#define NS_ICMP_ECHOREPLY     0
#define NS_ICMP_DEST_UNREACH  3
#define NS_ICMP_ECHO          8
#define NS_ICMP_TIME_EXCEEDED 11
#define NS_ICMP_PARAMETERPROB 12
#define NS_ICMP_NET_UNREACH   0
#define NS_ICMP_HOST_UNREACH  1
#define NS_ICMP_PROT_UNREACH  2
#define NS_ICMP_PORT_UNREACH  3
#define NS_ICMP_FRAG_NEEDED   4
#define NS_ICMP_EXC_FRAGTIME  1

#define NS_ICMP_COUNTERS(X)                                                                        \
    X(in_msgs)                                                                                     \
    X(in_errors)                                                                                   \
    X(in_csum_errors)                                                                              \
    X(in_echos)                                                                                    \
    X(in_echo_reps)                                                                                \
    X(in_dest_unreachs)                                                                            \
    X(in_frag_needed)                                                                              \
    X(in_time_excds)                                                                               \
    X(in_unknown_types)                                                                            \
    X(out_msgs)                                                                                    \
    X(out_echos)                                                                                   \
    X(out_echo_reps)                                                                               \
    X(out_dest_unreachs)                                                                           \
    X(out_time_excds)                                                                              \
    X(out_rate_limited)                                                                            \
    X(echo_ignored)                                                                                \
    X(in_parm_probs)

struct ns_icmp_stats {
    NS_ICMP_COUNTERS(NS_CTR_FIELD)
};

/* Rate limiting, as Linux's icmpv4_global_allow() and icmpv4_xrlim_allow()
 * since 6.12 (a per-destination refusal does not spend a global token).
 * Only types in icmp_ratemask are limited, and never fragmentation-needed
 * (PMTU discovery must not be starved); echo replies (type 0) are not in the
 * default mask. Per destination: at most one message per icmp_ratelimit_ms
 * (Linux allows a burst of 6 per peer; we keep the stricter one-per-interval
 * rule). Slots are reused oldest-first when all are taken.
 * Zero-initialised memory is a full global bucket. */
#define NS_ICMP_RL_SLOTS 64
struct ns_icmp_rl {
    uint32_t dst[NS_ICMP_RL_SLOTS]; /* 0 = free slot (we never send to 0.0.0.0) */
    uint64_t last[NS_ICMP_RL_SLOTS];
    /* Global bucket debt: one message costs 1,000,000 units and every
     * microsecond repays icmp_msgs_per_sec units; a message is allowed while
     * debt + 1,000,000 <= icmp_msgs_burst * 1,000,000. */
    uint64_t tokens_us;
    uint64_t tokens_at; /* time of the last repayment */
};

/* struct ns_icmp_event (what the embedder hears of its echo requests) is
 * public: nstack/stack.h. */

struct ns_ipv4; /* ipv4/layer.h */
struct ns_iface;

void ns_icmp_input(struct ns_ipv4 *ip, struct ns_iface *ifc, struct ns_pkt *pkt, uint32_t src,
                   uint32_t dst, uint8_t ttl, uint64_t now);
/* Send an ICMP error about `orig` (data at its IPv4 header), subject to
 * rate limiting and RFC 1122's never-about-an-error/broadcast/fragment rules.
 * `info` is the next-hop MTU for fragmentation-needed and the pointer for
 * parameter problem. Like Linux, the quote is as much of the original as
 * fits a 576-byte error datagram (548 bytes). Does not take orig. */
void ns_icmp_send_error(struct ns_ipv4 *ip, const struct ns_pkt *orig, uint8_t type, uint8_t code,
                        uint32_t info, uint64_t now);
/* Send an echo request with `size` payload bytes: payload byte i is i
 * (like iputils), except that the first 8 carry `now` as a little-endian
 * u64 for the RTT when size >= 8. ttl 0 = the default. Returns 0 or -errno
 * (-EMSGSIZE above 65507 bytes, else from ns_ip_output). */
int ns_icmp_echo_send(struct ns_ipv4 *ip, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size,
                      uint8_t ttl, uint64_t now);

#endif
