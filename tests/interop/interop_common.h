/* Shared by the usrsctp interop tests (interop_usrsctp_udp.c over RFC 6951
 * UDP encapsulation on 127.0.0.1, interop_usrsctp_raw.c over raw IPv4 on
 * a veth pair between two network namespaces): the message plan and its
 * byte-for-byte checker, the nstack side (an engine on a udp_host, or a
 * whole stack on an AF_PACKET device) driven by a loop thread, the usrsctp
 * side (one SOCK_SEQPACKET socket, upcall API), the tshark capture checks
 * and the scenarios. Each test program includes it once.
 */
#ifndef NS_TESTS_INTEROP_COMMON_H
#define NS_TESTS_INTEROP_COMMON_H
#pragma GCC diagnostic ignored "-Wunused-function"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <usrsctp.h>

#include "dev/afpacket.h"
#include "dev/dev.h"
#include "dev/pcap.h"
#include "sctp/sctp.h"
#include "stack/stack.h"
#include "transport/udp_host.h"

#define LO        0x7f000001u
#define N_STREAMS 10
#define N_MSGS    100000 /* the most any scenario sends (g_n_msgs) */
#define BIG_LEN   (1u << 20)
#define MAX_LEN   65536u
/* Message i goes with ppid PPID_BASE + i: registered PPIDs are small
 * numbers, and tshark would dissect payloads carrying them as those
 * protocols (and call our bytes malformed). The 1 MiB ones use BIG_PPID. */
#define PPID_BASE 0x50000000u
#define BIG_PPID  0x60000000u

enum ns_mode { MODE_UDP, MODE_RAW };
static enum ns_mode g_mode;
static uint16_t g_p1;             /* usrsctp's UDP port (MODE_UDP) */
static uint32_t g_us_addr = LO;   /* usrsctp's IPv4 address */
static uint32_t g_ns_addr = LO;   /* nstack's */
static char g_ifname[16];         /* MODE_RAW: nstack's veth end */
static uint32_t g_n_msgs = 10000; /* messages per bulk run and direction */
/* MODE_UDP bulk runs record only the traffic of the first and the last
 * g_cap_edge messages (and the handshake and shutdown around them). */
static uint32_t g_cap_edge = 5000;
static uint16_t g_sctp_port = 7000; /* SCTP ports: fresh per scenario */
static char g_tmpdir[64];
static bool g_have_tshark;

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- Message plan and checker ----------------------------------------- */

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

struct spec {
    uint16_t sid;
    bool unordered;
    uint32_t len;
};

/* Message ppid i: stream, ordering and size derive from i alone, so the
 * receiver checks everything from the ppid. Sizes are log-uniform: 7 in 8
 * over 1 .. 256 bytes, the rest over 1 byte .. 64 KiB, so every power-of-two
 * size class up to 64 KiB is present (about 1 message in 140 each) while
 * the mean stays near 500 bytes. ppid 0 is 1 byte, ppid 1 is 64 KiB. */
static struct spec spec_of(uint32_t ppid)
{
    struct spec s;
    if (ppid >= BIG_PPID) {
        s.sid = (uint16_t)(ppid % N_STREAMS);
        s.unordered = false;
        s.len = BIG_LEN;
        return s;
    }
    uint32_t h = mix(ppid + 1);
    s.sid = (uint16_t)(ppid % N_STREAMS);
    s.unordered = (h >> 20) & 1;
    if (ppid == 0)
        s.len = 1;
    else if (ppid == 1)
        s.len = MAX_LEN;
    else {
        uint32_t bits = ((h >> 24) & 7) ? h % 9 : h % 17;
        s.len = 1 + mix(h) % (1u << bits);
    }
    return s;
}

static uint32_t wire_ppid(uint32_t i)
{
    return i >= BIG_PPID ? i : PPID_BASE + i;
}
/* Back from the wire; unknown ppids map to N_MSGS (reported). */
static uint32_t msg_index(uint32_t ppid)
{
    if (ppid >= BIG_PPID)
        return ppid;
    return ppid >= PPID_BASE && ppid - PPID_BASE < g_n_msgs ? ppid - PPID_BASE : N_MSGS;
}

static uint8_t byte_of(uint32_t ppid, uint32_t k)
{
    return (uint8_t)(ppid * 131u + k * 7u + (k >> 8));
}

static void fill(uint8_t *buf, uint32_t ppid, uint32_t len)
{
    for (uint32_t k = 0; k < len; k++)
        buf[k] = byte_of(ppid, k);
}

struct checker {
    pthread_mutex_t mu;
    uint8_t *seen; /* by ppid, N_MSGS + big ones */
    int64_t last_ordered[N_STREAMS];
    bool in_msg;
    uint32_t cur_ppid, cur_off;
    struct spec cur;
    uint32_t received, big_received, pieces;
    uint64_t bytes;
    uint32_t errors;
    char err[256];
};

static void checker_init(struct checker *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    c->seen = calloc(N_MSGS, 1);
    assert_non_null(c->seen);
    for (int i = 0; i < N_STREAMS; i++)
        c->last_ordered[i] = -1;
}

static void checker_free(struct checker *c)
{
    free(c->seen);
    pthread_mutex_destroy(&c->mu);
}

static void fail_(struct checker *c, const char *fmt, ...)
{
    if (c->errors++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, sizeof(c->err), fmt, ap);
        va_end(ap);
    }
}

/* One delivered piece (a whole message when eor and it starts one). */
static void check_piece(struct checker *c, uint16_t sid, uint32_t ppid, bool unordered,
                        const uint8_t *d, uint32_t len, bool eor)
{
    pthread_mutex_lock(&c->mu);
    c->pieces++;
    if (!c->in_msg) {
        if (ppid >= N_MSGS && ppid < BIG_PPID) {
            fail_(c, "unknown ppid %u", ppid);
            goto out;
        }
        c->cur = spec_of(ppid);
        c->cur_ppid = ppid;
        c->cur_off = 0;
        c->in_msg = true;
        if (sid != c->cur.sid || unordered != c->cur.unordered)
            fail_(c, "ppid %u: sid %u unordered %d, expected %u %d", ppid, sid, unordered,
                  c->cur.sid, c->cur.unordered);
        if (ppid < N_MSGS) {
            if (c->seen[ppid])
                fail_(c, "ppid %u delivered twice", ppid);
            if (!unordered) {
                if ((int64_t)ppid <= c->last_ordered[sid])
                    fail_(c, "stream %u: ordered ppid %u after %lld", sid, ppid,
                          (long long)c->last_ordered[sid]);
                c->last_ordered[sid] = ppid;
            }
        }
    } else if (ppid != c->cur_ppid || sid != c->cur.sid) {
        fail_(c, "piece of ppid %u sid %u inside message %u", ppid, sid, c->cur_ppid);
    }
    if (c->cur_off + len > c->cur.len) {
        fail_(c, "ppid %u: %u bytes, expected %u", ppid, c->cur_off + len, c->cur.len);
        len = c->cur.len - c->cur_off;
    }
    for (uint32_t k = 0; k < len; k++) {
        if (d[k] != byte_of(c->cur_ppid, c->cur_off + k)) {
            fail_(c, "ppid %u: byte %u differs", c->cur_ppid, c->cur_off + k);
            break;
        }
    }
    c->cur_off += len;
    c->bytes += len;
    if (eor) {
        if (c->cur_off != c->cur.len)
            fail_(c, "ppid %u: ended at %u of %u bytes", c->cur_ppid, c->cur_off, c->cur.len);
        if (c->cur_ppid < N_MSGS) {
            c->seen[c->cur_ppid] = 1;
            c->received++;
        } else {
            c->big_received++;
        }
        c->in_msg = false;
    }
out:
    pthread_mutex_unlock(&c->mu);
}

static uint32_t checker_count(struct checker *c, uint32_t *big)
{
    pthread_mutex_lock(&c->mu);
    uint32_t n = c->received;
    if (big)
        *big = c->big_received;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---- nstack side ------------------------------------------------------- */

/* MODE_UDP: an engine of our own on a udp_host. MODE_RAW: a whole stack
 * (ARP, IPv4, SCTP as protocol 132) on an AF_PACKET device, wrapped in a
 * pcap tracer. Either way s->eng is the engine the scenarios drive. */
struct ns_side {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    atomic_bool stop;
    struct ns_sctp *eng;
    /* MODE_UDP */
    struct ns_udp_host *h;
    struct ns_timers timers;
    struct ns_rng rng;
    struct ns_sctp_params params;
    struct ns_sctp sctp;
    struct ns_pcap *pcap;
    /* MODE_RAW */
    struct ns_stack *st;
    struct ns_dev *dev;
    uint32_t ifindex;
    struct ns_pkt *held[64];
    int nheld;
    uint64_t tx_dropped;

    struct ns_sctp_ep *ep;
    struct ns_sctp_assoc *as;
    uint16_t sctp_port;
    /* events seen */
    int comm_up, comm_lost, shutdown_ev, shutdown_done, cant_start, restarts, peer_addr_down;
    enum ns_sctp_reason lost_reason;
    uint16_t lost_cause;
    uint16_t in_streams, out_streams;
    struct checker *chk;
};

static void ns_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now);

static int ns_fd(struct ns_side *s)
{
    return s->h ? ns_udp_host_fd(s->h) : s->dev->fd;
}

/* MODE_RAW: the stack's transmit queue to the device; what the device does
 * not take waits in held[] (the side's mutex held). */
static void ns_flush(struct ns_side *s, uint64_t now)
{
    if (s->h) {
        ns_udp_host_flush(s->h, now);
        return;
    }
    for (;;) {
        while (s->nheld < 64 && (s->held[s->nheld] = ns_stack_tx_pop(s->st, s->ifindex)))
            s->nheld++;
        if (s->nheld == 0)
            return;
        int r = ns_dev_send(s->dev, s->held, s->nheld, now);
        if (r < 0 && r != -EAGAIN && r != -ENOBUFS) {
            for (int i = 0; i < s->nheld; i++)
                ns_pkt_free(s->held[i]);
            s->tx_dropped += (uint64_t)s->nheld;
            s->nheld = 0;
            continue;
        }
        if (r < 0)
            r = 0;
        memmove(s->held, s->held + r, (size_t)(s->nheld - r) * sizeof(s->held[0]));
        s->nheld -= r;
        if (s->nheld)
            return; /* the device is full: the loop waits for POLLOUT */
    }
}

static uint64_t ns_next(struct ns_side *s)
{
    return s->h ? ns_timers_next(&s->timers) : ns_stack_next_deadline(s->st);
}

static void ns_turn(struct ns_side *s, uint64_t now)
{
    if (s->h) {
        ns_udp_host_recv(s->h, s->eng, 8, now);
        ns_timers_run(&s->timers, now);
    } else {
        for (int round = 0; round < 8; round++) {
            struct ns_pkt *pk[64];
            int n = ns_dev_recv(s->dev, pk, 64, now);
            for (int i = 0; i < n; i++)
                ns_stack_input_pkt(s->st, s->ifindex, pk[i], now);
            ns_flush(s, now);
            if (n < 64)
                break;
        }
        ns_stack_poll(s->st, now);
        (void)ns_pcap_tracer_poll(s->dev, now);
    }
    ns_flush(s, now);
}

static void *ns_loop(void *arg)
{
    struct ns_side *s = arg;
    struct pollfd pf = {ns_fd(s), POLLIN, 0};
    while (!atomic_load(&s->stop)) {
        pthread_mutex_lock(&s->mu);
        uint64_t next = ns_next(s);
        pf.events = (short)(POLLIN | (s->nheld ? POLLOUT : 0));
        pthread_mutex_unlock(&s->mu);
        uint64_t now = mono_us();
        /* The main thread may arm earlier timers meanwhile: wake at least
         * every 10 ms to notice. */
        int timeout = 10;
        if (next <= now)
            timeout = 0;
        else if (next - now < 10000)
            timeout = (int)((next - now + 999) / 1000);
        (void)poll(&pf, 1, timeout);
        pthread_mutex_lock(&s->mu);
        ns_turn(s, mono_us());
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

/* pcap: MODE_UDP records through udp_host (ns_capture_on pauses it),
 * MODE_RAW through a tracer around the device opened here. */
static void ns_start(struct ns_side *s, const struct ns_sctp_params *p, const char *pcap)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int err = 0;
    if (p)
        s->params = *p;
    else
        ns_sctp_params_default(&s->params);
    uint64_t now = mono_us();
    if (g_mode == MODE_UDP) {
        struct ns_udp_host_opts o = {
            .addr = LO, .ephemeral = true, .sndbuf = 4 << 20, .rcvbuf = 4 << 20};
        s->h = ns_udp_host_open_opts(&o, &err);
        assert_non_null(s->h);
        ns_timers_init(&s->timers);
        ns_rng_seed(&s->rng, ns_rng_os_seed());
        struct ns_sctp_config cfg = {
            .params = &s->params,
            .timers = &s->timers,
            .rng = &s->rng,
            .ops = {.output = ns_udp_host_output, .event = ns_event, .ctx = s->h},
        };
        assert_int_equal(ns_sctp_init(&s->sctp, &cfg, now), 0);
        s->eng = &s->sctp;
        if (pcap) {
            s->pcap = ns_pcap_open_opts(
                pcap, &(struct ns_pcap_opts){.wall_offset_us = ns_pcap_wall_offset_us(now)});
            assert_non_null(s->pcap);
            ns_udp_host_set_capture(s->h, ns_pcap_capture, s->pcap);
        }
    } else {
        char e[256];
        struct ns_dev *d = ns_afpacket_open(g_ifname, e, sizeof(e));
        if (!d)
            fprintf(stderr, "afpacket:%s: %s\n", g_ifname, e);
        assert_non_null(d);
        if (pcap) {
            struct ns_pcap_opts po = {.wall_offset_us = ns_pcap_wall_offset_us(now)};
            s->dev = ns_pcap_trace(d, pcap, &po, e, sizeof(e));
            if (!s->dev)
                fprintf(stderr, "pcap %s: %s\n", pcap, e);
            assert_non_null(s->dev);
        } else {
            s->dev = d;
        }
        struct ns_params sp;
        ns_params_default(&sp);
        sp.sctp = s->params;
        struct ns_stack_config sc = {.seed = 0, .params = &sp};
        s->st = ns_stack_new(&sc, now);
        assert_non_null(s->st);
        ns_stack_set_sctp_event(s->st, ns_event, s);
        int idx = ns_stack_add_iface(s->st, "veth", &s->dev->mac, s->dev->mtu);
        assert_true(idx > 0);
        s->ifindex = (uint32_t)idx;
        assert_int_equal(ns_stack_set_addr(s->st, s->ifindex, g_ns_addr, 24, now), 0);
        assert_int_equal(ns_stack_iface_up(s->st, s->ifindex, now), 0);
        s->eng = &s->st->sctp;
    }
    /* ns_sctp_ops has one ctx, the transport's: events find the side
     * through the endpoint's user pointer. */
    s->sctp_port = g_sctp_port++;
    s->ep = ns_sctp_ep_new(s->eng, s->sctp_port, NULL, 0, &err);
    assert_non_null(s->ep);
    ns_sctp_ep_set_user(s->ep, s);

    assert_int_equal(pthread_create(&s->th, NULL, ns_loop, s), 0);
}

/* MODE_UDP: stop or resume recording (bulk runs keep only the edges). */
static void ns_capture_on(struct ns_side *s, bool on)
{
    if (!s->h || !s->pcap)
        return;
    pthread_mutex_lock(&s->mu);
    ns_udp_host_set_capture(s->h, on ? ns_pcap_capture : NULL, s->pcap);
    pthread_mutex_unlock(&s->mu);
}

static void ns_stop(struct ns_side *s)
{
    atomic_store(&s->stop, true);
    pthread_join(s->th, NULL);
    uint64_t now = mono_us();
    /* Nothing usrsctp sent was refused as damaged, nothing got lost in
     * our transport. */
    const struct ns_sctp_stats *es = &s->eng->stats;
    if (s->h) {
        const struct ns_udp_host_stats *hs = ns_udp_host_stats(s->h);
        fprintf(stderr,
                "  nstack: udp rx %llu tx %llu datagrams (%llu/%llu batches), sctp rx %llu, "
                "bad csum %llu, malformed %llu, ootb %llu\n",
                (unsigned long long)hs->rx_datagrams, (unsigned long long)hs->tx_datagrams,
                (unsigned long long)hs->rx_batches, (unsigned long long)hs->tx_batches,
                (unsigned long long)es->rx_packets, (unsigned long long)es->rx_bad_csum,
                (unsigned long long)es->rx_malformed, (unsigned long long)es->rx_ootb);
        assert_int_equal(es->rx_packets, hs->rx_datagrams);
        assert_int_equal(hs->rx_short + hs->rx_trunc + hs->rx_nomem + hs->rx_errors, 0);
        assert_int_equal(hs->tx_bad_dst + hs->tx_errors + hs->pcap_errors, 0);
    } else {
        const struct ns_dev_stats *ds = &s->dev->stats;
        fprintf(stderr,
                "  nstack: dev rx %llu tx %llu frames, sctp glue rx %llu tx %llu, sctp rx %llu, "
                "bad csum %llu, malformed %llu, ootb %llu\n",
                (unsigned long long)ds->rx_frames, (unsigned long long)ds->tx_frames,
                (unsigned long long)s->st->sctp_glue_stats.rx_packets,
                (unsigned long long)s->st->sctp_glue_stats.tx_packets,
                (unsigned long long)es->rx_packets, (unsigned long long)es->rx_bad_csum,
                (unsigned long long)es->rx_malformed, (unsigned long long)es->rx_ootb);
        assert_int_equal(ds->rx_errors + ds->rx_drop_oversize + ds->rx_drop_nomem, 0);
        assert_int_equal(ds->tx_errors + s->tx_dropped, 0);
        assert_int_equal(s->st->sctp_glue_stats.tx_errors, 0);
        assert_int_equal(s->st->ip.stats.in_csum_errors + s->st->ip.stats.in_hdr_errors, 0);
    }
    assert_int_equal(es->rx_bad_csum, 0);
    assert_int_equal(es->rx_malformed, 0);
    if (s->as)
        ns_sctp_assoc_release(s->as, now);
    if (s->h) {
        ns_udp_host_flush(s->h, now);
        ns_sctp_free(&s->sctp);
        ns_timers_free(&s->timers);
        ns_udp_host_set_capture(s->h, NULL, NULL);
        if (s->pcap)
            assert_int_equal(ns_pcap_close(s->pcap), 0);
        ns_udp_host_close(s->h, now);
    } else {
        ns_flush(s, now);
        for (int i = 0; i < s->nheld; i++)
            ns_pkt_free(s->held[i]);
        ns_stack_free(s->st);
        ns_dev_close(s->dev); /* and the tracer's pcap */
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

/* Connect from nstack to usrsctp's port (the side's mutex held). */
static struct ns_sctp_assoc *ns_connect(struct ns_side *s, uint16_t port, int *err)
{
    struct ns_sctp_assoc *a;
    if (s->h) {
        struct ns_sctp_addr peer = {NS_SCTP_AF_INET4, g_p1, LO};
        a = ns_sctp_connect(s->ep, &peer, 1, port, mono_us(), err);
    } else {
        a = ns_stack_sctp_connect(s->st, s->ep, g_us_addr, port, mono_us(), err);
    }
    ns_flush(s, mono_us());
    return a;
}

static void ns_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct ns_side *s = ev->assoc ? ns_sctp_ep_user(ns_sctp_assoc_ep(ev->assoc)) : NULL;
    if (!s)
        return;
    switch (ev->type) {
    case NS_SCTP_EV_COMM_UP:
        s->comm_up++;
        s->as = ev->assoc;
        s->in_streams = ev->in_streams;
        s->out_streams = ev->out_streams;
        break;
    case NS_SCTP_EV_COMM_LOST:
        s->comm_lost++;
        s->lost_reason = ev->reason;
        s->lost_cause = ev->cause;
        break;
    case NS_SCTP_EV_SHUTDOWN:
        s->shutdown_ev++;
        break;
    case NS_SCTP_EV_SHUTDOWN_COMPLETE:
        s->shutdown_done++;
        break;
    case NS_SCTP_EV_CANT_STR_ASSOC:
        s->cant_start++;
        break;
    case NS_SCTP_EV_RESTART:
        s->restarts++;
        break;
    case NS_SCTP_EV_PEER_ADDR_CHANGE:
        if (ev->addr_state == NS_SCTP_ADDR_UNREACHABLE)
            s->peer_addr_down++;
        break;
    case NS_SCTP_EV_DATA_READY: {
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_recv_take(ev->assoc, &q);
        static uint8_t buf[BIG_LEN];
        for (struct ns_sctp_rmsg *m; (m = ns_sctp_rmsgq_pop(&q));) {
            uint32_t n = ns_sctp_rmsg_copy(m, 0, buf, m->len);
            if (s->chk)
                check_piece(s->chk, m->sid, msg_index(m->ppid), m->flags & NS_SCTP_RMSG_UNORDERED,
                            buf, n, m->flags & NS_SCTP_RMSG_EOR);
            ns_sctp_msg_free(ev->assoc, m, now);
        }
        break;
    }
    default:
        break;
    }
    pthread_cond_broadcast(&s->cv);
}

/* Wait (the side's mutex held) until cond holds or ms pass. */
#define NS_WAIT(s, cond, ms)                                                                       \
    do {                                                                                           \
        uint64_t until_ = mono_us() + (uint64_t)(ms)*1000;                                         \
        while (!(cond) && mono_us() < until_) {                                                    \
            struct timespec ts_;                                                                   \
            clock_gettime(CLOCK_REALTIME, &ts_);                                                   \
            ts_.tv_nsec += 5000000;                                                                \
            if (ts_.tv_nsec >= 1000000000) {                                                       \
                ts_.tv_sec++;                                                                      \
                ts_.tv_nsec -= 1000000000;                                                         \
            }                                                                                      \
            pthread_cond_timedwait(&(s)->cv, &(s)->mu, &ts_);                                      \
        }                                                                                          \
    } while (0)

/* Send one message from nstack, waiting while the send buffer is full. */
static int ns_send_msg(struct ns_side *s, uint32_t ppid, const uint8_t *buf, uint32_t len,
                       struct spec sp)
{
    int r;
    uint64_t until = mono_us() + 20 * NS_SEC;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        r = ns_sctp_send(s->as, sp.sid, wire_ppid(ppid), sp.unordered ? NS_SCTP_SEND_UNORDERED : 0,
                         buf, len, ppid, mono_us());
        ns_flush(s, mono_us());
        if (r != -EAGAIN || mono_us() > until)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 2000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* ---- usrsctp side ------------------------------------------------------ */

struct us_side {
    pthread_mutex_t mu;
    struct socket *so;
    uint16_t sctp_port;
    sctp_assoc_t assoc_id;
    int comm_up, comm_lost, shutdown_comp, shutdown_ev, cant_start, restarts;
    uint16_t lost_error;
    int eof;
    struct checker *chk;
    /* a piece in progress: the upcall gets whole messages or pieces */
};

static int us_receive(struct socket *so, union sctp_sockstore addr, void *data, size_t len,
                      struct sctp_rcvinfo rcv, int flags, void *ulp)
{
    struct us_side *u = ulp;
    if (!data) {
        pthread_mutex_lock(&u->mu);
        u->eof++;
        pthread_mutex_unlock(&u->mu);
        return 1;
    }
    if (flags & MSG_NOTIFICATION) {
        const union sctp_notification *n = data;
        pthread_mutex_lock(&u->mu);
        if (n->sn_header.sn_type == SCTP_ASSOC_CHANGE) {
            const struct sctp_assoc_change *ac = &n->sn_assoc_change;
            switch (ac->sac_state) {
            case SCTP_COMM_UP:
                u->comm_up++;
                u->assoc_id = ac->sac_assoc_id;
                break;
            case SCTP_COMM_LOST:
                u->comm_lost++;
                u->lost_error = ac->sac_error;
                break;
            case SCTP_SHUTDOWN_COMP:
                u->shutdown_comp++;
                break;
            case SCTP_CANT_STR_ASSOC:
                u->cant_start++;
                break;
            case SCTP_RESTART:
                u->restarts++;
                break;
            }
        } else if (n->sn_header.sn_type == SCTP_SHUTDOWN_EVENT) {
            u->shutdown_ev++;
        }
        pthread_mutex_unlock(&u->mu);
    } else if (u->chk) {
        check_piece(u->chk, rcv.rcv_sid, msg_index(ntohl(rcv.rcv_ppid)),
                    rcv.rcv_flags & SCTP_UNORDERED, data, (uint32_t)len, flags & MSG_EOR);
    }
    free(data);
    return 1;
}

static int us_get(struct us_side *u, int *field)
{
    pthread_mutex_lock(&u->mu);
    int v = *field;
    pthread_mutex_unlock(&u->mu);
    return v;
}

static bool wait_us(struct us_side *u, int *field, int want, unsigned ms)
{
    uint64_t until = mono_us() + (uint64_t)ms * 1000;
    while (us_get(u, field) < want) {
        if (mono_us() > until)
            return false;
        sleep_ms(2);
    }
    return true;
}

static void us_open(struct us_side *u, uint32_t hb_ms)
{
    memset(u, 0, sizeof(*u));
    pthread_mutex_init(&u->mu, NULL);
    u->so = usrsctp_socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, us_receive, NULL, 0, u);
    assert_non_null(u->so);
    u->sctp_port = g_sctp_port++;
    const uint16_t evs[] = {SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT};
    for (unsigned i = 0; i < 2; i++) {
        struct sctp_event e = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = evs[i], .se_on = 1};
        assert_int_equal(usrsctp_setsockopt(u->so, IPPROTO_SCTP, SCTP_EVENT, &e, sizeof(e)), 0);
    }
    int on = 1;
    assert_int_equal(usrsctp_setsockopt(u->so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof(on)), 0);
    int buf = 4 << 20;
    (void)usrsctp_setsockopt(u->so, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    (void)usrsctp_setsockopt(u->so, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    struct sctp_initmsg im = {.sinit_num_ostreams = N_STREAMS, .sinit_max_instreams = N_STREAMS};
    assert_int_equal(usrsctp_setsockopt(u->so, IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof(im)), 0);
    if (hb_ms) {
        struct sctp_paddrparams pp;
        memset(&pp, 0, sizeof(pp));
        pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
        pp.spp_hbinterval = hb_ms;
        pp.spp_flags = SPP_HB_ENABLE;
        assert_int_equal(
            usrsctp_setsockopt(u->so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp)), 0);
        struct sctp_rtoinfo ri = {.srto_assoc_id = SCTP_FUTURE_ASSOC,
                                  .srto_initial = 200,
                                  .srto_max = 1000,
                                  .srto_min = 100};
        assert_int_equal(usrsctp_setsockopt(u->so, IPPROTO_SCTP, SCTP_RTOINFO, &ri, sizeof(ri)), 0);
    }
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(u->sctp_port),
                             .sin_addr.s_addr = htonl(g_us_addr)};
    assert_int_equal(usrsctp_bind(u->so, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(usrsctp_listen(u->so, 1), 0);
    usrsctp_set_non_blocking(u->so, 1);
}

static void us_close(struct us_side *u)
{
    if (u->so)
        usrsctp_close(u->so);
    u->so = NULL;
    pthread_mutex_destroy(&u->mu);
}

static void us_set_encaps(struct us_side *u, uint16_t port)
{
    struct sctp_udpencaps ue;
    memset(&ue, 0, sizeof(ue));
    ue.sue_assoc_id = SCTP_FUTURE_ASSOC;
    ue.sue_port = htons(port);
    assert_int_equal(
        usrsctp_setsockopt(u->so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &ue, sizeof(ue)), 0);
}

static ssize_t us_send(struct us_side *u, uint32_t ppid, const void *d, uint32_t len,
                       struct spec sp, uint16_t flags)
{
    static const uint8_t empty[1];
    if (!d)
        d = empty;
    struct sctp_sndinfo si = {.snd_sid = sp.sid,
                              .snd_flags = (uint16_t)(flags | (sp.unordered ? SCTP_UNORDERED : 0)),
                              .snd_ppid = htonl(wire_ppid(ppid)),
                              .snd_assoc_id = u->assoc_id};
    uint64_t until = mono_us() + 20 * NS_SEC;
    for (;;) {
        ssize_t r = usrsctp_sendv(u->so, d, len, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0);
        if (r >= 0 || (errno != EWOULDBLOCK && errno != EAGAIN) || mono_us() > until) {
            if (r < 0)
                fprintf(stderr, "usrsctp_sendv: %s\n", strerror(errno));
            return r;
        }
        sleep_ms(1);
    }
}

/* ---- Capture checks ------------------------------------------------------ */

struct scenario {
    char pcap[128];
    uint16_t p2; /* nstack's UDP port (MODE_UDP) */
    struct ns_side ns;
    struct us_side us;
    struct checker chk;
    /* CK_COLLISION: both INITs before the first INIT ACK (crossed), the
     * second INIT after it (met a handshake in progress), or one INIT. */
    enum { INIT_ONE, INIT_LATE, INIT_CROSSED } init_kind;
};

static void tshark_cmd(char *cmd, size_t len, const char *pcap, uint16_t p2, const char *tail)
{
    char decode[96] = "";
    if (g_mode == MODE_UDP)
        snprintf(decode, sizeof(decode), "-d udp.port==%u,sctp -d udp.port==%u,sctp", g_p1, p2);
    snprintf(cmd, len, "tshark -r %s -o 'sctp.checksum:CRC 32c' %s %s 2>/dev/null", pcap, decode,
             tail);
}

/* tshark: nothing malformed, no expert error (a bad CRC32c is one); the
 * chunk types in capture order into types[], and for each whether nstack
 * (SCTP source port ns_port) sent it into from_ns[] (returns the count). */
static int tshark_chunks(const char *pcap, uint16_t p2, uint16_t ns_port, int *types, bool *from_ns,
                         int max)
{
    char cmd[512];
    tshark_cmd(cmd, sizeof(cmd), pcap, p2, "-Y '_ws.malformed || _ws.expert.severity >= error'");
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char line[512];
    int bad = 0;
    while (fgets(line, sizeof(line), f)) {
        if (bad++ < 5)
            fprintf(stderr, "tshark flags: %s", line);
    }
    assert_int_equal(pclose(f), 0);
    assert_int_equal(bad, 0);
    tshark_cmd(cmd, sizeof(cmd), pcap, p2, "-Y sctp -T fields -e sctp.srcport -e sctp.chunk_type");
    f = popen(cmd, "r");
    assert_non_null(f);
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        char *p = line, *end;
        long sport = strtol(p, &end, 10);
        if (end == p)
            continue;
        for (p = end; *p;) {
            long v = strtol(p, &end, 10);
            if (end == p) {
                p++;
                continue;
            }
            if (n < max) {
                from_ns[n] = sport == ns_port;
                types[n++] = (int)v;
            }
            p = end;
        }
    }
    assert_int_equal(pclose(f), 0);
    return n;
}

/* The subsequence of types[] made of the types in set, repeats of the same
 * type in a row collapsed (a retransmission). */
static int subseq(const int *types, int n, const int *set, int nset, int *out, int max)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < nset; j++) {
            if (types[i] == set[j] && (k == 0 || out[k - 1] != types[i]) && k < max)
                out[k++] = types[i];
        }
    }
    return k;
}

static int count_type(const int *types, int n, int t)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += types[i] == t;
    return c;
}

static int first_of(const int *types, int n, int t)
{
    for (int i = 0; i < n; i++)
        if (types[i] == t)
            return i;
    return n;
}

enum {
    CK_HANDSHAKE = 1,
    CK_SHUTDOWN = 2,
    CK_ABORT = 4,
    CK_HEARTBEAT = 8,
    CK_COLLISION = 16, /* a handshake in which both sides sent INITs */
};

static void check_capture(struct scenario *sc, unsigned what)
{
    if (!g_have_tshark) {
        fprintf(stderr, "tshark missing: capture check skipped\n");
        return;
    }
    int max = 4 << 20;
    int *types = malloc(sizeof(int) * (size_t)max);
    bool *from_ns = malloc((size_t)max);
    assert_non_null(types);
    assert_non_null(from_ns);
    int n = tshark_chunks(sc->pcap, sc->p2, sc->ns.sctp_port, types, from_ns, max);
    assert_true(n > 0);
    int seq[16];
    if (what & CK_HANDSHAKE) {
        const int set[] = {1, 2, 10, 11};
        int k = subseq(types, n, set, 4, seq, 16);
        assert_int_equal(k, 4);
        assert_int_equal(seq[0], 1);
        assert_int_equal(seq[1], 2);
        assert_int_equal(seq[2], 10);
        assert_int_equal(seq[3], 11);
    }
    if (what & CK_COLLISION) {
        /* Each handshake chunk type present, first ones in handshake order. */
        int f1 = first_of(types, n, 1), f2 = first_of(types, n, 2);
        int f10 = first_of(types, n, 10), f11 = first_of(types, n, 11);
        assert_true(f1 < f2 && f2 < f10 && f10 < f11 && f11 < n);
        int init_ns = n, init_us = n;
        for (int i = 0; i < n; i++) {
            if (types[i] == 1 && from_ns[i] && init_ns == n)
                init_ns = i;
            if (types[i] == 1 && !from_ns[i] && init_us == n)
                init_us = i;
        }
        /* A racing connect may find the association already forming
         * (usrsctp: EALREADY) and send no INIT of its own. */
        assert_true(init_ns < n || init_us < n);
        sc->init_kind = init_ns < f2 && init_us < f2 ? INIT_CROSSED
                        : init_ns < n && init_us < n ? INIT_LATE
                                                     : INIT_ONE;
        fprintf(stderr, "  handshake chunks:");
        for (int i = 0, shown = 0; i < n && shown < 16; i++) {
            if (types[i] == 1 || types[i] == 2 || types[i] == 10 || types[i] == 11) {
                fprintf(stderr, " %s%d", from_ns[i] ? "ns:" : "us:", types[i]);
                shown++;
            }
        }
        static const char *const kinds[] = {"one INIT", "second INIT met the handshake",
                                            "INITs crossed"};
        fprintf(stderr, " -> %s\n", kinds[sc->init_kind]);
        assert_int_equal(count_type(types, n, 6), 0);
    }
    if (what & CK_SHUTDOWN) {
        const int set[] = {7, 8, 14};
        int k = subseq(types, n, set, 3, seq, 16);
        assert_int_equal(k, 3);
        assert_int_equal(seq[0], 7);
        assert_int_equal(seq[1], 8);
        assert_int_equal(seq[2], 14);
        assert_int_equal(count_type(types, n, 6), 0);
    }
    if (what & CK_ABORT) {
        assert_int_equal(count_type(types, n, 6), 1);
        assert_int_equal(count_type(types, n, 7), 0);
    }
    if (what & CK_HEARTBEAT) {
        assert_true(count_type(types, n, 4) >= 4);
        assert_true(count_type(types, n, 5) >= 4);
    }
    free(types);
    free(from_ns);
    fprintf(stderr, "  capture %s: %d chunks checked\n", sc->pcap, n);
    if (!getenv("NS_INTEROP_KEEP"))
        unlink(sc->pcap);
}

/* ---- Scenario plumbing --------------------------------------------------- */

static void sc_start(struct scenario *sc, const char *name, const struct ns_sctp_params *p,
                     uint32_t us_hb_ms)
{
    memset(sc, 0, sizeof(*sc));
    snprintf(sc->pcap, sizeof(sc->pcap), "%s/%s.pcap", g_tmpdir, name);
    checker_init(&sc->chk);
    ns_start(&sc->ns, p, sc->pcap);
    us_open(&sc->us, us_hb_ms);
    if (g_mode == MODE_UDP) {
        sc->p2 = ns_udp_host_port(sc->ns.h);
        us_set_encaps(&sc->us, sc->p2);
    }
}

static void sc_stop(struct scenario *sc)
{
    us_close(&sc->us);
    ns_stop(&sc->ns);
    checker_free(&sc->chk);
}

/* Association up, nstack as the initiator. */
static void up_from_nstack(struct scenario *sc)
{
    struct ns_side *s = &sc->ns;
    int err = 0;
    pthread_mutex_lock(&s->mu);
    struct ns_sctp_assoc *a = ns_connect(s, sc->us.sctp_port, &err);
    assert_non_null(a);
    NS_WAIT(s, s->comm_up > 0 || s->cant_start > 0, 5000);
    assert_int_equal(s->comm_up, 1);
    assert_ptr_equal(s->as, a);
    assert_int_equal(s->out_streams, N_STREAMS);
    pthread_mutex_unlock(&s->mu);
    assert_true(wait_us(&sc->us, &sc->us.comm_up, 1, 5000));
}

/* Association up, usrsctp as the initiator (nstack listening). */
static void up_from_usrsctp(struct scenario *sc)
{
    struct ns_side *s = &sc->ns;
    ns_sctp_ep_listen(s->ep, true);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(s->sctp_port),
                             .sin_addr.s_addr = htonl(g_ns_addr)};
    int r = usrsctp_connect(sc->us.so, (struct sockaddr *)&sa, sizeof(sa));
    assert_true(r == 0 || errno == EINPROGRESS);
    assert_true(wait_us(&sc->us, &sc->us.comm_up, 1, 5000));
    pthread_mutex_lock(&s->mu);
    NS_WAIT(s, s->comm_up > 0, 5000);
    assert_int_equal(s->comm_up, 1);
    assert_int_equal(s->in_streams, N_STREAMS);
    pthread_mutex_unlock(&s->mu);
}

/* One small message each way. */
static void ping_pong(struct scenario *sc)
{
    sc->ns.chk = &sc->chk;
    sc->us.chk = &sc->chk;
    static uint8_t b[MAX_LEN];
    for (uint32_t ppid = 2; ppid < 4; ppid++) {
        struct spec sp = spec_of(ppid);
        fill(b, ppid, sp.len);
        if (ppid == 2)
            assert_int_equal(ns_send_msg(&sc->ns, ppid, b, sp.len, sp), 0);
        else
            assert_int_equal(us_send(&sc->us, ppid, b, sp.len, sp, 0), (ssize_t)sp.len);
        uint64_t until = mono_us() + 5 * NS_SEC;
        while (checker_count(&sc->chk, NULL) < ppid - 1 && mono_us() < until)
            sleep_ms(2);
        assert_int_equal(checker_count(&sc->chk, NULL), ppid - 1);
    }
    assert_int_equal(sc->chk.errors, 0);
}

static void shutdown_from_nstack(struct scenario *sc)
{
    struct ns_side *s = &sc->ns;
    pthread_mutex_lock(&s->mu);
    assert_int_equal(ns_sctp_shutdown(s->as, mono_us()), 0);
    ns_flush(s, mono_us());
    NS_WAIT(s, s->shutdown_done > 0 || s->comm_lost > 0, 5000);
    assert_int_equal(s->shutdown_done, 1);
    assert_int_equal(s->comm_lost, 0);
    assert_int_equal(ns_sctp_assoc_state(s->as), NS_SCTP_CLOSED);
    pthread_mutex_unlock(&s->mu);
    assert_true(wait_us(&sc->us, &sc->us.shutdown_comp, 1, 5000));
    assert_int_equal(us_get(&sc->us, &sc->us.shutdown_ev), 1);
    assert_int_equal(us_get(&sc->us, &sc->us.comm_lost), 0);
}

static void shutdown_from_usrsctp(struct scenario *sc)
{
    struct ns_side *s = &sc->ns;
    struct spec sp = {0};
    assert_int_equal(us_send(&sc->us, 0, NULL, 0, sp, SCTP_EOF), 0);
    assert_true(wait_us(&sc->us, &sc->us.shutdown_comp, 1, 5000));
    pthread_mutex_lock(&s->mu);
    NS_WAIT(s, s->shutdown_done > 0 || s->comm_lost > 0, 5000);
    assert_int_equal(s->shutdown_ev, 1);
    assert_int_equal(s->shutdown_done, 1);
    assert_int_equal(s->comm_lost, 0);
    pthread_mutex_unlock(&s->mu);
    assert_int_equal(us_get(&sc->us, &sc->us.comm_lost), 0);
}

/* ---- Scenarios ------------------------------------------------------------ */

static void test_nstack_connects(void **state)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    sc_start(sc, "nstack_connects", NULL, 0);
    up_from_nstack(sc);
    ping_pong(sc);
    shutdown_from_nstack(sc);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_SHUTDOWN);
    free(sc);
}

static void test_usrsctp_connects(void **state)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    sc_start(sc, "usrsctp_connects", NULL, 0);
    up_from_usrsctp(sc);
    ping_pong(sc);
    shutdown_from_usrsctp(sc);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_SHUTDOWN);
    free(sc);
}

static struct ns_sctp_params bulk_params(void)
{
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    p.max_message_bytes = 2u << 20;
    p.sndbuf_bytes = 1u << 20;
    p.rcvbuf_bytes = 1u << 20;
    p.reasm_max_bytes = 8u << 20;
    return p;
}

static void print_assoc(struct ns_side *s)
{
    pthread_mutex_lock(&s->mu);
    struct ns_sctp_assoc_info i;
    assert_int_equal(ns_sctp_assoc_info(s->as, &i), 0);
    fprintf(stderr,
            "  nstack assoc: tx_data %llu rx_data %llu rtx %llu fast_rtx %llu t3 %llu "
            "sacks tx %llu rx %llu, dup tsn %llu, pmtu %u\n",
            (unsigned long long)i.stats.tx_data, (unsigned long long)i.stats.rx_data,
            (unsigned long long)i.stats.retransmissions,
            (unsigned long long)i.stats.fast_retransmits, (unsigned long long)i.stats.t3_timeouts,
            (unsigned long long)i.stats.tx_sacks, (unsigned long long)i.stats.rx_sacks,
            (unsigned long long)i.stats.drop_dup_tsn, i.paths[0].pmtu);
    pthread_mutex_unlock(&s->mu);
}

static void wait_received(struct checker *c, uint32_t n, uint32_t big, unsigned secs)
{
    uint64_t until = mono_us() + (uint64_t)secs * NS_SEC;
    uint32_t b = 0;
    while ((checker_count(c, &b) < n || b < big) && mono_us() < until && c->errors == 0)
        sleep_ms(5);
    if (c->errors)
        fprintf(stderr, "checker: %u errors, first: %s\n", c->errors, c->err);
    assert_int_equal(c->errors, 0);
    assert_int_equal(checker_count(c, &b), n);
    assert_int_equal(b, big);
}

/* Capture only the edges of a long run (MODE_UDP): the first and the last
 * g_cap_edge messages' traffic, so the pcap and tshark's work stay bounded
 * while the handshake and the shutdown are in it. */
static void bulk_capture_edge(struct scenario *sc, uint32_t ppid)
{
    if (g_n_msgs <= 2 * g_cap_edge)
        return;
    if (ppid == g_cap_edge)
        ns_capture_on(&sc->ns, false);
    else if (ppid == g_n_msgs - g_cap_edge)
        ns_capture_on(&sc->ns, true);
}

static void test_bulk_nstack_to_usrsctp(void **state)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    struct ns_sctp_params p = bulk_params();
    sc_start(sc, "bulk_nstack_to_usrsctp", &p, 0);
    up_from_nstack(sc);
    sc->us.chk = &sc->chk;
    uint8_t *b = malloc(BIG_LEN);
    assert_non_null(b);
    uint64_t t0 = mono_us();
    for (uint32_t ppid = 0; ppid < g_n_msgs; ppid++) {
        bulk_capture_edge(sc, ppid);
        struct spec sp = spec_of(ppid);
        fill(b, ppid, sp.len);
        int r = ns_send_msg(&sc->ns, ppid, b, sp.len, sp);
        if (r != 0)
            fprintf(stderr, "send %u: %d\n", ppid, r);
        assert_int_equal(r, 0);
    }
    struct spec sp = spec_of(BIG_PPID);
    fill(b, BIG_PPID, BIG_LEN);
    assert_int_equal(ns_send_msg(&sc->ns, BIG_PPID, b, BIG_LEN, sp), 0);
    wait_received(&sc->chk, g_n_msgs, 1, 40 + g_n_msgs / 1000);
    fprintf(stderr, "nstack -> usrsctp: %u msgs, %llu bytes in %.2f s, %u deliveries\n",
            g_n_msgs + 1, (unsigned long long)sc->chk.bytes, (double)(mono_us() - t0) / 1e6,
            sc->chk.pieces);
    free(b);
    print_assoc(&sc->ns);
    shutdown_from_nstack(sc);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_SHUTDOWN);
    free(sc);
}

static void test_bulk_usrsctp_to_nstack(void **state)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    struct ns_sctp_params p = bulk_params();
    sc_start(sc, "bulk_usrsctp_to_nstack", &p, 0);
    up_from_usrsctp(sc);
    sc->ns.chk = &sc->chk;
    uint8_t *b = malloc(BIG_LEN);
    assert_non_null(b);
    uint64_t t0 = mono_us();
    for (uint32_t ppid = 0; ppid < g_n_msgs; ppid++) {
        bulk_capture_edge(sc, ppid);
        struct spec sp = spec_of(ppid);
        fill(b, ppid, sp.len);
        ssize_t r = us_send(&sc->us, ppid, b, sp.len, sp, 0);
        if (r != (ssize_t)sp.len)
            fprintf(stderr, "usrsctp send %u: %zd errno %d\n", ppid, r, errno);
        assert_int_equal(r, sp.len);
    }
    struct spec sp = spec_of(BIG_PPID);
    fill(b, BIG_PPID, BIG_LEN);
    assert_int_equal(us_send(&sc->us, BIG_PPID, b, BIG_LEN, sp, 0), BIG_LEN);
    wait_received(&sc->chk, g_n_msgs, 1, 40 + g_n_msgs / 1000);
    fprintf(stderr, "usrsctp -> nstack: %u msgs, %llu bytes in %.2f s, %u deliveries\n",
            g_n_msgs + 1, (unsigned long long)sc->chk.bytes, (double)(mono_us() - t0) / 1e6,
            sc->chk.pieces);
    free(b);
    print_assoc(&sc->ns);
    shutdown_from_usrsctp(sc);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_SHUTDOWN);
    free(sc);
}

static void test_abort_from_nstack(void **state)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    sc_start(sc, "abort_from_nstack", NULL, 0);
    up_from_nstack(sc);
    struct ns_side *s = &sc->ns;
    pthread_mutex_lock(&s->mu);
    assert_int_equal(ns_sctp_abort(s->as, "bye", 3, mono_us()), 0);
    ns_flush(s, mono_us());
    NS_WAIT(s, s->comm_lost > 0, 2000);
    assert_int_equal(s->comm_lost, 1);
    assert_int_equal(s->lost_reason, NS_SCTP_R_USER_ABORT);
    pthread_mutex_unlock(&s->mu);
    assert_true(wait_us(&sc->us, &sc->us.comm_lost, 1, 5000));
    assert_int_equal(us_get(&sc->us, &sc->us.shutdown_comp), 0);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_ABORT);
    free(sc);
}

static void test_abort_from_usrsctp(void **state)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    sc_start(sc, "abort_from_usrsctp", NULL, 0);
    up_from_usrsctp(sc);
    struct spec sp = {0};
    assert_int_equal(us_send(&sc->us, 0, NULL, 0, sp, SCTP_ABORT), 0);
    assert_true(wait_us(&sc->us, &sc->us.comm_lost, 1, 5000));
    struct ns_side *s = &sc->ns;
    pthread_mutex_lock(&s->mu);
    NS_WAIT(s, s->comm_lost > 0, 5000);
    assert_int_equal(s->comm_lost, 1);
    assert_int_equal(s->lost_reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(s->shutdown_done, 0);
    pthread_mutex_unlock(&s->mu);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_ABORT);
    free(sc);
}

/* Idle for secs with heartbeats every 100 ms on both sides (RTO 100 ms ..
 * 1 s): every heartbeat answered, no timeout, no path or association
 * failure. */
static void heartbeats_idle(const char *name, unsigned secs)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    p.hb_interval_ms = 100;
    p.rto_min_ms = 100;
    p.rto_initial_ms = 200;
    p.rto_max_ms = 1000;
    sc_start(sc, name, &p, 100);
    up_from_nstack(sc);
    sleep_ms(secs * 1000);
    struct ns_side *s = &sc->ns;
    pthread_mutex_lock(&s->mu);
    struct ns_sctp_assoc_info info;
    assert_int_equal(ns_sctp_assoc_info(s->as, &info), 0);
    fprintf(stderr, "heartbeats in %u s: sent %llu acked %llu answered %llu, rto %llu us\n", secs,
            (unsigned long long)info.stats.hb_sent, (unsigned long long)info.stats.hb_acked,
            (unsigned long long)info.stats.hb_rx, (unsigned long long)info.rto_us);
    assert_int_equal(info.state, NS_SCTP_ESTABLISHED);
    /* At least one per 600 ms: interval 100 ms plus up to an RTO (the
     * engine's jitter) each. */
    assert_true(info.stats.hb_sent >= secs * 5 / 3);
    assert_true(info.stats.hb_acked + 1 >= info.stats.hb_sent);
    assert_true(info.stats.hb_rx >= secs * 5 / 3);
    assert_int_equal(info.stats.hb_timeouts, 0);
    assert_int_equal(info.stats.path_failures, 0);
    assert_int_equal(info.errors, 0);
    assert_int_equal(s->comm_lost + s->peer_addr_down, 0);
    pthread_mutex_unlock(&s->mu);
    assert_int_equal(us_get(&sc->us, &sc->us.comm_lost), 0);
    shutdown_from_nstack(sc);
    sc_stop(sc);
    check_capture(sc, CK_HANDSHAKE | CK_SHUTDOWN | CK_HEARTBEAT);
    free(sc);
}

static void test_heartbeats_3s(void **state)
{
    heartbeats_idle("heartbeats_3s", 3);
}

static void test_heartbeats_30s(void **state)
{
    heartbeats_idle("heartbeats_30s", 30);
}

/* ---- INIT collision ------------------------------------------------------ */

static void delay_us(unsigned us)
{
    if (us) {
        struct timespec ts = {0, (long)us * 1000L};
        nanosleep(&ts, NULL);
    }
}

struct race {
    struct scenario *sc;
    pthread_barrier_t bar;
    unsigned us_delay_us, ns_delay_us;
    int us_rc, us_errno;
};

static void *race_us(void *arg)
{
    struct race *r = arg;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(r->sc->ns.sctp_port),
                             .sin_addr.s_addr = htonl(g_ns_addr)};
    pthread_barrier_wait(&r->bar);
    delay_us(r->us_delay_us);
    r->us_rc = usrsctp_connect(r->sc->us.so, (struct sockaddr *)&sa, sizeof(sa));
    r->us_errno = errno;
    return NULL;
}

static uint32_t g_init_kinds[3], g_collision_runs;

/* Both sides listen and connect to each other. held: usrsctp's INIT is
 * made to wait in our socket until ours has left (we hold the loop's
 * mutex), so the INITs cross for sure; otherwise both connects start at a
 * barrier, usrsctp's after us_delay_us, ours after ns_delay_us. The association must form exactly
 * once on each side (no second one, no restart, no abort), then carry a
 * message each way and shut down. */
static void collision(const char *name, bool held, unsigned us_delay_us, unsigned ns_delay_us)
{
    struct scenario *sc = calloc(1, sizeof(*sc));
    sc_start(sc, name, NULL, 0);
    struct ns_side *s = &sc->ns;
    ns_sctp_ep_listen(s->ep, true);
    int err = 0;
    struct ns_sctp_assoc *a = NULL;
    if (held) {
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons(s->sctp_port),
                                 .sin_addr.s_addr = htonl(g_ns_addr)};
        pthread_mutex_lock(&s->mu);
        int r = usrsctp_connect(sc->us.so, (struct sockaddr *)&sa, sizeof(sa));
        assert_true(r == 0 || errno == EINPROGRESS);
        /* usrsctp's INIT is in our socket, unread, before ours leaves. In
         * MODE_RAW an ARP exchange comes first: the INIT follows it. */
        struct pollfd pf = {ns_fd(s), POLLIN, 0};
        assert_int_equal(poll(&pf, 1, 2000), 1);
        a = ns_connect(s, sc->us.sctp_port, &err);
        assert_non_null(a);
        pthread_mutex_unlock(&s->mu);
    } else {
        struct race r = {.sc = sc, .us_delay_us = us_delay_us, .ns_delay_us = ns_delay_us};
        pthread_barrier_init(&r.bar, NULL, 2);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, race_us, &r), 0);
        pthread_barrier_wait(&r.bar);
        delay_us(r.ns_delay_us);
        pthread_mutex_lock(&s->mu);
        a = ns_connect(s, sc->us.sctp_port, &err);
        pthread_mutex_unlock(&s->mu);
        pthread_join(th, NULL);
        pthread_barrier_destroy(&r.bar);
        if (!a)
            fprintf(stderr, "  ns connect: %d\n", err);
        if (r.us_rc != 0 && r.us_errno != EINPROGRESS)
            fprintf(stderr, "  usrsctp_connect: %s\n", strerror(r.us_errno));
        /* One of the two may find the association already there. */
        assert_true(a || err == -EISCONN);
        assert_true(r.us_rc == 0 || r.us_errno == EINPROGRESS || r.us_errno == EISCONN ||
                    r.us_errno == EALREADY);
    }
    assert_true(wait_us(&sc->us, &sc->us.comm_up, 1, 5000));
    pthread_mutex_lock(&s->mu);
    NS_WAIT(s, s->comm_up > 0, 5000);
    pthread_mutex_unlock(&s->mu);
    sleep_ms(300); /* time for a second association or a restart to show */
    pthread_mutex_lock(&s->mu);
    fprintf(stderr, "  nstack: comm_up %d restarts %d cant_start %d lost %d; usrsctp: comm_up %d\n",
            s->comm_up, s->restarts, s->cant_start, s->comm_lost, us_get(&sc->us, &sc->us.comm_up));
    assert_int_equal(s->comm_up, 1);
    assert_int_equal(s->restarts + s->cant_start + s->comm_lost, 0);
    if (a)
        assert_ptr_equal(s->as, a);
    assert_int_equal(s->out_streams, N_STREAMS);
    assert_int_equal(ns_sctp_assoc_state(s->as), NS_SCTP_ESTABLISHED);
    pthread_mutex_unlock(&s->mu);
    assert_int_equal(us_get(&sc->us, &sc->us.comm_up), 1);
    assert_int_equal(us_get(&sc->us, &sc->us.restarts) + us_get(&sc->us, &sc->us.cant_start) +
                         us_get(&sc->us, &sc->us.comm_lost),
                     0);
    ping_pong(sc);
    shutdown_from_nstack(sc);
    sc_stop(sc);
    check_capture(sc, CK_COLLISION | CK_SHUTDOWN);
    g_collision_runs++;
    g_init_kinds[sc->init_kind]++;
    free(sc);
}

static void test_init_collision_held(void **state)
{
    collision("init_collision_held", true, 0, 0);
}

/* Racing connects, one side started 0-200 us after the other (usrsctp's
 * connect takes longer to put its INIT out than ours): reports how the
 * INITs met in each run. */
static void test_init_collision_race(void **state)
{
    uint32_t k0[3] = {g_init_kinds[0], g_init_kinds[1], g_init_kinds[2]};
    uint32_t r0 = g_collision_runs;
    for (unsigned i = 0; i < 10; i++) {
        char name[48];
        snprintf(name, sizeof(name), "init_collision_race%u", i);
        if (i < 5)
            collision(name, false, 0, i * 50);
        else
            collision(name, false, (i - 5) * 50, 0);
    }
    fprintf(stderr,
            "INIT collision, racing connects, %u runs: INITs crossed in %u, the second INIT met "
            "the handshake in progress in %u, one INIT only in %u\n",
            g_collision_runs - r0, g_init_kinds[INIT_CROSSED] - k0[INIT_CROSSED],
            g_init_kinds[INIT_LATE] - k0[INIT_LATE], g_init_kinds[INIT_ONE] - k0[INIT_ONE]);
}

/* ---- Test selection ------------------------------------------------------ */

/* Runs the tests whose names contain one of the words in argv[1..] (all
 * without arguments). */
static int run_selected(const struct CMUnitTest *all, size_t n, int argc, char **argv,
                        CMFixtureFunction setup, CMFixtureFunction teardown)
{
    struct CMUnitTest *sel = calloc(n, sizeof(*sel));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool want = argc < 2;
        for (int j = 1; j < argc; j++)
            want |= strstr(all[i].name, argv[j]) != NULL;
        if (want)
            sel[k++] = all[i];
    }
    int rc = _cmocka_run_group_tests("interop", sel, k, setup, teardown);
    free(sel);
    return rc;
}

#endif
