/* Bring your own transport: SCTP carried by the application.
 *
 * WebRTC data channels run SCTP over DTLS: the application, not the network
 * stack, moves the packets. nstack's SCTP engine is sans-I/O, so a runtime
 * created with ns_rt_new() takes an output callback for the packets it sends
 * and ns_rt_input() for the packets the application receives; the usual
 * socket API sits on top.
 *
 * Here the "transport" is a SOCK_SEQPACKET socketpair (where a real
 * application would encrypt with DTLS): two runtimes, a server that echoes
 * and a client that sends a few messages and checks the echoes. Exits 0 on
 * success. Build: part of `make`; run: build/byo_transport.
 */
/* POSIX 2008 (nanosleep): builds with -std=c11 against the installed headers. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nstack/nstack.h>

struct side {
    struct ns_rt *rt;
    int fd;        /* our end of the application's transport */
    uint32_t addr; /* an opaque handle for the peer: no IP is involved */
};

/* Engine -> application transport. */
static void output(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst)
{
    (void)src;
    (void)dst;
    struct side *me = ctx;
    struct iovec iov[NS_PKT_MAX_IOV];
    int n = ns_pkt_iov(p, iov, NS_PKT_MAX_IOV);
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    if (sendmsg(me->fd, &mh, MSG_DONTWAIT) < 0 && errno != EAGAIN)
        perror("byo_transport: sendmsg");
    ns_pkt_free(p); /* a lost packet is SCTP's to retransmit */
}

/* Application transport -> engine. */
static void *receiver(void *arg)
{
    struct side *me = arg;
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(me->fd, buf, sizeof(buf), 0);
        if (n <= 0)
            return NULL;
        struct ns_pkt *p = ns_pkt_from(buf, (uint32_t)n);
        if (!p)
            continue;
        struct ns_sctp_addr from = {NS_SCTP_AF_INET4, 0, me->addr ^ 1};
        struct ns_sctp_addr to = {NS_SCTP_AF_INET4, 0, me->addr};
        ns_rt_input(me->rt, p, &from, &to);
    }
}

static struct sockaddr_in sin_of(uint32_t addr, uint16_t port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(addr);
    return a;
}

static void *echo_server(void *arg)
{
    struct side *srv = arg;
    struct sockaddr_in any = sin_of(INADDR_ANY, 5000);
    int ls = ns_socket(srv->rt, NS_SOCK_STREAM);
    if (ls < 0 || ns_bind(srv->rt, ls, (struct sockaddr *)&any, sizeof(any)) < 0 ||
        ns_listen(srv->rt, ls, 1) < 0) {
        perror("byo_transport: server");
        return NULL;
    }
    int cs = ns_accept(srv->rt, ls, NULL, NULL);
    char buf[256];
    for (;;) {
        struct ns_sctp_rcvinfo ri;
        socklen_t ril = sizeof(ri);
        unsigned it = 0;
        int fl = 0;
        struct iovec iov = {buf, sizeof(buf)};
        ssize_t n = ns_sctp_recvv(srv->rt, cs, &iov, 1, NULL, NULL, &ri, &ril, &it, &fl, 0);
        if (n <= 0)
            break;
        struct ns_sctp_sndinfo si = {.snd_sid = ri.rcv_sid, .snd_ppid = ri.rcv_ppid};
        iov.iov_len = (size_t)n;
        ns_sctp_sendv(srv->rt, cs, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0);
    }
    ns_close(srv->rt, cs);
    ns_close(srv->rt, ls);
    return NULL;
}

int main(void)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) < 0) {
        perror("byo_transport: socketpair");
        return 1;
    }
    struct side cli = {.fd = sp[0], .addr = 0x0a000001}, srv = {.fd = sp[1], .addr = 0x0a000000};
    struct ns_rt_config cc = {.seed = 1, .output = output, .output_ctx = &cli};
    struct ns_rt_config sc = {.seed = 2, .output = output, .output_ctx = &srv};
    cli.rt = ns_rt_new(&cc);
    srv.rt = ns_rt_new(&sc);
    if (!cli.rt || !srv.rt) {
        perror("byo_transport: ns_rt_new");
        return 1;
    }
    pthread_t rx_c, rx_s, server;
    pthread_create(&rx_c, NULL, receiver, &cli);
    pthread_create(&rx_s, NULL, receiver, &srv);
    pthread_create(&server, NULL, echo_server, &srv);

    int rc = 1;
    int s = ns_socket(cli.rt, NS_SOCK_STREAM);
    struct sockaddr_in peer = sin_of(srv.addr, 5000);
    for (int tries = 0; tries < 50; tries++) { /* the server may not listen yet */
        if (ns_connect(cli.rt, s, (struct sockaddr *)&peer, sizeof(peer)) == 0) {
            rc = 0;
            break;
        }
        ns_close(cli.rt, s);
        s = ns_socket(cli.rt, NS_SOCK_STREAM);
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    if (rc) {
        perror("byo_transport: connect");
        return 1;
    }
    const char *msgs[] = {"hello over a transport the application owns", "second", "third"};
    for (unsigned i = 0; i < 3 && rc == 0; i++) {
        struct iovec iov = {(void *)msgs[i], strlen(msgs[i])};
        struct ns_sctp_sndinfo si = {.snd_sid = (uint16_t)i, .snd_ppid = 51};
        if (ns_sctp_sendv(cli.rt, s, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0) <
            0) {
            perror("byo_transport: send");
            rc = 1;
            break;
        }
        char buf[256];
        struct iovec riov = {buf, sizeof(buf) - 1};
        struct ns_sctp_rcvinfo ri;
        socklen_t ril = sizeof(ri);
        unsigned it = 0;
        int fl = 0;
        ssize_t n = ns_sctp_recvv(cli.rt, s, &riov, 1, NULL, NULL, &ri, &ril, &it, &fl, 0);
        if (n < 0 || (size_t)n != strlen(msgs[i]) || memcmp(buf, msgs[i], (size_t)n) != 0 ||
            ri.rcv_sid != i) {
            fprintf(stderr, "byo_transport: bad echo for message %u\n", i);
            rc = 1;
            break;
        }
        buf[n] = 0;
        printf("echo on stream %u: %s\n", ri.rcv_sid, buf);
    }
    ns_close(cli.rt, s);
    pthread_join(server, NULL);
    shutdown(sp[0], SHUT_RDWR);
    shutdown(sp[1], SHUT_RDWR);
    pthread_join(rx_c, NULL);
    pthread_join(rx_s, NULL);
    ns_rt_free(cli.rt);
    ns_rt_free(srv.rt);
    close(sp[0]);
    close(sp[1]);
    if (rc == 0)
        printf("byo_transport: ok\n");
    return rc;
}
