/* Soak: two full stacks (Ethernet, ARP, IPv4, SCTP) on a memlink with 2%
 * loss, 2% duplication and 3% reordering, running mixed SCTP traffic on a
 * virtual clock, deterministic from a seed.
 *
 * N_SLOTS session slots run at once. A session is one association, opened
 * from either stack to one of three listeners on the other, carrying
 * messages both ways (1 B to 256 KiB, ten streams, some unordered) and then
 * ending one of three ways: graceful shutdown (RFC 9260 9.2), ABORT (9.1)
 * half way through, or release of a live handle (a shutdown the engine
 * finishes alone). A slot whose session ended starts a new association on
 * a fresh port a little later.
 *
 * Message content, length, stream and ordering derive from (session,
 * direction, number), so the receiver checks every byte. Checked all along:
 * no message delivered twice or corrupted, ordered messages in order per
 * stream, live packet memory (ns_pkt_gauges) and association count under a
 * bound. Checked at the end of each session: every message sent was
 * delivered (graceful, release), or delivered or reported in SEND_FAILED
 * (abort). Checked at the end of each epoch, when every session is closed
 * and released and the link is idle: no association left and packet memory
 * back to its baseline.
 *
 * NS_SOAK_SECONDS: virtual seconds of traffic (default 8, in epochs of 4;
 * `make soak` runs 600). NS_SOAK_SEED: the seed (default 1). Pings of up to 3000 bytes
 * (fragmented, reassembled under the same loss) run alongside. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/pkt.h"
#include "sim.h"

#define IP_A        SIM_IP(198, 18, 0, 1)
#define IP_B        SIM_IP(198, 18, 0, 2)
#define N_SLOTS     32
#define N_STREAMS   10
#define MAX_PLANNED 160
#define LPORT_BASE  7000 /* listeners: 7000..7002 on each stack */
#define IPORT_BASE  30000
#define IPORT_RANGE 20000
#define EPOCH_US    (4 * NS_SEC)
#define MAX_MSG     262144u
/* Packet memory may never exceed this (both stacks and the link). */
#define MEM_BOUND (96u * 1024 * 1024)

enum end_mode { END_GRACEFUL, END_ABORT, END_RELEASE };
enum closed_how { OPEN = 0, CL_SHUTDOWN, CL_LOST, CL_RELEASED };

struct dir {
    uint32_t planned, sent, delivered;
    uint8_t rcvd[MAX_PLANNED];
    uint8_t failed[MAX_PLANNED];
    int32_t last_ordered[N_STREAMS];
    bool pd; /* a partial delivery is in progress */
    uint32_t pd_msgno, pd_off;
    bool stop; /* sender got -EPIPE / closed */
};

struct sess {
    bool active;
    uint32_t id;
    int init_side;
    uint16_t lport, iport;
    enum end_mode mode;
    int end_side;
    bool ending;
    uint64_t started, end_started, idle_until;
    struct ns_sctp_ep *iep;
    struct ns_sctp_assoc *as[2];
    bool up[2];
    enum closed_how closed[2];
    struct dir d[2]; /* d[x]: sent by side x */
};

struct soak;
struct node_ctx {
    struct soak *k;
    int side;
};

struct soak {
    struct sim *sim;
    struct ns_stack *st[2];
    struct node_ctx nc[2];
    struct ns_sctp_ep *lep[2][3];
    struct sess slots[N_SLOTS];
    struct sess *by_port[IPORT_RANGE];
    uint32_t next_id;
    bool accepting;
    uint64_t seed;
    struct ns_rng rng;
    /* failures (must stay 0) */
    uint64_t dups, corrupt, misorder, lost, unexpected_ev, send_err, stuck, unmatched;
    /* protocol-correct outcomes of reordering, counted */
    uint64_t ghosts, late_aborts;
    /* statistics */
    uint64_t sessions[3], msgs, bytes, failed_reported, eagain;
    uint64_t max_buf_bytes, max_pkts, max_assocs, max_queued;
    uint64_t pings_sent, quiescent_checks;
};

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static uint32_t msg_hash(uint32_t sess, int dir, uint32_t msgno)
{
    return mix32(sess * 0x9e3779b9u ^ mix32(msgno * 2u + (uint32_t)dir + 0x1234567u));
}

static uint32_t msg_len(uint32_t h)
{
    uint32_t r = h % 1000;
    if (r == 0)
        return MAX_MSG;
    if (r == 1)
        return 1;
    if (r < 700)
        return 1 + (h >> 10) % 300;
    if (r < 950)
        return 300 + (h >> 10) % 4000;
    if (r < 992)
        return 4096 + (h >> 10) % 60000;
    return 65536 + (h >> 10) % (MAX_MSG - 65536);
}

static uint16_t msg_sid(uint32_t h)
{
    return (uint16_t)((h >> 3) % N_STREAMS);
}

static bool msg_unordered(uint32_t h)
{
    return ((h >> 20) & 7) == 0;
}

static uint8_t msg_byte(uint32_t h, uint32_t i)
{
    return (uint8_t)(h + i * 7 + (i >> 8) * 13);
}

static void fill(uint8_t *b, uint32_t h, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        b[i] = msg_byte(h, i);
}

static struct sess *sess_of(struct ns_sctp_assoc *a)
{
    return a ? ns_sctp_assoc_user(a) : NULL;
}

static void check_piece(struct soak *k, struct sess *ss, struct dir *d, uint32_t h,
                        const struct ns_sctp_rmsg *m, uint32_t off)
{
    static uint8_t got[MAX_MSG];
    if (off + m->len > msg_len(h)) {
        k->corrupt++;
        return;
    }
    ns_sctp_rmsg_copy(m, 0, got, m->len);
    for (uint32_t i = 0; i < m->len; i++) {
        if (got[i] != msg_byte(h, off + i)) {
            k->corrupt++;
            return;
        }
    }
    (void)ss;
    (void)d;
}

/* A message (or partial-delivery piece) received by side `rx`. */
static void on_msg(struct soak *k, struct sess *ss, int rx, const struct ns_sctp_rmsg *m)
{
    int tx = 1 - rx;
    struct dir *d = &ss->d[tx];
    uint32_t msgno = m->ppid;
    if (d->pd && msgno != d->pd_msgno) {
        k->corrupt++;
        d->pd = false;
    }
    if (msgno >= MAX_PLANNED || msgno >= d->sent) {
        k->corrupt++;
        return;
    }
    uint32_t h = msg_hash(ss->id, tx, msgno);
    uint32_t off = d->pd ? d->pd_off : 0;
    if (m->sid != msg_sid(h) || !!(m->flags & NS_SCTP_RMSG_UNORDERED) != msg_unordered(h)) {
        k->corrupt++;
        return;
    }
    check_piece(k, ss, d, h, m, off);
    if (!(m->flags & NS_SCTP_RMSG_EOR)) {
        d->pd = true;
        d->pd_msgno = msgno;
        d->pd_off = off + m->len;
        return;
    }
    d->pd = false;
    if (off + m->len != msg_len(h))
        k->corrupt++;
    if (d->rcvd[msgno]) {
        k->dups++;
        return;
    }
    d->rcvd[msgno] = 1;
    d->delivered++;
    k->msgs++;
    k->bytes += msg_len(h);
    if (!msg_unordered(h)) {
        if ((int32_t)msgno <= d->last_ordered[m->sid])
            k->misorder++;
        d->last_ordered[m->sid] = (int32_t)msgno;
    }
}

static void on_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct node_ctx *nc = ctx;
    struct soak *k = nc->k;
    int side = nc->side;
    struct sess *ss = sess_of(ev->assoc);
    switch (ev->type) {
    case NS_SCTP_EV_COMM_UP:
        if (!ss) {
            /* Passive open: find the session by the initiator's port. */
            struct ns_sctp_assoc_info ai;
            bool known = ns_sctp_assoc_info(ev->assoc, &ai) == 0 && ai.peer_port >= IPORT_BASE &&
                         ai.peer_port < IPORT_BASE + IPORT_RANGE;
            ss = known ? k->by_port[ai.peer_port - IPORT_BASE] : NULL;
            if (!ss || ss->init_side == side || ss->as[side]) {
                /* A duplicated or late COOKIE ECHO of an association
                 * that ended here is still a valid cookie (5.1.5): the
                 * listener makes a new association no one asked for.
                 * Anything else is a bug. */
                if (known && (!ss || (ss->as[side] && ss->closed[side] != OPEN))) {
                    k->ghosts++;
                } else {
                    k->unmatched++;
                    fprintf(stderr,
                            "# unexpected COMM_UP side %d peer port %u: session %u init %d "
                            "mode %d ending %d closed %d/%d\n",
                            side, known ? ai.peer_port : 0, ss ? ss->id : 0,
                            ss ? ss->init_side : -1, ss ? (int)ss->mode : -1, ss ? ss->ending : -1,
                            ss ? (int)ss->closed[0] : -1, ss ? (int)ss->closed[1] : -1);
                }
                ns_sctp_abort(ev->assoc, NULL, 0, now);
                ns_sctp_assoc_release(ev->assoc, now);
                return;
            }
            ss->as[side] = ev->assoc;
            ns_sctp_assoc_set_user(ev->assoc, ss);
        }
        ss->up[side] = true;
        break;
    case NS_SCTP_EV_DATA_READY: {
        if (!ss)
            return;
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_recv_take(ev->assoc, &q);
        struct ns_sctp_rmsg *m;
        while ((m = ns_sctp_rmsgq_pop(&q))) {
            on_msg(k, ss, side, m);
            ns_sctp_msg_free(ev->assoc, m, now);
        }
        break;
    }
    case NS_SCTP_EV_SEND_FAILED:
        if (!ss)
            return;
        if (ev->context < MAX_PLANNED)
            ss->d[side].failed[ev->context] = 1;
        k->failed_reported++;
        break;
    case NS_SCTP_EV_PARTIAL_DELIVERY_ABORTED:
        if (ss)
            ss->d[1 - side].pd = false;
        break;
    case NS_SCTP_EV_COMM_LOST:
        if (!ss)
            return;
        if (ss->mode != END_ABORT && ev->reason == NS_SCTP_R_PEER_ABORT && ss->ending &&
            ss->closed[1 - side] != OPEN) {
            /* The peer finished the shutdown and dropped its TCB; a late
             * (reordered or duplicated) packet of ours then drew an
             * OOTB ABORT (8.4) that overtook its SHUTDOWN COMPLETE.
             * Nothing is lost: the delivery checks still apply. */
            k->late_aborts++;
        } else if (ss->mode != END_ABORT ||
                   (ev->reason != NS_SCTP_R_USER_ABORT && ev->reason != NS_SCTP_R_PEER_ABORT)) {
            fprintf(stderr, "# session %u side %d: COMM_LOST reason %d cause %u\n", ss->id, side,
                    ev->reason, ev->cause);
            k->unexpected_ev++;
        }
        ss->closed[side] = CL_LOST;
        ss->d[side].stop = true;
        break;
    case NS_SCTP_EV_SHUTDOWN_COMPLETE:
        if (ss)
            ss->closed[side] = CL_SHUTDOWN;
        break;
    case NS_SCTP_EV_SHUTDOWN:
        if (ss)
            ss->d[side].stop = true;
        break;
    case NS_SCTP_EV_CANT_STR_ASSOC:
    case NS_SCTP_EV_RESTART:
        fprintf(stderr, "# session %u side %d: unexpected %s reason %d cause %u\n", ss ? ss->id : 0,
                side, ns_sctp_event_name(ev->type), ev->reason, ev->cause);
        k->unexpected_ev++;
        if (ss && ev->type == NS_SCTP_EV_CANT_STR_ASSOC)
            ss->closed[side] = CL_LOST;
        break;
    default:
        break;
    }
}

static uint64_t now_of(struct soak *k)
{
    return sim_now(k->sim);
}

static void sess_start(struct soak *k, struct sess *ss)
{
    uint32_t id = k->next_id++;
    memset(ss, 0, sizeof(*ss));
    ss->id = id;
    ss->started = now_of(k);
    uint32_t h = mix32(id ^ (uint32_t)k->seed * 0x85ebca6bu);
    ss->init_side = (int)(h & 1);
    ss->lport = (uint16_t)(LPORT_BASE + (h >> 1) % 3);
    ss->iport = (uint16_t)(IPORT_BASE + id % IPORT_RANGE);
    uint32_t r = (h >> 4) % 10;
    ss->mode = r < 6 ? END_GRACEFUL : r < 8 ? END_ABORT : END_RELEASE;
    ss->end_side = (int)((h >> 9) & 1);
    for (int x = 0; x < 2; x++) {
        ss->d[x].planned = 5 + mix32(h + (uint32_t)x) % (MAX_PLANNED - 5);
        for (int i = 0; i < N_STREAMS; i++)
            ss->d[x].last_ordered[i] = -1;
    }
    int is = ss->init_side;
    int err = 0;
    ss->iep = ns_sctp_ep_new(&k->st[is]->sctp, ss->iport, NULL, 0, &err);
    if (!ss->iep) {
        fprintf(stderr, "# session %u: ep_new %d\n", id, err);
        k->send_err++;
        return;
    }
    ss->active = true;
    k->by_port[ss->iport - IPORT_BASE] = ss;
    struct ns_sctp_assoc *a =
        ns_stack_sctp_connect(k->st[is], ss->iep, is ? IP_A : IP_B, ss->lport, now_of(k), &err);
    if (!a) {
        fprintf(stderr, "# session %u: connect %d\n", id, err);
        k->send_err++;
        ns_sctp_ep_close(ss->iep);
        ss->active = false;
        return;
    }
    ss->as[is] = a;
    ns_sctp_assoc_set_user(a, ss);
}

static void sess_send(struct soak *k, struct sess *ss, int x)
{
    static uint8_t buf[MAX_MSG];
    struct dir *d = &ss->d[x];
    struct ns_sctp_assoc *a = ss->as[x];
    if (!a || d->stop || ss->closed[x] || (ss->ending && ss->mode == END_ABORT))
        return;
    for (int n = 0; n < 64 && d->sent < d->planned; n++) {
        uint32_t h = msg_hash(ss->id, x, d->sent);
        uint32_t len = msg_len(h);
        fill(buf, h, len);
        int r = ns_sctp_send(a, msg_sid(h), d->sent, msg_unordered(h) ? NS_SCTP_SEND_UNORDERED : 0,
                             buf, len, d->sent, now_of(k));
        if (r == -EAGAIN) {
            k->eagain++;
            return;
        }
        if (r == -EPIPE || r == -ENOTCONN) {
            d->stop = true;
            return;
        }
        if (r != 0) {
            fprintf(stderr, "# session %u: send %d\n", ss->id, r);
            k->send_err++;
            d->stop = true;
            return;
        }
        d->sent++;
    }
}

static bool dir_done(const struct dir *d)
{
    return d->sent == d->planned || d->stop;
}

static void sess_finish(struct soak *k, struct sess *ss)
{
    for (int x = 0; x < 2; x++) {
        struct dir *d = &ss->d[x];
        for (uint32_t m = 0; m < d->sent; m++) {
            bool ok = d->rcvd[m] || (ss->mode == END_ABORT && d->failed[m]);
            if (!ok) {
                if (k->lost < 10)
                    fprintf(stderr, "# session %u mode %d dir %d: msg %u of %u lost\n", ss->id,
                            ss->mode, x, m, d->sent);
                k->lost++;
            }
        }
    }
    for (int x = 0; x < 2; x++) {
        if (ss->as[x] && ss->closed[x] != CL_RELEASED)
            ns_sctp_assoc_release(ss->as[x], now_of(k));
        ss->as[x] = NULL;
    }
    ns_sctp_ep_close(ss->iep);
    k->sessions[ss->mode]++;
    k->by_port[ss->iport - IPORT_BASE] = NULL;
    ss->active = false;
    ss->idle_until = now_of(k) + ns_rng_below(&k->rng, 300 * NS_MS);
}

static void sess_step(struct soak *k, struct sess *ss)
{
    uint64_t now = now_of(k);
    if (!ss->active) {
        if (k->accepting && now >= ss->idle_until)
            sess_start(k, ss);
        return;
    }
    for (int x = 0; x < 2; x++)
        sess_send(k, ss, x);
    int e = ss->end_side;
    if (!ss->ending && ss->up[0] && ss->up[1]) {
        bool go = false;
        switch (ss->mode) {
        case END_GRACEFUL:
            go = dir_done(&ss->d[0]) && dir_done(&ss->d[1]);
            break;
        case END_ABORT:
            go = ss->d[e].sent >= ss->d[e].planned / 2 || dir_done(&ss->d[e]);
            break;
        case END_RELEASE:
            go = dir_done(&ss->d[0]) && dir_done(&ss->d[1]) &&
                 ss->d[0].delivered == ss->d[0].sent && ss->d[1].delivered == ss->d[1].sent;
            break;
        }
        if (go) {
            ss->ending = true;
            ss->end_started = now;
            if (ss->closed[e]) {
                /* already over (e.g. the peer's ABORT came first) */
            } else if (ss->mode == END_GRACEFUL) {
                assert_int_equal(ns_sctp_shutdown(ss->as[e], now), 0);
            } else if (ss->mode == END_ABORT) {
                static const char why[] = "soak";
                assert_int_equal(ns_sctp_abort(ss->as[e], why, sizeof(why) - 1, now), 0);
            } else {
                ns_sctp_assoc_release(ss->as[e], now);
                ss->as[e] = NULL;
                ss->closed[e] = CL_RELEASED;
            }
        }
    }
    if (ss->closed[0] && ss->closed[1]) {
        sess_finish(k, ss);
        return;
    }
    uint64_t started = ss->ending ? ss->end_started : ss->started;
    if (now - started > 300 * NS_SEC) {
        fprintf(stderr, "# session %u stuck: mode %d closed %d/%d\n", ss->id, ss->mode,
                ss->closed[0], ss->closed[1]);
        k->stuck++;
        for (int x = 0; x < 2; x++)
            if (!ss->closed[x] && ss->as[x])
                ns_sctp_abort(ss->as[x], NULL, 0, now);
        ss->mode = END_ABORT;
        ss->closed[0] = ss->closed[1] = CL_LOST;
        sess_finish(k, ss);
    }
}

static void watch(struct soak *k)
{
    struct ns_pkt_gauges g;
    ns_pkt_gauges(&g);
    if (g.buf_bytes > k->max_buf_bytes)
        k->max_buf_bytes = g.buf_bytes;
    if (g.pkts > k->max_pkts)
        k->max_pkts = g.pkts;
    assert_true(g.buf_bytes <= MEM_BOUND);
    uint64_t queued = 0;
    for (int x = 0; x < 2; x++) {
        struct ns_sctp *s = &k->st[x]->sctp;
        if (s->n_assocs > k->max_assocs)
            k->max_assocs = s->n_assocs;
        /* One per slot and side, plus closed ones still being torn down. */
        assert_true(s->n_assocs <= 4 * N_SLOTS);
        for (struct ns_sctp_assoc *a = ns_sctp_assoc_next(s, NULL); a;
             a = ns_sctp_assoc_next(s, a)) {
            struct ns_sctp_assoc_info ai;
            if (ns_sctp_assoc_info(a, &ai) != 0)
                continue;
            /* The send buffer may overshoot by one message (a send is
             * accepted while space remains). */
            assert_true(ai.sndbuf_used <= k->st[x]->sctp.p.sndbuf_bytes + MAX_MSG);
            queued += ai.sndbuf_used + ai.rcv_unread;
        }
    }
    if (queued > k->max_queued)
        k->max_queued = queued;
}

static void quiescent_check(struct soak *k, const struct ns_pkt_gauges *base)
{
    /* Let the last frames (SHUTDOWN COMPLETE, ARP) land and incomplete
     * ping datagrams time out of IP reassembly (30 s). */
    for (int i = 0; i < 4000; i++) {
        sim_run_for(k->sim, 10 * NS_MS);
        struct ns_memlink *ml = sim_memlink(k->sim, 0);
        if (ns_memlink_inflight(ml, 0) == 0 && ns_memlink_inflight(ml, 1) == 0 &&
            k->st[0]->link.ifaces[0].txq.count == 0 && k->st[1]->link.ifaces[0].txq.count == 0 &&
            k->st[0]->sctp.n_assocs == 0 && k->st[1]->sctp.n_assocs == 0 &&
            k->st[0]->ip.reass.count == 0 && k->st[1]->ip.reass.count == 0)
            break;
    }
    struct ns_pkt_gauges g;
    ns_pkt_gauges(&g);
    printf("# t=%.1fs quiescent: assocs %u/%u, bufs %llu (%llu B), pkts %llu; baseline %llu "
           "(%llu B), %llu\n",
           (double)now_of(k) / 1e6, k->st[0]->sctp.n_assocs, k->st[1]->sctp.n_assocs,
           (unsigned long long)g.bufs, (unsigned long long)g.buf_bytes, (unsigned long long)g.pkts,
           (unsigned long long)base->bufs, (unsigned long long)base->buf_bytes,
           (unsigned long long)base->pkts);
    assert_int_equal(k->st[0]->sctp.n_assocs, 0);
    assert_int_equal(k->st[1]->sctp.n_assocs, 0);
    assert_int_equal(g.bufs, base->bufs);
    assert_int_equal(g.buf_bytes, base->buf_bytes);
    assert_int_equal(g.pkts, base->pkts);
    for (int x = 0; x < 2; x++) {
        assert_int_equal(k->st[x]->ip.reass.count, 0);
        assert_int_equal(k->st[x]->ip.reass.mem, 0);
    }
    k->quiescent_checks++;
}

static void failures(const struct soak *k)
{
    printf("# failures: dups %llu corrupt %llu misorder %llu lost %llu unexpected-events %llu "
           "send-errors %llu stuck %llu unmatched %llu\n",
           (unsigned long long)k->dups, (unsigned long long)k->corrupt,
           (unsigned long long)k->misorder, (unsigned long long)k->lost,
           (unsigned long long)k->unexpected_ev, (unsigned long long)k->send_err,
           (unsigned long long)k->stuck, (unsigned long long)k->unmatched);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : def;
}

static void test_soak(void **st)
{
    (void)st;
    static struct soak k;
    memset(&k, 0, sizeof(k));
    uint64_t secs = env_u64("NS_SOAK_SECONDS", 8);
    k.seed = env_u64("NS_SOAK_SEED", 1);
    ns_rng_seed(&k.rng, k.seed);
    k.sim = sim_new(k.seed);
    assert_non_null(k.sim);
    int na = sim_add_stack(k.sim, "a", IP_A, 24, NULL);
    int nb = sim_add_stack(k.sim, "b", IP_B, 24, NULL);
    k.st[0] = sim_stack(k.sim, na);
    k.st[1] = sim_stack(k.sim, nb);
    struct ns_sctp_params p = k.st[0]->sctp.p;
    p.sndbuf_bytes = 1u << 20;
    p.rcvbuf_bytes = 1u << 20;
    p.rto_min_ms = 200;
    p.hb_interval_ms = 5000;
    for (int x = 0; x < 2; x++) {
        ns_sctp_set_params(&k.st[x]->sctp, &p);
        k.nc[x] = (struct node_ctx){&k, x};
        ns_stack_set_sctp_event(k.st[x], on_event, &k.nc[x]);
    }
    struct ns_memlink_cfg cfg = {
        .loss_ppm = NS_MEMLINK_PPM(0.02),
        .dup_ppm = NS_MEMLINK_PPM(0.02),
        .reorder_ppm = NS_MEMLINK_PPM(0.03),
        .reorder_delay_us = 2000,
        .delay_us = 1000,
        .jitter_us = 100,
        .rate_bytes_per_s = 50000000,
    };
    assert_true(sim_link(k.sim, na, nb, &cfg) >= 0);
    if (getenv("NS_SOAK_PCAP"))
        assert_int_equal(sim_link_pcap(k.sim, 0, 0, getenv("NS_SOAK_PCAP")), 0);
    sim_run_for(k.sim, 10 * NS_MS);
    struct ns_pkt_gauges base;
    ns_pkt_gauges(&base);
    for (int x = 0; x < 2; x++) {
        for (int l = 0; l < 3; l++) {
            int err = 0;
            k.lep[x][l] = ns_sctp_ep_new(&k.st[x]->sctp, (uint16_t)(LPORT_BASE + l), NULL, 0, &err);
            assert_non_null(k.lep[x][l]);
            ns_sctp_ep_listen(k.lep[x][l], true);
        }
    }

    uint64_t traffic = 0; /* virtual time with traffic so far */
    uint16_t ping_seq = 0;
    while (traffic < secs * NS_SEC) {
        uint64_t len = secs * NS_SEC - traffic < EPOCH_US ? secs * NS_SEC - traffic : EPOCH_US;
        uint64_t epoch_end = now_of(&k) + len;
        traffic += len;
        k.accepting = true;
        uint64_t next_watch = 0, next_ping = 0;
        for (;;) {
            uint64_t now = now_of(&k);
            if (now >= epoch_end)
                k.accepting = false;
            bool any = false;
            for (int i = 0; i < N_SLOTS; i++) {
                sess_step(&k, &k.slots[i]);
                any |= k.slots[i].active;
            }
            if (!k.accepting && !any)
                break;
            if (now >= next_ping && k.accepting) {
                int from = ping_seq & 1;
                ns_icmp_echo_send(&k.st[from]->ip, from ? IP_A : IP_B, 7, ping_seq,
                                  8 + (ping_seq * 397u) % 3000, 0, now);
                ping_seq++;
                k.pings_sent++;
                next_ping = now + 50 * NS_MS;
            }
            if (now >= next_watch) {
                watch(&k);
                next_watch = now + 100 * NS_MS;
            }
            sim_run_for(k.sim, NS_MS);
        }
        quiescent_check(&k, &base);
        failures(&k);
    }
    size_t replies = sim_icmp_count(k.sim, na, NS_ICMP_EV_ECHO_REPLY) +
                     sim_icmp_count(k.sim, nb, NS_ICMP_EV_ECHO_REPLY);
    const struct ns_memlink_stats *s0 = ns_memlink_stats(sim_memlink(k.sim, 0), 0);
    const struct ns_memlink_stats *s1 = ns_memlink_stats(sim_memlink(k.sim, 0), 1);
    printf("# seed %llu, %.1f virtual s: sessions graceful %llu abort %llu release %llu; "
           "%llu msgs %llu bytes delivered; %llu SEND_FAILED; %llu EAGAIN\n",
           (unsigned long long)k.seed, (double)now_of(&k) / 1e6, (unsigned long long)k.sessions[0],
           (unsigned long long)k.sessions[1], (unsigned long long)k.sessions[2],
           (unsigned long long)k.msgs, (unsigned long long)k.bytes,
           (unsigned long long)k.failed_reported, (unsigned long long)k.eagain);
    printf("# link: sent %llu lost %llu dup %llu reordered %llu queue-drops %llu; pings %llu "
           "replies %zu\n",
           (unsigned long long)(s0->sent + s1->sent), (unsigned long long)(s0->lost + s1->lost),
           (unsigned long long)(s0->duplicated + s1->duplicated),
           (unsigned long long)(s0->reordered + s1->reordered),
           (unsigned long long)(s0->drop_queue_full + s1->drop_queue_full),
           (unsigned long long)k.pings_sent, replies);
    printf("# reordering artefacts: %llu associations from late COOKIE ECHOs, %llu shutdowns "
           "ending in an OOTB ABORT\n",
           (unsigned long long)k.ghosts, (unsigned long long)k.late_aborts);
    printf("# peaks: packet memory %llu B in %llu packets, %llu assocs per stack, %llu B queued "
           "in the engines; %llu quiescent checks\n",
           (unsigned long long)k.max_buf_bytes, (unsigned long long)k.max_pkts,
           (unsigned long long)k.max_assocs, (unsigned long long)k.max_queued,
           (unsigned long long)k.quiescent_checks);
    assert_int_equal(k.dups, 0);
    assert_int_equal(k.corrupt, 0);
    assert_int_equal(k.misorder, 0);
    assert_int_equal(k.lost, 0);
    assert_int_equal(k.unexpected_ev, 0);
    assert_int_equal(k.send_err, 0);
    assert_int_equal(k.stuck, 0);
    assert_int_equal(k.unmatched, 0);
    assert_true(k.sessions[0] > 0 && k.sessions[1] > 0 && k.sessions[2] > 0);
    assert_true(s0->lost + s1->lost > 0 && s0->duplicated + s1->duplicated > 0);
    /* Pings of up to three fragments under 2% loss each way. */
    assert_true(replies * 10 >= k.pings_sent * 7);
    for (int x = 0; x < 2; x++)
        for (int l = 0; l < 3; l++)
            ns_sctp_ep_close(k.lep[x][l]);
    sim_free(k.sim);
}

int main(void)
{
    ns_pkt_gauges_enable();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
