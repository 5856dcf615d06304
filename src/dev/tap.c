/* TAP device (Linux Documentation/networking/tuntap.rst). One read() or
 * write() on the tun fd is one whole Ethernet frame. */
#include "dev/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

/* The largest frame the kernel can hand us: a 64 KiB packet plus headers.
 * Anything beyond the MTU lands here and is dropped, counted. */
#define TAP_SCRATCH (65536 + 64)
/* Room for one 802.1Q tag beyond the MTU and Ethernet header. */
#define TAP_VLAN_SLACK 4

struct tap_dev {
    struct ns_dev dev;
    uint8_t *scratch;
};

static int tap_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    struct tap_dev *t = (struct tap_dev *)d;
    uint32_t cap = d->mtu + NS_ETH_HLEN + TAP_VLAN_SLACK;
    int n = 0;
    while (n < max) {
        struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, cap);
        struct iovec iov[2];
        int niov = 0;
        if (p)
            iov[niov++] = (struct iovec){p->data, cap};
        /* Without memory the frame is still read (into scratch) and
         * dropped, or the fd would stay readable and spin the caller. */
        iov[niov++] = (struct iovec){t->scratch, TAP_SCRATCH};
        ssize_t r = readv(d->fd, iov, niov);
        if (r < 0) {
            int e = errno;
            ns_pkt_free(p);
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK)
                break;
            d->stats.rx_errors++;
            return n ? n : -e;
        }
        if (r == 0) {
            ns_pkt_free(p);
            break;
        }
        if (!p) {
            d->stats.rx_drop_nomem++;
            continue;
        }
        if ((size_t)r > cap) {
            d->stats.rx_drop_oversize++;
            ns_pkt_free(p);
            continue;
        }
        ns_pkt_put(p, (uint32_t)r);
        p->ts = now;
        d->stats.rx_frames++;
        d->stats.rx_bytes += (uint64_t)r;
        pkts[n++] = p;
    }
    return n;
}

static int tap_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    int i = 0;
    while (i < n) {
        struct iovec iov[NS_PKT_MAX_FRAGS + 1];
        int niov = ns_pkt_iov(pkts[i], iov, NS_PKT_MAX_FRAGS + 1);
        ssize_t r = writev(d->fd, iov, niov);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) {
                d->stats.tx_busy++;
                break;
            }
            /* EIO (interface down), EINVAL (malformed): this frame can never
             * go; drop it rather than block the queue behind it. */
            d->stats.tx_errors++;
        } else {
            d->stats.tx_frames++;
            d->stats.tx_bytes += (uint64_t)r;
        }
        ns_pkt_free(pkts[i]);
        i++;
    }
    return i;
}

static void tap_close(struct ns_dev *d)
{
    struct tap_dev *t = (struct tap_dev *)d;
    if (d->fd >= 0)
        close(d->fd);
    free(t->scratch);
    free(t);
}

static const struct ns_dev_ops tap_ops = {
    .recv = tap_recv,
    .send = tap_send,
    .close = tap_close,
};

static const char *tunsetiff_hint(int e)
{
    switch (e) {
    case EPERM:
    case EACCES:
        return ns_dev_perm_hint(e);
    case EBUSY:
        return " (attached by another process?)";
    case EINVAL:
        return " (an existing interface that is not a TAP? use afpacket:NAME)";
    default:
        return "";
    }
}

struct ns_dev *ns_tap_open(const char *name, char *err, size_t errlen)
{
    if (ns_dev_check_ifname("tap", name, err, errlen) < 0)
        return NULL;
    struct tap_dev *t = calloc(1, sizeof(*t));
    uint8_t *scratch = malloc(TAP_SCRATCH);
    if (!t || !scratch) {
        free(t);
        free(scratch);
        snprintf(err, errlen, "tap %s: out of memory", name);
        return NULL;
    }
    t->scratch = scratch;
    t->dev.ops = &tap_ops;
    t->dev.fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (t->dev.fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open /dev/net/tun: %s%s", strerror(e), ns_dev_perm_hint(e));
        tap_close(&t->dev);
        return NULL;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(t->dev.fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        snprintf(err, errlen, "TUNSETIFF %s: %s%s", name, strerror(e), tunsetiff_hint(e));
        tap_close(&t->dev);
        return NULL;
    }
    /* The kernel may have expanded a pattern such as "tap%d". */
    snprintf(t->dev.name, sizeof(t->dev.name), "%s", ifr.ifr_name);
    if (ns_dev_if_up(t->dev.name, &t->dev.mtu, err, errlen) < 0) {
        tap_close(&t->dev);
        return NULL;
    }
    ns_dev_mac_from_name(t->dev.name, &t->dev.mac);
    return &t->dev;
}
