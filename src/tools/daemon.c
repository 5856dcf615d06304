/* `nstack daemon`: one stack instance on one device, run on the stack
 * thread of a socket runtime (include/nstack/socket.h, ns_rt_new_stack).
 * The device, the control socket and its clients are fds of the runtime's
 * loop, so their callbacks and the command engine run on the stack thread,
 * where they may touch the stack; SCTP services (--serve discard/echo/perf)
 * and `nstack perf` are application threads on the socket API. The main
 * thread only waits for SIGINT/SIGTERM.
 *
 * `now` is CLOCK_MONOTONIC in microseconds, read afresh for every event.
 * At the end of every loop turn (the runtime's idle hook) the stack's
 * transmit queue is drained to the device at once, so a frame produced on
 * the output path (the ARP request for a first packet, a DATA chunk an
 * application thread queued) leaves in the same loop turn: first-packet
 * latency is the point of this project, so nothing ever waits for a tick.
 * The runtime's timerfd is armed at the earliest of the stack's, the
 * commands' and the capture file's deadlines.
 *
 * Hosted mode (--sctp-udp [ADDR:]PORT): no device and no interface. The
 * stack's SCTP engine runs over UDP encapsulation (RFC 6951) on a host UDP
 * socket (transport/udp_host.c, recvmmsg/sendmmsg), which is one more fd of
 * the runtime's loop: its datagrams go straight to the engine, and what the
 * engine sends is batched and flushed by the idle hook, as frames are to a
 * device. Everything above the engine (services, perf, sctp, stats,
 * sysctl, the control socket) is the same code. No root is needed.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dev/dev.h"
#include "dev/pcap.h"
#include "nstack/socket.h"
#include "stack/stack.h"
#include "tools/cmd.h"
#include "transport/udp_host.h"
#include "tools/ctl.h"
#include "tools/main.h"
#include "tools/services.h"
#include "tools/text.h"

#define MAX_SYSCTL  64
#define MAX_SERVE   16
#define MAX_CLIENTS 64
/* Packets per read batch: the engine's events (application wake-ups) wait
 * for the end of a batch, and 256 cost 17% at 30-byte messages against 64
 * on a plain TAP. A TAP with offload hands over up to 128 datagrams per
 * frame (dev/vnet.h): its batches hold 256, room for two such frames (with
 * room for one, 30-byte messages ran 40% slower; bench/README.md). */
#define RX_BATCH         64
#define RX_BATCH_MAX     256
#define RX_ROUNDS        8          /* batches per readiness event, so clients are not starved */
#define TX_BATCH         128        /* room for runs of up to 128 datagrams (dev/vnet.h) */
#define CLIENT_OUT_LIMIT (8u << 20) /* output a slow client may have queued */
/* How long a stop waits for SCTP shutdowns before aborting what is left. */
#define DEFAULT_STOP_TIMEOUT_US 3000000u
#define STOP_POLL_MS            10

static const char usage_daemon[] =
    "Usage: nstack daemon --dev tap:NAME|afpacket:IFNAME --addr A.B.C.D/LEN [OPTIONS]\n"
    "       nstack daemon --sctp-udp [ADDR:]PORT [OPTIONS]   (hosted mode: no root, no TAP)\n"
    "  --sctp-udp [ADDR:]PORT  SCTP over UDP (RFC 6951) on a host UDP socket bound to\n"
    "                        ADDR:PORT (ADDR default 0.0.0.0; an empty PORT is 9899);\n"
    "                        peers' port: sysctl sctp.encap_port (default 9899 here)\n"
    "  --sctp-encap PORT     with --dev: also SCTP over nstack's own UDP, on PORT and\n"
    "                        to PORT (sysctls sctp.udp_port and sctp.encap_port)\n"
    "  --gw A.B.C.D          default gateway\n"
    "  --mac MAC             the stack's MAC (default: derived from the interface name)\n"
    "  --mtu N               MTU (default: the interface's)\n"
    "  --ctl PATH            control socket (default: $NSTACK_CTL, else /run/nstack/NAME.sock;\n"
    "                        hosted: DIR/udp-PORT.sock, DIR /run/nstack for root, else\n"
    "                        $XDG_RUNTIME_DIR/nstack, else /tmp/nstack-UID)\n"
    "  --pcap FILE           record every frame in and out (hosted: every datagram)\n"
    "  --no-offload          hosted: no UDP GSO/GRO, so tcpdump on the host sees each\n"
    "                        datagram as sent (slower)\n"
    "  --sysctl KEY=VALUE    set a tunable at start (repeatable)\n"
    "  --serve SERVICE:PORT  run a service (repeatable): udp-echo, and over SCTP\n"
    "                        discard, echo, perf (the server of `nstack perf`)\n"
    "  --rcvq-lock           ablation: a lock per SCTP receive queue operation\n"
    "  --seed N              random seed (default: from the OS)\n"
    "  --stop-timeout SECS   on SIGINT/SIGTERM, time for SCTP associations to shut down\n"
    "                        gracefully before the rest are aborted (default 3; 0: abort)\n"
    "Runs in the foreground until SIGINT or SIGTERM; a second signal stops at once.\n";

// clang-format off
#define NS_DAEMON_COUNTERS(X) \
    X(clients) X(clients_refused) X(requests) X(bad_frames) X(output_overflows)                 \
    X(tx_deferred) X(tx_dropped) X(wakeups)
// clang-format on

struct ns_daemon_stats {
    NS_DAEMON_COUNTERS(NS_CTR_FIELD)
};

NS_CTR_NAMES(daemon_ctr_names, NS_DAEMON_COUNTERS);
NS_CTR_NAMES(dev_ctr_names, NS_DEV_COUNTERS);

struct daemon;

struct conn {
    struct daemon *d;
    struct conn *next;
    int fd;
    uint32_t events;
    struct ns_ctl_rx rx;
    struct ns_ctl_tx tx;
    uint8_t *req; /* the REQ payload argv points into */
    struct ns_cmd_sess *sess;
    bool want_input;
    bool closing; /* EXIT queued: close once flushed */
    bool dead;
};

struct daemon_opts {
    const char *dev, *addr, *gw, *mac, *ctl, *pcap;
    const char *sctp_udp;   /* hosted mode: [ADDR:]PORT */
    const char *sctp_encap; /* nstack's own UDP encapsulation port */
    uint32_t mtu;
    uint64_t seed;
    uint64_t stop_timeout_us;
    const char *sysctl[MAX_SYSCTL];
    int nsysctl;
    const char *serve[MAX_SERVE];
    int nserve;
    bool rcvq_lock;
    bool no_offload; /* hosted: no UDP_SEGMENT / UDP_GRO */
};

struct daemon {
    struct ns_stack *s;
    struct ns_dev *dev;      /* NULL in hosted mode */
    struct ns_udp_host *uh;  /* hosted mode's transport */
    struct ns_pcap *uh_pcap; /* hosted mode's capture */
    uint32_t ifindex;
    struct ns_cmd_env env;
    bool env_ready;
    struct ns_rt *rt;
    struct ns_svc *svc;
    int lfd, sfd, stopfd;
    char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    bool ctl_bound;
    ino_t ctl_ino;
    struct conn *conns;
    unsigned nconns;
    struct ns_pkt *held[TX_BATCH]; /* frames the device did not take yet */
    int nheld;
    bool dev_out;  /* EPOLLOUT armed on the device */
    bool stopping; /* stack thread: a stop was requested */
    bool shutting; /* stack thread: clients are being told; no new ones */
    int exit_rc;
    uint32_t rx_error_run; /* consecutive failed reads */
    struct ns_daemon_stats stats;
};

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

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
static int flush_tx(struct daemon *d, uint64_t now)
{
    int moved = 0;
    if (d->nheld) {
        struct ns_pkt *pk[TX_BATCH];
        int n = d->nheld;
        memcpy(pk, d->held, (size_t)n * sizeof(pk[0]));
        d->nheld = 0;
        if (!dev_send(d, pk, n, now)) {
            dev_set_out(d, true);
            return moved;
        }
    }
    for (;;) {
        struct ns_pkt *pk[TX_BATCH];
        int n = 0;
        while (n < TX_BATCH && (pk[n] = ns_stack_tx_pop(d->s, d->ifindex)))
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
static void pump(struct daemon *d)
{
    if (!d->dev)
        return;
    if (d->stopping && d->exit_rc)
        return; /* the device failed: do not spin on it */
    for (int round = 0; round < RX_ROUNDS; round++) {
        uint64_t now = mono_us();
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
        int sent = flush_tx(d, now);
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

static void flush_conns(struct daemon *d);
static void reap_conns(struct daemon *d);

/* The runtime's idle hook: after every loop turn (device input, control
 * input, requests from application threads, the stack's timers) run the
 * commands' due timers, send what all of it produced (pump reads the device
 * again right after writing), and answer clients. */
static uint64_t daemon_idle(struct ns_rt *rt, void *ctx, uint64_t now)
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
            pump(d);
            p = ns_pcap_tracer_poll(d->dev, now);
        }
        uint64_t next = min3(ns_stack_next_deadline(d->s), ns_cmd_next_deadline(&d->env), p);
        if (next > now)
            break;
        now = mono_us();
        ns_stack_poll(d->s, now);
    }
    flush_conns(d);
    reap_conns(d);
    /* The stack's own deadline is the runtime's business. */
    uint64_t cmd = ns_cmd_next_deadline(&d->env);
    return cmd < p ? cmd : p;
}

/* ---- control connections ---- */

static void conn_update_events(struct conn *c)
{
    uint32_t ev = (c->closing ? 0 : EPOLLIN) | (ns_ctl_tx_pending(&c->tx) ? EPOLLOUT : 0);
    if (ev == c->events)
        return;
    if (ns_rt_mod_fd(c->d->rt, c->fd, ev) == 0)
        c->events = ev;
}

static void conn_queue(struct conn *c, uint8_t type, const void *data, size_t n)
{
    if (c->dead)
        return;
    int r = ns_ctl_tx_frame(&c->tx, type, data, n);
    if (r < 0) {
        /* The client stopped reading: give up on it rather than buffer
         * without bound. */
        c->d->stats.output_overflows++;
        c->dead = true;
    }
}

static void out_write(void *ctx, int stream, const char *data, size_t n)
{
    conn_queue(ctx, stream == 2 ? NS_CTL_STDERR : NS_CTL_STDOUT, data, n);
}

static void out_want_input(void *ctx)
{
    struct conn *c = ctx;
    c->want_input = true;
    conn_queue(c, NS_CTL_WANT_STDIN, NULL, 0);
}

static void out_done(void *ctx, int status)
{
    struct conn *c = ctx;
    uint8_t st = (uint8_t)status;
    conn_queue(c, NS_CTL_EXIT, &st, 1);
    c->closing = true;
}

static void conn_protocol_error(struct conn *c, const char *what)
{
    c->d->stats.bad_frames++;
    if (c->sess && !ns_cmd_done(c->sess)) {
        ns_cmd_free(c->sess);
        c->sess = NULL;
    }
    char msg[128];
    int n = snprintf(msg, sizeof(msg), "nstack: daemon: bad control message (%s)\n", what);
    conn_queue(c, NS_CTL_STDERR, msg, (size_t)n);
    out_done(c, 2);
}

static void conn_frame(struct conn *c, const struct ns_ctl_frame *f, uint64_t now)
{
    struct daemon *d = c->d;
    switch (f->type) {
    case NS_CTL_REQ: {
        if (c->req) {
            conn_protocol_error(c, "second request");
            return;
        }
        c->req = malloc(f->len ? f->len : 1);
        if (!c->req) {
            conn_protocol_error(c, "out of memory");
            return;
        }
        memcpy(c->req, f->data, f->len);
        char *argv[NS_CTL_MAX_ARGS];
        uint8_t flags;
        int argc = ns_ctl_req_parse(c->req, f->len, &flags, argv, NS_CTL_MAX_ARGS);
        if (argc < 0) {
            conn_protocol_error(c, "malformed request; client and daemon versions differ?");
            return;
        }
        d->stats.requests++;
        const struct ns_cmd_out out = {
            .write = out_write, .want_input = out_want_input, .done = out_done, .ctx = c};
        c->sess = ns_cmd_start(&d->env, flags, argc, argv, &out, now);
        if (!c->sess) {
            const char msg[] = "nstack: daemon: out of memory\n";
            conn_queue(c, NS_CTL_STDERR, msg, sizeof(msg) - 1);
            out_done(c, 1);
        }
        return;
    }
    case NS_CTL_STDIN:
    case NS_CTL_STDIN_EOF:
        if (!c->want_input || !c->sess) {
            conn_protocol_error(c, "input nobody asked for");
            return;
        }
        ns_cmd_input(c->sess, f->data, f->len, f->type == NS_CTL_STDIN_EOF, now);
        return;
    case NS_CTL_INTR:
        if (c->sess)
            ns_cmd_interrupt(c->sess, now);
        return;
    default:
        conn_protocol_error(c, "unexpected frame type");
        return;
    }
}

static void conn_input(struct conn *c, uint64_t now)
{
    ssize_t r = ns_ctl_rx_read(&c->rx, c->fd);
    if (r == -EAGAIN)
        return;
    if (r <= 0) {
        /* The client went away: a running command is cancelled. */
        c->dead = true;
        return;
    }
    struct ns_ctl_frame f;
    int k;
    while (!c->dead && !c->closing && (k = ns_ctl_rx_next(&c->rx, &f)) != 0) {
        if (k < 0) {
            conn_protocol_error(c, k == -EMSGSIZE ? "oversized frame" : "unknown frame type");
            return;
        }
        conn_frame(c, &f, now);
    }
}

static void conn_flush(struct conn *c)
{
    if (c->dead)
        return;
    if (ns_ctl_tx_pending(&c->tx)) {
        int r = ns_ctl_tx_flush(&c->tx, c->fd);
        if (r < 0 && r != -EAGAIN) {
            c->dead = true;
            return;
        }
    }
    if (c->closing && !ns_ctl_tx_pending(&c->tx)) {
        c->dead = true;
        return;
    }
    conn_update_events(c);
}

static void conn_free(struct conn *c)
{
    ns_rt_del_fd(c->d->rt, c->fd);
    close(c->fd);
    ns_cmd_free(c->sess);
    ns_ctl_rx_free(&c->rx);
    ns_ctl_tx_free(&c->tx);
    free(c->req);
    free(c);
}

static void flush_conns(struct daemon *d)
{
    for (struct conn *c = d->conns; c; c = c->next)
        conn_flush(c);
}

static void reap_conns(struct daemon *d)
{
    for (struct conn **pp = &d->conns; *pp;) {
        struct conn *c = *pp;
        if (c->dead) {
            *pp = c->next;
            d->nconns--;
            conn_free(c);
        } else {
            pp = &c->next;
        }
    }
}

static void on_conn(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    struct conn *c = ctx;
    (void)rt;
    (void)fd;
    if (!c->dead && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        conn_input(c, mono_us());
}

static void accept_clients(struct daemon *d)
{
    for (;;) {
        int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (d->nconns >= MAX_CLIENTS || d->shutting) {
            d->stats.clients_refused++;
            static const char msg[] = "nstack: daemon: too many clients\n";
            uint8_t fr[NS_CTL_HDR + sizeof(msg) - 1 + NS_CTL_HDR + 1];
            ns_ctl_put_hdr(fr, NS_CTL_STDERR, sizeof(msg) - 1);
            memcpy(fr + NS_CTL_HDR, msg, sizeof(msg) - 1);
            ns_ctl_put_hdr(fr + NS_CTL_HDR + sizeof(msg) - 1, NS_CTL_EXIT, 1);
            fr[sizeof(fr) - 1] = 1;
            ssize_t w = send(fd, fr, sizeof(fr), MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(fd);
            continue;
        }
        struct conn *c = calloc(1, sizeof(*c));
        if (!c || ns_ctl_rx_init(&c->rx) < 0) {
            free(c);
            close(fd);
            continue;
        }
        c->d = d;
        c->fd = fd;
        ns_ctl_tx_init(&c->tx, CLIENT_OUT_LIMIT);
        c->events = EPOLLIN;
        if (ns_rt_add_fd(d->rt, fd, EPOLLIN, on_conn, c) < 0) {
            ns_ctl_rx_free(&c->rx);
            free(c);
            close(fd);
            continue;
        }
        c->next = d->conns;
        d->conns = c;
        d->nconns++;
        d->stats.clients++;
    }
}

/* ---- setup ---- */

static bool is_socket(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Bind the control socket, replacing a stale one nobody answers on. */
static int ctl_listen(struct daemon *d, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->ctl_path);
    d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d->lfd < 0) {
        snprintf(err, errlen, "socket(AF_UNIX): %s", strerror(errno));
        return -1;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if (bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
            break;
        int e = errno;
        if (e != EADDRINUSE || attempt == 1) {
            snprintf(err, errlen, "cannot bind %s: %s", d->ctl_path, strerror(e));
            return -1;
        }
        if (!is_socket(d->ctl_path)) {
            snprintf(err, errlen, "%s exists and is not a socket", d->ctl_path);
            return -1;
        }
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (probe >= 0)
            close(probe);
        if (live) {
            snprintf(err, errlen, "another daemon is running on %s", d->ctl_path);
            return -1;
        }
        unlink(d->ctl_path); /* stale: its daemon is gone */
    }
    d->ctl_bound = true;
    struct stat st;
    if (stat(d->ctl_path, &st) == 0)
        d->ctl_ino = st.st_ino;
    /* Commands change the stack's state: only root (or the group) may. */
    chmod(d->ctl_path, 0660);
    if (listen(d->lfd, 16) < 0) {
        snprintf(err, errlen, "listen %s: %s", d->ctl_path, strerror(errno));
        return -1;
    }
    return 0;
}

static void ctl_unlink(struct daemon *d)
{
    struct stat st;
    /* Only our own socket: a successor may have replaced it. */
    if (d->ctl_bound && stat(d->ctl_path, &st) == 0 && st.st_ino == d->ctl_ino)
        unlink(d->ctl_path);
    d->ctl_bound = false;
}

static int take_value(int argc, char **argv, int *i, const char *name, const char **out)
{
    const char *a = argv[*i];
    size_t l = strlen(name);
    if (strncmp(a, name, l) != 0)
        return 0;
    if (a[l] == '=') {
        *out = a + l + 1;
        return 1;
    }
    if (a[l] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "nstack: daemon: %s needs a value\n", name);
        return -1;
    }
    *out = argv[++*i];
    return 1;
}

static int parse_opts(int argc, char **argv, struct daemon_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->stop_timeout_us = DEFAULT_STOP_TIMEOUT_US;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_daemon, stdout);
            return 1;
        }
#define OPT(name, field)                                                                           \
    if ((r = take_value(argc, argv, &i, name, &v)) < 0)                                            \
        return -1;                                                                                 \
    if (r) {                                                                                       \
        field;                                                                                     \
        continue;                                                                                  \
    }
        OPT("--dev", o->dev = v)
        OPT("--addr", o->addr = v)
        OPT("--gw", o->gw = v)
        OPT("--mac", o->mac = v)
        OPT("--ctl", o->ctl = v)
        OPT("--pcap", o->pcap = v)
        OPT("--sctp-udp", o->sctp_udp = v)
        OPT("--sctp-encap", o->sctp_encap = v)
        OPT(
            "--mtu", if (!ns_arg_u32(v, 68, 65535, &o->mtu)) {
                fprintf(stderr, "nstack: daemon: bad --mtu '%s' (68-65535)\n", v);
                return -1;
            })
        OPT("--seed", {
            uint32_t hi;
            if (!ns_arg_u32(v, 1, UINT32_MAX, &hi)) {
                fprintf(stderr, "nstack: daemon: bad --seed '%s' (1-4294967295)\n", v);
                return -1;
            }
            o->seed = hi;
        })
        OPT("--stop-timeout", {
            if (!ns_arg_seconds(v, &o->stop_timeout_us) || o->stop_timeout_us > 3600000000u) {
                fprintf(stderr, "nstack: daemon: bad --stop-timeout '%s' (0-3600 seconds)\n", v);
                return -1;
            }
        })
        OPT("--sysctl", {
            if (o->nsysctl == MAX_SYSCTL) {
                fprintf(stderr, "nstack: daemon: too many --sysctl\n");
                return -1;
            }
            o->sysctl[o->nsysctl++] = v;
        })
        OPT("--serve", {
            if (o->nserve == MAX_SERVE) {
                fprintf(stderr, "nstack: daemon: too many --serve\n");
                return -1;
            }
            o->serve[o->nserve++] = v;
        })
#undef OPT
        if (strcmp(argv[i], "--rcvq-lock") == 0) {
            o->rcvq_lock = true;
            continue;
        }
        if (strcmp(argv[i], "--no-offload") == 0) {
            o->no_offload = true;
            continue;
        }
        fprintf(stderr, "nstack: daemon: unknown option '%s' (see: nstack daemon --help)\n",
                argv[i]);
        return -1;
    }
    if (o->sctp_udp) {
        if (o->dev || o->addr || o->gw || o->mac || o->mtu || o->sctp_encap) {
            fprintf(stderr, "nstack: daemon: --sctp-udp runs without a device: no --dev, --addr, "
                            "--gw, --mac, --mtu or --sctp-encap\n");
            return -1;
        }
        return 0;
    }
    if (o->no_offload) {
        fprintf(stderr, "nstack: daemon: --no-offload goes with --sctp-udp (a TAP's offload is "
                        "--dev tap:NAME,offload)\n");
        return -1;
    }
    if (!o->dev || !o->addr) {
        fprintf(stderr, "nstack: daemon: --dev and --addr (or --sctp-udp) are required (see: "
                        "nstack daemon --help)\n");
        return -1;
    }
    return 0;
}

/* Tell running commands' clients that the daemon is going away: ping gets
 * its statistics block, anything else a message. Best effort. */
static void shutdown_clients(struct daemon *d, uint64_t now)
{
    for (struct conn *c = d->conns; c; c = c->next) {
        if (c->dead || !c->sess || ns_cmd_done(c->sess))
            continue;
        ns_cmd_interrupt(c->sess, now);
        if (!ns_cmd_done(c->sess)) {
            const char msg[] = "nstack: daemon shutting down\n";
            conn_queue(c, NS_CTL_STDERR, msg, sizeof(msg) - 1);
            ns_cmd_free(c->sess);
            c->sess = NULL;
            out_done(c, 1);
        }
    }
    pump(d);
    flush_conns(d);
}

static void shutdown_fn(struct ns_rt *rt, void *arg)
{
    struct daemon *d = arg;
    (void)rt;
    d->shutting = true;
    shutdown_clients(d, mono_us());
}

/* On the stack thread: everything that is touched there. */
static void teardown_fn(struct ns_rt *rt, void *arg)
{
    struct daemon *d = arg;
    ns_rt_set_idle(rt, NULL, NULL);
    /* Last words to clients still connected (best effort). */
    flush_conns(d);
    while (d->conns) {
        struct conn *c = d->conns;
        d->conns = c->next;
        conn_free(c);
    }
    for (int i = 0; i < d->nheld; i++)
        ns_pkt_free(d->held[i]);
    d->nheld = 0;
    if (d->env_ready)
        ns_cmd_env_free(&d->env);
    d->env_ready = false;
    if (d->dev && d->dev->fd >= 0)
        ns_rt_del_fd(rt, d->dev->fd);
    if (d->uh) {
        ns_rt_del_fd(rt, ns_udp_host_fd(d->uh));
        ns_udp_host_flush(d->uh, mono_us());
    }
    if (d->lfd >= 0)
        ns_rt_del_fd(rt, d->lfd);
}

static void daemon_free(struct daemon *d)
{
    if (d->rt) {
        ns_rt_call(d->rt, teardown_fn, d);
        ns_svc_free(d->svc); /* its threads are done: ns_svc_stop ran */
        d->svc = NULL;
        ns_rt_free(d->rt);
        d->rt = NULL;
    }
    ns_svc_free(d->svc);
    while (d->conns) {
        struct conn *c = d->conns;
        d->conns = c->next;
        close(c->fd);
        ns_cmd_free(c->sess);
        ns_ctl_rx_free(&c->rx);
        ns_ctl_tx_free(&c->tx);
        free(c->req);
        free(c);
    }
    for (int i = 0; i < d->nheld; i++)
        ns_pkt_free(d->held[i]);
    d->nheld = 0;
    if (d->env_ready)
        ns_cmd_env_free(&d->env);
    ns_stack_free(d->s);
    ns_dev_close(d->dev); /* also flushes and closes the capture */
    ns_udp_host_close(d->uh, mono_us());
    d->uh = NULL;
    ns_pcap_close(d->uh_pcap);
    d->uh_pcap = NULL;
    ctl_unlink(d);
    if (d->lfd >= 0)
        close(d->lfd);
    if (d->sfd >= 0)
        close(d->sfd);
    if (d->stopfd >= 0)
        close(d->stopfd);
}

static bool perm_error(const char *err)
{
    return strstr(err, strerror(EPERM)) || strstr(err, strerror(EACCES)) ||
           strstr(err, "CAP_NET_ADMIN");
}

static void on_dev(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    /* The idle hook that follows pumps the device. */
    (void)rt;
    (void)ctx;
    (void)fd;
    (void)events;
}

static void on_listen(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    (void)rt;
    (void)fd;
    (void)events;
    accept_clients(ctx);
}

struct start_op {
    struct daemon *d;
    uint32_t addr;
    uint8_t plen;
    int err;
};

/* Hosted mode: datagrams straight into the engine (their replies are
 * flushed by the idle hook that follows). */
static void on_udp(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    struct daemon *d = ctx;
    (void)rt;
    (void)fd;
    (void)events;
    ns_udp_host_recv(d->uh, &d->s->sctp, RX_ROUNDS, mono_us());
}

/* On the stack thread: watch the fds, bring the interface up. */
static void start_fn(struct ns_rt *rt, void *arg)
{
    struct start_op *so = arg;
    struct daemon *d = so->d;
    if (ns_rt_add_fd(rt, d->lfd, EPOLLIN, on_listen, d) < 0 ||
        (d->dev && d->dev->fd >= 0 && ns_rt_add_fd(rt, d->dev->fd, EPOLLIN, on_dev, d) < 0) ||
        (d->uh && ns_rt_add_fd(rt, ns_udp_host_fd(d->uh), EPOLLIN, on_udp, d) < 0)) {
        so->err = errno;
        return;
    }
    if (!d->dev) {
        ns_rt_set_idle(rt, daemon_idle, d);
        return;
    }
    uint64_t now = mono_us();
    ns_stack_iface_up(d->s, d->ifindex, now);
    ns_stack_set_addr(d->s, d->ifindex, so->addr, so->plen, now); /* announces: gratuitous ARP */
    flush_tx(d, now);
    ns_rt_set_idle(rt, daemon_idle, d);
}

/* [ADDR:]PORT, ADDR, PORT or empty (0.0.0.0:9899). */
static bool parse_hostport(const char *v, uint32_t *addr, uint16_t *port)
{
    char a[32];
    const char *colon = strchr(v, ':');
    *addr = 0;
    *port = NS_UDP_HOST_DEFAULT_PORT;
    if (!colon) {
        uint32_t p;
        if (!*v)
            return true;
        if (ns_arg_u32(v, 1, 65535, &p)) {
            *port = (uint16_t)p;
            return true;
        }
        return ns_ip_parse_addr(v, addr);
    }
    size_t l = (size_t)(colon - v);
    if (l >= sizeof(a))
        return false;
    memcpy(a, v, l);
    a[l] = '\0';
    if (l && !ns_ip_parse_addr(a, addr))
        return false;
    uint32_t p;
    if (colon[1] && !ns_arg_u32(colon + 1, 1, 65535, &p))
        return false;
    if (colon[1])
        *port = (uint16_t)p;
    return true;
}

/* A directory for sockets that only we may use: create it, or accept an
 * existing one only if it is ours and not a symlink (/tmp is shared). */
static int user_dir_ready(const char *dir)
{
    if (strcmp(dir, NS_CTL_DIR) == 0) {
        if (mkdir(dir, 0755) == 0)
            chmod(dir, 0755); /* whatever the umask: clients must find sockets */
        else if (errno != EEXIST)
            return -errno;
        return 0;
    }
    /* $XDG_RUNTIME_DIR/nstack: the parent exists and is the user's. */
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (lstat(dir, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return -EPERM;
    return 0;
}

static int setup_ctl_path(struct daemon *d, const struct daemon_opts *o, uint16_t udp_port)
{
    const char *env_ctl = getenv("NSTACK_CTL");
    if (o->ctl || (env_ctl && *env_ctl)) {
        const char *p = o->ctl ? o->ctl : env_ctl;
        if (strlen(p) >= sizeof(d->ctl_path)) {
            fprintf(stderr, "nstack: daemon: socket path too long: %s\n", p);
            return 2;
        }
        snprintf(d->ctl_path, sizeof(d->ctl_path), "%s", p);
        return 0;
    }
    if (o->sctp_udp) {
        char dir[200];
        if (ns_ctl_user_dir(dir, sizeof(dir)) < 0) {
            fprintf(stderr, "nstack: daemon: socket directory name too long (use --ctl)\n");
            return 2;
        }
        int r = user_dir_ready(dir);
        if (r < 0) {
            fprintf(stderr, "nstack: daemon: cannot use %s: %s (use --ctl)\n", dir, strerror(-r));
            return 1;
        }
        int n = snprintf(d->ctl_path, sizeof(d->ctl_path), "%s/udp-%u.sock", dir, udp_port);
        if (n < 0 || (size_t)n >= sizeof(d->ctl_path)) {
            fprintf(stderr, "nstack: daemon: socket path too long (use --ctl)\n");
            return 2;
        }
        return 0;
    }
    if (ns_ctl_default_path(NS_CTL_DIR, o->dev, d->ctl_path, sizeof(d->ctl_path)) < 0) {
        fprintf(stderr,
                "nstack: daemon: no interface name in '%s' (use tap:NAME or "
                "afpacket:IFNAME)\n",
                o->dev);
        return 2;
    }
    if (mkdir(NS_CTL_DIR, 0755) == 0) {
        chmod(NS_CTL_DIR, 0755); /* whatever the umask: clients must find sockets */
    } else if (errno != EEXIST) {
        fprintf(stderr, "nstack: daemon: cannot create %s: %s\n", NS_CTL_DIR, strerror(errno));
        return 1;
    }
    return 0;
}

static int setup(struct daemon *d, const struct daemon_opts *o)
{
    char err[512];
    uint64_t now = mono_us();
    uint32_t addr = 0, gw = 0, mtu = 0;
    uint8_t plen = 0;
    uint32_t uaddr = 0;
    uint16_t uport = 0, encap = 0;
    struct ns_mac mac;
    if (o->sctp_udp && !parse_hostport(o->sctp_udp, &uaddr, &uport)) {
        fprintf(stderr, "nstack: daemon: bad --sctp-udp '%s' ([ADDR:]PORT)\n", o->sctp_udp);
        return 2;
    }
    if (o->sctp_encap) {
        uint32_t v;
        if (!ns_arg_u32(o->sctp_encap, 1, 65535, &v)) {
            fprintf(stderr, "nstack: daemon: bad --sctp-encap '%s' (1-65535)\n", o->sctp_encap);
            return 2;
        }
        encap = (uint16_t)v;
    }
    if (!o->sctp_udp) {
        if (!ns_ip_parse_prefix(o->addr, &addr, &plen) || addr == 0) {
            fprintf(stderr, "nstack: bad address '%s'\n", o->addr);
            return 2;
        }
        if (o->gw && (!ns_ip_parse_addr(o->gw, &gw) || gw == 0)) {
            fprintf(stderr, "nstack: bad address '%s'\n", o->gw);
            return 2;
        }
        if (o->mac && !ns_mac_parse(o->mac, &mac)) {
            fprintf(stderr, "nstack: daemon: bad --mac '%s'\n", o->mac);
            return 2;
        }
    }

    /* The control socket first, so a second daemon on the same device says
     * so instead of failing on the busy device. */
    int rc = setup_ctl_path(d, o, uport);
    if (rc)
        return rc;
    if (ctl_listen(d, err, sizeof(err)) < 0) {
        fprintf(stderr, "nstack: %s\n", err);
        return 1;
    }

    if (o->sctp_udp) {
        int e = 0;
        /* Bursts of a whole congestion window arrive between two loop
         * turns: ask for more than the default buffers (the kernel caps
         * them at net.core.rmem_max / wmem_max). */
        struct ns_udp_host_opts uo = {.addr = uaddr,
                                      .port = uport,
                                      .sndbuf = 4 << 20,
                                      .rcvbuf = 4 << 20,
                                      .no_offload = o->no_offload};
        d->uh = ns_udp_host_open_opts(&uo, &e);
        if (!d->uh) {
            char a[16];
            fprintf(stderr, "nstack: daemon: UDP %s:%u: %s\n", ns_ip_fmt(uaddr, a), uport,
                    strerror(-e));
            return 1;
        }
        if (o->pcap) {
            struct ns_pcap_opts po = {.wall_offset_us = ns_pcap_wall_offset_us(now)};
            d->uh_pcap = ns_pcap_open_opts(o->pcap, &po);
            if (!d->uh_pcap) {
                fprintf(stderr, "nstack: daemon: %s: %s\n", o->pcap, strerror(errno));
                return 1;
            }
            ns_udp_host_set_capture(d->uh, ns_pcap_capture, d->uh_pcap);
        }
    } else {
        d->dev = ns_dev_open(o->dev, err, sizeof(err));
        if (!d->dev) {
            if (perm_error(err) && geteuid() != 0)
                fprintf(stderr, "nstack: daemon must run as root to open %s\n", o->dev);
            else
                fprintf(stderr, "nstack: %s\n", err);
            return 1;
        }
        if (o->pcap) {
            struct ns_pcap_opts po = {.wall_offset_us = ns_pcap_wall_offset_us(now)};
            struct ns_dev *t = ns_pcap_trace(d->dev, o->pcap, &po, err, sizeof(err));
            if (!t) {
                fprintf(stderr, "nstack: %s\n", err);
                return 1;
            }
            d->dev = t;
        }
    }

    struct ns_stack_config cfg = {.seed = o->seed};
    d->s = ns_stack_new(&cfg, now);
    if (!d->s) {
        fprintf(stderr, "nstack: daemon: out of memory\n");
        return 1;
    }
    if (d->uh) {
        /* Before --sysctl, which may still change sctp.encap_port. */
        ns_stack_sctp_hosted(d->s, ns_udp_host_output, d->uh, ns_udp_host_port(d->uh), 0);
    } else {
        if (!o->mac)
            mac = d->dev->mac;
        mtu = o->mtu ? o->mtu : d->dev->mtu;
        int idx = ns_stack_add_iface(d->s, d->dev->name, &mac, mtu);
        if (idx < 0) {
            fprintf(stderr, "nstack: daemon: interface %s: %s\n", d->dev->name, strerror(-idx));
            return 1;
        }
        d->ifindex = (uint32_t)idx;
        ns_stack_iface(d->s, d->ifindex)->tx_csum_offload = d->dev->tx_csum_offload;
        if (encap && (ns_sysctl_set(d->s, "sctp.encap_port", encap, now) < 0 ||
                      ns_sysctl_set(d->s, "sctp.udp_port", encap, now) < 0)) {
            fprintf(stderr, "nstack: daemon: --sctp-encap %u: cannot bind the UDP port\n", encap);
            return 1;
        }
    }
    for (int i = 0; i < o->nsysctl; i++) {
        if (ns_cmd_sysctl_assign(d->s, o->sysctl[i], now, err, sizeof(err)) < 0) {
            fprintf(stderr, "nstack: %s\n", err);
            return 2;
        }
    }
    if (gw)
        ns_stack_set_gateway(d->s, gw);
    ns_cmd_env_init(&d->env, d->s, (uint16_t)getpid());
    d->env_ready = true;
    if (d->dev)
        d->env.extra[d->env.n_extra++] = NS_CTR_GROUP_NAMED("dev", dev_ctr_names, &d->dev->stats);
    else
        d->env.n_extra += ns_udp_host_counters(d->uh, &d->env.extra[d->env.n_extra], 1);
    d->env.extra[d->env.n_extra++] = NS_CTR_GROUP_NAMED("daemon", daemon_ctr_names, &d->stats);
    d->svc = ns_svc_new();
    if (!d->svc) {
        fprintf(stderr, "nstack: daemon: out of memory\n");
        return 1;
    }
    d->env.svc = d->svc;
    for (int i = 0; i < o->nserve; i++) {
        int r = ns_svc_is_sctp(o->serve[i]) ? ns_svc_add(d->svc, o->serve[i], err, sizeof(err))
                                            : ns_cmd_serve(&d->env, o->serve[i], err, sizeof(err));
        if (r < 0) {
            fprintf(stderr, "nstack: %s\n", err);
            return 2;
        }
    }

    /* Every thread from here on (the stack thread, services) inherits the
     * blocked signals: only the main thread takes them, from the signalfd. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    d->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    d->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (d->sfd < 0 || d->stopfd < 0) {
        fprintf(stderr, "nstack: daemon: event loop setup: %s\n", strerror(errno));
        return 1;
    }
    d->rt = ns_rt_new_stack(d->s, o->rcvq_lock);
    if (!d->rt) {
        fprintf(stderr, "nstack: daemon: stack thread: %s\n", strerror(errno));
        return 1;
    }
    /* Services listen before the first command is accepted (clients
     * that connected early wait in the control socket's backlog). */
    if (ns_svc_start(d->svc, d->rt, err, sizeof(err)) < 0) {
        fprintf(stderr, "nstack: %s\n", err);
        return 1;
    }
    struct start_op so = {.d = d, .addr = addr, .plen = plen};
    ns_rt_call(d->rt, start_fn, &so);
    if (so.err) {
        fprintf(stderr, "nstack: daemon: event loop setup: %s\n", strerror(so.err));
        return 1;
    }

    char a[16], m[18];
    if (d->uh) {
        fprintf(stderr, "nstack: sctp over udp %s:%u (peers' port %" PRIu32 ") ctl %s\n",
                ns_ip_fmt(ns_udp_host_addr(d->uh), a), ns_udp_host_port(d->uh),
                d->s->params.sctp.encap_port, d->ctl_path);
        return 0;
    }
    ns_mac_format(mac.b, m);
    fprintf(stderr, "nstack: %s %s/%u mac %s mtu %" PRIu32 " ctl %s\n", d->dev->name,
            ns_ip_fmt(addr, a), plen, m, mtu, d->ctl_path);
    return 0;
}

/* The main thread: wait for a signal, or with stop_too for the stack
 * thread asking to stop (device gone). Returns true if a signal came (it
 * is consumed). */
static bool wait_signal(struct daemon *d, int timeout_ms, bool stop_too)
{
    struct pollfd pf[2] = {{.fd = d->sfd, .events = POLLIN}, {.fd = d->stopfd, .events = POLLIN}};
    for (;;) {
        int n = poll(pf, stop_too ? 2 : 1, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        if (!(pf[0].revents & POLLIN))
            return false;
        struct signalfd_siginfo si;
        ssize_t r = read(d->sfd, &si, sizeof(si));
        (void)r;
        return true;
    }
}

static void wait_stop(struct daemon *d)
{
    wait_signal(d, -1, true);
}

/* ---- Stopping: graceful SCTP shutdowns, then ABORT (RFC 9260 9.1, 9.2) ---- */

struct stop_op {
    struct daemon *d;
    bool abort;    /* in: abort every association left */
    unsigned left; /* out: associations not yet closed */
    unsigned aborted;
};

/* On the stack thread. Sockets were closed, which started a graceful
 * shutdown of each of their associations; one without a socket (none
 * today) is shut down here too. Received DATA not yet acknowledged is
 * acknowledged by the SHUTDOWN chunk's cumulative TSN (9.2). */
static void stop_fn(struct ns_rt *rt, void *arg)
{
    struct stop_op *op = arg;
    struct ns_sctp *sctp = ns_rt_sctp(rt);
    uint64_t now = mono_us();
    op->left = 0;
    struct ns_sctp_assoc *a = ns_sctp_assoc_next(sctp, NULL), *next;
    for (; a; a = next) {
        next = ns_sctp_assoc_next(sctp, a);
        enum ns_sctp_state st = ns_sctp_assoc_state(a);
        if (st == NS_SCTP_CLOSED)
            continue;
        if (op->abort) {
            static const char why[] = "nstack daemon stopping";
            ns_sctp_abort(a, why, sizeof(why) - 1, now);
            op->aborted++;
            continue;
        }
        if (st == NS_SCTP_ESTABLISHED)
            ns_sctp_shutdown(a, now);
        op->left++;
    }
    /* What that produced leaves now, not at the next loop turn. */
    daemon_idle(rt, op->d, now);
}

/* The main thread, after the services' sockets are closed: wait up to
 * timeout for every association to finish its shutdown, then abort the
 * rest. A second SIGINT/SIGTERM cuts the wait short. */
static void stop_assocs(struct daemon *d, uint64_t timeout_us)
{
    struct stop_op op = {.d = d, .abort = timeout_us == 0};
    uint64_t until = mono_us() + timeout_us;
    bool again = false;
    for (;;) {
        ns_rt_call(d->rt, stop_fn, &op);
        if (op.left == 0 || again || mono_us() >= until)
            break;
        again = wait_signal(d, STOP_POLL_MS, false);
    }
    if (op.left == 0 && !op.abort)
        return;
    if (!op.abort) {
        op.abort = true;
        ns_rt_call(d->rt, stop_fn, &op);
    }
    if (op.aborted == 0)
        return;
    fprintf(stderr, "nstack: daemon: %u association(s) aborted at stop (%s)\n", op.aborted,
            again ? "second signal" : "--stop-timeout");
}

int ns_daemon_main(int argc, char **argv)
{
    struct daemon_opts o;
    int r = parse_opts(argc, argv, &o);
    if (r)
        return r > 0 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    /* Message and packet buffers come and go by the hundred thousand per
     * second between threads: glibc's default trimming hands freed heap
     * back to the kernel and faults it in again (and each give-back is a
     * TLB shoot-down across CPUs), which showed up in profiles. A daemon
     * may keep its high-water mark. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    struct daemon d;
    memset(&d, 0, sizeof(d));
    d.lfd = d.sfd = d.stopfd = -1;
    int rc = setup(&d, &o);
    if (rc) {
        ns_svc_stop(d.svc);
        daemon_free(&d);
        return rc;
    }
    wait_stop(&d);
    ns_rt_call(d.rt, shutdown_fn, &d);
    /* Services and perf runs are application threads of the runtime: they
     * are done before it goes. Closing their sockets starts the graceful
     * shutdown of their associations. */
    ns_svc_stop(d.svc);
    stop_assocs(&d, o.stop_timeout_us);
    daemon_free(&d);
    return d.exit_rc;
}
