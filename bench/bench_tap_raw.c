/* The raw frame rate of a TAP -> bridge -> TAP path, the ceiling for
 * bench/sctp_stream.sh: one writer thread writes FRAME-byte Ethernet frames
 * to one TAP as fast as write() takes them, a reader on the other TAP
 * counts what arrives, for SECS seconds.
 * Usage: bench_tap_raw TAP_TX TAP_RX FRAME_BYTES SECS
 * Prints: "frame F written W received R secs S fps X mbit Y" (Y counts the
 * frame bytes received, Ethernet header included). Run it inside the
 * namespace that holds both TAPs (nothing else may have them open). */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;
static uint64_t written;

struct wr {
    int fd;
    size_t len;
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int tap_open(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void *writer(void *arg)
{
    struct wr *w = arg;
    uint8_t f[2048];
    memset(f, 0, sizeof(f));
    /* Unicast to a MAC the reader's side has learned nothing about would
     * flood; the bridge floods to every other port, which is the reader. */
    const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88; /* local experimental ethertype 0x88b5 */
    f[13] = 0xb5;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (write(w->fd, f, w->len) == (ssize_t)w->len)
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
    double secs = atof(argv[4]);
    if (len < 60 || len > 1514 || secs <= 0) {
        fprintf(stderr, "bench_tap_raw: FRAME_BYTES 60-1514, SECS > 0\n");
        return 2;
    }
    int tx = tap_open(argv[1]), rx = tap_open(argv[2]);
    if (tx < 0 || rx < 0) {
        fprintf(stderr, "bench_tap_raw: open taps: %s\n", strerror(errno));
        return 1;
    }
    fcntl(rx, F_SETFL, O_NONBLOCK);
    struct wr w = {tx, len};
    pthread_t th;
    double t0 = mono();
    pthread_create(&th, NULL, writer, &w);
    uint64_t got = 0, bytes = 0;
    uint8_t buf[2048];
    while (mono() - t0 < secs) {
        ssize_t n = read(rx, buf, sizeof(buf));
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
    printf("frame %zu written %llu received %llu secs %.3f fps %.0f mbit %.2f\n", len,
           (unsigned long long)written, (unsigned long long)got, el, (double)got / el,
           (double)bytes * 8 / el / 1e6);
    close(tx);
    close(rx);
    return 0;
}
