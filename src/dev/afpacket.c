/* AF_PACKET device (packet(7)): SOCK_RAW, ETH_P_ALL, bound to one
 * interface, batched with recvmmsg/sendmmsg. Outgoing copies are suppressed
 * with PACKET_IGNORE_OUTGOING where the kernel has it (4.20+) and filtered on
 * sll_pkttype otherwise. */
#include "dev/afpacket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define AFP_BATCH      32
#define AFP_VLAN_SLACK 4
#define AFP_RCVBUF     (1 << 20)

struct afp_dev {
    struct ns_dev dev;
    int ifindex;
    /* Receive buffers kept between calls so an idle poll allocates nothing. */
    struct ns_pkt *spare[AFP_BATCH];
};

static const char *raw_hint(int e)
{
    return e == EPERM || e == EACCES ? " (nstack needs root or CAP_NET_RAW)" : "";
}

/* Read and discard one frame; for when no buffer could be allocated. */
static int afp_discard_one(struct ns_dev *d)
{
    uint8_t b;
    for (;;) {
        ssize_t r = recv(d->fd, &b, 1, MSG_DONTWAIT | MSG_TRUNC);
        if (r >= 0)
            return 1;
        if (errno != EINTR)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
    }
}

static int afp_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    struct afp_dev *a = (struct afp_dev *)d;
    uint32_t cap = d->mtu + NS_ETH_HLEN + AFP_VLAN_SLACK;
    int n = 0;
    while (n < max) {
        int batch = max - n < AFP_BATCH ? max - n : AFP_BATCH;
        int have = 0;
        for (; have < batch; have++) {
            if (!a->spare[have])
                a->spare[have] = ns_pkt_alloc(NS_PKT_HEADROOM, cap);
            if (!a->spare[have])
                break;
        }
        if (have == 0) {
            int r = afp_discard_one(d);
            if (r == 1) {
                d->stats.rx_drop_nomem++;
                continue;
            }
            if (r < 0)
                d->stats.rx_errors++;
            return n ? n : r;
        }
        struct mmsghdr msgs[AFP_BATCH];
        struct iovec iov[AFP_BATCH];
        struct sockaddr_ll sll[AFP_BATCH];
        memset(msgs, 0, sizeof(msgs[0]) * (size_t)have);
        for (int i = 0; i < have; i++) {
            iov[i] = (struct iovec){a->spare[i]->data, cap};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &sll[i];
            msgs[i].msg_hdr.msg_namelen = sizeof(sll[i]);
        }
        /* MSG_TRUNC: msg_len reports the real frame length, so oversized
         * frames are recognised instead of silently cut. */
        int r = recvmmsg(d->fd, msgs, (unsigned)have, MSG_DONTWAIT | MSG_TRUNC, NULL);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK)
                break;
            d->stats.rx_errors++;
            return n ? n : -e;
        }
        for (int i = 0; i < r; i++) {
            uint32_t len = msgs[i].msg_len;
            if (sll[i].sll_pkttype == PACKET_OUTGOING)
                continue; /* our own frame, the buffer stays a spare */
            if (len > cap || (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) {
                d->stats.rx_drop_oversize++;
                continue;
            }
            struct ns_pkt *p = a->spare[i];
            a->spare[i] = NULL;
            ns_pkt_put(p, len);
            p->ts = now;
            d->stats.rx_frames++;
            d->stats.rx_bytes += len;
            pkts[n++] = p;
        }
        /* Keep the spares contiguous from index 0 for the next batch. */
        int k = 0;
        for (int i = 0; i < AFP_BATCH; i++) {
            if (a->spare[i]) {
                struct ns_pkt *p = a->spare[i];
                a->spare[i] = NULL;
                a->spare[k++] = p;
            }
        }
        if (r < have)
            break;
    }
    return n;
}

static int afp_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    int i = 0;
    while (i < n) {
        int batch = n - i < AFP_BATCH ? n - i : AFP_BATCH;
        struct mmsghdr msgs[AFP_BATCH];
        struct iovec iov[AFP_BATCH][NS_PKT_MAX_FRAGS + 1];
        memset(msgs, 0, sizeof(msgs[0]) * (size_t)batch);
        for (int j = 0; j < batch; j++) {
            msgs[j].msg_hdr.msg_iov = iov[j];
            msgs[j].msg_hdr.msg_iovlen =
                (size_t)ns_pkt_iov(pkts[i + j], iov[j], NS_PKT_MAX_FRAGS + 1);
        }
        int r = sendmmsg(d->fd, msgs, (unsigned)batch, MSG_DONTWAIT);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) {
                d->stats.tx_busy++;
                break;
            }
            /* EMSGSIZE, ENETDOWN, ENXIO...: this frame cannot go; drop it
             * so the frames behind it are not held up. */
            d->stats.tx_errors++;
            ns_pkt_free(pkts[i++]);
            continue;
        }
        for (int j = 0; j < r; j++) {
            d->stats.tx_frames++;
            d->stats.tx_bytes += msgs[j].msg_len;
            ns_pkt_free(pkts[i + j]);
        }
        i += r;
    }
    return i;
}

static void afp_close(struct ns_dev *d)
{
    struct afp_dev *a = (struct afp_dev *)d;
    if (d->fd >= 0)
        close(d->fd);
    for (int i = 0; i < AFP_BATCH; i++)
        ns_pkt_free(a->spare[i]);
    free(a);
}

static const struct ns_dev_ops afp_ops = {
    .recv = afp_recv,
    .send = afp_send,
    .close = afp_close,
};

static int afp_setup(struct afp_dev *a, const char *ifname, char *err, size_t errlen)
{
    struct ns_dev *d = &a->dev;
    /* Protocol 0 until bind: nothing from other interfaces is queued in the
     * window between socket() and bind(). */
    d->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d->fd < 0) {
        int e = errno;
        snprintf(err, errlen, "socket(AF_PACKET): %s%s", strerror(e), raw_hint(e));
        return -e;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(d->fd, SIOCGIFINDEX, &ifr) < 0) {
        int e = errno;
        if (e == ENODEV)
            snprintf(err, errlen, "afpacket %s: no such interface", ifname);
        else
            snprintf(err, errlen, "SIOCGIFINDEX %s: %s", ifname, strerror(e));
        return -e;
    }
    a->ifindex = ifr.ifr_ifindex;
    if (ioctl(d->fd, SIOCGIFHWADDR, &ifr) == 0 && ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER &&
        ifr.ifr_hwaddr.sa_family != ARPHRD_LOOPBACK) {
        snprintf(err, errlen, "afpacket %s: not an Ethernet interface (hardware type %u)", ifname,
                 (unsigned)ifr.ifr_hwaddr.sa_family);
        return -EINVAL;
    }
    /* Up before bind: binding to a down interface leaves the socket
     * unhooked until the next up event. */
    int rc = ns_dev_if_up(ifname, &d->mtu, err, errlen);
    if (rc < 0)
        return rc;
    int one = 1;
    (void)setsockopt(d->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
    int rcvbuf = AFP_RCVBUF;
    (void)setsockopt(d->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));

    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = a->ifindex;
    if (bind(d->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        int e = errno;
        snprintf(err, errlen, "bind AF_PACKET to %s: %s", ifname, strerror(e));
        return -e;
    }
    struct packet_mreq mr;
    memset(&mr, 0, sizeof(mr));
    mr.mr_ifindex = a->ifindex;
    mr.mr_type = PACKET_MR_PROMISC;
    if (setsockopt(d->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
        int e = errno;
        snprintf(err, errlen, "PACKET_ADD_MEMBERSHIP promisc %s: %s%s", ifname, strerror(e),
                 ns_dev_perm_hint(e));
        return -e;
    }
    /* Bound while the interface was down, the socket holds a pending
     * ENETDOWN that the first recv would report; it is stale now. */
    int soerr;
    socklen_t sl = sizeof(soerr);
    (void)getsockopt(d->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    return 0;
}

struct ns_dev *ns_afpacket_open(const char *ifname, char *err, size_t errlen)
{
    if (ns_dev_check_ifname("afpacket", ifname, err, errlen) < 0)
        return NULL;
    struct afp_dev *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, errlen, "afpacket %s: out of memory", ifname);
        return NULL;
    }
    a->dev.ops = &afp_ops;
    a->dev.fd = -1;
    a->dev.rx_burst = 1;
    snprintf(a->dev.name, sizeof(a->dev.name), "%s", ifname);
    if (afp_setup(a, ifname, err, errlen) < 0) {
        afp_close(&a->dev);
        return NULL;
    }
    ns_dev_mac_from_name(a->dev.name, &a->dev.mac);
    return &a->dev;
}
