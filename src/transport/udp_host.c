/* SCTP over UDP encapsulation on a host UDP socket.
 *
 * RFC 6951 sections 5.1-5.5: the SCTP packet is the whole UDP payload, the
 * SCTP checksum stays (the engine fills it), the UDP source port is our
 * local encapsulation port and packets go to the peer's remote
 * encapsulation port, which the engine carries as ns_sctp_addr.port (learned
 * from the UDP source port of what arrives). Section 5.6 (ICMP) is not
 * handled: a host UDP socket does not see the quoted SCTP header without
 * IP_RECVERR parsing, and the engine recovers by retransmission.
 *
 * Received datagrams are copied out of the batch buffers into packets of
 * their own size: the engine keeps references to received DATA until the
 * application reads it, so handing it a 64 KiB batch slot per datagram
 * would pin far more memory than the payload.
 */
#include "transport/udp_host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/checksum.h"
#include "dev/pcap.h"

#define RX_SLOT     65536u
#define CMSG_SPACE_ (CMSG_SPACE(sizeof(struct in_pktinfo)))
/* Ethernet + IPv4 + UDP in front of a captured datagram. */
#define FRAME_HDR 42u

struct ns_udp_host {
    int fd;
    uint32_t addr; /* bound, host order */
    uint16_t port;

    /* tx batch: packets are kept until sendmmsg has copied them. */
    unsigned tx_n;
    struct ns_pkt *tx_pkt[NS_UDP_HOST_BATCH];
    struct sockaddr_in tx_sa[NS_UDP_HOST_BATCH];
    struct iovec tx_iov[NS_UDP_HOST_BATCH][NS_PKT_MAX_FRAGS + 1];
    struct mmsghdr tx_msg[NS_UDP_HOST_BATCH];
    uint32_t tx_src[NS_UDP_HOST_BATCH]; /* for the capture */

    /* rx batch */
    uint8_t *rx_buf; /* NS_UDP_HOST_BATCH slots of RX_SLOT bytes */
    struct sockaddr_in rx_sa[NS_UDP_HOST_BATCH];
    struct iovec rx_iov[NS_UDP_HOST_BATCH];
    struct mmsghdr rx_msg[NS_UDP_HOST_BATCH];
    uint8_t rx_cmsg[NS_UDP_HOST_BATCH][CMSG_SPACE_];

    struct ns_pcap *pcap;
    uint8_t *frame; /* capture scratch: FRAME_HDR + largest datagram */

    struct ns_udp_host_stats stats;
};

NS_CTR_NAMES(udp_host_ctr_names, NS_UDP_HOST_COUNTERS);

struct ns_udp_host *ns_udp_host_open(uint32_t addr, uint16_t port, int *err)
{
    struct ns_udp_host_opts o = {.addr = addr, .port = port};
    return ns_udp_host_open_opts(&o, err);
}

struct ns_udp_host *ns_udp_host_open_opts(const struct ns_udp_host_opts *o, int *err)
{
    int e = 0;
    struct ns_udp_host *h = calloc(1, sizeof(*h));
    if (!h) {
        e = -ENOMEM;
        goto fail;
    }
    h->fd = -1;
    h->rx_buf = malloc((size_t)NS_UDP_HOST_BATCH * RX_SLOT);
    if (!h->rx_buf) {
        e = -ENOMEM;
        goto fail;
    }
    h->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->fd < 0) {
        e = -errno;
        goto fail;
    }
    int one = 1;
    if (setsockopt(h->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0) {
        e = -errno;
        goto fail;
    }
    /* Best effort: the kernel caps these at its limits. */
    if (o->sndbuf > 0)
        (void)setsockopt(h->fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf, sizeof(o->sndbuf));
    if (o->rcvbuf > 0)
        (void)setsockopt(h->fd, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf, sizeof(o->rcvbuf));
    struct sockaddr_in sa = {
        .sin_family = AF_INET,
        .sin_port = htons(o->port || o->ephemeral ? o->port : NS_UDP_HOST_DEFAULT_PORT),
        .sin_addr.s_addr = htonl(o->addr)};
    if (bind(h->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        e = -errno;
        goto fail;
    }
    socklen_t sl = sizeof(sa);
    if (getsockname(h->fd, (struct sockaddr *)&sa, &sl) < 0) {
        e = -errno;
        goto fail;
    }
    h->addr = ntohl(sa.sin_addr.s_addr);
    h->port = ntohs(sa.sin_port);
    for (unsigned i = 0; i < NS_UDP_HOST_BATCH; i++) {
        h->rx_iov[i] = (struct iovec){h->rx_buf + (size_t)i * RX_SLOT, RX_SLOT};
    }
    return h;
fail:
    if (h) {
        if (h->fd >= 0)
            close(h->fd);
        free(h->rx_buf);
        free(h);
    }
    if (err)
        *err = e;
    return NULL;
}

void ns_udp_host_close(struct ns_udp_host *h, uint64_t now)
{
    if (!h)
        return;
    ns_udp_host_flush(h, now);
    close(h->fd);
    free(h->rx_buf);
    free(h->frame);
    free(h);
}

int ns_udp_host_fd(const struct ns_udp_host *h)
{
    return h->fd;
}
uint16_t ns_udp_host_port(const struct ns_udp_host *h)
{
    return h->port;
}
uint32_t ns_udp_host_addr(const struct ns_udp_host *h)
{
    return h->addr;
}
unsigned ns_udp_host_pending(const struct ns_udp_host *h)
{
    return h->tx_n;
}
const struct ns_udp_host_stats *ns_udp_host_stats(const struct ns_udp_host *h)
{
    return &h->stats;
}

size_t ns_udp_host_counters(const struct ns_udp_host *h, struct ns_ctr_group *out, size_t max)
{
    if (max < 1)
        return 0;
    out[0] = NS_CTR_GROUP_NAMED("udp_host", udp_host_ctr_names, &h->stats);
    return 1;
}

void ns_udp_host_set_pcap(struct ns_udp_host *h, struct ns_pcap *pc)
{
    h->pcap = pc;
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void wr32(uint8_t *p, uint32_t v)
{
    wr16(p, (uint16_t)(v >> 16));
    wr16(p + 2, (uint16_t)v);
}

/* The datagram (already copied behind FRAME_HDR in h->frame) as an
 * Ethernet/IPv4/UDP frame, so capture tools see what went over the wire.
 * The UDP checksum is left 0 (optional over IPv4); the IPv4 one is real. */
static void capture(struct ns_udp_host *h, uint32_t src, uint16_t sport, uint32_t dst,
                    uint16_t dport, uint32_t len, uint64_t now)
{
    uint8_t *f = h->frame;
    static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x01};
    static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0x02};
    bool from_us = sport == h->port;
    memcpy(f, from_us ? mac_b : mac_a, 6);
    memcpy(f + 6, from_us ? mac_a : mac_b, 6);
    wr16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    wr16(ip + 2, (uint16_t)(20 + 8 + len));
    wr16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 17;
    wr32(ip + 12, src);
    wr32(ip + 16, dst);
    wr16(ip + 10, ns_csum(ip, 20));
    uint8_t *udp = ip + 20;
    wr16(udp, sport);
    wr16(udp + 2, dport);
    wr16(udp + 4, (uint16_t)(8 + len));
    wr16(udp + 6, 0);
    if (ns_pcap_write_bytes(h->pcap, f, FRAME_HDR + len, now) < 0)
        h->stats.pcap_errors++;
}

static bool frame_ready(struct ns_udp_host *h)
{
    if (!h->frame)
        h->frame = malloc(FRAME_HDR + NS_UDP_HOST_MAX_DGRAM);
    return h->frame != NULL;
}

static uint32_t pktinfo_dst(struct ns_udp_host *h, struct msghdr *mh)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
            struct in_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof(pi));
            return ntohl(pi.ipi_addr.s_addr);
        }
    }
    return h->addr;
}

unsigned ns_udp_host_recv(struct ns_udp_host *h, struct ns_sctp *sctp, unsigned max_batches,
                          uint64_t now)
{
    unsigned total = 0;
    if (max_batches == 0)
        max_batches = 1;
    for (unsigned b = 0; b < max_batches; b++) {
        for (unsigned i = 0; i < NS_UDP_HOST_BATCH; i++) {
            h->rx_msg[i].msg_hdr = (struct msghdr){
                .msg_name = &h->rx_sa[i],
                .msg_namelen = sizeof(h->rx_sa[i]),
                .msg_iov = &h->rx_iov[i],
                .msg_iovlen = 1,
                .msg_control = h->rx_cmsg[i],
                .msg_controllen = sizeof(h->rx_cmsg[i]),
            };
            h->rx_msg[i].msg_len = 0;
        }
        int n = recvmmsg(h->fd, h->rx_msg, NS_UDP_HOST_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                h->stats.rx_errors++;
            break;
        }
        h->stats.rx_batches++;
        /* Events (wake-ups) once per recvmmsg (sctp.h). */
        ns_sctp_batch_begin(sctp);
        for (int i = 0; i < n; i++) {
            struct msghdr *mh = &h->rx_msg[i].msg_hdr;
            uint32_t len = h->rx_msg[i].msg_len;
            if (mh->msg_flags & MSG_TRUNC) {
                h->stats.rx_trunc++;
                continue;
            }
            if (len < NS_UDP_HOST_SCTP_HDR) {
                h->stats.rx_short++;
                continue;
            }
            struct ns_sctp_addr src = {.family = NS_SCTP_AF_INET4,
                                       .port = ntohs(h->rx_sa[i].sin_port),
                                       .addr = ntohl(h->rx_sa[i].sin_addr.s_addr)};
            struct ns_sctp_addr dst = {
                .family = NS_SCTP_AF_INET4, .port = h->port, .addr = pktinfo_dst(h, mh)};
            if (h->pcap && frame_ready(h)) {
                memcpy(h->frame + FRAME_HDR, h->rx_iov[i].iov_base, len);
                capture(h, src.addr, src.port, dst.addr, dst.port, len, now);
            }
            struct ns_pkt *p = ns_pkt_from(h->rx_iov[i].iov_base, len);
            if (!p) {
                h->stats.rx_nomem++;
                continue;
            }
            p->ts = now;
            h->stats.rx_datagrams++;
            h->stats.rx_bytes += len;
            ns_sctp_input(sctp, p, &src, &dst, now);
            total++;
        }
        ns_sctp_batch_end(sctp, now);
        if (n < NS_UDP_HOST_BATCH)
            break;
    }
    return total;
}

void ns_udp_host_output(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_udp_host *h = ctx;
    if (dst->family != NS_SCTP_AF_INET4 || dst->port == 0 ||
        ns_pkt_len(p) > NS_UDP_HOST_MAX_DGRAM) {
        h->stats.tx_bad_dst++;
        ns_pkt_free(p);
        return;
    }
    if (h->tx_n == NS_UDP_HOST_BATCH)
        ns_udp_host_flush(h, now);
    unsigned i = h->tx_n++;
    h->tx_pkt[i] = p;
    h->tx_src[i] = src && src->family == NS_SCTP_AF_INET4 && src->addr ? src->addr : h->addr;
    h->tx_sa[i] = (struct sockaddr_in){
        .sin_family = AF_INET, .sin_port = htons(dst->port), .sin_addr.s_addr = htonl(dst->addr)};
    int niov = ns_pkt_iov(p, h->tx_iov[i], NS_PKT_MAX_FRAGS + 1);
    h->tx_msg[i].msg_hdr = (struct msghdr){
        .msg_name = &h->tx_sa[i],
        .msg_namelen = sizeof(h->tx_sa[i]),
        .msg_iov = h->tx_iov[i],
        .msg_iovlen = (size_t)niov,
    };
    h->tx_msg[i].msg_len = 0;
}

void ns_udp_host_flush(struct ns_udp_host *h, uint64_t now)
{
    unsigned done = 0;
    while (done < h->tx_n) {
        h->stats.tx_batches++;
        int n = sendmmsg(h->fd, h->tx_msg + done, h->tx_n - done, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            /* The datagram at the head is refused: drop it and go on with
             * the rest (another destination may still be fine). */
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                h->stats.tx_eagain++;
            h->stats.tx_errors++;
            done++;
            continue;
        }
        for (int k = 0; k < n; k++) {
            unsigned i = done + (unsigned)k;
            uint32_t len = h->tx_msg[i].msg_len;
            h->stats.tx_datagrams++;
            h->stats.tx_bytes += len;
            if (h->pcap && frame_ready(h) &&
                ns_pkt_copy_out(h->tx_pkt[i], 0, h->frame + FRAME_HDR, ns_pkt_len(h->tx_pkt[i])))
                capture(h, h->tx_src[i], h->port, ntohl(h->tx_sa[i].sin_addr.s_addr),
                        ntohs(h->tx_sa[i].sin_port), ns_pkt_len(h->tx_pkt[i]), now);
        }
        done += (unsigned)n;
    }
    for (unsigned i = 0; i < h->tx_n; i++)
        ns_pkt_free(h->tx_pkt[i]);
    h->tx_n = 0;
}
