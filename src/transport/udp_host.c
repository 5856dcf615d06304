/* SCTP over UDP encapsulation on a host UDP socket.
 *
 * RFC 6951 sections 5.1-5.5: the SCTP packet is the whole UDP payload, the
 * SCTP checksum stays (the engine fills it), the UDP source port is our
 * local encapsulation port and packets go to the peer's remote
 * encapsulation port, which the engine carries as ns_sctp_addr.port (learned
 * from the UDP source port of what arrives). Section 5.6 (ICMP): with
 * IP_RECVERR the kernel gives us the errors about our datagrams with the
 * quoted UDP payload, i.e. our SCTP packet; the engine verifies its tag
 * (sctp/icmp.c, RFC 9260 Appendix C) before anything changes, so a port
 * unreachable ends a handshake to a port where nobody listens at once
 * instead of after Max.Init.Retransmits.
 *
 * Received datagrams are copied out of the batch buffers into packets of
 * their own size: the engine keeps references to received DATA until the
 * application reads it, so handing it a 64 KiB batch slot per datagram
 * would pin far more memory than the payload.
 *
 * Offload (Linux UDP_SEGMENT / UDP_GRO): a bulk transfer sends runs of
 * equal-size datagrams to one peer (full DATA packets, equal SACKs), so the
 * flush hands each such run to the kernel as one sendmmsg entry with a
 * segment size, and the kernel may give us a run it coalesced as one
 * buffer with the segment size in a cmsg. Either way the datagrams on the
 * wire, in the capture and at ns_sctp_input are the same as without it.
 */
#include "transport/udp_host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/errqueue.h>

#include "core/checksum.h"
#include "core/bytes.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* Also holds a coalesced (UDP_GRO) buffer: GRO stops below 64 KiB unless
 * an administrator raised the device's gro_ipv4_max_size (then rx_trunc). */
#define RX_SLOT 65536u
#define RX_CMSG (CMSG_SPACE(sizeof(struct in_pktinfo)) + CMSG_SPACE(sizeof(int)))
#define TX_CMSG (CMSG_SPACE(sizeof(uint16_t)))
#define PKT_IOV (NS_PKT_MAX_FRAGS + 1)
#define TX_IOV  (NS_UDP_HOST_BATCH * PKT_IOV)
/* Linux refuses a sendmsg with more iovecs than this (UIO_MAXIOV). */
#define RUN_MAX_IOV 1024u
/* Ethernet + IPv4 + UDP in front of a captured datagram. */
#define FRAME_HDR 42u
/* IPv4 + UDP headers: what an ICMP-reported MTU carries besides SCTP. */
#define ENCAP_HLEN 28u
/* ICMP type/codes (RFC 792) the kernel reports in sock_extended_err. */
#define ICMP_UNREACH          3
#define ICMP_UNREACH_PORT     3
#define ICMP_UNREACH_NEEDFRAG 4
/* Error-queue reports read per ns_udp_host_recv: the rest wait for the
 * next call (the fd stays readable for poll: POLLERR). */
#define ERRQ_MAX 64
/* The extended error and the offender's address behind it; IP_PKTINFO
 * comes along too (it is on for the socket). */
#define ERR_CMSG                                                                                   \
    (CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in)) +                   \
     CMSG_SPACE(sizeof(struct in_pktinfo)))

struct ns_udp_host {
    int fd;
    uint32_t addr; /* bound, host order */
    uint16_t port;
    bool gso; /* UDP_SEGMENT in use (cleared by a fallback) */
    bool gro; /* UDP_GRO set */

    /* tx batch: packets are kept until sendmmsg has copied them. */
    unsigned tx_n;
    struct ns_pkt *tx_pkt[NS_UDP_HOST_BATCH];
    uint32_t tx_len[NS_UDP_HOST_BATCH];
    struct sockaddr_in tx_sa[NS_UDP_HOST_BATCH];
    uint32_t tx_src[NS_UDP_HOST_BATCH]; /* for the capture */
    /* sendmmsg entries, built at flush: entry e carries tx_cnt[e] queued
     * packets from tx_first[e] on (more than one: a UDP_SEGMENT run). */
    struct mmsghdr tx_msg[NS_UDP_HOST_BATCH];
    unsigned tx_first[NS_UDP_HOST_BATCH], tx_cnt[NS_UDP_HOST_BATCH];
    struct iovec tx_iov[TX_IOV];
    union {
        uint8_t b[TX_CMSG];
        struct cmsghdr align;
    } tx_cmsg[NS_UDP_HOST_BATCH];

    /* rx batch */
    uint8_t *rx_buf; /* NS_UDP_HOST_BATCH slots of RX_SLOT bytes */
    struct sockaddr_in rx_sa[NS_UDP_HOST_BATCH];
    struct iovec rx_iov[NS_UDP_HOST_BATCH];
    struct mmsghdr rx_msg[NS_UDP_HOST_BATCH];
    union {
        uint8_t b[RX_CMSG];
        struct cmsghdr align;
    } rx_cmsg[NS_UDP_HOST_BATCH];

    ns_udp_host_capture_fn capture;
    void *capture_ctx;
    uint8_t *frame; /* capture scratch: FRAME_HDR + largest datagram */

    struct ns_udp_host_stats stats;
};

NS_CTR_NAMES(udp_host_ctr_names, NS_UDP_HOST_COUNTERS);

/* Every run fits one sendmsg's iovecs and one gso_size. */
_Static_assert(TX_IOV <= RUN_MAX_IOV, "tx iovecs");
_Static_assert(NS_UDP_HOST_MAX_DGRAM <= UINT16_MAX, "gso_size");

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
    if (setsockopt(h->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0 ||
        setsockopt(h->fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) < 0) {
        e = -errno;
        goto fail;
    }
    if (!o->no_offload) {
        /* Kernels without UDP_SEGMENT ignore an unknown SOL_UDP cmsg and
         * would send the run as one big datagram: ask first. */
        int v = 0;
        socklen_t vl = sizeof(v);
        h->gso = getsockopt(h->fd, SOL_UDP, UDP_SEGMENT, &v, &vl) == 0;
        h->gro = setsockopt(h->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
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
bool ns_udp_host_gso(const struct ns_udp_host *h)
{
    return h->gso;
}
bool ns_udp_host_gro(const struct ns_udp_host *h)
{
    return h->gro;
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

void ns_udp_host_set_capture(struct ns_udp_host *h, ns_udp_host_capture_fn fn, void *ctx)
{
    h->capture = fn;
    h->capture_ctx = ctx;
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
    ns_wr16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    ns_wr16(ip + 2, (uint16_t)(20 + 8 + len));
    ns_wr16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 17;
    ns_wr32(ip + 12, src);
    ns_wr32(ip + 16, dst);
    ns_wr16(ip + 10, ns_csum(ip, 20));
    uint8_t *udp = ip + 20;
    ns_wr16(udp, sport);
    ns_wr16(udp + 2, dport);
    ns_wr16(udp + 4, (uint16_t)(8 + len));
    ns_wr16(udp + 6, 0);
    if (h->capture(h->capture_ctx, f, FRAME_HDR + len, now) < 0)
        h->stats.pcap_errors++;
}

static bool frame_ready(struct ns_udp_host *h)
{
    if (!h->frame)
        h->frame = malloc(FRAME_HDR + NS_UDP_HOST_MAX_DGRAM);
    return h->frame != NULL;
}

/* The datagram's destination address (IP_PKTINFO) and the segment size of
 * a coalesced buffer (UDP_GRO; 0 when it is one datagram). */
static uint32_t rx_cmsgs(struct ns_udp_host *h, struct msghdr *mh, uint32_t *gro_seg)
{
    uint32_t dst = h->addr;
    *gro_seg = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
            struct in_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof(pi));
            dst = ntohl(pi.ipi_addr.s_addr);
        } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
                   c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int v;
            memcpy(&v, CMSG_DATA(c), sizeof(v));
            *gro_seg = v > 0 ? (uint32_t)v : 0;
        }
    }
    return dst;
}

/* One datagram of a received buffer to the engine; false if dropped. */
static bool rx_one(struct ns_udp_host *h, struct ns_sctp *sctp, const uint8_t *d, uint32_t len,
                   const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now)
{
    if (len < NS_UDP_HOST_SCTP_HDR) {
        h->stats.rx_short++;
        return false;
    }
    if (h->capture && frame_ready(h)) {
        memcpy(h->frame + FRAME_HDR, d, len);
        capture(h, src->addr, src->port, dst->addr, dst->port, len, now);
    }
    struct ns_pkt *p = ns_pkt_from(d, len);
    if (!p) {
        h->stats.rx_nomem++;
        return false;
    }
    p->ts = now;
    h->stats.rx_datagrams++;
    h->stats.rx_bytes += len;
    ns_sctp_input(sctp, p, src, dst, now);
    return true;
}

/* One error-queue report to the engine. d/len: the UDP payload of the
 * datagram it is about, peer: where that datagram went. */
static void rx_err_one(struct ns_udp_host *h, struct ns_sctp *sctp,
                       const struct sock_extended_err *ee, const uint8_t *d, uint32_t len,
                       const struct ns_sctp_addr *peer, uint64_t now)
{
    enum ns_sctp_icmp_kind kind;
    uint32_t pmtu = 0;
    if (ee->ee_origin == SO_EE_ORIGIN_ICMP && ee->ee_type == ICMP_UNREACH &&
        ee->ee_code == ICMP_UNREACH_PORT) {
        /* Nobody does SCTP over UDP on that port: as if the peer had no
         * SCTP at all (RFC 6951 5.6). */
        h->stats.icmp_port_unreach++;
        kind = NS_SCTP_ICMP_PROT_UNREACH;
    } else if ((ee->ee_origin == SO_EE_ORIGIN_ICMP && ee->ee_type == ICMP_UNREACH &&
                ee->ee_code == ICMP_UNREACH_NEEDFRAG) ||
               (ee->ee_origin == SO_EE_ORIGIN_LOCAL && ee->ee_errno == EMSGSIZE)) {
        /* ee_info is the IPv4 MTU. A local report quotes nothing (Linux
         * keeps only the address), so the engine cannot verify it and it
         * ends up unverified; the kernel fragments such datagrams anyway. */
        h->stats.icmp_frag_needed++;
        kind = NS_SCTP_ICMP_FRAG_NEEDED;
        pmtu = ee->ee_info > ENCAP_HLEN ? ee->ee_info - ENCAP_HLEN : 0;
    } else {
        h->stats.icmp_ignored++;
        return;
    }
    switch (ns_sctp_icmp_error(sctp, peer, d, len, kind, pmtu, now)) {
    case NS_SCTP_ICMP_NO_ASSOC:
    case NS_SCTP_ICMP_BAD_TAG:
    case NS_SCTP_ICMP_WRONG_PORT:
        h->stats.icmp_unverified++;
        break;
    case NS_SCTP_ICMP_ABORTED:
        h->stats.icmp_aborts++;
        break;
    case NS_SCTP_ICMP_PMTU_LOWERED:
        h->stats.icmp_pmtu_lowered++;
        break;
    case NS_SCTP_ICMP_IGNORED:
        break;
    }
}

/* Drain the IP_RECVERR queue (reading it also clears the socket error a
 * report left pending). Uses the first receive slot as its buffer. */
static void rx_errqueue(struct ns_udp_host *h, struct ns_sctp *sctp, uint64_t now)
{
    for (unsigned i = 0; i < ERRQ_MAX; i++) {
        struct sockaddr_in sa;
        union {
            uint8_t b[ERR_CMSG];
            struct cmsghdr align;
        } cb;
        struct iovec iov = {h->rx_buf, RX_SLOT};
        struct msghdr mh = {
            .msg_name = &sa,
            .msg_namelen = sizeof(sa),
            .msg_iov = &iov,
            .msg_iovlen = 1,
            .msg_control = cb.b,
            .msg_controllen = sizeof(cb.b),
        };
        memset(&sa, 0, sizeof(sa));
        ssize_t n = recvmsg(h->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN: empty */
        }
        h->stats.icmp_errors++;
        const struct sock_extended_err *ee = NULL;
        struct sock_extended_err eeb;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR &&
                c->cmsg_len >= CMSG_LEN(sizeof(eeb))) {
                memcpy(&eeb, CMSG_DATA(c), sizeof(eeb));
                ee = &eeb;
            }
        }
        if (!ee || sa.sin_family != AF_INET) {
            h->stats.icmp_ignored++;
            continue;
        }
        /* MSG_TRUNC: the quote was longer than the slot; its start (the
         * common header and first chunk) is all the engine reads. */
        uint32_t len = (uint32_t)n;
        struct ns_sctp_addr peer = {.family = NS_SCTP_AF_INET4,
                                    .port = ntohs(sa.sin_port),
                                    .addr = ntohl(sa.sin_addr.s_addr)};
        rx_err_one(h, sctp, ee, h->rx_buf, len, &peer, now);
    }
}

/* A receive or send failing with this reports a pending ICMP error (the
 * socket error IP_RECVERR sets) rather than a fault of the call. */
static bool icmp_errno(int e)
{
    return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN ||
           e == ENONET || e == ENOPROTOOPT || e == EPROTO || e == EACCES || e == EMSGSIZE ||
           e == EOPNOTSUPP;
}

unsigned ns_udp_host_recv(struct ns_udp_host *h, struct ns_sctp *sctp, unsigned max_batches,
                          uint64_t now)
{
    unsigned total = 0;
    bool drained_again = false;
    if (max_batches == 0)
        max_batches = 1;
    rx_errqueue(h, sctp, now);
    for (unsigned b = 0; b < max_batches; b++) {
        for (unsigned i = 0; i < NS_UDP_HOST_BATCH; i++) {
            h->rx_msg[i].msg_hdr = (struct msghdr){
                .msg_name = &h->rx_sa[i],
                .msg_namelen = sizeof(h->rx_sa[i]),
                .msg_iov = &h->rx_iov[i],
                .msg_iovlen = 1,
                .msg_control = h->rx_cmsg[i].b,
                .msg_controllen = sizeof(h->rx_cmsg[i].b),
            };
            h->rx_msg[i].msg_len = 0;
        }
        int n = recvmmsg(h->fd, h->rx_msg, NS_UDP_HOST_BATCH, MSG_DONTWAIT, NULL);
        if (n < 0 && icmp_errno(errno) && !drained_again) {
            /* A report arrived since the drain above: take it, read on. */
            drained_again = true;
            rx_errqueue(h, sctp, now);
            n = recvmmsg(h->fd, h->rx_msg, NS_UDP_HOST_BATCH, MSG_DONTWAIT, NULL);
        }
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
            uint32_t seg;
            struct ns_sctp_addr src = {.family = NS_SCTP_AF_INET4,
                                       .port = ntohs(h->rx_sa[i].sin_port),
                                       .addr = ntohl(h->rx_sa[i].sin_addr.s_addr)};
            struct ns_sctp_addr dst = {
                .family = NS_SCTP_AF_INET4, .port = h->port, .addr = rx_cmsgs(h, mh, &seg)};
            const uint8_t *d = h->rx_iov[i].iov_base;
            if (seg == 0 || seg >= len) {
                total += rx_one(h, sctp, d, len, &src, &dst, now);
                continue;
            }
            /* Coalesced by the kernel: datagrams of seg bytes, the last
             * one possibly shorter, all from the same source. */
            h->stats.rx_gro_buffers++;
            for (uint32_t off = 0; off < len; off += seg) {
                uint32_t l = len - off < seg ? len - off : seg;
                h->stats.rx_gro_segs++;
                total += rx_one(h, sctp, d + off, l, &src, &dst, now);
            }
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
    h->tx_len[i] = ns_pkt_len(p);
    h->tx_src[i] = src && src->family == NS_SCTP_AF_INET4 && src->addr ? src->addr : h->addr;
    h->tx_sa[i] = (struct sockaddr_in){
        .sin_family = AF_INET, .sin_port = htons(dst->port), .sin_addr.s_addr = htonl(dst->addr)};
}

static unsigned pkt_pieces(const struct ns_pkt *p)
{
    return (p->len ? 1u : 0u) + p->nfrags;
}

static bool same_dst(const struct ns_udp_host *h, unsigned a, unsigned b)
{
    return h->tx_sa[a].sin_addr.s_addr == h->tx_sa[b].sin_addr.s_addr &&
           h->tx_sa[a].sin_port == h->tx_sa[b].sin_port;
}

/* sendmmsg entries for the queued packets from `from` on; packets before
 * `plain_until` go one per entry. Returns the number of entries. */
static unsigned tx_build(struct ns_udp_host *h, unsigned from, unsigned plain_until)
{
    unsigned ne = 0, niov = 0;
    for (unsigned p = from; p < h->tx_n; ne++) {
        unsigned iov0 = niov, cnt = 1;
        uint32_t seg = h->tx_len[p], last = seg, total = seg;
        niov += (unsigned)ns_pkt_iov(h->tx_pkt[p], h->tx_iov + niov, PKT_IOV);
        if (h->gso && p >= plain_until && seg > 0) {
            /* Equal sizes to one address:port; a shorter one ends it. */
            while (p + cnt < h->tx_n && cnt < NS_UDP_HOST_GSO_SEGS && last == seg) {
                unsigned q = p + cnt;
                uint32_t l = h->tx_len[q];
                if (l == 0 || l > seg || !same_dst(h, p, q) || total + l > NS_UDP_HOST_MAX_DGRAM ||
                    niov - iov0 + pkt_pieces(h->tx_pkt[q]) > RUN_MAX_IOV)
                    break;
                niov += (unsigned)ns_pkt_iov(h->tx_pkt[q], h->tx_iov + niov, PKT_IOV);
                total += l;
                last = l;
                cnt++;
            }
        }
        struct msghdr *mh = &h->tx_msg[ne].msg_hdr;
        *mh = (struct msghdr){
            .msg_name = &h->tx_sa[p],
            .msg_namelen = sizeof(h->tx_sa[p]),
            .msg_iov = h->tx_iov + iov0,
            .msg_iovlen = niov - iov0,
        };
        if (cnt > 1) {
            memset(h->tx_cmsg[ne].b, 0, sizeof(h->tx_cmsg[ne].b));
            mh->msg_control = h->tx_cmsg[ne].b;
            mh->msg_controllen = sizeof(h->tx_cmsg[ne].b);
            struct cmsghdr *c = CMSG_FIRSTHDR(mh);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t gs = (uint16_t)seg;
            memcpy(CMSG_DATA(c), &gs, sizeof(gs));
        }
        h->tx_msg[ne].msg_len = 0;
        h->tx_first[ne] = p;
        h->tx_cnt[ne] = cnt;
        p += cnt;
    }
    return ne;
}

void ns_udp_host_flush(struct ns_udp_host *h, uint64_t now)
{
    unsigned ne = h->tx_n ? tx_build(h, 0, 0) : 0, done = 0;
    bool retried = false; /* the entry at done had its one retry */
    while (done < ne) {
        h->stats.tx_batches++;
        int n = sendmmsg(h->fd, h->tx_msg + done, ne - done, MSG_DONTWAIT);
        if (n < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (icmp_errno(e) && !retried) {
                /* Likely the socket error an ICMP report left pending
                 * (IP_RECVERR), which this call consumed: nothing wrong
                 * with this datagram. A real refusal fails again. */
                retried = true;
                h->stats.tx_retries++;
                continue;
            }
            retried = false;
            unsigned first = h->tx_first[done], cnt = h->tx_cnt[done];
            if (cnt > 1) {
                /* A refused run goes again one datagram per entry, so that
                 * what fits still leaves and the drops below count each
                 * datagram. EIO: the socket's path cannot segment at all
                 * (no checksum offload): stop asking. EINVAL may be this
                 * run only (a segment above one route's MTU). */
                if (e == EIO || e == EINVAL)
                    h->stats.gso_fallbacks++;
                if (e == EIO)
                    h->gso = false;
                ne = tx_build(h, first, first + cnt);
                done = 0;
                continue;
            }
            /* The datagram at the head is refused: drop it and go on with
             * the rest (another destination may still be fine). */
            if (e == EAGAIN || e == EWOULDBLOCK)
                h->stats.tx_eagain++;
            h->stats.tx_errors++;
            done++;
            continue;
        }
        for (unsigned e = done; e < done + (unsigned)n; e++) {
            unsigned cnt = h->tx_cnt[e];
            h->stats.tx_datagrams += cnt;
            h->stats.tx_bytes += h->tx_msg[e].msg_len;
            if (cnt > 1) {
                h->stats.tx_gso_runs++;
                h->stats.tx_gso_segs += cnt;
            }
            if (!h->capture || !frame_ready(h))
                continue;
            /* One record per datagram, as the wire carries them. */
            for (unsigned i = h->tx_first[e]; i < h->tx_first[e] + cnt; i++)
                if (ns_pkt_copy_out(h->tx_pkt[i], 0, h->frame + FRAME_HDR, h->tx_len[i]))
                    capture(h, h->tx_src[i], h->port, ntohl(h->tx_sa[i].sin_addr.s_addr),
                            ntohs(h->tx_sa[i].sin_port), h->tx_len[i], now);
        }
        done += (unsigned)n;
        retried = false;
    }
    for (unsigned i = 0; i < h->tx_n; i++)
        ns_pkt_free(h->tx_pkt[i]);
    h->tx_n = 0;
}
