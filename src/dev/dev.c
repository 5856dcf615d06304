/* Device selection by spec string, and helpers the kernel-backed devices
 * share. Interface flags and MTU use the classic SIOC* ioctls (netdevice(7)). */
#include "dev/dev.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev/afpacket.h"
#include "dev/tap.h"

const char *ns_dev_perm_hint(int err)
{
    return err == EPERM || err == EACCES ? " (nstack needs root or CAP_NET_ADMIN)" : "";
}

void ns_dev_mac_from_name(const char *name, struct ns_mac *mac)
{
    /* FNV-1a, then a finalizer so names differing in one character differ
     * in every byte. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    mac->b[0] = 0x02; /* locally administered, unicast */
    for (int i = 1; i < NS_ETH_ALEN; i++)
        mac->b[i] = (uint8_t)(h >> (8 * (i - 1)));
}

int ns_dev_check_ifname(const char *kind, const char *name, char *err, size_t errlen)
{
    if (!name || !*name) {
        snprintf(err, errlen, "missing interface name: use %s:NAME", kind);
        return -EINVAL;
    }
    if (strlen(name) >= IFNAMSIZ) {
        snprintf(err, errlen, "interface name '%s' too long (at most %d characters)", name,
                 IFNAMSIZ - 1);
        return -EINVAL;
    }
    for (const char *p = name; *p; p++) {
        if (*p == '/' || *p == ':' || (unsigned char)*p <= ' ' || *p == 0x7f) {
            snprintf(err, errlen, "bad interface name '%s'", name);
            return -EINVAL;
        }
    }
    return 0;
}

int ns_dev_if_up(const char *ifname, uint32_t *mtu, char *err, size_t errlen)
{
    *mtu = 1500;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "socket(AF_INET): %s", strerror(e));
        return -e;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    int rc = 0;
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
        rc = -errno;
        snprintf(err, errlen, "SIOCGIFFLAGS %s: %s", ifname, strerror(-rc));
        goto out;
    }
    if (!(ifr.ifr_flags & IFF_UP)) {
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
            rc = -errno;
            snprintf(err, errlen, "SIOCSIFFLAGS %s: %s%s", ifname, strerror(-rc),
                     ns_dev_perm_hint(-rc));
            goto out;
        }
    }
    if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
        *mtu = (uint32_t)ifr.ifr_mtu;
out:
    close(fd);
    return rc;
}

struct ns_dev *ns_dev_open(const char *spec, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    if (!spec)
        spec = "";
    if (strncmp(spec, "tap:", 4) == 0)
        return ns_tap_open(spec + 4, err, errlen);
    if (strncmp(spec, "afpacket:", 9) == 0)
        return ns_afpacket_open(spec + 9, err, errlen);
    snprintf(err, errlen, "unknown device '%s': use tap:NAME or afpacket:IFNAME", spec);
    return NULL;
}

int ns_dev_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    return d->ops->recv(d, pkts, max, now);
}

int ns_dev_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    return d->ops->send(d, pkts, n, now);
}

void ns_dev_close(struct ns_dev *d)
{
    if (d)
        d->ops->close(d);
}

int ns_dev_fd(const struct ns_dev *d)
{
    return d->fd;
}

const char *ns_dev_name(const struct ns_dev *d)
{
    return d->name;
}

struct ns_mac ns_dev_mac(const struct ns_dev *d)
{
    return d->mac;
}

uint32_t ns_dev_mtu(const struct ns_dev *d)
{
    return d->mtu;
}
