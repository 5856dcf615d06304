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

#include "core/bytes.h"
#include "core/counters.h"
#include "core/pkt.h"

#define NS_IP_HLEN      20
#define NS_IP_MAXLEN    65535
#define NS_IPPROTO_ICMP 1
#define NS_IPPROTO_UDP  17
#define NS_IPPROTO_SCTP 132
#define NS_IP_DF        0x4000
#define NS_IP_MF        0x2000
#define NS_IP_OFFMASK   0x1fff

/* A parsed IPv4 header; addresses in host order. */
struct ns_ip_hdr {
    uint8_t ihl; /* header length in bytes */
    uint8_t tos;
    uint16_t tot_len;
    uint16_t id;
    uint16_t frag; /* flags and offset, as on the wire */
    uint8_t ttl;
    uint8_t proto;
    uint32_t src, dst;
};

enum ns_ip_verdict {
    NS_IP_OK = 0,
    NS_IP_SHORT, /* fewer than 20 bytes */
    NS_IP_BAD_VERSION,
    NS_IP_BAD_IHL, /* IHL < 5 or beyond the data */
    NS_IP_BAD_LEN, /* total length < IHL */
    NS_IP_BAD_CSUM,
    NS_IP_TRUNCATED, /* total length beyond the data (counted as in_truncated) */
};

/* Validate and parse the header at b (len bytes available). Checks run in
 * Linux's ip_rcv order: size, version, IHL, checksum, then total length; h
 * is filled whenever the checksum verdict was reached. Options are skipped,
 * not interpreted. */
enum ns_ip_verdict ns_ip_parse(const uint8_t *b, uint32_t len, struct ns_ip_hdr *h);
/* Parse a header that is not a whole received datagram (an ICMP quote, or a
 * packet of our own): version, 5 <= IHL, IHL bytes present, tot_len >= IHL;
 * no checksum and no check that tot_len bytes are present. */
bool ns_ip_parse_quoted(const uint8_t *b, uint32_t len, struct ns_ip_hdr *h);
/* Write a 20-byte header with checksum (h->ihl is ignored). */
void ns_ip_write(uint8_t *out, const struct ns_ip_hdr *h);

/* Netmask of a prefix length (0..32), host order. */
static inline uint32_t ns_ip_mask(uint8_t plen)
{
    return plen == 0 ? 0 : 0xffffffffu << (32 - (plen > 32 ? 32 : plen));
}
static inline bool ns_ip_is_mcast(uint32_t a)
{
    return (a >> 28) == 0xe;
}

/* Received packets: ns_ip_input sets pkt->l3_off and pkt->l4_off to offsets
 * from the start of the head's buffer (pkt->buf->data), not from pkt->data,
 * so they stay valid while upper layers pull headers. The IPv4 header stays
 * in the head in front of the transport data, which is how ICMP errors
 * quote a datagram a transport protocol rejected. */
static inline const uint8_t *ns_ip_rx_hdr(const struct ns_pkt *p)
{
    return p->buf->data + p->l3_off;
}
/* Move pkt->data back to the IPv4 header at l3_off (undoing the pulls of
 * the input path); false if that is not inside the head. */
bool ns_ip_rx_restore(struct ns_pkt *p);

#define NS_IP_COUNTERS(X)                                                                          \
    X(in_receives)                                                                                 \
    X(in_delivers)                                                                                 \
    X(in_hdr_errors)                                                                               \
    X(in_csum_errors)                                                                              \
    X(in_addr_errors)                                                                              \
    X(in_unknown_protos)                                                                           \
    X(in_truncated)                                                                                \
    X(out_requests)                                                                                \
    X(out_no_routes)                                                                               \
    X(out_discards)                                                                                \
    X(frag_oks)                                                                                    \
    X(frag_fails)                                                                                  \
    X(frag_creates)                                                                                \
    X(reasm_reqds)                                                                                 \
    X(reasm_oks)                                                                                   \
    X(reasm_fails)                                                                                 \
    X(reasm_timeouts)                                                                              \
    X(reasm_overlaps)                                                                              \
    X(reasm_mem_drops)                                                                             \
    X(reasm_nomem)                                                                                 \
    X(in_bcast)                                                                                    \
    X(ttl_zero)                                                                                    \
    X(host_unreach_local)                                                                          \
    X(in_discards)

struct ns_ip_stats {
    NS_IP_COUNTERS(NS_CTR_FIELD)
};

struct ns_ipv4; /* ipv4/layer.h */
struct ns_iface;

/* pkt->data at the IPv4 header, received on ifc. Takes ownership. */
void ns_ip_input(struct ns_ipv4 *ip, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now);

struct ns_ip_out {
    uint32_t src; /* 0: the outgoing interface's address */
    uint32_t dst;
    uint8_t proto;
    uint8_t ttl; /* 0: ipv4.ip_default_ttl */
    uint8_t tos;
    bool df; /* don't fragment: fail with -EMSGSIZE instead */
};

/* Send pkt (data at the transport header) as IPv4. Takes ownership.
 * Returns 0 when handed to the link (sent or queued for resolution),
 * -ENETUNREACH (no route), -EMSGSIZE (DF and larger than the MTU),
 * -ENOBUFS/-ENOMEM. Marks the packet NS_PKT_F_LOCAL. */
int ns_ip_output(struct ns_ipv4 *ip, struct ns_pkt *pkt, const struct ns_ip_out *o, uint64_t now);

/* A locally originated packet (data at its IPv4 header) could not be
 * delivered (neighbour resolution failed): report `err` to its sender.
 * Only the offset-0 fragment of a datagram carries the transport header, so
 * only it produces an event or socket error; every packet counts
 * host_unreach_local. Takes ownership. */
void ns_ip_local_error(struct ns_ipv4 *ip, struct ns_pkt *pkt, int err, uint64_t now);

/* addr is 255.255.255.255 or the subnet broadcast of an interface with a
 * prefix of at most /30 (a /31 or /32 has no broadcast address). */
bool ns_ip_is_bcast(const struct ns_ipv4 *ip, uint32_t addr);

/* "198.18.0.1" <-> host-order address. */
bool ns_ip_parse_addr(const char *str, uint32_t *addr);
/* "198.18.0.1/24"; plen defaults to 32 when absent. */
bool ns_ip_parse_prefix(const char *str, uint32_t *addr, uint8_t *plen);
const char *ns_ip_fmt(uint32_t addr, char out[16]);

#endif
