/* SCTP services of the daemon: discard (RFC 863 semantics), echo (RFC 862
 * semantics: each message back on its stream with its ppid) and perf (the
 * server side of `nstack perf`), over one-to-many sockets (RFC 6458 section
 * 3) of the public socket API. Each service is one application thread that
 * polls its socket's readiness fd and a stop eventfd; the protocol work is
 * on the runtime's stack thread.
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

#include "nstack/socket.h"
#include "tools/text.h"

#define SVC_MAX     16
#define SVC_RXBUF   (256u * 1024u)
#define PERF_ASSOCS 64

enum svc_kind { SVC_DISCARD, SVC_ECHO, SVC_PERF };

struct perf_assoc {
    uint32_t id; /* 0: free slot */
    uint64_t bytes, msgs;
    uint64_t t0, t1, cpu0, cpu1;
    uint64_t want; /* bytes END announced; UINT64_MAX: no END yet */
    bool reported;
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

static void perf_msg(struct svc_one *o, const struct ns_sctp_rcvinfo *ri, uint32_t n, bool eor,
                     bool first_piece)
{
    struct perf_assoc *a = perf_find(o, ri->rcv_assoc_id, true);
    if (!a)
        return;
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

/* ---- the service threads ---- */

static void serve_readable(struct svc_one *o)
{
    struct ns_rt *rt = o->svc->rt;
    bool first = true; /* the next piece starts a message */
    for (int budget = 0; budget < 4096; budget++) {
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
            first = true;
            continue;
        }
        if (it != NS_SCTP_RECVV_RCVINFO)
            memset(&ri, 0, sizeof(ri));
        switch (o->kind) {
        case SVC_DISCARD:
            break;
        case SVC_ECHO:
            /* Whole messages only (up to the buffer); a reply that does not
             * fit the send buffer now is dropped, as a datagram echo does. */
            if (first && eor) {
                struct ns_sctp_sndinfo si = {.snd_sid = ri.rcv_sid,
                                             .snd_flags = ri.rcv_flags & NS_SCTP_UNORDERED,
                                             .snd_ppid = ri.rcv_ppid,
                                             .snd_assoc_id = ri.rcv_assoc_id};
                struct iovec out = {o->buf, (size_t)n};
                ns_sctp_sendv(rt, o->sd, &out, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO,
                              NS_MSG_DONTWAIT);
            }
            break;
        case SVC_PERF:
            perf_msg(o, &ri, (uint32_t)n, eor, first);
            break;
        }
        first = eor;
    }
}

static void *svc_main(void *arg)
{
    struct svc_one *o = arg;
    int efd = ns_socket_fd(o->svc->rt, o->sd);
    struct pollfd pf[2] = {{.fd = efd, .events = POLLIN}, {.fd = o->svc->stopfd, .events = POLLIN}};
    for (;;) {
        int n = poll(pf, 2, -1);
        if (n < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break;
        if (pf[0].revents)
            serve_readable(o);
    }
    return NULL;
}

int ns_svc_start(struct ns_svc *svc, struct ns_rt *rt, char *err, size_t errlen)
{
    static const char *const names[] = {"discard", "echo", "perf"};
    svc->rt = rt;
    for (int i = 0; i < svc->n; i++) {
        struct svc_one *o = &svc->one[i];
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(o->port)};
        struct ns_sctp_event_subscribe ev = {.sctp_association_event = 1};
        o->buf = malloc(SVC_RXBUF);
        o->sd = o->buf ? ns_socket(rt, NS_SOCK_SEQPACKET) : -1;
        if (o->sd < 0 || ns_bind(rt, o->sd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
            (o->kind == SVC_PERF &&
             ns_setsockopt(rt, o->sd, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &ev, sizeof(ev)) < 0) ||
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
    }
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
    for (int i = 0; i < svc->n; i++)
        free(svc->one[i].buf);
    close(svc->stopfd);
    pthread_cond_destroy(&svc->cv);
    pthread_mutex_destroy(&svc->mu);
    free(svc);
}
