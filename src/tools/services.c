/* SCTP services of the daemon: discard (RFC 863 semantics), echo (RFC 862
 * semantics: each message back on its stream with its ppid) and perf (the
 * server side of `nstack perf`), over one-to-many sockets (RFC 6458 section
 * 3) of the public socket API. Each service is one application thread that
 * polls its socket's readiness fd and a stop eventfd; the protocol work is
 * on the runtime's stack thread.
 *
 * A message larger than the partial delivery point (or than the receive
 * buffer here) is read in pieces, and on a one-to-many socket the pieces of
 * one association's message may have other associations' messages between
 * them, so "this piece starts a message" is state of the association, kept
 * from one read (and one wake-up) to the next: perf_assoc.mid for perf,
 * an echo_part for echo, which also gathers the pieces, since echo answers
 * whole messages only.
 */
#include "tools/services.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/counters.h"
#include "nstack/socket.h"
#include "tools/text.h"

#define SVC_MAX     16
#define SVC_RXBUF   (256u * 1024u)
#define PERF_ASSOCS 64
/* The largest message echo answers (docs/cli.md), sysctl
 * sctp.max_message_bytes's default: a reply no larger can be sent back. */
#define ECHO_MAX_MSG (256u * 1024u)
/* A reply that did not fit the send buffer is retried after this long,
 * doubled up to ECHO_WAIT_MAX_MS while it still does not: the writable side
 * of a socket has no fd to wait on (socket.h), and each try copies it. */
#define ECHO_WAIT_MS     1
#define ECHO_WAIT_MAX_MS 64

enum svc_kind { SVC_DISCARD, SVC_ECHO, SVC_PERF };

struct perf_assoc {
    uint32_t id; /* 0: free slot */
    bool mid;    /* the last piece read did not end its message */
    uint64_t bytes, msgs;
    uint64_t t0, t1, cpu0, cpu1;
    uint64_t want; /* bytes END announced; UINT64_MAX: no END yet */
    bool reported;
};

/* An association whose message echo is reading in pieces; only those have
 * one, so memory is held only while a message is incomplete. */
struct echo_part {
    uint32_t id;
    bool drop; /* over ECHO_MAX_MSG (or no memory): read to its end, no reply */
    uint8_t *buf;
    uint32_t len, cap;
    struct ns_sctp_sndinfo si; /* of the first piece */
};

/* The reply that found the send buffer full: the service reads nothing
 * more until it is sent, so data (o->buf itself on the fast path) stays. */
struct echo_reply {
    bool pending;
    const uint8_t *data;
    size_t len;
    uint8_t *owned; /* a reassembled message, freed once sent; NULL: o->buf */
    struct ns_sctp_sndinfo si;
};

struct svc_one {
    struct ns_svc *svc;
    enum svc_kind kind;
    uint16_t port;
    int sd;
    pthread_t thread;
    bool running;
    uint8_t *buf;
    struct perf_assoc pa[PERF_ASSOCS];
    struct echo_part *parts;
    size_t nparts, partcap;
    struct echo_reply pend;
    int wait_ms; /* the pending reply's next retry */
};

NS_CTR_NAMES(svc_ctr_names, NS_SVC_COUNTERS);

struct ns_svc_stats {
    NS_SVC_COUNTERS(NS_CTR_FIELD)
};

struct ns_svc {
    struct ns_rt *rt;
    struct svc_one one[SVC_MAX];
    int n;
    int stopfd; /* readable once stopping */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int jobs;
    bool stopping;
    struct ns_svc_stats stats; /* stack thread only (svc_count) */
};

uint64_t ns_svc_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t ns_svc_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct ns_svc *ns_svc_new(void)
{
    struct ns_svc *svc = calloc(1, sizeof(*svc));
    if (!svc)
        return NULL;
    svc->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (svc->stopfd < 0) {
        free(svc);
        return NULL;
    }
    pthread_mutex_init(&svc->mu, NULL);
    pthread_cond_init(&svc->cv, NULL);
    return svc;
}

static const struct {
    const char *prefix;
    enum svc_kind kind;
} kinds[] = {{"discard:", SVC_DISCARD}, {"echo:", SVC_ECHO}, {"perf:", SVC_PERF}};

bool ns_svc_is_sctp(const char *spec)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strncmp(spec, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
            return true;
    return false;
}

int ns_svc_add(struct ns_svc *svc, const char *spec, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t l = strlen(kinds[i].prefix);
        if (strncmp(spec, kinds[i].prefix, l) != 0)
            continue;
        uint16_t port;
        if (!ns_arg_port(spec + l, &port)) {
            snprintf(err, errlen, "bad service '%s' (use: %sPORT)", spec, kinds[i].prefix);
            return -1;
        }
        if (svc->n == SVC_MAX) {
            snprintf(err, errlen, "too many services");
            return -1;
        }
        struct svc_one *o = &svc->one[svc->n++];
        o->svc = svc;
        o->kind = kinds[i].kind;
        o->port = port;
        o->sd = -1;
        return 0;
    }
    snprintf(err, errlen,
             "bad service '%s' (use: udp-echo:PORT, discard:PORT, echo:PORT, perf:PORT)", spec);
    return -1;
}

struct ns_rt *ns_svc_rt(const struct ns_svc *svc)
{
    return svc ? svc->rt : NULL;
}

size_t ns_svc_counters(struct ns_svc *svc, struct ns_ctr_group *g, size_t max)
{
    if (!svc || max < 1)
        return 0;
    g[0] = NS_CTR_GROUP_NAMED("services", svc_ctr_names, &svc->stats);
    return 1;
}

static void svc_count_fn(struct ns_rt *rt, void *arg)
{
    (void)rt;
    (*(uint64_t *)arg)++;
}

static void svc_barrier_fn(struct ns_rt *rt, void *arg)
{
    (void)rt;
    (void)arg;
}

/* Counters are written on the stack thread only (core/counters.h), where
 * `nstack stats` reads them; the events counted here are rare (at most one
 * per large message), so a posted increment costs nothing that matters. */
static void svc_count(struct svc_one *o, uint64_t *ctr)
{
    ns_rt_post(o->svc->rt, svc_count_fn, ctr);
}

bool ns_svc_stopping(struct ns_svc *svc)
{
    pthread_mutex_lock(&svc->mu);
    bool r = svc->stopping;
    pthread_mutex_unlock(&svc->mu);
    return r;
}

/* ---- perf accounting ---- */

static struct perf_assoc *perf_find(struct svc_one *o, uint32_t id, bool create)
{
    struct perf_assoc *free_slot = NULL;
    for (int i = 0; i < PERF_ASSOCS; i++) {
        if (o->pa[i].id == id)
            return &o->pa[i];
        if (!o->pa[i].id && !free_slot)
            free_slot = &o->pa[i];
    }
    if (!create || !free_slot)
        return NULL;
    memset(free_slot, 0, sizeof(*free_slot));
    free_slot->id = id;
    free_slot->want = UINT64_MAX;
    return free_slot;
}

static void perf_report(struct svc_one *o, struct perf_assoc *a)
{
    if (a->reported || a->bytes < a->want)
        return;
    a->reported = true;
    if (!a->t1) {
        a->t1 = a->t0 ? ns_svc_mono_us() : 0;
        a->cpu1 = ns_svc_cpu_us();
    }
    int rcvbuf = 0;
    socklen_t rl = sizeof(rcvbuf);
    ns_getsockopt(o->svc->rt, o->sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &rcvbuf, &rl);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char msg[160];
    int n =
        snprintf(msg, sizeof(msg), "REPORT %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %ld %d",
                 a->bytes, a->msgs, a->t1 - a->t0, a->cpu1 - a->cpu0, ncpu > 0 ? ncpu : 1, rcvbuf);
    struct ns_sctp_sndinfo si = {
        .snd_sid = 0, .snd_ppid = NS_PERF_PPID_REPORT, .snd_assoc_id = a->id};
    struct iovec iov = {msg, (size_t)n};
    ns_sctp_sendv(o->svc->rt, o->sd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO,
                  NS_MSG_DONTWAIT);
}

static void perf_msg(struct svc_one *o, const struct ns_sctp_rcvinfo *ri, uint32_t n, bool eor)
{
    struct perf_assoc *a = perf_find(o, ri->rcv_assoc_id, true);
    if (!a)
        return;
    bool first_piece = !a->mid;
    a->mid = !eor;
    if (ri->rcv_ppid == NS_PERF_PPID_END) {
        if (!eor || !first_piece)
            return;
        uint64_t bytes = 0, msgs = 0;
        char tmp[64];
        memcpy(tmp, o->buf, n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1);
        tmp[n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1] = '\0';
        if (sscanf(tmp, "END %" SCNu64 " %" SCNu64, &bytes, &msgs) != 2)
            return;
        a->want = bytes;
        perf_report(o, a);
        return;
    }
    uint64_t now = ns_svc_mono_us();
    if (!a->t0) {
        a->t0 = now;
        a->cpu0 = ns_svc_cpu_us();
    }
    a->bytes += n;
    if (eor)
        a->msgs++;
    /* The last byte's time: the report may wait for data on other streams. */
    if (a->bytes >= a->want) {
        a->t1 = now;
        a->cpu1 = ns_svc_cpu_us();
        perf_report(o, a);
    }
}

static void perf_notification(struct svc_one *o, const uint8_t *p, size_t n)
{
    struct ns_sctp_assoc_change ac;
    if (n < sizeof(ac))
        return;
    memcpy(&ac, p, sizeof(ac));
    if (ac.sac_type != NS_SCTP_ASSOC_CHANGE)
        return;
    if (ac.sac_state == NS_SCTP_COMM_LOST || ac.sac_state == NS_SCTP_SHUTDOWN_COMP ||
        ac.sac_state == NS_SCTP_COMM_UP || ac.sac_state == NS_SCTP_RESTART) {
        struct perf_assoc *a = perf_find(o, ac.sac_assoc_id, false);
        if (a)
            a->id = 0;
    }
}

/* ---- echo ---- */

static struct echo_part *echo_part_find(struct svc_one *o, uint32_t id)
{
    for (size_t i = 0; i < o->nparts; i++)
        if (o->parts[i].id == id)
            return &o->parts[i];
    return NULL;
}

static struct echo_part *echo_part_new(struct svc_one *o, uint32_t id,
                                       const struct ns_sctp_sndinfo *si)
{
    if (o->nparts == o->partcap) {
        size_t cap = o->partcap ? o->partcap * 2 : 8;
        struct echo_part *p = realloc(o->parts, cap * sizeof(*p));
        if (!p)
            return NULL;
        o->parts = p;
        o->partcap = cap;
    }
    struct echo_part *p = &o->parts[o->nparts++];
    *p = (struct echo_part){.id = id, .si = *si};
    return p;
}

/* Forget p (its buffer goes with it unless the caller took it). */
static void echo_part_del(struct svc_one *o, struct echo_part *p)
{
    free(p->buf);
    *p = o->parts[--o->nparts];
}

static void echo_forget(struct svc_one *o, uint32_t id)
{
    struct echo_part *p = echo_part_find(o, id);
    if (p)
        echo_part_del(o, p);
}

/* Send a reply; owned (the reassembled message, or NULL for o->buf) is
 * freed once the socket took the reply or refused it for good. false: the
 * send buffer is full, the reply is pending and reading must stop. */
static bool echo_send(struct svc_one *o, const uint8_t *data, size_t n, uint8_t *owned,
                      const struct ns_sctp_sndinfo *si)
{
    struct iovec out = {(void *)data, n};
    ssize_t r = ns_sctp_sendv(o->svc->rt, o->sd, &out, 1, NULL, 0, si, sizeof(*si),
                              NS_SCTP_SENDV_SNDINFO, NS_MSG_DONTWAIT);
    if (r < 0 && errno == EAGAIN) {
        if (!o->pend.pending)
            svc_count(o, &o->svc->stats.echo_send_waits);
        o->pend = (struct echo_reply){true, data, n, owned, *si};
        return false;
    }
    if (r < 0) /* the association is gone, or the reply is over the message limit */
        svc_count(o, &o->svc->stats.echo_send_errors);
    free(owned);
    o->pend.pending = false;
    return true;
}

/* Retry the pending reply. true: nothing is pending any more. */
static bool echo_flush(struct svc_one *o)
{
    if (!o->pend.pending)
        return true;
    /* Without room for any byte a try would only copy the reply again. */
    int m = ns_poll(o->svc->rt, o->sd);
    if (m >= 0 && !(m & (NS_POLLOUT | NS_POLLERR | NS_POLLHUP)))
        return false;
    struct echo_reply r = o->pend;
    return echo_send(o, r.data, r.len, r.owned, &r.si);
}

/* One piece of a message (its reply may be left pending: o->pend). */
static void echo_piece(struct svc_one *o, const struct ns_sctp_rcvinfo *ri, size_t n, bool eor)
{
    struct ns_sctp_sndinfo si = {.snd_sid = ri->rcv_sid,
                                 .snd_flags = ri->rcv_flags & NS_SCTP_UNORDERED,
                                 .snd_ppid = ri->rcv_ppid,
                                 .snd_assoc_id = ri->rcv_assoc_id};
    struct echo_part *p = echo_part_find(o, ri->rcv_assoc_id);
    if (!p && eor) {
        echo_send(o, o->buf, n, NULL, &si); /* whole in one piece: no copy */
        return;
    }
    if (!p && !(p = echo_part_new(o, ri->rcv_assoc_id, &si))) {
        /* Without its state the next pieces would look like messages of
         * their own, and be echoed as such: end the association instead. */
        svc_count(o, &o->svc->stats.echo_nomem);
        ns_abort(o->svc->rt, o->sd, ri->rcv_assoc_id);
        return;
    }
    if (!p->drop && (uint64_t)p->len + n > ECHO_MAX_MSG) {
        svc_count(o, &o->svc->stats.echo_too_big);
        p->drop = true;
    }
    if (!p->drop && p->len + n > p->cap) {
        /* Doubling from the first piece: a few copies per message, and
         * no more than the message's size (up to twice) held meanwhile. */
        uint32_t cap = p->cap ? p->cap : (uint32_t)n;
        while (cap < p->len + n)
            cap *= 2;
        if (cap > ECHO_MAX_MSG)
            cap = ECHO_MAX_MSG;
        uint8_t *b = realloc(p->buf, cap);
        if (!b) {
            svc_count(o, &o->svc->stats.echo_nomem);
            p->drop = true;
        } else {
            p->buf = b;
            p->cap = cap;
        }
    }
    if (p->drop) {
        free(p->buf);
        p->buf = NULL;
        p->len = p->cap = 0;
    } else {
        memcpy(p->buf + p->len, o->buf, n);
        p->len += (uint32_t)n;
    }
    if (!eor)
        return;
    bool drop = p->drop;
    uint8_t *msg = p->buf;
    uint32_t len = p->len;
    si = p->si;
    p->buf = NULL;
    echo_part_del(o, p);
    if (drop)
        return;
    svc_count(o, &o->svc->stats.echo_reassembled);
    echo_send(o, msg, len, msg, &si);
}

static void echo_notification(struct svc_one *o, const uint8_t *p, size_t n)
{
    struct ns_sctp_assoc_change ac;
    if (n < sizeof(ac))
        return;
    memcpy(&ac, p, sizeof(ac));
    /* A message cut by the association's end never completes; a restarted
     * or new association starts afresh. */
    if (ac.sac_type == NS_SCTP_ASSOC_CHANGE &&
        (ac.sac_state == NS_SCTP_COMM_LOST || ac.sac_state == NS_SCTP_SHUTDOWN_COMP ||
         ac.sac_state == NS_SCTP_COMM_UP || ac.sac_state == NS_SCTP_RESTART))
        echo_forget(o, ac.sac_assoc_id);
}

/* ---- the service threads ---- */

static void serve_readable(struct svc_one *o)
{
    struct ns_rt *rt = o->svc->rt;
    for (int budget = 0; budget < 4096; budget++) {
        if (o->pend.pending)
            return; /* svc_main waits for room, then reads on */
        struct ns_sctp_rcvinfo ri;
        socklen_t il = sizeof(ri);
        unsigned it = 0;
        int fl = 0;
        struct iovec iov = {o->buf, SVC_RXBUF};
        ssize_t n =
            ns_sctp_recvv(rt, o->sd, &iov, 1, NULL, NULL, &ri, &il, &it, &fl, NS_MSG_DONTWAIT);
        if (n < 0)
            return;
        bool eor = (fl & NS_MSG_EOR) != 0;
        if (fl & NS_MSG_NOTIFICATION) {
            if (o->kind == SVC_PERF)
                perf_notification(o, o->buf, (size_t)n);
            else if (o->kind == SVC_ECHO)
                echo_notification(o, o->buf, (size_t)n);
            continue;
        }
        if (it != NS_SCTP_RECVV_RCVINFO)
            memset(&ri, 0, sizeof(ri));
        switch (o->kind) {
        case SVC_DISCARD:
            break;
        case SVC_ECHO:
            echo_piece(o, &ri, (size_t)n, eor);
            break;
        case SVC_PERF:
            perf_msg(o, &ri, (uint32_t)n, eor);
            break;
        }
    }
}

static void *svc_main(void *arg)
{
    struct svc_one *o = arg;
    int efd = ns_socket_fd(o->svc->rt, o->sd);
    struct pollfd pf[2] = {{.fd = o->svc->stopfd, .events = POLLIN}, {.fd = efd, .events = POLLIN}};
    for (;;) {
        /* A pending reply: the socket stays readable while nothing is
         * read, so wait on the stop fd alone and retry the send. */
        bool waiting = o->pend.pending;
        pf[1].revents = 0;
        int n = poll(pf, waiting ? 1 : 2, waiting ? o->wait_ms : -1);
        if (n < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        if (waiting) {
            if (!echo_flush(o)) {
                o->wait_ms = o->wait_ms * 2 > ECHO_WAIT_MAX_MS ? ECHO_WAIT_MAX_MS : o->wait_ms * 2;
                continue;
            }
            o->wait_ms = ECHO_WAIT_MS;
            serve_readable(o); /* what arrived meanwhile */
        } else if (pf[1].revents) {
            serve_readable(o);
        }
    }
    return NULL;
}

/* A reply is refused outright (EMSGSIZE) above SO_SNDBUF, whose default
 * (sysctl sctp.sndbuf_bytes, 212992) is below ECHO_MAX_MSG: raise it so
 * the largest reply fits (setsockopt doubles the value, as Linux does, so
 * one such reply can wait while another drains). */
static int echo_sndbuf(struct ns_rt *rt, int sd)
{
    int cur = 0;
    socklen_t l = sizeof(cur);
    if (ns_getsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &cur, &l) == 0 && cur >= 0 &&
        (uint32_t)cur >= 2 * ECHO_MAX_MSG)
        return 0;
    int v = (int)ECHO_MAX_MSG;
    return ns_setsockopt(rt, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &v, sizeof(v));
}

int ns_svc_start(struct ns_svc *svc, struct ns_rt *rt, char *err, size_t errlen)
{
    static const char *const names[] = {"discard", "echo", "perf"};
    svc->rt = rt;
    for (int i = 0; i < svc->n; i++) {
        struct svc_one *o = &svc->one[i];
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(o->port)};
        /* Echo and perf keep state per association, which its end clears. */
        struct ns_sctp_event_subscribe ev = {.sctp_association_event = 1};
        o->wait_ms = ECHO_WAIT_MS;
        o->buf = malloc(SVC_RXBUF);
        o->sd = o->buf ? ns_socket(rt, NS_SOCK_SEQPACKET) : -1;
        if (o->sd < 0 || ns_bind(rt, o->sd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
            (o->kind != SVC_DISCARD &&
             ns_setsockopt(rt, o->sd, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &ev, sizeof(ev)) < 0) ||
            (o->kind == SVC_ECHO && echo_sndbuf(rt, o->sd) < 0) ||
            ns_set_nonblock(rt, o->sd, true) < 0 || ns_listen(rt, o->sd, 16) < 0) {
            snprintf(err, errlen, "%s: sctp port %u: %s", names[o->kind], o->port,
                     strerror(o->buf ? errno : ENOMEM));
            return -1;
        }
        int e = pthread_create(&o->thread, NULL, svc_main, o);
        if (e) {
            snprintf(err, errlen, "%s: thread: %s", names[o->kind], strerror(e));
            return -1;
        }
        o->running = true;
    }
    return 0;
}

void ns_svc_job_begin(struct ns_svc *svc)
{
    pthread_mutex_lock(&svc->mu);
    svc->jobs++;
    pthread_mutex_unlock(&svc->mu);
}

void ns_svc_job_end(struct ns_svc *svc)
{
    pthread_mutex_lock(&svc->mu);
    svc->jobs--;
    pthread_cond_broadcast(&svc->cv);
    pthread_mutex_unlock(&svc->mu);
}

void ns_svc_stop(struct ns_svc *svc)
{
    if (!svc)
        return;
    pthread_mutex_lock(&svc->mu);
    svc->stopping = true;
    pthread_mutex_unlock(&svc->mu);
    uint64_t one = 1;
    ssize_t w = write(svc->stopfd, &one, sizeof(one));
    (void)w;
    for (int i = 0; i < svc->n; i++) {
        struct svc_one *o = &svc->one[i];
        if (o->running) {
            pthread_join(o->thread, NULL);
            o->running = false;
        }
        if (o->sd >= 0) {
            ns_close(svc->rt, o->sd);
            o->sd = -1;
        }
        /* The thread is done: what it held goes (a pending reply too). */
        if (o->pend.pending)
            free(o->pend.owned);
        o->pend.pending = false;
        while (o->nparts)
            echo_part_del(o, &o->parts[0]);
    }
    /* Counter increments the threads posted run before this returns, so
     * none reaches svc after ns_svc_free. */
    if (svc->rt)
        ns_rt_call(svc->rt, svc_barrier_fn, NULL);
    /* Perf runs see `stopping` (their sessions were interrupted first) and
     * end within their report wait. */
    pthread_mutex_lock(&svc->mu);
    while (svc->jobs > 0)
        pthread_cond_wait(&svc->cv, &svc->mu);
    pthread_mutex_unlock(&svc->mu);
}

void ns_svc_free(struct ns_svc *svc)
{
    if (!svc)
        return;
    for (int i = 0; i < svc->n; i++) {
        free(svc->one[i].buf);
        free(svc->one[i].parts);
    }
    close(svc->stopfd);
    pthread_cond_destroy(&svc->cv);
    pthread_mutex_destroy(&svc->mu);
    free(svc);
}
