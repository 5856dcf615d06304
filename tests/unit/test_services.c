/* The daemon's SCTP services (src/tools/services.c) over two in-process
 * socket runtimes: the echo service with messages read in pieces (a small
 * partial delivery point on the service's side makes every larger message
 * arrive piece by piece, over many wake-ups of its thread, with pieces of
 * several associations in between), replies that find the send buffer
 * full, a message over the 256 KiB limit; the perf service's accounting of
 * messages larger than its receive buffer from two associations at once. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nstack/socket.h"
#include "sock_pair.h"
#include "socket/sock.h"

#include "../../src/tools/services.c"
#include "../../src/tools/text.c"

#define ECHO_PORT 7
#define PERF_PORT 5001
#define NCLI      4

struct fix {
    struct skp p;
    struct ns_svc *svc;
};

/* The service side (b) delivers in pieces above 4 KiB; the client side (a)
 * may send up to 1 MiB. */
static void fix_up(struct fix *f, const char *spec)
{
    struct ns_sctp_params pa, pb;
    ns_sctp_params_default(&pa);
    ns_sctp_params_default(&pb);
    pa.max_message_bytes = 1u << 20;
    pb.pd_point_bytes = 4096;
    assert_int_equal(skp_init(&f->p, &pa, &pb, false), 0);
    f->svc = ns_svc_new();
    assert_non_null(f->svc);
    char err[128];
    assert_int_equal(ns_svc_add(f->svc, spec, err, sizeof(err)), 0);
    assert_int_equal(ns_svc_start(f->svc, f->p.b, err, sizeof(err)), 0);
}

static void fix_down(struct fix *f)
{
    ns_svc_stop(f->svc); /* NULL is fine */
    if (f->p.a)
        skp_free(&f->p);
    ns_svc_free(f->svc);
    memset(f, 0, sizeof(*f));
}

/* The fixture lives on the heap and teardown ends it, so a failed test
 * (cmocka jumps out of it) leaves no runtime thread pointing into a stack
 * frame that is gone. */
static int setup(void **st)
{
    *st = calloc(1, sizeof(struct fix));
    return *st ? 0 : -1;
}

static int teardown(void **st)
{
    struct fix *f = *st;
    fix_down(f);
    free(f);
    return 0;
}

struct ctr_read {
    struct ns_svc *svc;
    struct ns_svc_stats st;
};

static void ctr_read_fn(struct ns_rt *rt, void *arg)
{
    (void)rt;
    struct ctr_read *c = arg;
    c->st = c->svc->stats;
}

/* The counters, read on the stack thread that writes them. */
static struct ns_svc_stats ctrs(struct fix *f)
{
    struct ctr_read c = {.svc = f->svc};
    ns_rt_call(f->p.b, ctr_read_fn, &c);
    return c.st;
}

/* A connected one-to-one client on a, non-blocking once connected. */
static int client(struct fix *f, uint16_t port, int sndbuf)
{
    int sd = ns_socket(f->p.a, NS_SOCK_STREAM);
    assert_true(sd >= 0);
    assert_int_equal(
        ns_setsockopt(f->p.a, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
    struct ns_sctp_initmsg im = {.sinit_num_ostreams = 4, .sinit_max_instreams = 4};
    assert_int_equal(ns_setsockopt(f->p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_INITMSG, &im, sizeof(im)),
                     0);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, port);
    assert_int_equal(ns_connect(f->p.a, sd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    return sd;
}

/* Byte i of client seed's message of size n: a prime period, offset by
 * the seed, so a piece at the wrong place or from another association
 * shows. */
static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)((i + seed * 31u) % 251u);
}

static bool same(const uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)((i + seed * 31u) % 251u))
            return false;
    return true;
}

static void send_msg(struct fix *f, int sd, size_t n, unsigned seed, uint16_t sid, uint32_t ppid)
{
    uint8_t *b = malloc(n);
    assert_non_null(b);
    fill(b, n, seed);
    struct iovec iov = {b, n};
    struct ns_sctp_sndinfo si = {.snd_sid = sid, .snd_ppid = ppid};
    assert_int_equal(
        ns_sctp_sendv(f->p.a, sd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0),
        (ssize_t)n);
    free(b);
}

/* A reply being read: pieces gathered up to the end of the message. */
struct rx {
    uint8_t *buf;
    size_t len, cap;
    struct ns_sctp_rcvinfo ri;
};

/* Read what is there on sd into r. 1: a whole message is in r; 0: not
 * yet; -1: an error. */
static int rx_step(struct fix *f, int sd, struct rx *r)
{
    for (;;) {
        if (r->cap - r->len < 65536) {
            r->cap = r->cap ? r->cap * 2 : 1u << 20;
            r->buf = realloc(r->buf, r->cap);
            assert_non_null(r->buf);
        }
        struct iovec iov = {r->buf + r->len, r->cap - r->len};
        socklen_t il = sizeof(r->ri);
        unsigned it = 0;
        int fl = 0;
        ssize_t n =
            ns_sctp_recvv(f->p.a, sd, &iov, 1, NULL, NULL, &r->ri, &il, &it, &fl, NS_MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN ? 0 : -1;
        if (n == 0)
            return -1;
        if (fl & NS_MSG_NOTIFICATION)
            continue;
        r->len += (size_t)n;
        if (fl & NS_MSG_EOR)
            return 1;
    }
}

/* One whole reply on sd within ms, or fail. */
static void rx_whole(struct fix *f, int sd, struct rx *r, int ms)
{
    int efd = ns_socket_fd(f->p.a, sd);
    for (int t = 0; t < ms; t += 10) {
        int k = rx_step(f, sd, r);
        assert_true(k >= 0);
        if (k == 1)
            return;
        struct pollfd pf = {efd, POLLIN, 0};
        poll(&pf, 1, 10);
    }
    fail_msg("no whole reply within %d ms (%zu bytes so far)", ms, r->len);
}

static void test_echo_pieces(void **st)
{
    struct fix *f = *st;
    fix_up(f, "echo:7");
    int sd = client(f, ECHO_PORT, 300000);
    assert_int_equal(ns_set_nonblock(f->p.a, sd, true), 0);
    static const size_t sizes[] = {1, 4096, 4097, 100000, 106497, 200000, 262144};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint16_t sid = (uint16_t)(i % 4);
        send_msg(f, sd, sizes[i], (unsigned)i, sid, 1000u + (uint32_t)i);
        struct rx r = {0};
        rx_whole(f, sd, &r, 10000);
        if (r.len != sizes[i] || !same(r.buf, r.len, (unsigned)i))
            fail_msg("message of %zu bytes: reply of %zu bytes, %s", sizes[i], r.len,
                     r.len == sizes[i] ? "different bytes" : "wrong length");
        assert_int_equal(r.ri.rcv_sid, sid);
        assert_int_equal(r.ri.rcv_ppid, 1000u + (uint32_t)i);
        free(r.buf);
    }
    /* Nothing more: no stray reply for a piece. */
    usleep(100000);
    struct rx r = {0};
    assert_int_equal(rx_step(f, sd, &r), 0);
    assert_int_equal(r.len, 0);
    free(r.buf);
    struct ns_svc_stats c = ctrs(f);
    assert_true(c.echo_reassembled >= 3); /* 100000 and up cannot come whole */
    assert_int_equal(c.echo_too_big, 0);
    assert_int_equal(c.echo_nomem, 0);
    assert_int_equal(c.echo_send_errors, 0);
    ns_close(f->p.a, sd);
    fix_down(f);
}

/* NCLI associations, three 256 KiB messages each, the replies not read
 * until the service found its send buffer full: every reply must come
 * whole once they are read, none dropped. The reads go round all clients:
 * the service socket's queue is one for all of its associations. */
static void test_echo_interleaved_and_full(void **st)
{
    struct fix *f = *st;
    fix_up(f, "echo:7");
    int sd[NCLI];
    for (int i = 0; i < NCLI; i++)
        sd[i] = client(f, ECHO_PORT, 262144);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < NCLI; i++)
            send_msg(f, sd[i], 262144, (unsigned)(i * 3 + k), 0, 0);
    for (int i = 0; i < NCLI; i++)
        assert_int_equal(ns_set_nonblock(f->p.a, sd[i], true), 0);
    int t;
    for (t = 0; t < 10000 && ctrs(f).echo_send_waits == 0; t += 10)
        usleep(10000);
    assert_true(ctrs(f).echo_send_waits > 0);
    struct rx r[NCLI] = {{0}};
    int got[NCLI] = {0}, total = 0;
    for (t = 0; t < 30000 && total < 3 * NCLI; t += 5) {
        for (int i = 0; i < NCLI; i++) {
            int k;
            while (got[i] < 3 && (k = rx_step(f, sd[i], &r[i])) == 1) {
                unsigned seed = (unsigned)(i * 3 + got[i]);
                if (r[i].len != 262144 || !same(r[i].buf, r[i].len, seed))
                    fail_msg("client %d reply %d: %zu bytes%s", i, got[i], r[i].len,
                             r[i].len == 262144 ? ", different" : "");
                r[i].len = 0;
                got[i]++;
                total++;
            }
            assert_true(got[i] == 3 || k >= 0);
        }
        usleep(5000);
    }
    if (total != 3 * NCLI)
        fail_msg("%d of %d replies", total, 3 * NCLI);
    struct ns_svc_stats c = ctrs(f);
    assert_int_equal(c.echo_reassembled, 3 * NCLI);
    assert_int_equal(c.echo_send_errors, 0);
    for (int i = 0; i < NCLI; i++) {
        free(r[i].buf);
        ns_close(f->p.a, sd[i]);
    }
    fix_down(f);
}

static void test_echo_too_big(void **st)
{
    struct fix *f = *st;
    fix_up(f, "echo:7");
    int sd = client(f, ECHO_PORT, 300000);
    assert_int_equal(ns_set_nonblock(f->p.a, sd, true), 0);
    send_msg(f, sd, 262145, 1, 0, 0);
    for (int t = 0; t < 10000 && ctrs(f).echo_too_big == 0; t += 10)
        usleep(10000);
    assert_int_equal(ctrs(f).echo_too_big, 1);
    usleep(100000);
    struct rx r = {0};
    assert_int_equal(rx_step(f, sd, &r), 0); /* no reply, not even a piece */
    assert_int_equal(r.len, 0);
    /* The association goes on: the next message is echoed, whole. */
    send_msg(f, sd, 150000, 2, 0, 0);
    rx_whole(f, sd, &r, 10000);
    assert_int_equal(r.len, 150000);
    assert_true(same(r.buf, r.len, 2));
    free(r.buf);
    ns_close(f->p.a, sd);
    fix_down(f);
}

static void send_end(struct fix *f, int sd, uint64_t bytes, uint64_t msgs)
{
    char end[64];
    int n = snprintf(end, sizeof(end), "END %" PRIu64 " %" PRIu64, bytes, msgs);
    struct iovec iov = {end, (size_t)n};
    struct ns_sctp_sndinfo si = {.snd_sid = 0, .snd_ppid = NS_PERF_PPID_END};
    assert_int_equal(
        ns_sctp_sendv(f->p.a, sd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0), n);
}

static void recv_report(struct fix *f, int sd, uint64_t bytes, uint64_t msgs)
{
    assert_int_equal(ns_set_nonblock(f->p.a, sd, true), 0);
    struct rx r = {0};
    rx_whole(f, sd, &r, 30000);
    assert_int_equal(r.ri.rcv_ppid, NS_PERF_PPID_REPORT);
    r.buf[r.len] = '\0';
    uint64_t b = 0, m = 0;
    assert_int_equal(sscanf((char *)r.buf, "REPORT %" SCNu64 " %" SCNu64, &b, &m), 2);
    assert_int_equal(b, bytes);
    assert_int_equal(m, msgs);
    free(r.buf);
}

/* Messages larger than the perf service's receive buffer (SVC_RXBUF)
 * from one association, and another association's END read in the same
 * wake-up of the service right after a piece that does not end the first
 * one's message (the service socket is held, as by a reader stuck in
 * recvmsg, while both arrive): that END still starts a message, and each
 * REPORT counts its own association's bytes and messages exactly. */
static void test_perf_large_messages(void **st)
{
    struct fix *f = *st;
    fix_up(f, "perf:5001");
    enum { NBIG = 4, BIG = 1 << 20 };
    int big = client(f, PERF_PORT, BIG);
    int sd = client(f, PERF_PORT, 65536);
    int ssd = f->svc->one[0].sd;
    assert_int_equal(ns_sock_debug_own(f->p.b, ssd, true), 0);
    send_msg(f, big, BIG, 0, 0, NS_PERF_PPID_DATA);
    usleep(200000); /* its first pieces wait in the held socket */
    send_end(f, sd, 0, 0);
    usleep(200000);
    assert_int_equal(ns_sock_debug_own(f->p.b, ssd, false), 0);
    recv_report(f, sd, 0, 0);
    for (int k = 1; k < NBIG; k++)
        send_msg(f, big, BIG, 0, (uint16_t)(k % 2), NS_PERF_PPID_DATA);
    send_end(f, big, (uint64_t)NBIG * BIG, NBIG);
    recv_report(f, big, (uint64_t)NBIG * BIG, NBIG);
    ns_close(f->p.a, sd);
    ns_close(f->p.a, big);
    fix_down(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_echo_pieces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_echo_interleaved_and_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_echo_too_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_perf_large_messages, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
