/* `nstack perf`: netperf's SCTP_STREAM test run by the daemon. The command
 * (on the stack thread, like every command) starts an application thread
 * that connects to HOST:PORT with the public socket API (one-to-one style,
 * RFC 6458 section 4) and sends MSGSIZE-byte messages as fast as the
 * socket takes them; the command's timers end the test after SECS and
 * print interim lines. The server's figures come back over the same
 * association (services.h describes the exchange); the table is netperf's.
 * RFC 9260 governs the association itself. The SCTP sending helpers
 * (ns_cmd_sctp_*) are shared with `nstack sctp send` (sctpcmd.c).
 */
#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipv4/route.h"
#include "link/arp.h"
#include "link/neigh.h"
#include "nstack/socket.h"
#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"
#include "tools/services.h"

#define PERF_REPORT_WAIT 30000000u /* us the server has to account for the data */
#define PERF_NEIGH_CHECK 200000u   /* us between looks at the next hop while connecting */

struct perf_job {
    struct ns_cmd_sess *sess; /* stack thread; NULL once the session is gone */
    struct ns_cmd_env *env;
    struct ns_svc *svc;
    struct ns_rt *rt;
    struct ns_timer t_end, t_int, t_conn;
    uint64_t started;
    /* Parameters. */
    uint32_t dst, src;
    uint16_t port;
    uint64_t secs_us, interval_us;
    uint32_t msgsize, streams;
    uint32_t granted; /* outbound streams the peer granted (written before connected_fn) */
    bool unordered;
    bool sink;                  /* -k: a plain sink peer (tsctp, discard): no END/REPORT */
    int sndbuf_opt, rcvbuf_opt; /* 0: the defaults */
    /* Shared with the thread. */
    pthread_t thread;
    pthread_mutex_t mu; /* sd against its close */
    int sd;
    atomic_bool stop;
    atomic_bool unreach;   /* the next hop did not resolve: connect was aborted */
    atomic_bool connected; /* the handshake completed */
    atomic_uint_fast64_t sent_bytes, sent_msgs;
    bool thread_done; /* stack thread */
    /* Written by the thread before it posts done_fn. */
    int err;
    const char *err_what;
    uint64_t t0, t1, cpu0, cpu1;
    int sndbuf, rcvbuf;
    bool have_report;
    uint64_t r_bytes, r_msgs, r_elapsed, r_cpu;
    long r_ncpu;
    int r_rcvbuf;
    /* Interim accounting (stack thread). */
    uint64_t last_t, last_bytes, last_msgs;
};

static void job_free(struct perf_job *j)
{
    pthread_mutex_destroy(&j->mu);
    free(j);
}

/* ---- sending over SCTP: shared with `nstack sctp send` (sctpcmd.c) ---- */

/* The socket refuses a message larger than its SO_SNDBUF (EMSGSIZE, see
 * ns_sctp_sendv), so raise it when the message needs more. The value set
 * is doubled, as on Linux: two messages fit, one waiting while the engine
 * takes the one before it. */
void ns_cmd_sctp_fit_sndbuf(struct ns_rt *rt, int sd, uint32_t msgsize)
{
    int cur = 0;
    socklen_t l = sizeof(cur);
    if (ns_getsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &cur, &l) == 0 && cur >= 0 &&
        (uint32_t)cur >= msgsize)
        return;
    int v = (int)msgsize;
    ns_setsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &v, sizeof(v));
}

/* Above sysctl sctp.max_message_bytes every send fails with EMSGSIZE, and
 * no socket option lifts that limit: say so before connecting, and how.
 * The socket layer keeps the value the daemon started with (ns_rt copies
 * the engine's parameters once), so only --sysctl at start raises it; the
 * receiving daemon needs nothing (it takes larger messages in pieces). */
bool ns_cmd_sctp_msg_fits(struct ns_cmd_sess *sess, const char *what, uint32_t size)
{
    uint32_t max = 0;
    if (ns_sysctl_get(sess->env->s, "sctp.max_message_bytes", &max) < 0 || size <= max)
        return true;
    ns_cmd_errorf(sess,
                  "%s: -m %" PRIu32 " exceeds sysctl sctp.max_message_bytes (%" PRIu32
                  ") of this daemon; start it with --sysctl sctp.max_message_bytes=%" PRIu32,
                  what, size, max, size);
    return false;
}

/* A send refused with EMSGSIZE although ns_cmd_sctp_msg_fits passed: the
 * sysctl was raised after the daemon started, which the sockets do not see. */
void ns_cmd_sctp_send_errorf(struct ns_cmd_sess *sess, const char *what, uint32_t dst,
                             uint16_t port, int err, uint32_t size)
{
    char b[16];
    if (err == EMSGSIZE)
        ns_cmd_errorf(sess,
                      "%s: send %s port %u: %s (sockets keep the sctp.max_message_bytes the "
                      "daemon started with: start it with --sysctl sctp.max_message_bytes=%" PRIu32
                      ")",
                      what, ns_ip_fmt(dst, b), port, strerror(err), size);
    else
        ns_cmd_errorf(sess, "%s: send %s port %u: %s", what, ns_ip_fmt(dst, b), port,
                      strerror(err));
}

/* HOST or HOST:UDPPORT; a UDP port makes the association to HOST run over
 * UDP encapsulation to that port (RFC 6951): it becomes the stack's
 * remote encapsulation port for HOST (ns_stack_sctp_set_encap_port). */
bool ns_cmd_sctp_parse_host(struct ns_cmd_sess *sess, const char *what, const char *v,
                            uint32_t *dst)
{
    char a[32];
    const char *colon = strchr(v, ':');
    size_t l = colon ? (size_t)(colon - v) : strlen(v);
    uint32_t up = 0;
    if (l >= sizeof(a) || (memcpy(a, v, l), a[l] = '\0', !ns_ip_parse_addr(a, dst)) || *dst == 0) {
        ns_cmd_errorf(sess, "bad address '%s'", v);
        return false;
    }
    if (!colon)
        return true;
    if (!ns_arg_u32(colon + 1, 1, 65535, &up)) {
        ns_cmd_errorf(sess, "%s: bad UDP port in '%s' (HOST:UDPPORT, 1-65535)", what, v);
        return false;
    }
    if (ns_stack_sctp_set_encap_port(sess->env->s, *dst, (uint16_t)up) < 0) {
        ns_cmd_errorf(sess, "%s: too many peers with their own UDP port", what);
        return false;
    }
    return true;
}

static void stop_sending(struct perf_job *j)
{
    atomic_store(&j->stop, true);
    /* A sender blocked on a full send buffer wakes up with EAGAIN; a
     * connect still waiting for INIT_ACK is cut short. */
    pthread_mutex_lock(&j->mu);
    if (j->sd >= 0 && atomic_load(&j->connected))
        ns_set_nonblock(j->rt, j->sd, true);
    else if (j->sd >= 0)
        ns_abort(j->rt, j->sd, 0);
    pthread_mutex_unlock(&j->mu);
}

/* ---- the application thread (socket API only) ---- */

static int send_end(struct perf_job *j, uint64_t bytes, uint64_t msgs)
{
    char msg[64];
    int n = snprintf(msg, sizeof(msg), "END %" PRIu64 " %" PRIu64, bytes, msgs);
    struct ns_sctp_sndinfo si = {.snd_sid = 0, .snd_ppid = NS_PERF_PPID_END};
    struct iovec iov = {msg, (size_t)n};
    uint64_t until = ns_svc_mono_us() + PERF_REPORT_WAIT;
    for (;;) {
        ssize_t r = ns_sctp_sendv(j->rt, j->sd, &iov, 1, NULL, 0, &si, sizeof(si),
                                  NS_SCTP_SENDV_SNDINFO, NS_MSG_DONTWAIT);
        if (r >= 0)
            return 0;
        if (errno != EAGAIN || ns_svc_mono_us() > until || ns_svc_stopping(j->svc))
            return -1;
        usleep(1000);
    }
}

static void wait_report(struct perf_job *j)
{
    int efd = ns_socket_fd(j->rt, j->sd);
    uint64_t until = ns_svc_mono_us() + PERF_REPORT_WAIT;
    char buf[256];
    while (!j->have_report && ns_svc_mono_us() < until) {
        struct ns_sctp_rcvinfo ri;
        socklen_t il = sizeof(ri);
        unsigned it = 0;
        int fl = 0;
        struct iovec iov = {buf, sizeof(buf) - 1};
        ssize_t n =
            ns_sctp_recvv(j->rt, j->sd, &iov, 1, NULL, NULL, &ri, &il, &it, &fl, NS_MSG_DONTWAIT);
        if (n < 0 && errno == EAGAIN) {
            if (ns_svc_stopping(j->svc))
                return;
            struct pollfd pf = {.fd = efd, .events = POLLIN};
            poll(&pf, 1, 100);
            continue;
        }
        if (n <= 0) {
            j->err = n < 0 ? errno : ECONNRESET;
            j->err_what = "waiting for the server's report";
            return;
        }
        if ((fl & NS_MSG_NOTIFICATION) || it != NS_SCTP_RECVV_RCVINFO ||
            ri.rcv_ppid != NS_PERF_PPID_REPORT)
            continue;
        buf[n] = '\0';
        if (sscanf(buf, "REPORT %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %ld %d",
                   &j->r_bytes, &j->r_msgs, &j->r_elapsed, &j->r_cpu, &j->r_ncpu,
                   &j->r_rcvbuf) == 6)
            j->have_report = true;
    }
    if (!j->have_report && !j->err) {
        j->err = ETIMEDOUT;
        j->err_what = "waiting for the server's report";
    }
}

/* -k: the peer is a plain sink that sends no report. Shut down and wait
 * for the association to end (the SHUTDOWN goes out once everything sent
 * is acknowledged), then report the sender's own figures over the time
 * from the first message to that end. */
static void sink_finish(struct perf_job *j, uint64_t bytes, uint64_t msgs)
{
    int efd = ns_socket_fd(j->rt, j->sd);
    if (ns_shutdown(j->rt, j->sd, SHUT_WR) < 0) {
        j->err = errno;
        j->err_what = "shutdown";
        return;
    }
    uint64_t until = ns_svc_mono_us() + PERF_REPORT_WAIT;
    char buf[256];
    for (;;) {
        struct iovec iov = {buf, sizeof(buf)};
        int fl = 0;
        ssize_t n = ns_sctp_recvv(j->rt, j->sd, &iov, 1, NULL, NULL, NULL, NULL, NULL, &fl,
                                  NS_MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ENOTCONN))
            break; /* SHUTDOWN COMPLETE: every message acknowledged */
        if (n < 0 && errno != EAGAIN) {
            j->err = errno;
            j->err_what = "waiting for the shutdown";
            return;
        }
        if (n < 0) {
            if (ns_svc_stopping(j->svc) || ns_svc_mono_us() > until) {
                j->err = ETIMEDOUT;
                j->err_what = "waiting for the shutdown";
                return;
            }
            struct pollfd pf = {.fd = efd, .events = POLLIN};
            poll(&pf, 1, 100);
        }
    }
    j->r_bytes = bytes;
    j->r_msgs = msgs;
    j->r_elapsed = ns_svc_mono_us() - j->t0;
    j->r_ncpu = 1;
    j->have_report = true;
}

static void done_fn(struct ns_rt *rt, void *arg);

/* Hosted mode has no interface of its own: the header names the address
 * the host routes from toward dst (a connected UDP socket's name; nothing
 * is sent). 0 if the host has no route. */
static uint32_t host_src(uint32_t dst)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(dst)};
    socklen_t sl = sizeof(sa);
    uint32_t src = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        src = ntohl(sa.sin_addr.s_addr);
    close(fd);
    return src;
}

static void connected_fn(struct ns_rt *rt, void *arg);

static void *perf_main(void *arg)
{
    struct perf_job *j = arg;
    struct ns_rt *rt = j->rt;
    uint8_t *buf = calloc(1, j->msgsize ? j->msgsize : 1);
    int sd = buf ? ns_socket(rt, NS_SOCK_STREAM) : -1;
    if (sd < 0) {
        j->err = buf ? errno : ENOMEM;
        j->err_what = "socket";
        goto out;
    }
    pthread_mutex_lock(&j->mu);
    j->sd = sd;
    pthread_mutex_unlock(&j->mu);
    /* A dead peer should fail the test in seconds, not in minutes. */
    struct ns_sctp_initmsg im = {.sinit_num_ostreams = (uint16_t)j->streams,
                                 .sinit_max_instreams = 1,
                                 .sinit_max_attempts = 4,
                                 .sinit_max_init_timeo = 2000};
    ns_setsockopt(rt, sd, NS_IPPROTO_SCTP, NS_SCTP_INITMSG, &im, sizeof(im));
    if (j->sndbuf_opt)
        ns_setsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &j->sndbuf_opt, sizeof(int));
    if (j->rcvbuf_opt)
        ns_setsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &j->rcvbuf_opt, sizeof(int));
    ns_cmd_sctp_fit_sndbuf(rt, sd, j->msgsize); /* -S too small for -m was refused up front */
    socklen_t l = sizeof(int);
    ns_getsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &j->sndbuf, &l);
    l = sizeof(int);
    ns_getsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &j->rcvbuf, &l);
    struct sockaddr_in sin = {
        .sin_family = AF_INET, .sin_port = htons(j->port), .sin_addr.s_addr = htonl(j->dst)};
    if (ns_connect(rt, sd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
        if (atomic_load(&j->stop) && !atomic_load(&j->unreach))
            goto out; /* ^C while connecting */
        j->err = atomic_load(&j->unreach) ? EHOSTUNREACH : errno;
        j->err_what = "connect";
        goto out;
    }
    atomic_store(&j->connected, true);
    if (atomic_load(&j->stop))
        goto out;
    /* The peer may grant fewer outbound streams than INIT asked for (its
     * INIT ACK's inbound streams, RFC 9260 5.1.1): a stream above them is
     * refused with EINVAL, so the messages go round the granted ones. */
    struct ns_sctp_status st = {0};
    socklen_t stl = sizeof(st);
    j->granted = j->streams;
    if (ns_getsockopt(rt, sd, NS_IPPROTO_SCTP, NS_SCTP_STATUS, &st, &stl) == 0 && st.sstat_outstrms)
        j->granted = st.sstat_outstrms;
    uint32_t nsid = j->granted < j->streams ? j->granted : j->streams;
    ns_rt_post(rt, connected_fn, j);
    j->t0 = ns_svc_mono_us();
    j->cpu0 = ns_svc_cpu_us();
    struct ns_sctp_sndinfo si = {.snd_flags = j->unordered ? NS_SCTP_UNORDERED : 0,
                                 .snd_ppid = NS_PERF_PPID_DATA};
    struct iovec iov = {buf, j->msgsize};
    uint64_t bytes = 0, msgs = 0;
    uint32_t sid = 0;
    while (!atomic_load_explicit(&j->stop, memory_order_relaxed)) {
        si.snd_sid = (uint16_t)sid;
        ssize_t r =
            ns_sctp_sendv(rt, sd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0);
        if (r < 0) {
            if (errno == EAGAIN && atomic_load(&j->stop))
                break;
            j->err = errno;
            j->err_what = "send";
            break;
        }
        bytes += (uint64_t)r;
        msgs++;
        if (++sid == nsid)
            sid = 0;
        atomic_store_explicit(&j->sent_bytes, bytes, memory_order_relaxed);
        atomic_store_explicit(&j->sent_msgs, msgs, memory_order_relaxed);
    }
    j->t1 = ns_svc_mono_us();
    j->cpu1 = ns_svc_cpu_us();
    if (j->err)
        goto out;
    ns_set_nonblock(rt, sd, true);
    if (j->sink) {
        sink_finish(j, bytes, msgs);
        goto out;
    }
    if (send_end(j, bytes, msgs) < 0) {
        j->err = errno;
        j->err_what = "send";
        goto out;
    }
    wait_report(j);
out:
    if (sd >= 0) {
        pthread_mutex_lock(&j->mu);
        j->sd = -1;
        pthread_mutex_unlock(&j->mu);
        ns_close(rt, sd);
    }
    free(buf);
    ns_rt_post(rt, done_fn, j);
    return NULL;
}

/* ---- the command (stack thread) ---- */

static void print_interim(struct perf_job *j, uint64_t now)
{
    uint64_t b = atomic_load(&j->sent_bytes), m = atomic_load(&j->sent_msgs);
    double dt = (double)(now - j->last_t) / 1e6;
    if (dt <= 0)
        return;
    ns_cmd_printf(j->sess, 1, "Interim result: %9.2f 10^6bits/s %11.0f msgs/s over %.3f seconds\n",
                  (double)(b - j->last_bytes) * 8 / dt / 1e6, (double)(m - j->last_msgs) / dt, dt);
    j->last_t = now;
    j->last_bytes = b;
    j->last_msgs = m;
}

static void on_end(struct ns_timer *t, uint64_t now)
{
    struct perf_job *j = NS_CONTAINER_OF(t, struct perf_job, t_end);
    (void)now;
    ns_timer_cancel(&j->env->timers, &j->t_int);
    stop_sending(j);
}

static void on_interval(struct ns_timer *t, uint64_t now)
{
    struct perf_job *j = NS_CONTAINER_OF(t, struct perf_job, t_int);
    if (!j->sess || atomic_load(&j->stop))
        return;
    print_interim(j, now);
    ns_timer_arm(&j->env->timers, &j->t_int, now + j->interval_us);
}

/* An INIT to an address nobody answers ARP for would only time out after
 * every INIT retransmission: watch the next hop and give up with
 * EHOSTUNREACH once its resolution failed (or there is no route). */
static void on_conn_check(struct ns_timer *t, uint64_t now)
{
    struct perf_job *j = NS_CONTAINER_OF(t, struct perf_job, t_conn);
    struct ns_route r;
    bool bad = !ns_route_lookup(&j->env->s->ip, j->dst, now, &r);
    if (!bad && now - j->started >= 1000000u) {
        uint8_t key[4];
        ns_arp_key(r.nexthop, key);
        struct ns_neigh *n = ns_neigh_lookup(&j->env->s->arp.tbl, r.ifc->index, key);
        bad = n && n->state == NS_NUD_FAILED;
    }
    if (!bad) {
        ns_timer_arm(&j->env->timers, &j->t_conn, now + PERF_NEIGH_CHECK);
        return;
    }
    atomic_store(&j->unreach, true);
    pthread_mutex_lock(&j->mu);
    if (j->sd >= 0)
        ns_abort(j->rt, j->sd, 0);
    pthread_mutex_unlock(&j->mu);
}

static void connected_fn(struct ns_rt *rt, void *arg)
{
    struct perf_job *j = arg;
    (void)rt;
    if (j->sess)
        ns_timer_cancel(&j->env->timers, &j->t_conn);
    if (!j->sess || atomic_load(&j->stop))
        return;
    uint64_t now = ns_svc_mono_us();
    char a[16], b[16];
    ns_cmd_printf(j->sess, 1,
                  "SCTP STREAM TEST from %s () port 0 AF_INET to %s () port %u AF_INET\n",
                  ns_ip_fmt(j->src, a), ns_ip_fmt(j->dst, b), j->port);
    ns_cmd_printf(j->sess, 1, "Streams: %" PRIu32 " requested, %" PRIu32 " granted\n", j->streams,
                  j->granted);
    ns_timer_arm(&j->env->timers, &j->t_end, now + j->secs_us);
    j->last_t = now;
    if (j->interval_us)
        ns_timer_arm(&j->env->timers, &j->t_int, now + j->interval_us);
}

static void print_table(struct perf_job *j)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    double el = (double)j->r_elapsed / 1e6;
    double lel = (double)(j->t1 - j->t0) / 1e6;
    double kb = (double)j->r_bytes / 1024.0;
    double mbit = el > 0 ? (double)j->r_bytes * 8 / el / 1e6 : 0;
    double lcpu = (double)(j->cpu1 - j->cpu0), rcpu = (double)j->r_cpu;
    double lutil = lel > 0 ? lcpu / (lel * 1e6 * (double)ncpu) * 100 : 0;
    double rutil = el > 0 ? rcpu / (el * 1e6 * (double)(j->r_ncpu > 0 ? j->r_ncpu : 1)) * 100 : 0;
    double lsd = kb > 0 ? lcpu / kb : 0, rsd = kb > 0 ? rcpu / kb : 0;
    ns_cmd_printf(j->sess, 1,
                  "Recv   Send    Send                          Utilization       Service Demand\n"
                  "Socket Socket  Message  Elapsed              Send     Recv     Send    Recv\n"
                  "Size   Size    Size     Time     Throughput  local    remote   local   remote\n"
                  "bytes  bytes   bytes    secs.    10^6bits/s  %% S      %% S      us/KB   us/KB\n"
                  "\n"
                  "%-6d %-6d %6" PRIu32 "    %-6.2f     %7.2f   %-6.2f   %-6.2f   %-6.3f  %-6.3f\n"
                  "\n",
                  j->r_rcvbuf, j->sndbuf, j->msgsize, el, mbit, lutil, rutil, lsd, rsd);
    if (j->sink) {
        ns_cmd_printf(j->sess, 1,
                      "%.0f messages/s: %" PRIu64 " messages sent and acknowledged (sink peer: "
                      "sender-side figures)\n",
                      el > 0 ? (double)j->r_msgs / el : 0, j->r_msgs);
        return;
    }
    ns_cmd_printf(
        j->sess, 1, "%.0f messages/s: %" PRIu64 " messages received of %" PRIu64 " sent\n",
        el > 0 ? (double)j->r_msgs / el : 0, j->r_msgs, (uint64_t)atomic_load(&j->sent_msgs));
}

static void done_fn(struct ns_rt *rt, void *arg)
{
    struct perf_job *j = arg;
    (void)rt;
    pthread_join(j->thread, NULL);
    j->thread_done = true;
    ns_svc_job_end(j->svc);
    if (!j->sess) {
        job_free(j);
        return;
    }
    struct ns_cmd_sess *sess = j->sess;
    int status = NS_EXIT_OK;
    if (j->err && strcmp(j->err_what, "send") == 0) {
        ns_cmd_sctp_send_errorf(sess, "perf", j->dst, j->port, j->err, j->msgsize);
        status = NS_EXIT_FAIL;
    } else if (j->err) {
        char b[16];
        int e = j->err;
        ns_cmd_errorf(sess, "perf: %s %s port %u: %s", j->err_what, ns_ip_fmt(j->dst, b), j->port,
                      strerror(e));
        status = NS_EXIT_FAIL;
    } else if (j->have_report) {
        print_table(j);
    } else {
        ns_cmd_errorf(sess, "perf: stopped before the test ran");
        status = NS_EXIT_FAIL;
    }
    ns_cmd_finish(sess, status); /* release() frees j: the thread is done */
}

static void perf_interrupt(struct ns_cmd_sess *sess, uint64_t now)
{
    struct perf_job *j = sess->priv;
    (void)now;
    ns_timer_cancel(&j->env->timers, &j->t_conn);
    ns_timer_cancel(&j->env->timers, &j->t_int);
    ns_timer_cancel(&j->env->timers, &j->t_end);
    stop_sending(j);
}

static void perf_release(struct ns_cmd_sess *sess)
{
    struct perf_job *j = sess->priv;
    ns_timer_cancel(&j->env->timers, &j->t_conn);
    ns_timer_cancel(&j->env->timers, &j->t_int);
    ns_timer_cancel(&j->env->timers, &j->t_end);
    j->sess = NULL;
    if (j->thread_done) {
        job_free(j);
        return;
    }
    stop_sending(j); /* the client went away: done_fn frees j */
}

static const struct ns_cmd_kind perf_kind = {
    .name = "perf",
    .interrupt = perf_interrupt,
    .release = perf_release,
};

struct perf_opts {
    const char *host;
    uint32_t port, msgsize, streams;
    uint64_t secs_us, interval_us;
    uint32_t sndbuf, rcvbuf;
    bool unordered, sink;
};

static bool perf_opt(struct ns_cmd_sess *sess, void *arg, char opt, const char *val)
{
    struct perf_opts *o = arg;
    bool ok = true;
    switch (opt) {
    case 'H':
        o->host = val;
        break;
    case 'p':
        ok = ns_arg_u32(val, 1, 65535, &o->port);
        break;
    case 'l':
        ok = ns_arg_seconds(val, &o->secs_us) && o->secs_us > 0;
        break;
    case 'm':
        ok = ns_arg_u32(val, 1, NS_CMD_SCTP_MAX_MSG, &o->msgsize);
        break;
    case 'n':
        ok = ns_arg_u32(val, 1, 65535, &o->streams);
        break;
    case 'D':
        ok = ns_arg_seconds(val, &o->interval_us) && o->interval_us >= 1000;
        break;
    case 'S':
        ok = ns_arg_u32(val, 1024, 1u << 30, &o->sndbuf);
        break;
    case 's':
        ok = ns_arg_u32(val, 1024, 1u << 30, &o->rcvbuf);
        break;
    case 'u':
        o->unordered = true;
        break;
    case 'k':
        o->sink = true;
        break;
    }
    if (!ok)
        ns_cmd_errorf(sess, "perf: bad -%c '%s' (see: nstack perf --help)", opt, val);
    return ok;
}

void ns_cmd_perf(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct perf_opts o = {
        .port = NS_PERF_DEFAULT_PORT, .msgsize = 1024, .streams = 1, .secs_us = 10000000u};
    const struct ns_cmd_optspec spec = {
        .name = "perf", .with_arg = "HplmnDSs", .flags = "uk", .cb = perf_opt, .arg = &o};
    const char *pos[1];
    int npos = ns_cmd_getopt(sess, &spec, argc, argv, pos, 1);
    if (npos < 0) {
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!o.host && npos == 1)
        o.host = pos[0];
    uint32_t dst;
    if (!o.host) {
        ns_cmd_errorf(sess, "perf: -H HOST required (see: nstack perf --help)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!ns_cmd_sctp_parse_host(sess, "perf", o.host, &dst)) {
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    struct ns_cmd_env *env = sess->env;
    struct ns_rt *rt = ns_svc_rt(env->svc);
    if (!rt) {
        ns_cmd_errorf(sess, "perf: this stack has no socket runtime (run it in the daemon)");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    if (ns_svc_stopping(env->svc)) {
        ns_cmd_errorf(sess, "perf: daemon shutting down");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    /* An explicit -S is kept as given (perf raises SO_SNDBUF by itself only
     * without it), so it must hold one message. setsockopt doubles it. */
    uint32_t sb = o.sndbuf < 2048 ? 4096 : o.sndbuf * 2;
    if (o.sndbuf && sb < o.msgsize) {
        ns_cmd_errorf(sess,
                      "perf: -m %" PRIu32 " does not fit -S %" PRIu32 " (a %" PRIu32
                      "-byte send buffer); omit -S or give at least %" PRIu32,
                      o.msgsize, o.sndbuf, sb, (o.msgsize + 1) / 2);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!ns_cmd_sctp_msg_fits(sess, "perf", o.msgsize)) {
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    struct perf_job *j = calloc(1, sizeof(*j));
    if (!j) {
        ns_cmd_errorf(sess, "out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    j->sess = sess;
    j->env = env;
    j->svc = env->svc;
    j->rt = rt;
    j->dst = dst;
    struct ns_iface *ifc = ns_stack_iface(env->s, 1);
    j->src = ifc ? ifc->addr : host_src(dst);
    j->port = (uint16_t)o.port;
    j->secs_us = o.secs_us;
    j->interval_us = o.interval_us;
    j->msgsize = o.msgsize;
    j->streams = o.streams;
    j->unordered = o.unordered;
    j->sink = o.sink;
    j->sndbuf_opt = (int)o.sndbuf;
    j->rcvbuf_opt = (int)o.rcvbuf;
    j->sd = -1;
    j->last_t = now;
    pthread_mutex_init(&j->mu, NULL);
    atomic_init(&j->stop, false);
    atomic_init(&j->sent_bytes, 0);
    atomic_init(&j->sent_msgs, 0);
    atomic_init(&j->unreach, false);
    atomic_init(&j->connected, false);
    ns_timer_init(&j->t_end, on_end);
    ns_timer_init(&j->t_int, on_interval);
    ns_timer_init(&j->t_conn, on_conn_check);
    j->started = now;
    ns_svc_job_begin(j->svc);
    int e = pthread_create(&j->thread, NULL, perf_main, j);
    if (e) {
        ns_svc_job_end(j->svc);
        job_free(j);
        ns_cmd_errorf(sess, "perf: thread: %s", strerror(e));
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    ns_cmd_make_long(sess, &perf_kind, j);
    /* Hosted mode has no next hop to watch: the host's UDP does that. */
    if (!ns_stack_sctp_is_hosted(env->s))
        ns_timer_arm(&env->timers, &j->t_conn, now + PERF_NEIGH_CHECK);
}
