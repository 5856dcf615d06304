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
 *
 * This file: main, the set-up (one function per step) and the stop
 * sequence. daemon_opts.c parses the options, daemon_ctl.c serves the
 * control socket and its clients, daemon_io.c moves frames (or hosted
 * mode's datagrams) and holds the idle hook; daemon_priv.h is what they
 * share.
 */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "dev/dev.h"
#include "dev/pcap.h"
#include "nstack/socket.h"
#include "stack/stack.h"
#include "tools/cmd.h"
#include "transport/udp_host.h"
#include "tools/daemon_priv.h"
#include "tools/services.h"
#include "tools/text.h"

#define STOP_POLL_MS 10

NS_CTR_NAMES(daemon_ctr_names, NS_DAEMON_COUNTERS);
NS_CTR_NAMES(dev_ctr_names, NS_DEV_COUNTERS);

/* ---- set-up ---- */

static bool perm_error(const char *err)
{
    return strstr(err, strerror(EPERM)) || strstr(err, strerror(EACCES)) ||
           strstr(err, "CAP_NET_ADMIN");
}

struct start_op {
    struct daemon *d;
    uint32_t addr;
    uint8_t plen;
    int err;
};

/* On the stack thread: watch the fds, bring the interface up. */
static void start_fn(struct ns_rt *rt, void *arg)
{
    struct start_op *so = arg;
    struct daemon *d = so->d;
    if (ns_rt_add_fd(rt, d->lfd, EPOLLIN, daemon_on_listen, d) < 0 ||
        (d->dev && d->dev->fd >= 0 &&
         ns_rt_add_fd(rt, d->dev->fd, EPOLLIN, daemon_on_dev, d) < 0) ||
        (d->uh && ns_rt_add_fd(rt, ns_udp_host_fd(d->uh), EPOLLIN, daemon_on_udp, d) < 0)) {
        so->err = errno;
        return;
    }
    if (!d->dev) {
        ns_rt_set_idle(rt, daemon_idle, d);
        return;
    }
    uint64_t now = daemon_mono_us();
    ns_stack_iface_up(d->s, d->ifindex, now);
    ns_stack_set_addr(d->s, d->ifindex, so->addr, so->plen, now); /* announces: gratuitous ARP */
    daemon_flush_tx(d, now);
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

/* What the set-up steps share: the addresses the options give, and the MAC
 * and MTU the interface gets. */
struct setup_values {
    uint32_t addr, gw, mtu;
    uint8_t plen;
    uint32_t uaddr;
    uint16_t uport, encap;
    struct ns_mac mac;
};

/* --sctp-udp and --sctp-encap, and with a device --addr, --gw and --mac. */
static int parse_addresses(const struct daemon_opts *o, struct setup_values *sv)
{
    if (o->sctp_udp && !parse_hostport(o->sctp_udp, &sv->uaddr, &sv->uport)) {
        fprintf(stderr, "nstack: daemon: bad --sctp-udp '%s' ([ADDR:]PORT)\n", o->sctp_udp);
        return 2;
    }
    if (o->sctp_encap) {
        uint32_t v;
        if (!ns_arg_u32(o->sctp_encap, 1, 65535, &v)) {
            fprintf(stderr, "nstack: daemon: bad --sctp-encap '%s' (1-65535)\n", o->sctp_encap);
            return 2;
        }
        sv->encap = (uint16_t)v;
    }
    if (!o->sctp_udp) {
        if (!ns_ip_parse_prefix(o->addr, &sv->addr, &sv->plen) || sv->addr == 0) {
            fprintf(stderr, "nstack: bad address '%s'\n", o->addr);
            return 2;
        }
        if (o->gw && (!ns_ip_parse_addr(o->gw, &sv->gw) || sv->gw == 0)) {
            fprintf(stderr, "nstack: bad address '%s'\n", o->gw);
            return 2;
        }
        if (o->mac && !ns_mac_parse(o->mac, &sv->mac)) {
            fprintf(stderr, "nstack: daemon: bad --mac '%s'\n", o->mac);
            return 2;
        }
    }
    return 0;
}

/* The control socket first, so a second daemon on the same device says
 * so instead of failing on the busy device. */
static int setup_control_socket(struct daemon *d, const struct daemon_opts *o, uint16_t udp_port)
{
    char err[512];
    int rc = daemon_ctl_setup_path(d, o, udp_port);
    if (rc)
        return rc;
    if (daemon_ctl_listen(d, err, sizeof(err)) < 0) {
        fprintf(stderr, "nstack: %s\n", err);
        return 1;
    }
    return 0;
}

/* Hosted mode's transport: the host UDP socket, and its capture (--pcap). */
static int setup_udp_host(struct daemon *d, const struct daemon_opts *o,
                          const struct setup_values *sv, uint64_t now)
{
    int e = 0;
    /* Bursts of a whole congestion window arrive between two loop
     * turns: ask for more than the default buffers (the kernel caps
     * them at net.core.rmem_max / wmem_max). */
    struct ns_udp_host_opts uo = {.addr = sv->uaddr,
                                  .port = sv->uport,
                                  .sndbuf = 4 << 20,
                                  .rcvbuf = 4 << 20,
                                  .no_offload = o->no_offload};
    d->uh = ns_udp_host_open_opts(&uo, &e);
    if (!d->uh) {
        char a[16];
        fprintf(stderr, "nstack: daemon: UDP %s:%u: %s\n", ns_ip_fmt(sv->uaddr, a), sv->uport,
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
    return 0;
}

/* The device (--dev), wrapped in a capture with --pcap. */
static int setup_device(struct daemon *d, const struct daemon_opts *o, uint64_t now)
{
    char err[512];
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
    return 0;
}

/* The stack's interface on the device (MAC, MTU, checksum offload), and
 * nstack's own UDP encapsulation port (--sctp-encap). */
static int setup_interface(struct daemon *d, const struct daemon_opts *o, struct setup_values *sv,
                           uint64_t now)
{
    if (!o->mac)
        sv->mac = d->dev->mac;
    sv->mtu = o->mtu ? o->mtu : d->dev->mtu;
    int idx = ns_stack_add_iface(d->s, d->dev->name, &sv->mac, sv->mtu);
    if (idx < 0) {
        fprintf(stderr, "nstack: daemon: interface %s: %s\n", d->dev->name, strerror(-idx));
        return 1;
    }
    d->ifindex = (uint32_t)idx;
    ns_stack_iface(d->s, d->ifindex)->tx_csum_offload = d->dev->tx_csum_offload;
    if (sv->encap && (ns_sysctl_set(d->s, "sctp.encap_port", sv->encap, now) < 0 ||
                      ns_sysctl_set(d->s, "sctp.udp_port", sv->encap, now) < 0)) {
        fprintf(stderr, "nstack: daemon: --sctp-encap %u: cannot bind the UDP port\n", sv->encap);
        return 1;
    }
    return 0;
}

/* The stack instance: its interface (or, hosted, SCTP over the UDP
 * socket), then --sysctl and the gateway. */
static int setup_stack(struct daemon *d, const struct daemon_opts *o, struct setup_values *sv,
                       uint64_t now)
{
    char err[512];
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
        int rc = setup_interface(d, o, sv, now);
        if (rc)
            return rc;
    }
    for (int i = 0; i < o->nsysctl; i++) {
        if (ns_cmd_sysctl_assign(d->s, o->sysctl[i], now, err, sizeof(err)) < 0) {
            fprintf(stderr, "nstack: %s\n", err);
            return 2;
        }
    }
    if (sv->gw)
        ns_stack_set_gateway(d->s, sv->gw);
    return 0;
}

/* The command engine, with the device's (or the UDP socket's) and the
 * daemon's own counters for `nstack stats`. */
static void setup_command_env(struct daemon *d)
{
    ns_cmd_env_init(&d->env, d->s, (uint16_t)getpid());
    d->env_ready = true;
    if (d->dev)
        d->env.extra[d->env.n_extra++] = NS_CTR_GROUP_NAMED("dev", dev_ctr_names, &d->dev->stats);
    else
        d->env.n_extra += ns_udp_host_counters(d->uh, &d->env.extra[d->env.n_extra], 1);
    d->env.extra[d->env.n_extra++] = NS_CTR_GROUP_NAMED("daemon", daemon_ctr_names, &d->stats);
}

/* The services of --serve: SCTP ones (started with the runtime) and
 * udp-echo (a command-engine service). */
static int setup_services(struct daemon *d, const struct daemon_opts *o)
{
    char err[512];
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
    return 0;
}

/* SIGINT/SIGTERM blocked and read from a signalfd, and the eventfd the
 * stack thread asks the main thread to stop by. */
static int setup_signals(struct daemon *d)
{
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
    return 0;
}

/* The socket runtime's stack thread, the services on it, then (on that
 * thread, start_fn) the fds watched and the interface up. */
static int start_stack_thread(struct daemon *d, const struct daemon_opts *o,
                              const struct setup_values *sv)
{
    char err[512];
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
    struct start_op so = {.d = d, .addr = sv->addr, .plen = sv->plen};
    ns_rt_call(d->rt, start_fn, &so);
    if (so.err) {
        fprintf(stderr, "nstack: daemon: event loop setup: %s\n", strerror(so.err));
        return 1;
    }
    return 0;
}

/* The line saying what runs where. */
static void print_started(const struct daemon *d, const struct setup_values *sv)
{
    char a[16], m[18];
    if (d->uh) {
        fprintf(stderr, "nstack: sctp over udp %s:%u (peers' port %" PRIu32 ") ctl %s\n",
                ns_ip_fmt(ns_udp_host_addr(d->uh), a), ns_udp_host_port(d->uh),
                d->s->params.sctp.encap_port, d->ctl_path);
        return;
    }
    ns_mac_format(sv->mac.b, m);
    fprintf(stderr, "nstack: %s %s/%u mac %s mtu %" PRIu32 " ctl %s\n", d->dev->name,
            ns_ip_fmt(sv->addr, a), sv->plen, m, sv->mtu, d->ctl_path);
}

/* Each step prints why it failed and returns the exit status (1, or 2 for
 * a bad option); what was set up is freed by daemon_free. */
static int setup(struct daemon *d, const struct daemon_opts *o)
{
    uint64_t now = daemon_mono_us();
    struct setup_values sv = {0};
    int rc = parse_addresses(o, &sv);
    if (rc)
        return rc;
    rc = setup_control_socket(d, o, sv.uport);
    if (rc)
        return rc;
    rc = o->sctp_udp ? setup_udp_host(d, o, &sv, now) : setup_device(d, o, now);
    if (rc)
        return rc;
    rc = setup_stack(d, o, &sv, now);
    if (rc)
        return rc;
    setup_command_env(d);
    rc = setup_services(d, o);
    if (rc)
        return rc;
    rc = setup_signals(d);
    if (rc)
        return rc;
    rc = start_stack_thread(d, o, &sv);
    if (rc)
        return rc;
    print_started(d, &sv);
    return 0;
}

/* ---- the main thread's wait ---- */

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

/* ---- stopping: clients told, then teardown ---- */

static void shutdown_fn(struct ns_rt *rt, void *arg)
{
    struct daemon *d = arg;
    (void)rt;
    d->shutting = true;
    daemon_shutdown_clients(d, daemon_mono_us());
}

/* On the stack thread: everything that is touched there. */
static void teardown_fn(struct ns_rt *rt, void *arg)
{
    struct daemon *d = arg;
    ns_rt_set_idle(rt, NULL, NULL);
    /* Last words to clients still connected (best effort). */
    daemon_flush_conns(d);
    while (d->conns) {
        struct daemon_conn *c = d->conns;
        d->conns = c->next;
        daemon_conn_free(c);
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
        ns_udp_host_flush(d->uh, daemon_mono_us());
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
        struct daemon_conn *c = d->conns;
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
    ns_udp_host_close(d->uh, daemon_mono_us());
    d->uh = NULL;
    ns_pcap_close(d->uh_pcap);
    d->uh_pcap = NULL;
    daemon_ctl_unlink(d);
    if (d->lfd >= 0)
        close(d->lfd);
    if (d->sfd >= 0)
        close(d->sfd);
    if (d->stopfd >= 0)
        close(d->stopfd);
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
    uint64_t now = daemon_mono_us();
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
    uint64_t until = daemon_mono_us() + timeout_us;
    bool again = false;
    for (;;) {
        ns_rt_call(d->rt, stop_fn, &op);
        if (op.left == 0 || again || daemon_mono_us() >= until)
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
    int r = daemon_parse_opts(argc, argv, &o);
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
