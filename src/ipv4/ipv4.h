/* IPv4 (RFC 791, RFC 1122 section 3.2, RFC 815 for reassembly).
 * Input validates version, IHL, total length against the frame, header
 * checksum, skips options, delivers to ICMP/UDP (and later SCTP) or answers
 * protocol-unreachable; fragments go to ipv4/reass.c. Output routes, fills
 * the header, fragments to the interface MTU unless DF, and hands each
 * packet to the neighbour engine for the next hop. */
#ifndef NS_IPV4_IPV4_H
#define NS_IPV4_IPV4_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"

#define NS_IP_HLEN 20
#define NS_IP_MAXLEN 65535
#define NS_IPPROTO_ICMP 1
#define NS_IPPROTO_UDP 17
#define NS_IPPROTO_SCTP 132
#define NS_IP_DF 0x4000
#define NS_IP_MF 0x2000
#define NS_IP_OFFMASK 0x1fff

/* A parsed IPv4 header; addresses in host order. */
struct ns_ip_hdr {
    uint8_t ihl;      /* header length in bytes */
    uint8_t tos;
    uint16_t tot_len;
    uint16_t id;
    uint16_t frag;    /* flags and offset, as on the wire */
    uint8_t ttl;
    uint8_t proto;
    uint32_t src, dst;
};

enum ns_ip_verdict {
    NS_IP_OK = 0,
    NS_IP_SHORT,       /* fewer than 20 bytes */
    NS_IP_BAD_VERSION,
    NS_IP_BAD_IHL,     /* IHL < 5 or beyond the data */
    NS_IP_BAD_LEN,     /* total length < IHL or beyond the data */
    NS_IP_BAD_CSUM,
};

/* Validate and parse the header at b (len bytes available). */
enum ns_ip_verdict ns_ip_parse(const uint8_t *b, uint32_t len, struct ns_ip_hdr *h);
/* Write a 20-byte header with checksum. */
void ns_ip_write(uint8_t *out, const struct ns_ip_hdr *h);

#define NS_IP_COUNTERS(X)                                                                   \
    X(in_receives) X(in_delivers) X(in_hdr_errors) X(in_csum_errors) X(in_addr_errors)      \
    X(in_unknown_protos) X(in_truncated) X(out_requests) X(out_no_routes) X(out_discards)    \
    X(frag_oks) X(frag_fails) X(frag_creates) X(reasm_reqds) X(reasm_oks) X(reasm_fails)    \
    X(reasm_timeouts) X(reasm_overlaps) X(reasm_mem_drops) X(in_bcast) X(ttl_zero)          \
    X(host_unreach_local)

struct ns_ip_stats {
    NS_IP_COUNTERS(NS_CTR_FIELD)
};

struct ns_stack;
struct ns_iface;

/* pkt->data at the IPv4 header, received on ifc. Takes ownership. */
void ns_ip_input(struct ns_stack *s, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now);

struct ns_ip_out {
    uint32_t src;   /* 0: the outgoing interface's address */
    uint32_t dst;
    uint8_t proto;
    uint8_t ttl;    /* 0: ipv4.ip_default_ttl */
    uint8_t tos;
    bool df;        /* don't fragment: fail with -EMSGSIZE instead */
};

/* Send pkt (data at the transport header) as IPv4. Takes ownership.
 * Returns 0 when handed to the link (sent or queued for resolution),
 * -ENETUNREACH (no route), -EMSGSIZE (DF and larger than the MTU),
 * -ENOBUFS/-ENOMEM. Marks the packet NS_PKT_F_LOCAL. */
int ns_ip_output(struct ns_stack *s, struct ns_pkt *pkt, const struct ns_ip_out *o,
                 uint64_t now);

/* A locally originated packet (data at its IPv4 header) could not be
 * delivered (neighbour resolution failed): report `err` to its sender. */
void ns_ip_local_error(struct ns_stack *s, struct ns_pkt *pkt, int err, uint64_t now);

/* "198.18.0.1" <-> host-order address. */
bool ns_ip_parse_addr(const char *str, uint32_t *addr);
/* "198.18.0.1/24"; plen defaults to 32 when absent. */
bool ns_ip_parse_prefix(const char *str, uint32_t *addr, uint8_t *plen);
const char *ns_ip_fmt(uint32_t addr, char out[16]);

#endif
