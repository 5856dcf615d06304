/* The raw frame rate of a TAP -> bridge -> TAP path, the ceiling for
 * bench/sctp_stream.sh: one writer thread writes FRAME-byte Ethernet frames
 * to one TAP as fast as write() takes them, a reader on the other TAP
 * counts what arrives, for SECS seconds.
 * Usage: bench_tap_raw TAP_TX TAP_RX FRAME_BYTES SECS
 *        bench_tap_raw TAP_TX TAP_RX 1500xN SECS
 * The second form is the same path with segmentation offload, as nstack's
 * `tap:NAME,offload` uses it (dev/vnet.h): both TAPs carry virtio-net
 * headers, each write is one UDP USO frame standing for N datagrams whose
 * frames would be 1500 bytes, and the reader takes them whole.
 * Prints: "frame F written W received R secs S fps X mbit Y" (Y counts the
 * frame bytes received, Ethernet header included; with offload R, X and Y
 * count the datagrams a USO frame stands for). Run it inside the namespace
 * that holds both TAPs (nothing else may have them open). With BENCH_PIN=1
 * in the environment the writer runs on CPU 0 and the reader on CPU 1, as
 * bench/sctp_stream.sh pins the sending and the receiving daemon. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif
#define USO_GSO_TYPE 5 /* VIRTIO_NET_HDR_GSO_UDP_L4 */
#define USO_HDRS     (14 + 20 + 8)

static atomic_bool stop;
static uint64_t written;

struct wr {
    int fd;
    size_t len;
    int segs; /* > 0: USO frames of segs datagrams of len-byte frames */
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int tap_open(const char *name, bool uso)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | (uso ? IFF_VNET_HDR : 0);
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    int sz = sizeof(struct virtio_net_hdr);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0 ||
        (uso && (ioctl(fd, TUNSETVNETHDRSZ, &sz) < 0 ||
                 ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6) < 0))) {
        close(fd);
        return -1;
    }
    return fd;
}

static void wr16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* One USO frame: IPv4/UDP 198.18.0.250 -> 198.18.0.251, port 9 (discard),
 * payload cut into segs datagrams of len-byte frames. The UDP checksum
 * field holds the pseudo header's sum over the whole run, which the kernel
 * finishes per datagram. */
static size_t uso_frame(uint8_t *f, struct virtio_net_hdr *h, size_t len, int segs)
{
    size_t seg = len - USO_HDRS, ulen = 8 + seg * (size_t)segs;
    uint8_t *ip = f + 14, *u = ip + 20;
    f[12] = 0x08;
    f[13] = 0x00;
    ip[0] = 0x45;
    wr16(ip + 2, (uint32_t)(20 + ulen));
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    const uint8_t s4[4] = {198, 18, 0, 250}, d4[4] = {198, 18, 0, 251};
    memcpy(ip + 12, s4, 4);
    memcpy(ip + 16, d4, 4);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    wr16(ip + 10, ~sum & 0xffff);
    wr16(u, 9);
    wr16(u + 2, 9);
    wr16(u + 4, (uint32_t)ulen);
    sum = (198u << 8 | 18) * 2 + 250 + 251 + 17 + (uint32_t)ulen;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    wr16(u + 6, sum);
    memset(h, 0, sizeof(*h));
    h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h->gso_type = USO_GSO_TYPE;
    h->hdr_len = USO_HDRS;
    h->gso_size = (uint16_t)seg;
    h->csum_start = 34;
    h->csum_offset = 6;
    return USO_HDRS + seg * (size_t)segs;
}

static void pin(int cpu)
{
    const char *e = getenv("BENCH_PIN");
    if (!e || strcmp(e, "1") != 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *writer(void *arg)
{
    struct wr *w = arg;
    pin(0);
    static uint8_t f[65536 + 64];
    memset(f, 0, sizeof(f));
    /* Unicast to a MAC the reader's side has learned nothing about would
     * flood; the bridge floods to every other port, which is the reader. */
    const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88; /* local experimental ethertype 0x88b5 */
    f[13] = 0xb5;
    struct virtio_net_hdr h;
    size_t flen = w->segs ? uso_frame(f, &h, w->len, w->segs) : w->len;
    struct iovec iov[2] = {{&h, sizeof(h)}, {f, flen}};
    int skip = w->segs ? 0 : 1;
    ssize_t want = (ssize_t)(flen + (w->segs ? sizeof(h) : 0));
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (writev(w->fd, iov + skip, 2 - skip) == want)
            written++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bench_tap_raw TAP_TX TAP_RX FRAME_BYTES SECS\n");
        return 2;
    }
    size_t len = (size_t)atoi(argv[3]);
    const char *x = strchr(argv[3], 'x');
    int segs = x ? atoi(x + 1) : 0;
    double secs = atof(argv[4]);
    if (len < 60 || len > 1514 || secs <= 0 || (x && (segs < 2 || segs > 64 || len <= USO_HDRS))) {
        fprintf(stderr, "bench_tap_raw: FRAME_BYTES 60-1514 or 1500xN (N 2-64), SECS > 0\n");
        return 2;
    }
    int tx = tap_open(argv[1], segs > 0), rx = tap_open(argv[2], segs > 0);
    if (tx < 0 || rx < 0) {
        fprintf(stderr, "bench_tap_raw: open taps: %s\n", strerror(errno));
        return 1;
    }
    fcntl(rx, F_SETFL, O_NONBLOCK);
    struct wr w = {tx, len, segs};
    pin(1);
    pthread_t th;
    double t0 = mono();
    pthread_create(&th, NULL, writer, &w);
    uint64_t got = 0, bytes = 0;
    static uint8_t buf[65536 + 64];
    while (mono() - t0 < secs) {
        ssize_t n = read(rx, buf, sizeof(buf));
        if (n > 0 && segs) {
            /* Count the datagrams the frame stands for, each as the frame
             * it would be on its own. */
            const struct virtio_net_hdr *h = (const void *)buf;
            size_t pl = (size_t)n - sizeof(*h) - USO_HDRS;
            uint64_t k = h->gso_type == USO_GSO_TYPE && h->gso_size
                             ? (pl + h->gso_size - 1) / h->gso_size
                             : 1;
            got += k;
            bytes += (uint64_t)n - sizeof(*h) + (k - 1) * USO_HDRS;
            continue;
        }
        if (n > 0) {
            got++;
            bytes += (uint64_t)n;
            continue;
        }
        struct pollfd pf = {.fd = rx, .events = POLLIN};
        poll(&pf, 1, 10);
    }
    double el = mono() - t0;
    atomic_store(&stop, true);
    pthread_join(th, NULL);
    printf("frame %s written %llu received %llu secs %.3f fps %.0f mbit %.2f\n", argv[3],
           (unsigned long long)written, (unsigned long long)got, el, (double)got / el,
           (double)bytes * 8 / el / 1e6);
    close(tx);
    close(rx);
    return 0;
}
