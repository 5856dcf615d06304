/* The receive path under many threads (the Linux 2016 test behind the
 * lock-free receive queue): a socket flooded with small messages over 10
 * streams, read by 1, 2 and 8 threads at once with MSG_PEEK mixed in. No
 * message may be lost, duplicated or corrupted, and each thread must see
 * the sequence numbers of each stream increase. Also with the ablation
 * lock (a mutex per queue operation) on. NS_FLOOD_MSGS overrides the count
 * (default 200000, 50000 under TSan). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "nstack/socket.h"
#include "sock_pair.h"

#define NSTREAMS 10
#define MSGLEN   30
#define PORT_B   5001
/* TSan runs ~5x slower: a quarter of the messages keeps the test in
 * seconds there (NS_FLOOD_MSGS=200000 for the full count). */
#if defined(__SANITIZE_THREAD__)
#define FLOOD_DEFAULT 50000u
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLOOD_DEFAULT 50000u
#endif
#endif
#ifndef FLOOD_DEFAULT
#define FLOOD_DEFAULT 200000u
#endif

struct flood {
    struct skp p;
    int csd, asd;
    uint32_t n;          /* messages in all */
    uint32_t per_stream; /* upper bound of seq per stream */
    atomic_uchar *seen;  /* [sid * per_stream + seq] */
    atomic_uint received;
    atomic_uint errors;
    atomic_uint peeks;
    char err_msg[160];
    pthread_mutex_t err_mu;
};

static void fill(uint8_t *b, uint16_t sid, uint32_t seq)
{
    b[0] = (uint8_t)(sid >> 8);
    b[1] = (uint8_t)sid;
    b[2] = (uint8_t)(seq >> 24);
    b[3] = (uint8_t)(seq >> 16);
    b[4] = (uint8_t)(seq >> 8);
    b[5] = (uint8_t)seq;
    for (int i = 6; i < MSGLEN; i++)
        b[i] = (uint8_t)(sid * 31u + seq * 7u + (uint32_t)i);
}

static void flood_err(struct flood *f, const char *what, uint32_t a, uint32_t b)
{
    if (atomic_fetch_add(&f->errors, 1) == 0) {
        pthread_mutex_lock(&f->err_mu);
        snprintf(f->err_msg, sizeof(f->err_msg), "%s (%u, %u)", what, a, b);
        pthread_mutex_unlock(&f->err_mu);
    }
}

/* Checks a message's bytes; returns its (sid, seq) or false. */
static bool check(struct flood *f, const uint8_t *b, ssize_t len, uint16_t *sid, uint32_t *seq)
{
    if (len != MSGLEN) {
        flood_err(f, "length", (uint32_t)len, 0);
        return false;
    }
    *sid = (uint16_t)(b[0] << 8 | b[1]);
    *seq = (uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 8 | b[5];
    uint8_t want[MSGLEN];
    if (*sid >= NSTREAMS || *seq >= f->per_stream) {
        flood_err(f, "header", *sid, *seq);
        return false;
    }
    fill(want, *sid, *seq);
    if (memcmp(want, b, MSGLEN) != 0) {
        flood_err(f, "corrupt", *sid, *seq);
        return false;
    }
    return true;
}

static void *sender(void *arg)
{
    struct flood *f = arg;
    uint32_t seq[NSTREAMS] = {0};
    uint8_t b[MSGLEN];
    for (uint32_t i = 0; i < f->n; i++) {
        uint16_t sid = (uint16_t)(i % NSTREAMS);
        fill(b, sid, seq[sid]++);
        struct iovec iov = {b, MSGLEN};
        struct ns_sctp_sndinfo si = {.snd_sid = sid, .snd_ppid = 9};
        ssize_t r = ns_sctp_sendv(f->p.a, f->csd, &iov, 1, NULL, 0, &si, sizeof(si),
                                  NS_SCTP_SENDV_SNDINFO, 0);
        if (r != MSGLEN) {
            flood_err(f, "send", (uint32_t)r, (uint32_t)errno);
            break;
        }
    }
    if (ns_shutdown(f->p.a, f->csd, SHUT_WR) != 0)
        flood_err(f, "shutdown", (uint32_t)errno, 0);
    return NULL;
}

static void *receiver(void *arg)
{
    struct flood *f = arg;
    int64_t last[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++)
        last[i] = -1;
    uint8_t b[256];
    for (uint32_t k = 0;; k++) {
        struct iovec iov = {b, sizeof(b)};
        struct ns_sctp_rcvinfo ri;
        socklen_t il = sizeof(ri);
        unsigned it = 0;
        int mf = 0;
        bool peek = (k % 7) == 3;
        ssize_t r = ns_sctp_recvv(f->p.b, f->asd, &iov, 1, NULL, NULL, &ri, &il, &it, &mf,
                                  peek ? NS_MSG_PEEK : 0);
        if (r == 0)
            break; /* end of file: the peer shut down, everything read */
        if (r < 0) {
            flood_err(f, "recv", (uint32_t)errno, 0);
            break;
        }
        uint16_t sid;
        uint32_t seq;
        if (!check(f, b, r, &sid, &seq))
            break;
        if (!(mf & NS_MSG_EOR) || it != NS_SCTP_RECVV_RCVINFO || ri.rcv_sid != sid ||
            ri.rcv_ppid != 9) {
            flood_err(f, "rcvinfo", ri.rcv_sid, (uint32_t)mf);
            break;
        }
        if (peek) {
            /* Another thread may take it first; only the bytes are checked. */
            atomic_fetch_add(&f->peeks, 1);
            continue;
        }
        if ((int64_t)seq <= last[sid]) {
            flood_err(f, "order", sid, seq);
            break;
        }
        last[sid] = seq;
        if (atomic_exchange(&f->seen[sid * f->per_stream + seq], 1) != 0) {
            flood_err(f, "duplicate", sid, seq);
            break;
        }
        atomic_fetch_add(&f->received, 1);
    }
    return NULL;
}

static void run_flood(int nthreads, bool rcvq_lock, bool small_backlog)
{
    struct flood *f = calloc(1, sizeof(*f));
    pthread_mutex_init(&f->err_mu, NULL);
    const char *env = getenv("NS_FLOOD_MSGS");
    f->n = env ? (uint32_t)strtoul(env, NULL, 10) : FLOOD_DEFAULT;
    if (f->n == 0)
        f->n = 1;
    f->per_stream = f->n / NSTREAMS + 1;
    f->seen = calloc((size_t)NSTREAMS * f->per_stream, sizeof(*f->seen));
    struct ns_sctp_params pp;
    ns_sctp_params_default(&pp);
    pp.out_streams = NSTREAMS;
    assert_int_equal(skp_init(&f->p, &pp, &pp, rcvq_lock), 0);

    int lsd = ns_socket(f->p.b, NS_SOCK_STREAM);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_bind(f->p.b, lsd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    assert_int_equal(ns_listen(f->p.b, lsd, 1), 0);
    f->csd = ns_socket(f->p.a, NS_SOCK_STREAM);
    assert_int_equal(ns_connect(f->p.a, f->csd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    f->asd = ns_accept(f->p.b, lsd, NULL, NULL);
    assert_true(f->asd >= 0);
    if (small_backlog) {
        /* rcvbuf + sndbuf bound the backlog: 8 KiB is ~270 messages, far
         * below the engine's window, so deliveries must wait in the engine. */
        int v = 1024;
        assert_int_equal(ns_setsockopt(f->p.b, f->asd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, sizeof(v)),
                         0);
        assert_int_equal(ns_setsockopt(f->p.b, f->asd, NS_SOL_SOCKET, NS_SO_SNDBUF, &v, sizeof(v)),
                         0);
    }

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t snd, rcv[8];
    assert_int_equal(pthread_create(&snd, NULL, sender, f), 0);
    for (int i = 0; i < nthreads; i++)
        assert_int_equal(pthread_create(&rcv[i], NULL, receiver, f), 0);
    pthread_join(snd, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(rcv[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

    struct ns_sock_rt_stats st;
    ns_rt_stats(f->p.b, &st);
    print_message("  %d reader(s)%s: %u msgs in %.2f s (%.0f msg/s), %u peeks; "
                  "direct %llu, backlog %llu, backlog full %llu\n",
                  nthreads, rcvq_lock ? " +rcvq_lock" : "", atomic_load(&f->received), secs,
                  atomic_load(&f->received) / secs, atomic_load(&f->peeks),
                  (unsigned long long)st.delivered_direct, (unsigned long long)st.delivered_backlog,
                  (unsigned long long)st.backlog_full);
    if (atomic_load(&f->errors))
        fail_msg("%u errors, first: %s", atomic_load(&f->errors), f->err_msg);
    assert_int_equal(atomic_load(&f->received), f->n);
    uint32_t seq[NSTREAMS] = {0};
    for (uint32_t i = 0; i < f->n; i++) {
        uint16_t sid = (uint16_t)(i % NSTREAMS);
        assert_int_equal(atomic_load(&f->seen[sid * f->per_stream + seq[sid]++]), 1);
    }
    assert_int_equal(st.msgs_freed, f->n);

    skp_free(&f->p);
    free(f->seen);
    pthread_mutex_destroy(&f->err_mu);
    free(f);
}

static void test_flood_1(void **s)
{
    (void)s;
    run_flood(1, false, false);
}
static void test_flood_2(void **s)
{
    (void)s;
    run_flood(2, false, false);
}
static void test_flood_8(void **s)
{
    (void)s;
    run_flood(8, false, false);
}
static void test_flood_8_rcvq_lock(void **s)
{
    (void)s;
    run_flood(8, true, false);
}

static void test_flood_8_small_backlog(void **s)
{
    (void)s;
    run_flood(8, false, true);
}
static void test_flood_2_small_backlog_rcvq_lock(void **s)
{
    (void)s;
    run_flood(2, true, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flood_1),
        cmocka_unit_test(test_flood_2),
        cmocka_unit_test(test_flood_8),
        cmocka_unit_test(test_flood_8_rcvq_lock),
        cmocka_unit_test(test_flood_8_small_backlog),
        cmocka_unit_test(test_flood_2_small_backlog_rcvq_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
