/* The daemon's data path on the stack thread: frames from and to the device
 * (batched reads, held frames when the device is full, a device that went
 * away), hosted mode's UDP socket, and the runtime's idle hook that runs
 * after every loop turn and sends what the turn produced. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "dev/dev.h"
#include "dev/pcap.h"
#include "nstack/socket.h"
#include "stack/stack.h"
#include "tools/daemon_priv.h"
#include "transport/udp_host.h"

/* Packets per read batch: the engine's events (application wake-ups) wait
 * for the end of a batch, and 256 cost 17% at 30-byte messages against 64
 * on a plain TAP. A TAP with offload hands over up to 128 datagrams per
 * frame (dev/vnet.h): its batches hold 256, room for two such frames (with
 * room for one, 30-byte messages ran 40% slower; bench/README.md). */
#define RX_BATCH     64
#define RX_BATCH_MAX 256
#define RX_ROUNDS    8 /* batches per readiness event, so clients are not starved */

/* ---- device output ---- */

static void dev_set_out(struct daemon *d, bool on)
{
    if (d->dev_out == on || d->dev->fd < 0)
        return;
    if (ns_rt_mod_fd(d->rt, d->dev->fd, EPOLLIN | (on ? EPOLLOUT : 0)) == 0)
        d->dev_out = on;
}

/* Send frames; what the device does not take is kept in held[]. Returns
 * false when the device is full. */
static bool dev_send(struct daemon *d, struct ns_pkt **pk, int n, uint64_t now)
{
    int r = ns_dev_send(d->dev, pk, n, now);
    if (r < 0 && r != -EAGAIN && r != -ENOBUFS) {
        /* A hard error on this batch: drop it rather than spin on it. */
        for (int i = 0; i < n; i++)
            ns_pkt_free(pk[i]);
        d->stats.tx_dropped += (uint64_t)n;
        return true;
    }
    if (r < 0)
        r = 0;
    if (r == n)
        return true;
    d->stats.tx_deferred += (uint64_t)(n - r);
    memmove(d->held, pk + r, (size_t)(n - r) * sizeof(pk[0]));
    d->nheld = n - r;
    return false;
}

/* Returns how many frames left the stack's queue (sent or held). */
int daemon_flush_tx(struct daemon *d, uint64_t now)
{
    int moved = 0;
    if (d->nheld) {
        struct ns_pkt *pk[DAEMON_TX_BATCH];
        int n = d->nheld;
        memcpy(pk, d->held, (size_t)n * sizeof(pk[0]));
        d->nheld = 0;
        if (!dev_send(d, pk, n, now)) {
            dev_set_out(d, true);
            return moved;
        }
    }
    for (;;) {
        struct ns_pkt *pk[DAEMON_TX_BATCH];
        int n = 0;
        while (n < DAEMON_TX_BATCH && (pk[n] = ns_stack_tx_pop(d->s, d->ifindex)))
            n++;
        if (n == 0)
            break;
        moved += n;
        if (!dev_send(d, pk, n, now)) {
            dev_set_out(d, true);
            return moved;
        }
    }
    dev_set_out(d, false);
    return moved;
}

/* Wake the main thread, which tears everything down. */
static void request_stop(struct daemon *d)
{
    d->stopping = true;
    uint64_t one = 1;
    ssize_t r = write(d->stopfd, &one, sizeof(one));
    (void)r;
}

/* A device whose interface disappeared stays readable and fails every read:
 * stop instead of spinning on it. Other errors are counted by the device
 * (rx_errors) and tolerated unless nothing but errors comes for a while. */
static void dev_error(struct daemon *d, int err)
{
    bool gone = err == -EBADFD || err == -ENODEV || err == -ENXIO || err == -EIO;
    if (!gone && ++d->rx_error_run < 10000)
        return;
    if (d->stopping)
        return;
    fprintf(stderr, "nstack: daemon: device %s: %s (interface gone?); stopping\n", d->dev->name,
            strerror(-err));
    d->exit_rc = 1;
    /* Runs from the idle hook, after the turn's events: safe to unwatch. */
    if (d->dev->fd >= 0)
        ns_rt_del_fd(d->rt, d->dev->fd);
    request_stop(d);
}

/* Reads and processes frames, and sends what they produce, until the device
 * has nothing more. The kernel answers a frame written to a TAP inside that
 * very write() (ARP replies, echo replies), so after sending we read again
 * before going back to epoll: an exchange with the kernel then costs no
 * extra wake-up, which is most of what a first-packet ARP resolution costs. */
void daemon_pump(struct daemon *d)
{
    if (!d->dev)
        return;
    if (d->stopping && d->exit_rc)
        return; /* the device failed: do not spin on it */
    for (int round = 0; round < RX_ROUNDS; round++) {
        uint64_t now = daemon_mono_us();
        struct ns_pkt *pk[RX_BATCH_MAX];
        int max = d->dev->rx_burst > RX_BATCH ? RX_BATCH_MAX : RX_BATCH;
        int n = ns_dev_recv(d->dev, pk, max, now);
        if (n < 0 && n != -EAGAIN && n != -EINTR)
            dev_error(d, n);
        if (n > 0) {
            d->rx_error_run = 0;
            /* Events (wake-ups) once per batch (sctp.h). */
            ns_sctp_batch_begin(&d->s->sctp);
            for (int i = 0; i < n; i++)
                ns_stack_input_pkt(d->s, d->ifindex, pk[i], now);
            ns_sctp_batch_end(&d->s->sctp, now);
        }
        int sent = daemon_flush_tx(d, now);
        if (n <= 0 && sent == 0)
            return;
    }
}

/* ---- timers ---- */

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* The runtime's idle hook: after every loop turn (device input, control
 * input, requests from application threads, the stack's timers) run the
 * commands' due timers, send what all of it produced (pump reads the device
 * again right after writing), and answer clients. */
uint64_t daemon_idle(struct ns_rt *rt, void *ctx, uint64_t now)
{
    struct daemon *d = ctx;
    (void)rt;
    d->stats.wakeups++;
    uint64_t p = NS_TIME_NEVER;
    for (int i = 0; i < 16; i++) {
        ns_cmd_poll(&d->env, now);
        if (d->uh) {
            ns_udp_host_flush(d->uh, now);
            p = d->uh_pcap ? ns_pcap_poll(d->uh_pcap, now) : NS_TIME_NEVER;
        } else {
            daemon_pump(d);
            p = ns_pcap_tracer_poll(d->dev, now);
        }
        uint64_t next = min3(ns_stack_next_deadline(d->s), ns_cmd_next_deadline(&d->env), p);
        if (next > now)
            break;
        now = daemon_mono_us();
        ns_stack_poll(d->s, now);
    }
    daemon_flush_conns(d);
    daemon_reap_conns(d);
    /* The stack's own deadline is the runtime's business. */
    uint64_t cmd = ns_cmd_next_deadline(&d->env);
    return cmd < p ? cmd : p;
}

void daemon_on_dev(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    /* The idle hook that follows pumps the device. */
    (void)rt;
    (void)ctx;
    (void)fd;
    (void)events;
}

/* Hosted mode: datagrams straight into the engine (their replies are
 * flushed by the idle hook that follows). */
void daemon_on_udp(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    struct daemon *d = ctx;
    (void)rt;
    (void)fd;
    (void)events;
    ns_udp_host_recv(d->uh, &d->s->sctp, RX_ROUNDS, daemon_mono_us());
}
