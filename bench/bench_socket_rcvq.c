/* Receive-path benchmark for the socket layer: one sender floods a
 * one-to-one socket with small messages, N threads read it, with and
 * without the ablation lock (a mutex per receive-queue operation, as Linux
 * before 2016). Two runtimes joined in process, no devices.
 *
 *   bench_socket_rcvq [messages=500000] [size=30] [readers=1]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/pkt.h"
#include "nstack/socket.h"
#include "sctp/sctp.h"

struct pair {
    struct ns_rt *rt[2];
    pthread_mutex_t mu;
    int alive;
};
struct side {
    struct pair *p;
    int idx;
};

static void out_fn(void *ctx, struct ns_pkt *pkt, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst)
{
    struct side *sd = ctx;
    struct ns_sctp_addr s = *src;
    if (!s.addr)
        s.addr = sd->idx ? 0xc6120101u : 0xc6120001u;
    pthread_mutex_lock(&sd->p->mu);
    if (sd->p->alive)
        ns_rt_input(sd->p->rt[!sd->idx], pkt, &s, dst);
    else
        ns_pkt_free(pkt);
    pthread_mutex_unlock(&sd->p->mu);
}

struct run {
    struct ns_rt *a, *b;
    int cs, as;
    unsigned n, size;
    atomic_uint got;
};

static void *sender(void *arg)
{
    struct run *r = arg;
    char *buf = calloc(1, r->size);
    for (unsigned i = 0; i < r->n; i++) {
        struct iovec iov = {buf, r->size};
        struct ns_sctp_sndinfo si = {.snd_sid = (uint16_t)(i % 10)};
        if (ns_sctp_sendv(r->a, r->cs, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO,
                          0) < 0) {
            perror("send");
            break;
        }
    }
    ns_shutdown(r->a, r->cs, SHUT_WR);
    free(buf);
    return NULL;
}

static void *reader(void *arg)
{
    struct run *r = arg;
    char buf[65536];
    for (;;) {
        struct iovec iov = {buf, sizeof(buf)};
        int mf;
        ssize_t k = ns_sctp_recvv(r->b, r->as, &iov, 1, NULL, NULL, NULL, NULL, NULL, &mf, 0);
        if (k <= 0)
            break;
        atomic_fetch_add(&r->got, 1);
    }
    return NULL;
}

static double once(unsigned n, unsigned size, int readers, int lock)
{
    struct pair p = {.alive = 0};
    pthread_mutex_init(&p.mu, NULL);
    struct side sa = {&p, 0}, sb = {&p, 1};
    struct ns_sctp_params pp;
    ns_sctp_params_default(&pp);
    pp.rcvbuf_bytes = 425984; /* the seed's netperf -S 400000, doubled */
    pp.sndbuf_bytes = 425984;
    struct ns_rt_config ca = {&pp, 1, out_fn, &sa, lock}, cb = {&pp, 2, out_fn, &sb, lock};
    pthread_mutex_lock(&p.mu);
    p.rt[0] = ns_rt_new(&ca);
    p.rt[1] = ns_rt_new(&cb);
    p.alive = p.rt[0] && p.rt[1];
    pthread_mutex_unlock(&p.mu);
    if (!p.alive)
        return -1;
    struct run r = {.a = p.rt[0], .b = p.rt[1], .n = n, .size = size};
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(0xc6120101u);
    sin.sin_port = htons(5000);
    int ls = ns_socket(r.b, NS_SOCK_STREAM);
    ns_bind(r.b, ls, (struct sockaddr *)&sin, sizeof(sin));
    ns_listen(r.b, ls, 1);
    r.cs = ns_socket(r.a, NS_SOCK_STREAM);
    if (ns_connect(r.a, r.cs, (struct sockaddr *)&sin, sizeof(sin)) != 0)
        return -1;
    r.as = ns_accept(r.b, ls, NULL, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t st, rt[16];
    pthread_create(&st, NULL, sender, &r);
    for (int i = 0; i < readers; i++)
        pthread_create(&rt[i], NULL, reader, &r);
    pthread_join(st, NULL);
    for (int i = 0; i < readers; i++)
        pthread_join(rt[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (atomic_load(&r.got) != n)
        fprintf(stderr, "lost messages: %u of %u\n", atomic_load(&r.got), n);
    pthread_mutex_lock(&p.mu);
    p.alive = 0;
    pthread_mutex_unlock(&p.mu);
    ns_rt_free(p.rt[0]);
    ns_rt_free(p.rt[1]);
    pthread_mutex_destroy(&p.mu);
    return secs;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 500000;
    unsigned size = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 30;
    int readers = argc > 3 ? atoi(argv[3]) : 1;
    if (readers < 1 || readers > 16 || size == 0 || size > 65536 || n == 0) {
        fprintf(stderr, "usage: %s [messages] [size 1..65536] [readers 1..16]\n", argv[0]);
        return 2;
    }
    for (int lock = 0; lock < 2; lock++) {
        double s = once(n, size, readers, lock);
        if (s < 0) {
            fprintf(stderr, "setup failed\n");
            return 1;
        }
        printf("rcvq_lock=%d readers=%d size=%u: %u msgs in %.3f s, %.0f msg/s, %.1f Mbit/s\n",
               lock, readers, size, n, s, n / s, n * (double)size * 8 / s / 1e6);
    }
    return 0;
}
