/* Socket API over two in-process runtimes (include/nstack/socket.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nstack/socket.h"
#include "sock_pair.h"
#include "stack_pair.h"

#define PORT_B 5000

struct conn {
    struct skp p;
    int lsd; /* listening on b */
    int csd; /* connected, on a */
    int asd; /* accepted, on b */
};

static void conn_up(struct conn *c, const struct ns_sctp_params *pa,
                    const struct ns_sctp_params *pb)
{
    assert_int_equal(skp_init(&c->p, pa, pb, false), 0);
    c->lsd = ns_socket(c->p.b, NS_SOCK_STREAM);
    assert_true(c->lsd >= 0);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_bind(c->p.b, c->lsd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    assert_int_equal(ns_listen(c->p.b, c->lsd, 4), 0);
    c->csd = ns_socket(c->p.a, NS_SOCK_STREAM);
    assert_true(c->csd >= 0);
    assert_int_equal(ns_connect(c->p.a, c->csd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    c->asd = ns_accept(c->p.b, c->lsd, (struct sockaddr *)&from, &fl);
    assert_true(c->asd >= 0);
    assert_int_equal(fl, sizeof(from));
    assert_int_equal(ntohl(from.sin_addr.s_addr), SKP_IP_A);
}

static void conn_down(struct conn *c)
{
    skp_free(&c->p);
}

static ssize_t send_simple(struct ns_rt *rt, int sd, const void *buf, size_t len, uint16_t sid,
                           uint32_t ppid, int flags)
{
    struct iovec iov = {(void *)buf, len};
    struct ns_sctp_sndinfo si = {.snd_sid = sid, .snd_ppid = ppid};
    return ns_sctp_sendv(rt, sd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, flags);
}

static ssize_t recv_simple(struct ns_rt *rt, int sd, void *buf, size_t len,
                           struct ns_sctp_rcvinfo *ri, int *mf, int flags)
{
    struct iovec iov = {buf, len};
    struct ns_sctp_rcvinfo tmp;
    socklen_t il = sizeof(tmp);
    unsigned it = 0;
    int f = 0;
    ssize_t r = ns_sctp_recvv(rt, sd, &iov, 1, NULL, NULL, &tmp, &il, &it, &f, flags);
    if (ri)
        *ri = tmp;
    if (mf)
        *mf = f;
    return r;
}

static void test_stream_basic(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    assert_int_equal(send_simple(c.p.a, c.csd, "hello", 5, 3, 77, 0), 5);
    char buf[64];
    struct ns_sctp_rcvinfo ri;
    int mf;
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), &ri, &mf, 0), 5);
    assert_memory_equal(buf, "hello", 5);
    assert_int_equal(ri.rcv_sid, 3);
    assert_int_equal(ri.rcv_ppid, 77);
    assert_int_equal(ri.rcv_ssn, 0);
    assert_true(ri.rcv_assoc_id != 0);
    assert_int_equal(mf, NS_MSG_EOR);
    /* and back */
    assert_int_equal(send_simple(c.p.b, c.asd, "world!", 6, 0, 1, 0), 6);
    assert_int_equal(recv_simple(c.p.a, c.csd, buf, sizeof(buf), &ri, &mf, 0), 6);
    assert_memory_equal(buf, "world!", 6);
    conn_down(&c);
}

#include "socket/sock.h"

static int wait_readable(int fd, int ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    return poll(&pfd, 1, ms);
}

static void test_stream_nonblocking(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    char buf[64];
    int fd = ns_socket_fd(c.p.b, c.asd);
    assert_true(fd >= 0);
    assert_int_equal(wait_readable(fd, 0), 0);
    assert_int_equal(ns_set_nonblock(c.p.b, c.asd, true), 0);
    errno = 0;
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, NULL, 0), -1);
    assert_int_equal(errno, EAGAIN);
    /* MSG_DONTWAIT on a blocking socket too */
    assert_int_equal(recv_simple(c.p.a, c.csd, buf, sizeof(buf), NULL, NULL, NS_MSG_DONTWAIT), -1);
    assert_int_equal(errno, EAGAIN);
    int m = ns_poll(c.p.b, c.asd);
    assert_int_equal(m, NS_POLLOUT);
    assert_int_equal(send_simple(c.p.a, c.csd, "abc", 3, 0, 0, NS_MSG_DONTWAIT), 3);
    assert_int_equal(wait_readable(fd, 5000), 1);
    assert_int_equal(ns_poll(c.p.b, c.asd), NS_POLLIN | NS_POLLOUT);
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, NULL, 0), 3);
    assert_int_equal(wait_readable(fd, 0), 0);
    /* A non-blocking accept with nothing pending. */
    assert_int_equal(ns_set_nonblock(c.p.b, c.lsd, true), 0);
    assert_int_equal(ns_accept(c.p.b, c.lsd, NULL, NULL), -1);
    assert_int_equal(errno, EAGAIN);
    /* A non-blocking connect: EINPROGRESS, then the listener's fd turns
     * readable with the pending accept and the socket becomes writable. */
    int sd = ns_socket(c.p.a, NS_SOCK_STREAM);
    assert_int_equal(ns_set_nonblock(c.p.a, sd, true), 0);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_connect(c.p.a, sd, (struct sockaddr *)&sb, sizeof(sb)), -1);
    assert_int_equal(errno, EINPROGRESS);
    assert_int_equal(ns_connect(c.p.a, sd, (struct sockaddr *)&sb, sizeof(sb)), -1);
    assert_true(errno == EALREADY || errno == EISCONN);
    assert_int_equal(wait_readable(ns_socket_fd(c.p.b, c.lsd), 5000), 1);
    int asd2 = ns_accept(c.p.b, c.lsd, NULL, NULL);
    assert_true(asd2 >= 0);
    for (int i = 0; i < 500 && !(ns_poll(c.p.a, sd) & NS_POLLOUT); i++)
        usleep(10000);
    assert_true(ns_poll(c.p.a, sd) & NS_POLLOUT);
    assert_int_equal(ns_close(c.p.a, sd), 0);
    conn_down(&c);
}

static void test_peek_and_pieces(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    uint8_t msg[100], buf[100];
    for (int i = 0; i < 100; i++)
        msg[i] = (uint8_t)i;
    assert_int_equal(send_simple(c.p.a, c.csd, msg, 100, 1, 5, 0), 100);
    int mf;
    memset(buf, 0, sizeof(buf));
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, 10, NULL, &mf, NS_MSG_PEEK), 10);
    assert_int_equal(mf, 0);
    assert_memory_equal(buf, msg, 10);
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, 40, NULL, &mf, 0), 40);
    assert_int_equal(mf, 0);
    assert_memory_equal(buf, msg, 40);
    /* a peek in the middle starts where the reads are */
    struct ns_sctp_rcvinfo ri;
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, 100, &ri, &mf, NS_MSG_PEEK), 60);
    assert_int_equal(mf, NS_MSG_EOR);
    assert_int_equal(ri.rcv_sid, 1);
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, 100, NULL, &mf, 0), 60);
    assert_int_equal(mf, NS_MSG_EOR);
    assert_memory_equal(buf, msg + 40, 60);
    /* scatter into two iovecs, msghdr API with cmsgs */
    struct ns_sctp_sndinfo si = {.snd_sid = 2, .snd_ppid = 0x01020304};
    union {
        char b[CMSG_SPACE(sizeof(struct ns_sctp_rcvinfo))];
        struct cmsghdr align;
    } cb;
    struct msghdr mh = {0};
    struct iovec iov[2] = {{msg, 30}, {msg + 30, 20}};
    mh.msg_iov = iov;
    mh.msg_iovlen = 2;
    mh.msg_control = cb.b;
    mh.msg_controllen = CMSG_SPACE(sizeof(si));
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = NS_IPPROTO_SCTP;
    cm->cmsg_type = NS_SCTP_SNDINFO;
    cm->cmsg_len = CMSG_LEN(sizeof(si));
    memcpy(CMSG_DATA(cm), &si, sizeof(si));
    assert_int_equal(ns_sendmsg(c.p.a, c.csd, &mh, 0), 50);
    uint8_t b1[25], b2[40];
    struct iovec riov[2] = {{b1, sizeof(b1)}, {b2, sizeof(b2)}};
    struct msghdr rh = {0};
    rh.msg_iov = riov;
    rh.msg_iovlen = 2;
    rh.msg_control = cb.b;
    rh.msg_controllen = sizeof(cb.b);
    assert_int_equal(ns_recvmsg(c.p.b, c.asd, &rh, 0), 50);
    assert_int_equal(rh.msg_flags, NS_MSG_EOR);
    assert_memory_equal(b1, msg, 25);
    assert_memory_equal(b2, msg + 25, 25);
    cm = CMSG_FIRSTHDR(&rh);
    assert_non_null(cm);
    assert_int_equal(cm->cmsg_type, NS_SCTP_RCVINFO);
    memcpy(&ri, CMSG_DATA(cm), sizeof(ri));
    assert_int_equal(ri.rcv_sid, 2);
    assert_int_equal(ri.rcv_ppid, 0x01020304);
    assert_int_equal(ri.rcv_ssn, 0);
    conn_down(&c);
}

struct big_sender {
    struct ns_rt *rt;
    int sd;
    uint8_t *data;
    size_t len;
    ssize_t ret;
};

static void *big_send(void *arg)
{
    struct big_sender *b = arg;
    b->ret = send_simple(b->rt, b->sd, b->data, b->len, 0, 42, 0);
    return NULL;
}

static void test_partial_delivery_1mib(void **state)
{
    (void)state;
    struct ns_sctp_params pa, pb;
    ns_sctp_params_default(&pa);
    pa.max_message_bytes = 2u << 20;
    pa.sndbuf_bytes = 2u << 20;
    ns_sctp_params_default(&pb);
    pb.rcvbuf_bytes = 64u << 10; /* partial delivery point 32 KiB */
    pb.max_message_bytes = 2u << 20;
    struct conn c;
    conn_up(&c, &pa, &pb);
    size_t len = 1u << 20;
    uint8_t *data = malloc(len), *got = calloc(1, len);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 13);
    struct big_sender bs = {c.p.a, c.csd, data, len, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, big_send, &bs), 0);
    size_t off = 0;
    int pieces = 0;
    for (;;) {
        int mf;
        struct ns_sctp_rcvinfo ri;
        ssize_t r =
            recv_simple(c.p.b, c.asd, got + off, len - off < 8192 ? len - off : 8192, &ri, &mf, 0);
        assert_true(r > 0);
        assert_int_equal(ri.rcv_ppid, 42);
        off += (size_t)r;
        pieces++;
        if (mf & NS_MSG_EOR)
            break;
        assert_true(off < len);
    }
    pthread_join(th, NULL);
    assert_int_equal(bs.ret, (ssize_t)len);
    assert_int_equal(off, len);
    assert_true(pieces >= 128);
    assert_memory_equal(got, data, len);
    /* the window reopened: a small message still flows */
    assert_int_equal(send_simple(c.p.a, c.csd, "x", 1, 0, 0, 0), 1);
    char x;
    int mf;
    assert_int_equal(recv_simple(c.p.b, c.asd, &x, 1, NULL, &mf, 0), 1);
    assert_int_equal(mf, NS_MSG_EOR);
    free(data);
    free(got);
    conn_down(&c);
}

static void expect_notif(struct ns_rt *rt, int sd, uint16_t type, uint16_t sac_state)
{
    union {
        struct ns_sctp_assoc_change ac;
        struct ns_sctp_shutdown_event se;
        struct ns_sctp_send_failed_event sf;
        uint8_t b[256];
    } u;
    int mf;
    ssize_t r = recv_simple(rt, sd, &u, sizeof(u), NULL, &mf, 0);
    if (r <= 0)
        fail_msg("waiting for notification %#x/%u: recv %zd errno %d", type, sac_state, r, errno);
    assert_int_equal(mf, NS_MSG_NOTIFICATION | NS_MSG_EOR);
    assert_int_equal(u.ac.sac_type, type);
    if (type == NS_SCTP_ASSOC_CHANGE) {
        assert_int_equal(r, sizeof(u.ac));
        assert_int_equal(u.ac.sac_state, sac_state);
        assert_true(u.ac.sac_assoc_id != 0);
    }
}

static void test_notifications_stream(void **state)
{
    (void)state;
    struct conn c;
    assert_int_equal(skp_init(&c.p, NULL, NULL, false), 0);
    struct ns_sctp_event_subscribe ev = {0, 1, 1, 1, 1};
    c.lsd = ns_socket(c.p.b, NS_SOCK_STREAM);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_bind(c.p.b, c.lsd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    assert_int_equal(
        ns_setsockopt(c.p.b, c.lsd, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &ev, sizeof(ev)), 0);
    assert_int_equal(ns_listen(c.p.b, c.lsd, 4), 0);
    c.csd = ns_socket(c.p.a, NS_SOCK_STREAM);
    assert_int_equal(
        ns_setsockopt(c.p.a, c.csd, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &ev, sizeof(ev)), 0);
    struct ns_sctp_event_subscribe got;
    socklen_t gl = sizeof(got);
    assert_int_equal(ns_getsockopt(c.p.a, c.csd, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &got, &gl),
                     0);
    assert_memory_equal(&got, &ev, sizeof(ev));
    assert_int_equal(ns_connect(c.p.a, c.csd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    c.asd = ns_accept(c.p.b, c.lsd, NULL, NULL);
    assert_true(c.asd >= 0);
    expect_notif(c.p.a, c.csd, NS_SCTP_ASSOC_CHANGE, NS_SCTP_COMM_UP);
    expect_notif(c.p.b, c.asd, NS_SCTP_ASSOC_CHANGE, NS_SCTP_COMM_UP);
    /* data, then the peer's shutdown: data first, then SHUTDOWN_EVENT, then
     * SHUTDOWN_COMP, then end of file */
    assert_int_equal(send_simple(c.p.a, c.csd, "bye", 3, 0, 0, 0), 3);
    assert_int_equal(ns_shutdown(c.p.a, c.csd, SHUT_WR), 0);
    errno = 0;
    assert_int_equal(send_simple(c.p.a, c.csd, "no", 2, 0, 0, 0), -1);
    assert_int_equal(errno, EPIPE);
    char buf[16];
    int mf;
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, &mf, 0), 3);
    assert_int_equal(mf, NS_MSG_EOR);
    expect_notif(c.p.b, c.asd, NS_SCTP_SHUTDOWN_EVENT, 0);
    expect_notif(c.p.b, c.asd, NS_SCTP_ASSOC_CHANGE, NS_SCTP_SHUTDOWN_COMP);
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, &mf, 0), 0);
    expect_notif(c.p.a, c.csd, NS_SCTP_ASSOC_CHANGE, NS_SCTP_SHUTDOWN_COMP);
    assert_int_equal(recv_simple(c.p.a, c.csd, buf, sizeof(buf), NULL, &mf, 0), 0);
    assert_int_equal(ns_poll(c.p.a, c.csd) & (NS_POLLIN | NS_POLLHUP), NS_POLLIN | NS_POLLHUP);
    assert_int_equal(ns_close(c.p.a, c.csd), 0);
    assert_int_equal(ns_close(c.p.b, c.asd), 0);
    assert_int_equal(ns_close(c.p.b, c.lsd), 0);
    conn_down(&c);
}

static void test_abort_and_reset(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    struct linger l = {1, 0};
    assert_int_equal(ns_setsockopt(c.p.a, c.csd, NS_SOL_SOCKET, NS_SO_LINGER, &l, sizeof(l)), 0);
    assert_int_equal(ns_close(c.p.a, c.csd), 0);
    char buf[8];
    errno = 0;
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, NULL, 0), -1);
    assert_int_equal(errno, ECONNRESET);
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, NULL, 0), 0);
    errno = 0;
    assert_int_equal(send_simple(c.p.b, c.asd, "x", 1, 0, 0, 0), -1);
    assert_true(errno == EPIPE || errno == ECONNRESET);
    /* the closed descriptor is gone */
    assert_int_equal(recv_simple(c.p.a, c.csd, buf, sizeof(buf), NULL, NULL, 0), -1);
    assert_int_equal(errno, EBADF);
    conn_down(&c);
}

static void test_connect_refused(void **state)
{
    (void)state;
    struct skp p;
    assert_int_equal(skp_init(&p, NULL, NULL, false), 0);
    int sd = ns_socket(p.a, NS_SOCK_STREAM);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, 6000); /* nobody listens */
    errno = 0;
    assert_int_equal(ns_connect(p.a, sd, (struct sockaddr *)&sb, sizeof(sb)), -1);
    assert_int_equal(errno, ECONNREFUSED);
    assert_int_equal(ns_close(p.a, sd), 0);
    skp_free(&p);
}

static void test_seqpacket(void **state)
{
    (void)state;
    struct skp p;
    assert_int_equal(skp_init(&p, NULL, NULL, false), 0);
    struct ns_sctp_event_subscribe ev = {0, 1, 0, 0, 0};
    int bs = ns_socket(p.b, NS_SOCK_SEQPACKET);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_bind(p.b, bs, (struct sockaddr *)&sb, sizeof(sb)), 0);
    assert_int_equal(ns_listen(p.b, bs, 5), 0);
    int as = ns_socket(p.a, NS_SOCK_SEQPACKET);
    assert_int_equal(ns_setsockopt(p.a, as, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &ev, sizeof(ev)),
                     0);
    /* wrong style */
    assert_int_equal(ns_accept(p.b, bs, NULL, NULL), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    assert_int_equal(ns_shutdown(p.a, as, SHUT_WR), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    /* no association yet, no address */
    assert_int_equal(send_simple(p.a, as, "x", 1, 0, 0, 0), -1);
    assert_int_equal(errno, ENOTCONN);
    /* implicit setup by sending to an address */
    struct iovec iov = {"ping", 4};
    struct ns_sctp_sndinfo si = {.snd_sid = 1, .snd_ppid = 3};
    assert_int_equal(ns_sctp_sendv(p.a, as, &iov, 1, (struct sockaddr *)&sb, 1, &si, sizeof(si),
                                   NS_SCTP_SENDV_SNDINFO, 0),
                     4);
    char buf[32];
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    struct ns_sctp_rcvinfo ri;
    socklen_t il = sizeof(ri);
    unsigned it;
    int mf;
    struct iovec riov = {buf, sizeof(buf)};
    assert_int_equal(
        ns_sctp_recvv(p.b, bs, &riov, 1, (struct sockaddr *)&from, &fl, &ri, &il, &it, &mf, 0), 4);
    assert_memory_equal(buf, "ping", 4);
    assert_int_equal(it, NS_SCTP_RECVV_RCVINFO);
    assert_int_equal(ri.rcv_sid, 1);
    assert_int_equal(ntohl(from.sin_addr.s_addr), SKP_IP_A);
    assert_true(ntohs(from.sin_port) != 0);
    /* reply on the association */
    struct ns_sctp_sndinfo rsi = {.snd_sid = 0, .snd_ppid = 4, .snd_assoc_id = ri.rcv_assoc_id};
    struct iovec r2 = {"pong", 4};
    assert_int_equal(
        ns_sctp_sendv(p.b, bs, &r2, 1, NULL, 0, &rsi, sizeof(rsi), NS_SCTP_SENDV_SNDINFO, 0), 4);
    expect_notif(p.a, as, NS_SCTP_ASSOC_CHANGE, NS_SCTP_COMM_UP);
    assert_int_equal(recv_simple(p.a, as, buf, sizeof(buf), &ri, &mf, 0), 4);
    assert_memory_equal(buf, "pong", 4);
    uint32_t a_id = ri.rcv_assoc_id;
    /* unknown association */
    rsi.snd_assoc_id = 0x7fffffff;
    assert_int_equal(
        ns_sctp_sendv(p.b, bs, &r2, 1, NULL, 0, &rsi, sizeof(rsi), NS_SCTP_SENDV_SNDINFO, 0), -1);
    assert_int_equal(errno, EINVAL);
    /* SCTP_EOF ends the association gracefully */
    struct ns_sctp_sndinfo eof = {.snd_flags = NS_SCTP_EOF, .snd_assoc_id = a_id};
    assert_int_equal(
        ns_sctp_sendv(p.a, as, NULL, 0, NULL, 0, &eof, sizeof(eof), NS_SCTP_SENDV_SNDINFO, 0), 0);
    expect_notif(p.a, as, NS_SCTP_ASSOC_CHANGE, NS_SCTP_SHUTDOWN_COMP);
    assert_int_equal(ns_close(p.a, as), 0);
    assert_int_equal(ns_close(p.b, bs), 0);
    skp_free(&p);
}

static void test_send_failed(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    struct ns_sctp_event_subscribe ev = {0, 1, 0, 0, 1};
    assert_int_equal(
        ns_setsockopt(c.p.a, c.csd, NS_IPPROTO_SCTP, NS_SCTP_EVENTS_OPT, &ev, sizeof(ev)), 0);
    pthread_mutex_lock(&c.p.mu);
    c.p.loss_ppm = 1000000; /* the network goes away */
    pthread_mutex_unlock(&c.p.mu);
    struct ns_sctp_sndinfo si = {.snd_sid = 2, .snd_ppid = 11, .snd_context = 99};
    struct iovec iov = {"lost", 4};
    assert_int_equal(
        ns_sctp_sendv(c.p.a, c.csd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0),
        4);
    /* wait until the stack thread handed it to the engine */
    for (int i = 0; i < 200; i++) {
        struct ns_sctp_status st = {0};
        socklen_t sl = sizeof(st);
        assert_int_equal(ns_getsockopt(c.p.a, c.csd, NS_IPPROTO_SCTP, NS_SCTP_STATUS, &st, &sl), 0);
        if (st.sstat_unackdata || st.sstat_penddata)
            break;
        usleep(5000);
    }
    struct linger l = {1, 0};
    assert_int_equal(ns_setsockopt(c.p.a, c.csd, NS_SOL_SOCKET, NS_SO_LINGER, &l, sizeof(l)), 0);
    struct ns_sctp_status st = {0};
    socklen_t sl = sizeof(st);
    assert_int_equal(ns_getsockopt(c.p.a, c.csd, NS_IPPROTO_SCTP, NS_SCTP_STATUS, &st, &sl), 0);
    assert_int_equal(ns_abort(c.p.a, c.csd, st.sstat_assoc_id), 0);
    union {
        struct ns_sctp_send_failed_event sf;
        struct ns_sctp_assoc_change ac;
        uint8_t b[128];
    } u;
    int mf;
    bool saw_sf = false, saw_lost = false;
    for (int i = 0; i < 3 && !(saw_sf && saw_lost); i++) {
        ssize_t r = recv_simple(c.p.a, c.csd, &u, sizeof(u), NULL, &mf, 0);
        if (r <= 0)
            break;
        assert_true(mf & NS_MSG_NOTIFICATION);
        if (u.sf.ssf_type == NS_SCTP_SEND_FAILED_EVENT) {
            assert_int_equal(u.sf.ssfe_info.snd_context, 99);
            assert_int_equal(u.sf.ssfe_info.snd_sid, 2);
            assert_int_equal(u.sf.ssfe_info.snd_ppid, 11);
            saw_sf = true;
        } else if (u.ac.sac_type == NS_SCTP_ASSOC_CHANGE) {
            assert_int_equal(u.ac.sac_state, NS_SCTP_COMM_LOST);
            saw_lost = true;
        }
    }
    assert_true(saw_sf);
    assert_true(saw_lost);
    conn_down(&c);
}

static void test_options(void **state)
{
    (void)state;
    struct skp p;
    assert_int_equal(skp_init(&p, NULL, NULL, false), 0);
    int sd = ns_socket(p.a, NS_SOCK_STREAM);
    int v = 1;
    socklen_t l = sizeof(v);
    assert_int_equal(ns_setsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_NODELAY, &v, sizeof(v)), 0);
    v = 0;
    assert_int_equal(ns_getsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_NODELAY, &v, &l), 0);
    assert_int_equal(v, 1);
    v = 100000;
    assert_int_equal(ns_setsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, sizeof(v)), 0);
    assert_int_equal(ns_getsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, &l), 0);
    assert_int_equal(v, 200000); /* doubled, as Linux */
    v = 70000;
    assert_int_equal(ns_setsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &v, sizeof(v)), 0);
    assert_int_equal(ns_getsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_SNDBUF, &v, &l), 0);
    assert_int_equal(v, 140000);
    v = 4000;
    assert_int_equal(
        ns_setsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_PARTIAL_DELIVERY_POINT, &v, sizeof(v)), 0);
    assert_int_equal(
        ns_getsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_PARTIAL_DELIVERY_POINT, &v, &l), 0);
    assert_int_equal(v, 4000);
    struct ns_sctp_rtoinfo ri = {0, 300, 5000, 200};
    assert_int_equal(ns_setsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_RTOINFO, &ri, sizeof(ri)), 0);
    struct ns_sctp_rtoinfo bad = {0, 100, 5000, 200}; /* initial below min */
    assert_int_equal(ns_setsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_RTOINFO, &bad, sizeof(bad)),
                     -1);
    assert_int_equal(errno, EINVAL);
    socklen_t rl = sizeof(ri);
    memset(&ri, 0, sizeof(ri));
    assert_int_equal(ns_getsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_RTOINFO, &ri, &rl), 0);
    assert_int_equal(ri.srto_initial, 300);
    assert_int_equal(ri.srto_max, 5000);
    assert_int_equal(ri.srto_min, 200);
    /* INITMSG: ask for 5 outbound streams */
    struct ns_sctp_initmsg im = {5, 7, 0, 0};
    assert_int_equal(ns_setsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_INITMSG, &im, sizeof(im)), 0);
    int ls = ns_socket(p.b, NS_SOCK_STREAM);
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_bind(p.b, ls, (struct sockaddr *)&sb, sizeof(sb)), 0);
    assert_int_equal(ns_listen(p.b, ls, 1), 0);
    assert_int_equal(ns_connect(p.a, sd, (struct sockaddr *)&sb, sizeof(sb)), 0);
    struct ns_sctp_status st;
    socklen_t sl = sizeof(st);
    memset(&st, 0, sizeof(st));
    assert_int_equal(ns_getsockopt(p.a, sd, NS_IPPROTO_SCTP, NS_SCTP_STATUS, &st, &sl), 0);
    assert_int_equal(st.sstat_outstrms, 5);
    assert_int_equal(st.sstat_state, NS_SCTP_ESTABLISHED);
    assert_int_equal(st.sstat_rwnd, 200000); /* our SO_RCVBUF reached the engine */
    /* stream 5 does not exist */
    assert_int_equal(send_simple(p.a, sd, "x", 1, 5, 0, 0), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(send_simple(p.a, sd, "x", 1, 4, 0, 0), 1);
    /* misuse of options */
    assert_int_equal(ns_setsockopt(p.a, sd, NS_IPPROTO_SCTP, 999, &v, sizeof(v)), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    assert_int_equal(ns_setsockopt(p.a, sd, 77, NS_SO_RCVBUF, &v, sizeof(v)), -1);
    assert_int_equal(errno, ENOPROTOOPT);
    assert_int_equal(ns_setsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, 2), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_setsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, NULL, 4), -1);
    assert_int_equal(errno, EFAULT);
    l = 2;
    assert_int_equal(ns_getsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, &l), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_getsockopt(p.a, sd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, NULL), -1);
    assert_int_equal(errno, EFAULT);
    skp_free(&p);
}

static void test_misuse(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    char buf[8];
    struct ns_rt *a = c.p.a;
    /* bad descriptors and runtimes */
    assert_int_equal(ns_close(a, -1), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(ns_close(a, 12345), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(ns_close(NULL, c.csd), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(ns_socket(a, 99), -1);
    assert_int_equal(errno, EPROTONOSUPPORT);
    assert_int_equal(ns_socket(NULL, NS_SOCK_STREAM), -1);
    /* bad buffers */
    assert_int_equal(ns_sctp_recvv(a, c.csd, NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, 0), -1);
    assert_int_equal(errno, EINVAL);
    struct iovec nb = {NULL, 10};
    assert_int_equal(ns_sctp_recvv(a, c.csd, &nb, 1, NULL, NULL, NULL, NULL, NULL, NULL, 0), -1);
    assert_int_equal(errno, EFAULT);
    assert_int_equal(ns_sctp_sendv(a, c.csd, &nb, 1, NULL, 0, NULL, 0, 0, 0), -1);
    assert_int_equal(errno, EFAULT);
    assert_int_equal(ns_sctp_sendv(a, c.csd, &nb, -1, NULL, 0, NULL, 0, 0, 0), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_sendmsg(a, c.csd, NULL, 0), -1);
    assert_int_equal(errno, EFAULT);
    assert_int_equal(ns_recvmsg(a, c.csd, NULL, 0), -1);
    assert_int_equal(errno, EFAULT);
    /* zero length, unknown flags, info too short, bad info type */
    assert_int_equal(send_simple(a, c.csd, "", 0, 0, 0, 0), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(recv_simple(a, c.csd, buf, sizeof(buf), NULL, NULL, 0x400), -1);
    assert_int_equal(errno, EOPNOTSUPP);
    struct iovec iov = {"x", 1};
    struct ns_sctp_sndinfo si = {0};
    assert_int_equal(ns_sctp_sendv(a, c.csd, &iov, 1, NULL, 0, &si, 3, NS_SCTP_SENDV_SNDINFO, 0),
                     -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_sctp_sendv(a, c.csd, &iov, 1, NULL, 0, &si, sizeof(si), 77, 0), -1);
    assert_int_equal(errno, EINVAL);
    /* STREAM: no addresses on send, no SEQPACKET-only flags */
    struct sockaddr_in sb = skp_sin(SKP_IP_B, PORT_B);
    assert_int_equal(ns_sctp_sendv(a, c.csd, &iov, 1, (struct sockaddr *)&sb, 1, NULL, 0, 0, 0),
                     -1);
    assert_int_equal(errno, EISCONN);
    /* too big */
    size_t big = 300000;
    char *bb = calloc(1, big);
    assert_int_equal(send_simple(a, c.csd, bb, big, 0, 0, 0), -1);
    assert_int_equal(errno, EMSGSIZE);
    free(bb);
    /* connect/bind/listen in the wrong state */
    assert_int_equal(ns_connect(a, c.csd, (struct sockaddr *)&sb, sizeof(sb)), -1);
    assert_int_equal(errno, EISCONN);
    assert_int_equal(ns_bind(a, c.csd, (struct sockaddr *)&sb, sizeof(sb)), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_listen(a, c.csd, 1), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_accept(a, c.csd, NULL, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ns_shutdown(a, c.csd, 42), -1);
    assert_int_equal(errno, EINVAL);
    /* a fresh socket: not connected; bad addresses */
    int sd = ns_socket(a, NS_SOCK_STREAM);
    assert_int_equal(send_simple(a, sd, "x", 1, 0, 0, 0), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(recv_simple(a, sd, buf, sizeof(buf), NULL, NULL, 0), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(ns_shutdown(a, sd, SHUT_WR), -1);
    assert_int_equal(errno, ENOTCONN);
    assert_int_equal(ns_bind(a, sd, NULL, sizeof(sb)), -1);
    assert_int_equal(errno, EFAULT);
    assert_int_equal(ns_bind(a, sd, (struct sockaddr *)&sb, 4), -1);
    assert_int_equal(errno, EINVAL);
    struct sockaddr_in6 s6 = {0};
    s6.sin6_family = AF_INET6;
    assert_int_equal(ns_bind(a, sd, (struct sockaddr *)&s6, sizeof(s6)), -1);
    assert_int_equal(errno, EAFNOSUPPORT);
    struct sockaddr_in zero = skp_sin(0, 0);
    assert_int_equal(ns_connect(a, sd, (struct sockaddr *)&zero, sizeof(zero)), -1);
    assert_int_equal(errno, EINVAL);
    /* the port of the listener is taken */
    int sd2 = ns_socket(c.p.b, NS_SOCK_STREAM);
    assert_int_equal(ns_bind(c.p.b, sd2, (struct sockaddr *)&sb, sizeof(sb)), -1);
    assert_int_equal(errno, EADDRINUSE);
    /* recv on a listener */
    assert_int_equal(recv_simple(c.p.b, c.lsd, buf, sizeof(buf), NULL, NULL, 0), -1);
    assert_int_equal(errno, ENOTCONN);
    /* closed twice; calls on a closed descriptor */
    assert_int_equal(ns_close(a, sd), 0);
    assert_int_equal(ns_close(a, sd), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(send_simple(a, sd, "x", 1, 0, 0, 0), -1);
    assert_int_equal(errno, EBADF);
    assert_int_equal(ns_socket_fd(a, sd), -1);
    assert_int_equal(ns_poll(a, sd), -1);
    assert_int_equal(ns_set_nonblock(a, sd, true), -1);
    assert_int_equal(ns_abort(a, c.csd, 0x12345), -1);
    assert_int_equal(errno, EINVAL);
    conn_down(&c);
}

struct blocked {
    struct ns_rt *rt;
    int sd;
    ssize_t ret;
    int err;
    char buf[16];
};

static void *blocked_recv(void *arg)
{
    struct blocked *b = arg;
    b->ret = recv_simple(b->rt, b->sd, b->buf, sizeof(b->buf), NULL, NULL, 0);
    b->err = errno;
    return NULL;
}

static void test_blocking_wakeups(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    /* a reader blocked until data comes */
    struct blocked b = {c.p.b, c.asd, 0, 0, {0}};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, blocked_recv, &b), 0);
    usleep(50000);
    assert_int_equal(send_simple(c.p.a, c.csd, "late", 4, 0, 0, 0), 4);
    pthread_join(th, NULL);
    assert_int_equal(b.ret, 4);
    assert_memory_equal(b.buf, "late", 4);
    /* a reader blocked while its socket is closed gets EBADF */
    struct blocked b2 = {c.p.a, c.csd, 0, 0, {0}};
    assert_int_equal(pthread_create(&th, NULL, blocked_recv, &b2), 0);
    usleep(50000);
    assert_int_equal(ns_close(c.p.a, c.csd), 0);
    pthread_join(th, NULL);
    assert_int_equal(b2.ret, -1);
    assert_int_equal(b2.err, EBADF);
    /* the peer sees the graceful close as end of file */
    char buf[8];
    assert_int_equal(recv_simple(c.p.b, c.asd, buf, sizeof(buf), NULL, NULL, 0), 0);
    conn_down(&c);
}

/* A reader that holds the socket while a flood arrives: deliveries go to
 * the backlog until its bound, then stay in the engine (the window closes);
 * once released, everything arrives in order. */
static void test_backlog_bound(void **state)
{
    (void)state;
    struct conn c;
    conn_up(&c, NULL, NULL);
    int v = 1024; /* 4 KiB each: backlog bound 8 KiB */
    assert_int_equal(ns_setsockopt(c.p.b, c.asd, NS_SOL_SOCKET, NS_SO_RCVBUF, &v, sizeof(v)), 0);
    assert_int_equal(ns_setsockopt(c.p.b, c.asd, NS_SOL_SOCKET, NS_SO_SNDBUF, &v, sizeof(v)), 0);
    assert_int_equal(ns_sock_debug_own(c.p.b, c.asd, true), 0);
    int n = 2000;
    uint8_t m[100];
    for (int i = 0; i < n; i++) {
        memset(m, (uint8_t)i, sizeof(m));
        m[0] = (uint8_t)(i >> 8);
        assert_int_equal(send_simple(c.p.a, c.csd, m, sizeof(m), 0, (uint32_t)i, 0), 100);
    }
    struct ns_sock_rt_stats st;
    for (int i = 0; i < 500; i++) {
        ns_rt_stats(c.p.b, &st);
        if (st.backlog_full)
            break;
        usleep(10000);
    }
    assert_true(st.backlog_full > 0);
    assert_int_equal(st.delivered_direct, 0);
    usleep(20000);
    /* the peer's window is closed: fewer than n arrived in the engine */
    struct ns_sctp_status ss = {0};
    socklen_t sl = sizeof(ss);
    assert_int_equal(ns_getsockopt(c.p.b, c.asd, NS_IPPROTO_SCTP, NS_SCTP_STATUS, &ss, &sl), 0);
    assert_int_equal(ns_sock_debug_own(c.p.b, c.asd, false), 0);
    for (int i = 0; i < n; i++) {
        struct ns_sctp_rcvinfo ri;
        int mf;
        uint8_t r[128];
        assert_int_equal(recv_simple(c.p.b, c.asd, r, sizeof(r), &ri, &mf, 0), 100);
        assert_int_equal(ri.rcv_ppid, (uint32_t)i);
        assert_int_equal(ri.rcv_ssn, (uint16_t)i);
        assert_int_equal(r[1], (uint8_t)i);
    }
    ns_rt_stats(c.p.b, &st);
    assert_int_equal(st.msgs_freed, (uint64_t)n);
    conn_down(&c);
}

/* Lossy network: retransmissions still deliver everything, in order. */
static void test_lossy(void **state)
{
    (void)state;
    struct ns_sctp_params pp;
    ns_sctp_params_default(&pp);
    pp.rto_min_ms = 10;
    pp.rto_initial_ms = 50;
    pp.sack_timeout_ms = 5;
    struct conn c;
    conn_up(&c, &pp, &pp);
    pthread_mutex_lock(&c.p.mu);
    c.p.loss_ppm = 20000; /* 2 % */
    pthread_mutex_unlock(&c.p.mu);
    for (int i = 0; i < 300; i++) {
        uint32_t v = (uint32_t)i;
        assert_int_equal(send_simple(c.p.a, c.csd, &v, 4, 0, 0, 0), 4);
    }
    for (int i = 0; i < 300; i++) {
        uint32_t v;
        assert_int_equal(recv_simple(c.p.b, c.asd, &v, 4, NULL, NULL, 0), 4);
        assert_int_equal(v, (uint32_t)i);
    }
    conn_down(&c);
}

/* The same API over two full stacks: SCTP over IPv4 with ARP, on the
 * stacks' own runtime threads. */
static void test_over_stack(void **state)
{
    (void)state;
    struct stp p;
    assert_int_equal(stp_init(&p, false), 0);
    struct ns_rt *ra = p.side[0].rt, *rb = p.side[1].rt;
    int ls = ns_socket(rb, NS_SOCK_STREAM);
    struct sockaddr_in sb = skp_sin(STP_IP_B, 7000);
    assert_int_equal(ns_bind(rb, ls, (struct sockaddr *)&sb, sizeof(sb)), 0);
    assert_int_equal(ns_listen(rb, ls, 2), 0);
    int cs = ns_socket(ra, NS_SOCK_STREAM);
    assert_int_equal(ns_connect(ra, cs, (struct sockaddr *)&sb, sizeof(sb)), 0);
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    int as = ns_accept(rb, ls, (struct sockaddr *)&from, &fl);
    assert_true(as >= 0);
    assert_int_equal(ntohl(from.sin_addr.s_addr), STP_IP_A);
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(send_simple(ra, cs, &i, sizeof(i), (uint16_t)(i % 10), i, 0), 4);
    for (uint32_t i = 0; i < 1000; i++) {
        uint32_t v;
        struct ns_sctp_rcvinfo ri;
        int mf;
        assert_int_equal(recv_simple(rb, as, &v, sizeof(v), &ri, &mf, 0), 4);
        assert_int_equal(v, i);
        assert_int_equal(ri.rcv_sid, i % 10);
        assert_int_equal(mf, NS_MSG_EOR);
    }
    /* a message larger than the path MTU is fragmented and reassembled */
    static uint8_t big[20000], got[20000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7);
    assert_int_equal(send_simple(rb, as, big, sizeof(big), 0, 0, 0), sizeof(big));
    int mf;
    assert_int_equal(recv_simple(ra, cs, got, sizeof(got), NULL, &mf, 0), sizeof(got));
    assert_int_equal(mf, NS_MSG_EOR);
    assert_memory_equal(got, big, sizeof(big));
    assert_int_equal(ns_close(ra, cs), 0);
    char c;
    assert_int_equal(recv_simple(rb, as, &c, 1, NULL, NULL, 0), 0);
    assert_true(atomic_load(&p.frames) > 0);
    stp_free(&p);
}

struct fd_probe {
    atomic_int calls;
    pthread_t thread;
    pthread_t stack_thread;
};

static void on_fd(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    struct fd_probe *fp = ctx;
    (void)rt;
    char c;
    if (read(fd, &c, 1) == 1 && (events & POLLIN)) {
        fp->thread = pthread_self();
        atomic_fetch_add(&fp->calls, 1);
    }
}

static void whoami(struct ns_rt *rt, void *arg)
{
    (void)rt;
    *(pthread_t *)arg = pthread_self();
}

/* The runtime's extra fds (devices) run their callbacks on the stack thread;
 * ns_rt_call runs there too; the ablation knob only flips without sockets. */
static void test_runtime_fds(void **state)
{
    (void)state;
    struct skp p;
    assert_int_equal(skp_init(&p, NULL, NULL, false), 0);
    struct fd_probe fp = {0};
    ns_rt_call(p.a, whoami, &fp.stack_thread);
    assert_false(pthread_equal(fp.stack_thread, pthread_self()));
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(ns_rt_add_fd(p.a, pfd[0], POLLIN, on_fd, &fp), 0);
    assert_int_equal(ns_rt_add_fd(p.a, -1, POLLIN, on_fd, &fp), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(write(pfd[1], "x", 1), 1);
    for (int i = 0; i < 500 && atomic_load(&fp.calls) == 0; i++)
        usleep(2000);
    assert_int_equal(atomic_load(&fp.calls), 1);
    pthread_t cb_thread;
    ns_rt_call(p.a, whoami, &cb_thread); /* orders the read of fp.thread */
    assert_true(pthread_equal(fp.thread, fp.stack_thread));
    assert_int_equal(ns_rt_del_fd(p.a, pfd[0]), 0);
    assert_int_equal(ns_rt_del_fd(p.a, pfd[0]), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(write(pfd[1], "y", 1), 1);
    usleep(20000);
    assert_int_equal(atomic_load(&fp.calls), 1);
    close(pfd[0]);
    close(pfd[1]);
    assert_int_equal(ns_rt_set_rcvq_lock(p.a, true), 0);
    int sd = ns_socket(p.a, NS_SOCK_SEQPACKET);
    assert_int_equal(ns_rt_set_rcvq_lock(p.a, false), -1);
    assert_int_equal(errno, EBUSY);
    assert_int_equal(ns_close(p.a, sd), 0);
    assert_int_equal(ns_rt_set_rcvq_lock(p.a, false), 0);
    struct ns_rt_config bad = {0};
    assert_null(ns_rt_new(&bad));
    assert_int_equal(errno, EINVAL);
    assert_null(ns_rt_new(NULL));
    assert_null(ns_rt_new_stack(NULL, false));
    ns_rt_free(NULL);
    skp_free(&p);
}

struct idle_probe {
    atomic_int calls;
    atomic_int fd_calls;
    _Atomic uint64_t target; /* deadline the hook asks for until it passes */
    _Atomic uint64_t fired;  /* first call at or after target */
};

static uint64_t on_idle(struct ns_rt *rt, void *ctx, uint64_t now)
{
    struct idle_probe *ip = ctx;
    (void)rt;
    atomic_fetch_add(&ip->calls, 1);
    uint64_t t = atomic_load(&ip->target);
    if (now < t)
        return t;
    if (atomic_load(&ip->fired) == 0)
        atomic_store(&ip->fired, now);
    return NS_TIME_NEVER;
}

static void on_fd_count(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    struct idle_probe *ip = ctx;
    (void)rt;
    (void)fd;
    (void)events;
    atomic_fetch_add(&ip->fd_calls, 1);
}

/* The embedder's idle hook runs after fd callbacks, and the deadline it
 * returns wakes the loop by itself; ns_rt_mod_fd changes watched events. */
static void test_runtime_idle_hook(void **state)
{
    (void)state;
    struct skp p;
    assert_int_equal(skp_init(&p, NULL, NULL, false), 0);
    struct idle_probe ip = {0};
    uint64_t t0 = ns_rt_now();
    atomic_store(&ip.target, t0 + 30000);
    ns_rt_set_idle(p.a, on_idle, &ip);
    assert_true(atomic_load(&ip.calls) >= 1);
    for (int i = 0; i < 500 && atomic_load(&ip.fired) == 0; i++)
        usleep(2000);
    uint64_t fired = atomic_load(&ip.fired);
    assert_true(fired >= t0 + 30000);
    assert_true(fired < t0 + 500000);
    usleep(20000);
    int base = atomic_load(&ip.calls);
    usleep(50000);
    assert_int_equal(atomic_load(&ip.calls), base); /* NEVER: no more wakeups */
    /* An fd that is always writable: watched for POLLIN it stays quiet,
     * switched to POLLOUT it fires (and the hook runs after it). */
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(ns_rt_add_fd(p.a, pfd[1], POLLIN, on_fd_count, &ip), 0);
    usleep(20000);
    assert_int_equal(atomic_load(&ip.fd_calls), 0);
    assert_int_equal(ns_rt_mod_fd(p.a, pfd[1], POLLOUT), 0);
    for (int i = 0; i < 500 && atomic_load(&ip.fd_calls) == 0; i++)
        usleep(2000);
    assert_true(atomic_load(&ip.fd_calls) > 0);
    assert_int_equal(ns_rt_mod_fd(p.a, pfd[1], POLLIN), 0);
    assert_true(atomic_load(&ip.calls) > base);
    assert_int_equal(ns_rt_del_fd(p.a, pfd[1]), 0);
    assert_int_equal(ns_rt_mod_fd(p.a, pfd[1], POLLIN), -1);
    assert_int_equal(errno, ENOENT);
    ns_rt_set_idle(p.a, NULL, NULL);
    close(pfd[0]);
    close(pfd[1]);
    skp_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_basic),
        cmocka_unit_test(test_stream_nonblocking),
        cmocka_unit_test(test_peek_and_pieces),
        cmocka_unit_test(test_partial_delivery_1mib),
        cmocka_unit_test(test_notifications_stream),
        cmocka_unit_test(test_abort_and_reset),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_seqpacket),
        cmocka_unit_test(test_send_failed),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_blocking_wakeups),
        cmocka_unit_test(test_backlog_bound),
        cmocka_unit_test(test_lossy),
        cmocka_unit_test(test_over_stack),
        cmocka_unit_test(test_runtime_fds),
        cmocka_unit_test(test_runtime_idle_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
