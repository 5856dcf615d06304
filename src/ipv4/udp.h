/* UDP (RFC 768) with a minimal datagram socket: bind, connect, sendto,
 * recvfrom, checksums on both paths (zero = none on input, as RFC 768
 * allows), port unreachable for closed ports, ICMP errors delivered to the
 * socket as a pending error like SO_ERROR. Sockets live on the stack thread. */
#ifndef NS_IPV4_UDP_H
#define NS_IPV4_UDP_H

#include <stdint.h>
#include <sys/types.h>

#include "core/counters.h"
#include "core/pkt.h"

#define NS_UDP_HLEN          8
#define NS_UDP_MAX_PAYLOAD   (65535 - 20 - NS_UDP_HLEN) /* 65507 */
#define NS_UDP_EPHEMERAL_MIN 32768                      /* Linux ip_local_port_range */
#define NS_UDP_EPHEMERAL_MAX 60999
/* What each queued datagram costs against rcvbuf on top of its payload, so
 * that empty datagrams cannot queue without bound (Linux charges truesize). */
#define NS_UDP_RX_OVERHEAD 256

#define NS_UDP_COUNTERS(X)                                                                         \
    X(in_datagrams)                                                                                \
    X(no_ports)                                                                                    \
    X(in_errors)                                                                                   \
    X(in_csum_errors)                                                                              \
    X(rcvbuf_errors)                                                                               \
    X(out_datagrams)                                                                               \
    X(sndbuf_errors)

struct ns_udp_stats {
    NS_UDP_COUNTERS(NS_CTR_FIELD)
};

struct ns_ipv4; /* ipv4/layer.h */
struct ns_iface;
struct ns_udp_sock;

typedef void (*ns_udp_ready_fn)(void *ctx, struct ns_udp_sock *sk);

/* An ICMP error quoting one of the socket's datagrams from src to dst: udp
 * holds the first udp_len (>= 8) quoted bytes from its UDP header on; mtu
 * as ns_ip_proto_err_fn. */
typedef void (*ns_udp_icmp_fn)(void *ctx, struct ns_udp_sock *sk, uint32_t src, uint32_t dst,
                               const uint8_t *udp, uint32_t udp_len, uint8_t type, uint8_t code,
                               uint32_t mtu, uint64_t now);

struct ns_udp_sock {
    struct ns_ipv4 *ip;
    struct ns_udp_sock *next; /* the stack's socket list */
    uint32_t laddr;           /* 0 = any */
    uint16_t lport;
    uint32_t raddr; /* connected peer, 0 = none */
    uint16_t rport;
    int err;         /* pending error (positive errno), cleared when read */
    uint32_t rcvbuf; /* limit on rxq.bytes + rxq.count * NS_UDP_RX_OVERHEAD */
    /* Datagrams with data at the UDP payload; nexthop holds the sender's
     * address, l4_off the UDP header's offset from pkt->buf->data (see
     * ns_ip_rx_hdr), ifindex the receiving interface. */
    struct ns_pktq rxq;
    ns_udp_ready_fn on_ready; /* data or an error became available */
    /* Set by an encapsulation (SCTP over UDP, RFC 6951 5.6), which checks
     * what it carried: ICMP errors go here with the quote instead of
     * becoming the pending error. */
    ns_udp_icmp_fn on_icmp;
    void *ctx;
};

struct ns_udp_table {
    struct ns_udp_sock *socks;
    uint16_t next_ephemeral;
};

struct ns_udp_sock *ns_udp_open(struct ns_ipv4 *ip);
/* port 0 picks an ephemeral port (32768-60999, sequential from a random
 * start, skipping ports in use). -EADDRINUSE (port taken: same port with the
 * same or a wildcard address on either side), -EINVAL (already bound),
 * -EADDRNOTAVAIL (addr is not one of ours). */
int ns_udp_bind(struct ns_udp_sock *sk, uint32_t addr, uint16_t port);
/* Fix the peer. Binds an ephemeral port if unbound and, like Linux, takes
 * the route's source address when bound to the wildcard. -EINVAL for a zero
 * address or port, -ENETUNREACH without a route. */
int ns_udp_connect(struct ns_udp_sock *sk, uint32_t addr, uint16_t port);
/* dst 0 uses the connected peer (-EDESTADDRREQ if none). Returns len or
 * -errno (-EMSGSIZE above NS_UDP_MAX_PAYLOAD). Binds if unbound. */
ssize_t ns_udp_sendto(struct ns_udp_sock *sk, const void *buf, uint32_t len, uint32_t dst,
                      uint16_t dport, uint64_t now);
/* Returns the datagram length (truncated to cap), -EAGAIN, or a pending
 * error as -errno. src/sport may be NULL. */
ssize_t ns_udp_recvfrom(struct ns_udp_sock *sk, void *buf, uint32_t cap, uint32_t *src,
                        uint16_t *sport);
void ns_udp_close(struct ns_udp_sock *sk);

void ns_udp_input(struct ns_ipv4 *ip, struct ns_iface *ifc, struct ns_pkt *pkt, uint32_t src,
                  uint32_t dst, uint64_t now);
/* A delivery failure of one of our UDP datagrams (inner header given): the
 * best-matching socket bound to sport gets `err` as its pending error and
 * its on_ready call. */
void ns_udp_icmp_error(struct ns_ipv4 *ip, uint32_t inner_src, uint32_t inner_dst, uint16_t sport,
                       uint16_t dport, int err);
/* An ICMP error quoting one of our UDP datagrams, udp at its quoted UDP
 * header (udp_len >= 8): to the socket's on_icmp if it has one, else as
 * ns_udp_icmp_error. */
void ns_udp_icmp_quote(struct ns_ipv4 *ip, uint32_t inner_src, uint32_t inner_dst,
                       const uint8_t *udp, uint32_t udp_len, uint8_t type, uint8_t code,
                       uint32_t mtu, int err, uint64_t now);
void ns_udp_table_free(struct ns_ipv4 *ip);

#endif
