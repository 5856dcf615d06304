/* TAP device (Linux Documentation/networking/tuntap.rst). One read() or
 * write() on the tun fd is one whole Ethernet frame; with offload each frame
 * carries a virtio-net header and may stand for a run of UDP datagrams
 * (dev/vnet.h). */
#include "dev/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dev/vnet.h"

/* Newer than the Debian 12 headers (Linux 6.2). */
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

/* The largest frame the kernel can hand us: a 64 KiB packet plus headers.
 * Anything beyond the MTU lands here and is dropped, counted. */
#define TAP_SCRATCH (65536 + 64)
/* Room for one 802.1Q tag beyond the MTU and Ethernet header. */
#define TAP_VLAN_SLACK 4

struct tap_dev {
    struct ns_dev dev;
    uint8_t *scratch;
    bool vnet; /* frames carry a virtio-net header; USO both ways */
    struct ns_vnet_rx_stats vst;
};

static void vnet_stats(struct tap_dev *t)
{
    t->dev.stats.rx_gso_frames = t->vst.gso_frames;
    t->dev.stats.rx_gso_segs = t->vst.gso_segs;
    t->dev.stats.rx_drop_gso = t->vst.bad;
    t->dev.stats.rx_csum_done = t->vst.csum_done;
}

/* One frame: its length, 0 when nothing waits, or -errno (counted). */
static ssize_t tap_read(struct ns_dev *d, const struct iovec *iov, int niov)
{
    for (;;) {
        ssize_t r = readv(d->fd, iov, niov);
        if (r >= 0)
            return r;
        int e = errno;
        if (e == EAGAIN || e == EWOULDBLOCK)
            return 0;
        if (e != EINTR) {
            d->stats.rx_errors++;
            return -e;
        }
    }
}

/* Offload mode: the frame lands in scratch whole (a USO frame is up to
 * 64 KiB) and vnet.c copies it into packets, one per datagram. */
static int tap_recv_vnet(struct tap_dev *t, struct ns_pkt **pkts, int max, uint64_t now)
{
    struct ns_dev *d = &t->dev;
    int n = 0;
    /* Room for a whole USO frame, or the caller could never get one. */
    while (n < max && (n == 0 || max - n >= NS_VNET_MAX_SEGS)) {
        struct ns_vnet_hdr h;
        struct iovec iov[2] = {{&h, NS_VNET_HLEN}, {t->scratch, TAP_SCRATCH}};
        ssize_t r = tap_read(d, iov, 2);
        if (r < 0)
            return n ? n : (int)r;
        if (r == 0)
            break;
        if (r < NS_VNET_HLEN) {
            d->stats.rx_errors++;
            continue;
        }
        if ((size_t)r > NS_VNET_HLEN + TAP_SCRATCH) {
            /* The kernel says how long the frame was, not how much of it
             * fitted: a longer one was cut. */
            d->stats.rx_drop_oversize++;
            continue;
        }
        uint32_t flen = (uint32_t)r - NS_VNET_HLEN;
        if (h.gso_type == NS_VNET_GSO_NONE && flen > d->mtu + NS_ETH_HLEN + TAP_VLAN_SLACK) {
            d->stats.rx_drop_oversize++;
            continue;
        }
        uint64_t nomem = t->vst.nomem;
        int k = ns_vnet_rx(&h, t->scratch, flen, pkts + n, max - n, &t->vst);
        d->stats.rx_drop_nomem += t->vst.nomem - nomem;
        vnet_stats(t);
        if (k == 0)
            continue;
        d->stats.rx_frames++;
        d->stats.rx_bytes += flen;
        for (int i = 0; i < k; i++)
            pkts[n + i]->ts = now;
        n += k;
    }
    return n;
}

static int tap_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    struct tap_dev *t = (struct tap_dev *)d;
    if (t->vnet)
        return tap_recv_vnet(t, pkts, max, now);
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
        ssize_t r = tap_read(d, iov, niov);
        if (r <= 0) {
            ns_pkt_free(p);
            if (r < 0)
                return n ? n : (int)r;
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

/* One frame per write; in offload mode a frame may carry a run of datagrams
 * as one USO frame, behind its virtio-net header (vnet.c decides). */
static int tap_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    struct tap_dev *t = (struct tap_dev *)d;
    (void)now;
    int i = 0, solo = 0; /* packets of a refused run, now going one by one */
    while (i < n) {
        struct ns_vnet_tx_plan plan;
        struct iovec iov[NS_VNET_MAX_IOV + NS_PKT_MAX_FRAGS + 1];
        int niov;
        size_t hdr = 0;
        if (t->vnet) {
            ns_vnet_tx_plan(pkts + i, solo ? 1 : n - i, &plan);
            niov = ns_vnet_tx_iov(&plan, pkts + i, iov, (int)(sizeof(iov) / sizeof(iov[0])));
            hdr = NS_VNET_HLEN;
        } else {
            plan.count = 1;
            niov = ns_pkt_iov(pkts[i], iov, NS_PKT_MAX_FRAGS + 1);
        }
        ssize_t r = niov < 0 ? (errno = EINVAL, -1) : writev(d->fd, iov, niov);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) {
                d->stats.tx_busy++;
                break;
            }
            if (plan.count > 1) {
                /* The kernel refused the run as one frame: its datagrams
                 * still go, each on its own. */
                d->stats.tx_gso_refused++;
                solo = plan.count;
                continue;
            }
            /* EIO (interface down), EINVAL (malformed): this frame can
             * never go; drop it rather than block the queue behind it. */
            d->stats.tx_errors += (uint64_t)plan.count;
        } else {
            d->stats.tx_frames++;
            d->stats.tx_bytes += (uint64_t)r - hdr;
            if (plan.count > 1) {
                d->stats.tx_gso_frames++;
                d->stats.tx_gso_segs += (uint64_t)plan.count;
            }
        }
        for (int k = 0; k < plan.count; k++)
            ns_pkt_free(pkts[i + k]);
        i += plan.count;
        if (solo)
            solo--;
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

/* Ask for the virtio-net header and USO in both directions. A kernel older
 * than 6.2 has no USO for TAP: say so rather than run without it. */
static int tap_offload(struct tap_dev *t, char *err, size_t errlen)
{
    int sz = NS_VNET_HLEN;
    if (ioctl(t->dev.fd, TUNSETVNETHDRSZ, &sz) < 0) {
        snprintf(err, errlen, "tap %s: TUNSETVNETHDRSZ: %s", t->dev.name, strerror(errno));
        return -1;
    }
    if (ioctl(t->dev.fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6) < 0) {
        int e = errno;
        snprintf(err, errlen, "tap %s: UDP segmentation offload: %s%s", t->dev.name, strerror(e),
                 e == EINVAL ? " (needs Linux 6.2 or later; drop ',offload')" : "");
        return -1;
    }
    t->vnet = true;
    t->dev.rx_burst = NS_VNET_MAX_SEGS;
    t->dev.tx_csum_offload = true;
    return 0;
}

struct ns_dev *ns_tap_open(const char *spec, char *err, size_t errlen)
{
    char name[64];
    bool offload = false;
    const char *comma = strchr(spec, ',');
    if (comma) {
        if (strcmp(comma + 1, "offload") != 0) {
            snprintf(err, errlen, "tap: unknown option '%s' (known: offload)", comma + 1);
            return NULL;
        }
        offload = true;
    }
    size_t nlen = comma ? (size_t)(comma - spec) : strlen(spec);
    if (nlen >= sizeof(name))
        nlen = sizeof(name) - 1;
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
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
    t->dev.rx_burst = 1;
    t->dev.fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (t->dev.fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open /dev/net/tun: %s%s", strerror(e), ns_dev_perm_hint(e));
        tap_close(&t->dev);
        return NULL;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | (offload ? IFF_VNET_HDR : 0);
    memcpy(ifr.ifr_name, name, strlen(name) + 1); /* checked: under IFNAMSIZ */
    if (ioctl(t->dev.fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        snprintf(err, errlen, "TUNSETIFF %s: %s%s", name, strerror(e), tunsetiff_hint(e));
        tap_close(&t->dev);
        return NULL;
    }
    /* The kernel may have expanded a pattern such as "tap%d". */
    snprintf(t->dev.name, sizeof(t->dev.name), "%s", ifr.ifr_name);
    if (offload && tap_offload(t, err, errlen) < 0) {
        tap_close(&t->dev);
        return NULL;
    }
    if (ns_dev_if_up(t->dev.name, &t->dev.mtu, err, errlen) < 0) {
        tap_close(&t->dev);
        return NULL;
    }
    ns_dev_mac_from_name(t->dev.name, &t->dev.mac);
    return &t->dev;
}
