/* Kernel-backed devices (dev/tap.h, dev/afpacket.h) against the real
 * kernel: a TAP interface created by the test (name nst<pid>, no addresses)
 * exchanges frames with a raw AF_PACKET socket and with the afpacket device
 * bound to the same interface. Tests that need root or /dev/net/tun skip
 * without them. With NS_TEST_VETH_A/B set (tests/integration/
 * test_devices.sh, inside a namespace it creates) two afpacket devices also
 * talk over that veth pair. Every interface made here is removed in the
 * teardown, also when an assertion fails. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dev/afpacket.h"
#include "dev/dev.h"
#include "dev/tap.h"

#define TEST_ETHERTYPE 0x88b5 /* IEEE 802 local experimental */

static char tapname[IFNAMSIZ], persname[IFNAMSIZ];
static struct ns_dev *devs[4];
static int rawfd = -1;

/* Test frames received while waiting for another, per device, in order. */
struct seen {
    struct ns_dev *d;
    uint32_t marker, len;
};
static struct seen stash[512];
static int nstash;

static bool can_run(void)
{
    return geteuid() == 0 && access("/dev/net/tun", R_OK | W_OK) == 0;
}

static void set_persist(const char *name, int on)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) == 0)
        ioctl(fd, TUNSETPERSIST, on);
    close(fd);
}

static int setup(void **st)
{
    (void)st;
    snprintf(tapname, sizeof(tapname), "nst%u", (unsigned)getpid() % 10000000);
    snprintf(persname, sizeof(persname), "nsp%u", (unsigned)getpid() % 10000000);
    return 0;
}

/* Close whatever a test left open; a closed non-persistent TAP vanishes. */
static int teardown(void **st)
{
    (void)st;
    nstash = 0;
    for (int i = 0; i < 4; i++) {
        ns_dev_close(devs[i]);
        devs[i] = NULL;
    }
    if (rawfd >= 0)
        close(rawfd);
    rawfd = -1;
    if (if_nametoindex(persname))
        set_persist(persname, 0);
    return 0;
}

static void disable_ipv6(const char *ifname)
{
    /* Fewer router solicitations and MLD reports to sift through. */
    char p[96];
    snprintf(p, sizeof(p), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("1\n", f);
        fclose(f);
    }
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void make_frame(uint8_t *f, uint32_t len, const struct ns_mac *dst, uint32_t marker)
{
    memset(f, 0, len);
    memcpy(f, dst->b, 6);
    const uint8_t src[6] = {0x02, 0x5e, 0x5e, 0, 0, 1};
    memcpy(f + 6, src, 6);
    f[12] = TEST_ETHERTYPE >> 8;
    f[13] = TEST_ETHERTYPE & 0xff;
    memcpy(f + 14, &marker, 4);
    for (uint32_t i = 18; i < len; i++)
        f[i] = (uint8_t)(marker + i);
}

static bool is_ours(const uint8_t *f, uint32_t len, uint32_t marker)
{
    uint32_t m;
    if (len < 18 || f[12] != (TEST_ETHERTYPE >> 8) || f[13] != (TEST_ETHERTYPE & 0xff))
        return false;
    memcpy(&m, f + 14, 4);
    return m == marker;
}

static bool take_stashed(struct ns_dev *d, uint32_t marker, uint32_t want_len)
{
    for (int i = 0; i < nstash; i++) {
        if (stash[i].d == d && stash[i].marker == marker) {
            assert_int_equal(stash[i].len, want_len);
            memmove(&stash[i], &stash[i + 1], sizeof(stash[0]) * (size_t)(nstash - i - 1));
            nstash--;
            return true;
        }
    }
    return false;
}

/* Receive from d until a frame with marker has arrived (true) or timeout. */
static bool dev_wait(struct ns_dev *d, uint32_t marker, uint32_t want_len, int timeout_ms)
{
    uint64_t end = mono_ms() + (uint64_t)timeout_ms;
    for (;;) {
        struct ns_pkt *pk[8];
        int n = ns_dev_recv(d, pk, 8, 0);
        assert_true(n >= 0);
        for (int i = 0; i < n; i++) {
            assert_true(ns_pkt_headroom(pk[i]) >= NS_PKT_HEADROOM);
            assert_int_equal(pk[i]->nfrags, 0);
            const uint8_t *f = pk[i]->data;
            uint32_t m;
            if (pk[i]->len >= 18 && f[12] == (TEST_ETHERTYPE >> 8) &&
                f[13] == (TEST_ETHERTYPE & 0xff)) {
                memcpy(&m, f + 14, 4);
                /* Every byte after the destination is what was sent. */
                uint8_t ref[2048];
                assert_true(pk[i]->len <= sizeof(ref));
                make_frame(ref, pk[i]->len, (const struct ns_mac *)f, m);
                assert_memory_equal(f, ref, pk[i]->len);
                assert_true(nstash < 512);
                stash[nstash++] = (struct seen){d, m, pk[i]->len};
            }
            ns_pkt_free(pk[i]);
        }
        if (take_stashed(d, marker, want_len))
            return true;
        uint64_t now = mono_ms();
        if (now >= end)
            return false;
        struct pollfd pfd = {d->fd, POLLIN, 0};
        poll(&pfd, 1, (int)(end - now));
    }
}

static int raw_open(const char *ifname)
{
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
    assert_true(fd >= 0);
    struct sockaddr_ll sll = {.sll_family = AF_PACKET,
                              .sll_protocol = htons(ETH_P_ALL),
                              .sll_ifindex = (int)if_nametoindex(ifname)};
    assert_true(sll.sll_ifindex > 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
    return fd;
}

static bool raw_wait(int fd, uint32_t marker, uint32_t want_len, int timeout_ms)
{
    uint64_t end = mono_ms() + (uint64_t)timeout_ms;
    for (;;) {
        uint8_t buf[2048];
        struct sockaddr_ll from;
        socklen_t fl = sizeof(from);
        ssize_t r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (r > 0 && from.sll_pkttype != PACKET_OUTGOING && is_ours(buf, (uint32_t)r, marker)) {
            assert_int_equal(r, want_len);
            return true;
        }
        if (r > 0)
            continue;
        uint64_t now = mono_ms();
        if (now >= end)
            return false;
        struct pollfd pfd = {fd, POLLIN, 0};
        poll(&pfd, 1, (int)(end - now));
    }
}

static struct ns_pkt *pkt_frame(const struct ns_mac *dst, uint32_t len, uint32_t marker)
{
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, len);
    make_frame(ns_pkt_put(p, len), len, dst, marker);
    return p;
}

/* The same bytes as a head plus two fragments, to exercise writev. */
static struct ns_pkt *pkt_frame_sg(const struct ns_mac *dst, uint32_t len, uint32_t marker)
{
    uint8_t f[2048];
    make_frame(f, len, dst, marker);
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, 14);
    memcpy(ns_pkt_put(p, 14), f, 14);
    struct ns_buf *b = ns_buf_alloc(len - 14);
    memcpy(b->data, f + 14, len - 14);
    uint32_t half = (len - 14) / 2;
    assert_true(ns_pkt_add_frag(p, b, 0, half));
    assert_true(ns_pkt_add_frag(p, b, half, len - 14 - half));
    ns_buf_put(b);
    return p;
}

static bool if_is_up(const char *name)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    close(fd);
    return rc == 0 && (ifr.ifr_flags & IFF_UP);
}

static void test_spec_errors(void **st)
{
    (void)st;
    char err[160];
    assert_null(ns_dev_open("bogus", err, sizeof(err)));
    assert_string_equal(err, "unknown device 'bogus': use tap:NAME or afpacket:IFNAME");
    assert_null(ns_dev_open("", err, sizeof(err)));
    assert_string_equal(err, "unknown device '': use tap:NAME or afpacket:IFNAME");
    assert_null(ns_dev_open("tap:", err, sizeof(err)));
    assert_string_equal(err, "missing interface name: use tap:NAME");
    assert_null(ns_dev_open("afpacket:", err, sizeof(err)));
    assert_string_equal(err, "missing interface name: use afpacket:NAME");
    assert_null(ns_dev_open("tap:abcdefghijklmnop", err, sizeof(err)));
    assert_string_equal(err, "interface name 'abcdefghijklmnop' too long (at most 15 characters)");
    assert_null(ns_dev_open("tap:a/b", err, sizeof(err)));
    assert_string_equal(err, "bad interface name 'a/b'");
    assert_null(ns_dev_open("afpacket:a b", err, sizeof(err)));
    assert_string_equal(err, "bad interface name 'a b'");
    /* A tiny error buffer is never overrun. */
    char small[8];
    assert_null(ns_dev_open("bogus", small, sizeof(small)));
    assert_string_equal(small, "unknown");
}

static void test_mac_from_name(void **st)
{
    (void)st;
    struct ns_mac a, b, c;
    ns_dev_mac_from_name("tap0", &a);
    ns_dev_mac_from_name("tap0", &b);
    ns_dev_mac_from_name("tap1", &c);
    assert_true(ns_mac_eq(&a, &b));
    assert_false(ns_mac_eq(&a, &c));
    assert_int_equal(a.b[0], 0x02); /* locally administered unicast */
    assert_int_equal(c.b[0], 0x02);
    int differ = 0;
    for (int i = 1; i < 6; i++)
        differ += a.b[i] != c.b[i];
    assert_true(differ >= 3);
}

static void test_kernel_errors(void **st)
{
    (void)st;
    if (!can_run())
        skip();
    char err[160], want[160];
    char name[IFNAMSIZ];
    snprintf(name, sizeof(name), "nsx%u", (unsigned)getpid() % 10000000);
    assert_null(ns_dev_open(strcat(strcpy(want, "afpacket:"), name), err, sizeof(err)));
    snprintf(want, sizeof(want), "afpacket %s: no such interface", name);
    assert_string_equal(err, want);
    /* "lo" exists and is not a TAP. */
    assert_null(ns_dev_open("tap:lo", err, sizeof(err)));
    assert_string_equal(err, "TUNSETIFF lo: Invalid argument (an existing interface that is not "
                             "a TAP? use afpacket:NAME)");
}

static void test_tap_raw(void **st)
{
    (void)st;
    if (!can_run())
        skip();
    char spec[32], err[160];
    snprintf(spec, sizeof(spec), "tap:%s", tapname);
    struct ns_dev *d = devs[0] = ns_dev_open(spec, err, sizeof(err));
    if (!d)
        fail_msg("%s", err);
    assert_string_equal(d->name, tapname);
    assert_true(d->fd >= 0);
    assert_int_equal(d->mtu, 1500);
    struct ns_mac m;
    ns_dev_mac_from_name(tapname, &m);
    assert_true(ns_mac_eq(&d->mac, &m));
    assert_true(if_is_up(tapname));
    disable_ipv6(tapname);

    /* Idle: nothing for us (possibly kernel chatter, never an error). */
    struct ns_pkt *pk[4];
    int n = ns_dev_recv(d, pk, 4, 0);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++)
        ns_pkt_free(pk[i]);

    /* Kernel transmits on the interface -> the TAP reads it. */
    rawfd = raw_open(tapname);
    uint8_t f[1514];
    make_frame(f, 100, &d->mac, 0x1111);
    assert_int_equal(send(rawfd, f, 100, 0), 100);
    assert_true(dev_wait(d, 0x1111, 100, 2000));
    assert_true(d->stats.rx_frames >= 1);

    /* The TAP writes -> the kernel receives it on the interface. A full-size
     * frame and a scatter-gather one. */
    struct ns_pkt *out[2] = {pkt_frame(&m, 1514, 0x2222), pkt_frame_sg(&m, 333, 0x3333)};
    assert_int_equal(ns_dev_send(d, out, 2, 0), 2);
    assert_true(raw_wait(rawfd, 0x2222, 1514, 2000));
    assert_true(raw_wait(rawfd, 0x3333, 333, 2000));
    assert_int_equal(d->stats.tx_frames, 2);
    assert_int_equal(d->stats.tx_bytes, 1514 + 333);
    assert_int_equal(d->stats.tx_errors, 0);
}

static void test_tap_busy_and_persistent(void **st)
{
    (void)st;
    if (!can_run())
        skip();
    char spec[32], err[160], want[160];
    snprintf(spec, sizeof(spec), "tap:%s", tapname);
    devs[0] = ns_dev_open(spec, err, sizeof(err));
    assert_non_null(devs[0]);
    /* A second attach to a single-queue TAP in use. */
    assert_null(ns_dev_open(spec, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "TUNSETIFF %s: Device or resource busy (attached by another process?)", tapname);
    assert_string_equal(err, want);
    /* Closing a TAP we created removes it. */
    ns_dev_close(devs[0]);
    devs[0] = NULL;
    assert_int_equal(if_nametoindex(tapname), 0);

    /* A persistent TAP is attached to, and survives our close. */
    set_persist(persname, 1);
    assert_true(if_nametoindex(persname) > 0);
    snprintf(spec, sizeof(spec), "tap:%s", persname);
    devs[1] = ns_dev_open(spec, err, sizeof(err));
    if (!devs[1])
        fail_msg("%s", err);
    assert_true(if_is_up(persname));
    ns_dev_close(devs[1]);
    devs[1] = NULL;
    assert_true(if_nametoindex(persname) > 0);
    set_persist(persname, 0);
    assert_int_equal(if_nametoindex(persname), 0);
}

static void test_afpacket_on_tap(void **st)
{
    (void)st;
    if (!can_run())
        skip();
    char spec[32], err[160];
    snprintf(spec, sizeof(spec), "tap:%s", tapname);
    struct ns_dev *tap = devs[0] = ns_dev_open(spec, err, sizeof(err));
    if (!tap)
        fail_msg("%s", err);
    disable_ipv6(tapname);
    snprintf(spec, sizeof(spec), "afpacket:%s", tapname);
    struct ns_dev *afp = devs[1] = ns_dev_open(spec, err, sizeof(err));
    if (!afp)
        fail_msg("%s", err);
    assert_string_equal(afp->name, tapname);
    assert_int_equal(afp->mtu, 1500);
    assert_true(afp->fd >= 0);

    /* TAP -> kernel rx -> afpacket. The destination is neither the
     * interface's MAC nor broadcast: promiscuous membership at work. */
    struct ns_mac other = {{0x02, 0x77, 0x66, 0x55, 0x44, 0x33}};
    struct ns_pkt *p = pkt_frame(&other, 200, 0x4444);
    assert_int_equal(ns_dev_send(tap, &p, 1, 0), 1);
    assert_true(dev_wait(afp, 0x4444, 200, 2000));

    /* afpacket -> kernel tx -> TAP, a batch of 10 in order; our own frames
     * are not read back by the afpacket device. */
    struct ns_pkt *batch[10];
    for (uint32_t i = 0; i < 10; i++)
        batch[i] = i % 2 ? pkt_frame_sg(&other, 100 + i, 0x5000 + i)
                         : pkt_frame(&other, 100 + i, 0x5000 + i);
    assert_int_equal(ns_dev_send(afp, batch, 10, 0), 10);
    assert_int_equal(afp->stats.tx_frames, 10);
    for (uint32_t i = 0; i < 10; i++)
        assert_true(dev_wait(tap, 0x5000 + i, 100 + i, 2000));
    for (uint32_t i = 0; i < 10; i++)
        assert_false(dev_wait(afp, 0x5000 + i, 100 + i, i == 0 ? 200 : 0));

    /* recv honours max. */
    for (uint32_t i = 0; i < 6; i++) {
        struct ns_pkt *q = pkt_frame(&other, 80, 0x6000 + i);
        assert_int_equal(ns_dev_send(tap, &q, 1, 0), 1);
    }
    usleep(100000);
    struct ns_pkt *got[8];
    int n = ns_dev_recv(afp, got, 2, 0);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++)
        ns_pkt_free(got[i]);

    /* Larger than the MTU: refused by the kernel, dropped and counted, and
     * the frame behind it still goes. */
    struct ns_pkt *big[2] = {pkt_frame(&other, 1600, 0x7777), pkt_frame(&other, 90, 0x7778)};
    assert_int_equal(ns_dev_send(afp, big, 2, 0), 2);
    assert_int_equal(afp->stats.tx_errors, 1);
    assert_true(dev_wait(tap, 0x7778, 90, 2000));
}

static void test_veth_pair(void **st)
{
    (void)st;
    const char *a = getenv("NS_TEST_VETH_A"), *b = getenv("NS_TEST_VETH_B");
    if (!a || !b || !can_run())
        skip();
    char spec[48], err[160];
    snprintf(spec, sizeof(spec), "afpacket:%s", a);
    struct ns_dev *da = devs[2] = ns_dev_open(spec, err, sizeof(err));
    if (!da)
        fail_msg("%s", err);
    snprintf(spec, sizeof(spec), "afpacket:%s", b);
    struct ns_dev *db = devs[3] = ns_dev_open(spec, err, sizeof(err));
    if (!db)
        fail_msg("%s", err);
    disable_ipv6(a);
    disable_ipv6(b);
    /* Give the veth carrier a moment after bringing both ends up. */
    for (int i = 0; i < 50; i++) {
        struct ns_pkt *p = pkt_frame(&db->mac, 60, 0x8000);
        ns_dev_send(da, &p, 1, 0);
        if (dev_wait(db, 0x8000, 60, 100))
            break;
    }
    for (uint32_t i = 0; i < 20; i++) {
        struct ns_pkt *p = pkt_frame(&db->mac, 60 + i, 0x8100 + i);
        assert_int_equal(ns_dev_send(da, &p, 1, 0), 1);
        assert_true(dev_wait(db, 0x8100 + i, 60 + i, 2000));
        struct ns_pkt *q = pkt_frame_sg(&da->mac, 1514 - i, 0x8200 + i);
        assert_int_equal(ns_dev_send(db, &q, 1, 0), 1);
        assert_true(dev_wait(da, 0x8200 + i, 1514 - i, 2000));
    }
    /* Neither end reads back what it sent. */
    assert_false(dev_wait(da, 0x8100, 60, 100));
    assert_false(dev_wait(db, 0x8200, 1514, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_errors),
        cmocka_unit_test(test_mac_from_name),
        cmocka_unit_test_setup_teardown(test_kernel_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tap_raw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tap_busy_and_persistent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_afpacket_on_tap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_veth_pair, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
