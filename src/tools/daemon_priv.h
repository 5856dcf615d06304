/* Internals shared by the daemon's files: daemon.c (main, set-up, stop),
 * daemon_opts.c (options, usage), daemon_ctl.c (the control socket and its
 * clients) and daemon_io.c (device and hosted transport, the idle hook). */
#ifndef NS_TOOLS_DAEMON_PRIV_H
#define NS_TOOLS_DAEMON_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>

#include "core/counters.h"
#include "tools/cmd.h"
#include "tools/ctl.h"

struct ns_dev;
struct ns_pcap;
struct ns_pkt;
struct ns_rt;
struct ns_stack;
struct ns_svc;
struct ns_udp_host;

#define DAEMON_MAX_SYSCTL 64
#define DAEMON_MAX_SERVE  16
#define DAEMON_TX_BATCH   128 /* room for runs of up to 128 datagrams (dev/vnet.h) */

// clang-format off
#define NS_DAEMON_COUNTERS(X) \
    X(clients) X(clients_refused) X(requests) X(bad_frames) X(output_overflows)                 \
    X(tx_deferred) X(tx_dropped) X(wakeups)
// clang-format on

struct ns_daemon_stats {
    NS_DAEMON_COUNTERS(NS_CTR_FIELD)
};

struct daemon;

/* One client of the control socket. */
struct daemon_conn {
    struct daemon *d;
    struct daemon_conn *next;
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
    const char *sysctl[DAEMON_MAX_SYSCTL];
    int nsysctl;
    const char *serve[DAEMON_MAX_SERVE];
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
    struct daemon_conn *conns;
    unsigned nconns;
    struct ns_pkt *held[DAEMON_TX_BATCH]; /* frames the device did not take yet */
    int nheld;
    bool dev_out;  /* EPOLLOUT armed on the device */
    bool stopping; /* stack thread: a stop was requested */
    bool shutting; /* stack thread: clients are being told; no new ones */
    int exit_rc;
    uint32_t rx_error_run; /* consecutive failed reads */
    struct ns_daemon_stats stats;
};

static inline uint64_t daemon_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- daemon_opts.c ---- */

/* 0: run; 1: --help was printed; -1: a usage error was printed. */
int daemon_parse_opts(int argc, char **argv, struct daemon_opts *o);

/* ---- daemon_io.c (stack thread) ---- */

/* Drain the stack's transmit queue to the device. Returns how many frames
 * left the stack's queue (sent or held). */
int daemon_flush_tx(struct daemon *d, uint64_t now);
/* Read and process device frames, and send what they produce. */
void daemon_pump(struct daemon *d);
/* The runtime's idle hook (ns_rt_set_idle). */
uint64_t daemon_idle(struct ns_rt *rt, void *ctx, uint64_t now);
/* fd callbacks of the runtime's loop: the device, hosted mode's socket. */
void daemon_on_dev(struct ns_rt *rt, void *ctx, int fd, uint32_t events);
void daemon_on_udp(struct ns_rt *rt, void *ctx, int fd, uint32_t events);

/* ---- daemon_ctl.c ---- */

/* Choose d->ctl_path (--ctl, $NSTACK_CTL or the default) and make its
 * directory. 0, or the exit status after printing why. */
int daemon_ctl_setup_path(struct daemon *d, const struct daemon_opts *o, uint16_t udp_port);
/* Bind and listen on d->ctl_path, replacing a stale socket. */
int daemon_ctl_listen(struct daemon *d, char *err, size_t errlen);
/* Remove the control socket if it is still ours. */
void daemon_ctl_unlink(struct daemon *d);
/* Stack thread: the listening socket's fd callback. */
void daemon_on_listen(struct ns_rt *rt, void *ctx, int fd, uint32_t events);
/* Stack thread: write queued output; close and free dead clients. */
void daemon_flush_conns(struct daemon *d);
void daemon_reap_conns(struct daemon *d);
/* Stack thread: unwatch, close and free one client. */
void daemon_conn_free(struct daemon_conn *c);
/* Stack thread: tell running commands' clients the daemon is going away. */
void daemon_shutdown_clients(struct daemon *d, uint64_t now);

#endif
