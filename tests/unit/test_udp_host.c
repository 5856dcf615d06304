/* The hosted UDP encapsulation transport (RFC 6951) on 127.0.0.1: short
 * datagrams, batching, addresses handed to the engine, a whole association
 * between two engines through two sockets, the capture, and segmentation
 * offload (UDP_SEGMENT runs, UDP_GRO buffers split, the fallback). Time is
 * virtual; only the datagrams cross the host's loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dev/pcap.h"
#include "sctp/crc32c.h"
#include "sctp/sctp.h"
#include "transport/udp_host.h"

#define LO 0x7f000001u

struct side {
    struct ns_udp_host *h;
    struct ns_timers timers;
    struct ns_rng rng;
    struct ns_sctp sctp;
    struct ns_sctp_ep *ep;
    struct ns_sctp_assoc *as;
    int up, shutdown_done, cant_start, comm_lost;
    enum ns_sctp_reason last_reason;
    struct ns_sctp_rmsgq rq;
};

static void ev_cb(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct side *s = ctx;
    if (ev->type == NS_SCTP_EV_COMM_UP) {
        s->up++;
        s->as = ev->assoc;
    } else if (ev->type == NS_SCTP_EV_SHUTDOWN_COMPLETE) {
        s->shutdown_done++;
    } else if (ev->type == NS_SCTP_EV_CANT_STR_ASSOC || ev->type == NS_SCTP_EV_COMM_LOST) {
        *(ev->type == NS_SCTP_EV_COMM_LOST ? &s->comm_lost : &s->cant_start) += 1;
        s->last_reason = ev->reason;
    } else if (ev->type == NS_SCTP_EV_DATA_READY) {
        ns_sctp_recv_take(ev->assoc, &s->rq);
    }
}

/* ns_sctp_ops has one ctx: output uses it as the udp_host; events need the
 * side. Both sides' events go through this lookup. */
static struct side *g_sides[2];
static void ev_tramp(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    for (int i = 0; i < 2; i++)
        if (g_sides[i] && g_sides[i]->h == ctx)
            ev_cb(g_sides[i], ev, now);
}

static void side_init_opts(struct side *s, uint64_t seed, bool no_offload)
{
    memset(s, 0, sizeof(*s));
    int err = 0;
    struct ns_udp_host_opts o = {.addr = LO, .ephemeral = true, .no_offload = no_offload};
    s->h = ns_udp_host_open_opts(&o, &err);
    assert_non_null(s->h);
    assert_int_not_equal(ns_udp_host_port(s->h), 0);
    ns_timers_init(&s->timers);
    ns_rng_seed(&s->rng, seed);
    struct ns_sctp_config cfg = {
        .timers = &s->timers,
        .rng = &s->rng,
        .cookie_secret_from_rng = true,
        .ops = {.output = ns_udp_host_output, .event = ev_tramp, .ctx = s->h},
    };
    assert_int_equal(ns_sctp_init(&s->sctp, &cfg, 0), 0);
    ns_sctp_rmsgq_init(&s->rq);
}

static void side_init(struct side *s, uint64_t seed)
{
    side_init_opts(s, seed, false);
}

static void side_free(struct side *s)
{
    for (struct ns_sctp_rmsg *m; (m = ns_sctp_rmsgq_pop(&s->rq));)
        ns_sctp_msg_free(s->as, m, 0);
    ns_sctp_free(&s->sctp);
    ns_timers_free(&s->timers);
    ns_udp_host_close(s->h, 0);
}

static void pump(struct side *a, struct side *b, uint64_t *now, unsigned turns)
{
    for (unsigned t = 0; t < turns; t++) {
        struct pollfd pf[2] = {{ns_udp_host_fd(a->h), POLLIN, 0},
                               {ns_udp_host_fd(b->h), POLLIN, 0}};
        /* Virtual time runs 10 ms a turn while nothing is in the air, so
         * the delayed SACK (200 ms) comes after some 20 quiet turns. */
        *now += poll(pf, 2, 1) > 0 ? 100 : 10000;
        struct side *sd[2] = {a, b};
        for (int i = 0; i < 2; i++) {
            ns_udp_host_recv(sd[i]->h, &sd[i]->sctp, 4, *now);
            ns_timers_run(&sd[i]->timers, *now);
            ns_udp_host_flush(sd[i]->h, *now);
        }
    }
}

/* a (port 5001) connects to b (5002, listening) through their sockets;
 * returns once both saw COMM_UP (asserted), with *now moved on. */
static void assoc_up(struct side *a, struct side *b, uint64_t *now)
{
    int err = 0;
    a->ep = ns_sctp_ep_new(&a->sctp, 5001, NULL, 0, &err);
    b->ep = ns_sctp_ep_new(&b->sctp, 5002, NULL, 0, &err);
    assert_non_null(a->ep);
    assert_non_null(b->ep);
    ns_sctp_ep_listen(b->ep, true);
    struct ns_sctp_addr peer = {NS_SCTP_AF_INET4, ns_udp_host_port(b->h), LO};
    a->as = ns_sctp_connect(a->ep, &peer, 1, 5002, *now, &err);
    assert_non_null(a->as);
    ns_udp_host_flush(a->h, *now);
    for (int i = 0; i < 200 && !(a->up && b->up); i++)
        pump(a, b, now, 1);
    assert_int_equal(a->up, 1);
    assert_int_equal(b->up, 1);
}

static int raw_socket(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(LO)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t sl = sizeof(sa);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void send_to(int fd, uint16_t port, const void *d, size_t n)
{
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(LO)};
    assert_int_equal(sendto(fd, d, n, 0, (struct sockaddr *)&sa, sizeof(sa)), (ssize_t)n);
}

static void wait_readable(int fd)
{
    struct pollfd pf = {fd, POLLIN, 0};
    assert_int_equal(poll(&pf, 1, 1000), 1);
}

/* Datagrams shorter than the SCTP common header never reach the engine;
 * a full-size one with a bad checksum does (and is dropped there). */
static void test_short_dropped(void **state)
{
    struct side a;
    side_init(&a, 1);
    uint16_t rp;
    int fd = raw_socket(&rp);
    uint8_t junk[11] = {0};
    send_to(fd, ns_udp_host_port(a.h), junk, 0);
    send_to(fd, ns_udp_host_port(a.h), junk, sizeof(junk));
    uint8_t hdr[12] = {0x13, 0x88, 0x13, 0x88, 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef};
    send_to(fd, ns_udp_host_port(a.h), hdr, sizeof(hdr));
    unsigned got = 0;
    for (int i = 0; i < 50 && got < 1; i++) {
        wait_readable(ns_udp_host_fd(a.h));
        got += ns_udp_host_recv(a.h, &a.sctp, 1, 0);
    }
    assert_int_equal(got, 1);
    const struct ns_udp_host_stats *st = ns_udp_host_stats(a.h);
    assert_int_equal(st->rx_short, 2);
    assert_int_equal(st->rx_datagrams, 1);
    assert_int_equal(st->rx_bytes, 12);
    assert_int_equal(a.sctp.stats.rx_packets, 1);
    assert_int_equal(a.sctp.stats.rx_bad_csum, 1);
    struct ns_ctr_group g;
    assert_int_equal(ns_udp_host_counters(a.h, &g, 1), 1);
    assert_string_equal(g.name, "udp_host");
    assert_string_equal(g.names[3], "rx_short");
    assert_int_equal(g.vals[3], 2);
    close(fd);
    side_free(&a);
}

/* 40 packets queued: the 33rd flushes the full batch, the flush sends the
 * rest; each arrives whole, from our port; a bad destination is dropped. */
static void test_output_batches(void **state)
{
    struct side a;
    side_init(&a, 2);
    uint16_t rp;
    int fd = raw_socket(&rp);
    struct ns_sctp_addr dst = {NS_SCTP_AF_INET4, rp, LO};
    for (unsigned i = 0; i < 40; i++) {
        uint8_t d[100];
        memset(d, (int)i, sizeof(d));
        ns_udp_host_output(a.h, ns_pkt_from(d, 12 + i), NULL, &dst, 0);
        if (i == 31)
            assert_int_equal(ns_udp_host_pending(a.h), 32);
        if (i == 32)
            assert_int_equal(ns_udp_host_pending(a.h), 1);
    }
    struct ns_sctp_addr bad = {NS_SCTP_AF_INET4, 0, LO};
    ns_udp_host_output(a.h, ns_pkt_from("0123456789ab", 12), NULL, &bad, 0);
    ns_udp_host_flush(a.h, 0);
    assert_int_equal(ns_udp_host_pending(a.h), 0);
    const struct ns_udp_host_stats *st = ns_udp_host_stats(a.h);
    assert_int_equal(st->tx_datagrams, 40);
    assert_int_equal(st->tx_batches, 2);
    assert_int_equal(st->tx_bad_dst, 1);
    assert_int_equal(st->tx_errors, 0);
    for (unsigned i = 0; i < 40; i++) {
        uint8_t b[200];
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        wait_readable(fd);
        ssize_t n = recvfrom(fd, b, sizeof(b), 0, (struct sockaddr *)&from, &fl);
        assert_int_equal(n, 12 + i);
        assert_int_equal(b[0], i);
        assert_int_equal(ntohs(from.sin_port), ns_udp_host_port(a.h));
    }
    close(fd);
    side_free(&a);
}

/* Two engines, each on its own socket: handshake, a message each way, the
 * peer's encapsulation port learned from the UDP source port, graceful
 * shutdown, and every datagram captured as a valid pcap record. */
static void test_association(void **state)
{
    static struct side a, b;
    side_init(&a, 3);
    side_init(&b, 4);
    g_sides[0] = &a;
    g_sides[1] = &b;
    char path[] = "/tmp/test_udp_host_XXXXXX";
    int pfd = mkstemp(path);
    assert_true(pfd >= 0);
    close(pfd);
    struct ns_pcap *pc = ns_pcap_open(path);
    assert_non_null(pc);
    ns_udp_host_set_capture(a.h, ns_pcap_capture, pc);

    uint64_t now = 0;
    assoc_up(&a, &b, &now);

    struct ns_sctp_assoc_info info;
    assert_int_equal(ns_sctp_assoc_info(b.as, &info), 0);
    assert_int_equal(info.n_paths, 1);
    assert_int_equal(info.paths[0].addr.port, ns_udp_host_port(a.h));
    assert_int_equal(info.paths[0].addr.addr, LO);
    assert_int_equal(info.paths[0].local.addr, LO);

    static uint8_t big[5000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7);
    assert_int_equal(ns_sctp_send(a.as, 1, 42, 0, big, sizeof(big), 0, now), 0);
    assert_int_equal(ns_sctp_send(b.as, 0, 43, 0, "pong", 4, 0, now), 0);
    ns_udp_host_flush(a.h, now);
    ns_udp_host_flush(b.h, now);
    for (int i = 0; i < 2000 && !(a.rq.count && b.rq.count); i++)
        pump(&a, &b, &now, 1);
    assert_int_equal(b.rq.count, 1);
    assert_int_equal(b.rq.head->len, sizeof(big));
    assert_int_equal(b.rq.head->ppid, 42);
    assert_int_equal(b.rq.head->sid, 1);
    static uint8_t out[5000];
    assert_int_equal(ns_sctp_rmsg_copy(b.rq.head, 0, out, sizeof(out)), sizeof(out));
    assert_memory_equal(out, big, sizeof(big));
    assert_int_equal(a.rq.count, 1);
    assert_int_equal(a.rq.head->len, 4);

    assert_int_equal(ns_sctp_shutdown(a.as, now), 0);
    ns_udp_host_flush(a.h, now);
    for (int i = 0; i < 500 && !(a.shutdown_done && b.shutdown_done); i++)
        pump(&a, &b, &now, 1);
    assert_int_equal(a.shutdown_done, 1);
    assert_int_equal(b.shutdown_done, 1);
    assert_int_equal(a.sctp.stats.rx_bad_csum + b.sctp.stats.rx_bad_csum, 0);

    const struct ns_udp_host_stats *sa = ns_udp_host_stats(a.h);
    const struct ns_udp_host_stats *sb = ns_udp_host_stats(b.h);
    assert_int_equal(sa->tx_datagrams, sb->rx_datagrams);
    assert_int_equal(sb->tx_datagrams, sa->rx_datagrams);
    assert_true(sa->tx_datagrams >= 6);
    uint64_t recs = ns_pcap_records(pc);
    assert_int_equal(recs, sa->tx_datagrams + sa->rx_datagrams);
    assert_int_equal(ns_pcap_close(pc), 0);
    ns_udp_host_set_capture(a.h, NULL, NULL);

    /* The first record: our INIT, Ethernet/IPv4/UDP with the right ports,
     * the SCTP packet behind them with a valid CRC32c. */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[2048];
    assert_int_equal(fread(buf, 1, 24 + 16, f), 40);
    uint32_t incl;
    memcpy(&incl, buf + 24 + 8, 4);
    assert_true(incl > 42 + 12 && incl < sizeof(buf));
    assert_int_equal(fread(buf, 1, incl, f), incl);
    fclose(f);
    unlink(path);
    assert_int_equal(buf[12], 0x08);
    assert_int_equal(buf[14], 0x45);
    assert_int_equal(buf[23], 17);
    assert_int_equal((buf[34] << 8) | buf[35], ns_udp_host_port(a.h));
    assert_int_equal((buf[36] << 8) | buf[37], ns_udp_host_port(b.h));
    assert_int_equal((buf[38] << 8) | buf[39], incl - 34);
    assert_int_equal(buf[42 + 12], 1); /* INIT */

    for (struct ns_sctp_rmsg *m; (m = ns_sctp_rmsgq_pop(&a.rq));)
        ns_sctp_msg_free(a.as, m, now);
    for (struct ns_sctp_rmsg *m; (m = ns_sctp_rmsgq_pop(&b.rq));)
        ns_sctp_msg_free(b.as, m, now);
    ns_sctp_assoc_release(a.as, now);
    ns_sctp_assoc_release(b.as, now);
    side_free(&a);
    side_free(&b);
    g_sides[0] = g_sides[1] = NULL;
}

/* An SCTP packet 5002 -> 5001 with tag vtag and one chunk (type, 4-byte
 * value), checksum filled. */
static void mk_pkt(uint8_t pkt[24], uint32_t vtag, uint8_t type)
{
    memset(pkt, 0, 24);
    pkt[0] = 0x13, pkt[1] = 0x8a, pkt[2] = 0x13, pkt[3] = 0x89;
    pkt[4] = (uint8_t)(vtag >> 24);
    pkt[5] = (uint8_t)(vtag >> 16);
    pkt[6] = (uint8_t)(vtag >> 8);
    pkt[7] = (uint8_t)vtag;
    uint8_t *c = pkt + 12;
    c[0] = type;
    c[3] = 12;
    c[5] = 1; /* Heartbeat Info */
    c[7] = 8;
    memset(c + 8, 0xab, 4);
    uint32_t crc = ns_sctp_checksum(pkt, 24);
    memcpy(pkt + 8, &crc, 4);
}

/* RFC 6951 section 5.4: the path follows the peer's new UDP source port
 * (a NAT rebinding) once a packet from it passes the verification tag
 * check; replies and data then go to the new port. A packet with a wrong
 * tag from a third port is dropped and moves nothing. */
static void test_port_change_followed(void **state)
{
    static struct side a, b;
    side_init(&a, 5);
    side_init(&b, 6);
    g_sides[0] = &a;
    g_sides[1] = &b;
    uint64_t now = 0;
    assoc_up(&a, &b, &now);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(a.as, &ia), 0);
    assert_int_equal(ia.paths[0].addr.port, ns_udp_host_port(b.h));

    /* A stranger on a third port with a wrong tag: dropped, no move. */
    uint16_t xp;
    int xfd = raw_socket(&xp);
    uint8_t pkt[24];
    mk_pkt(pkt, ia.local_vtag ^ 1, 4);
    send_to(xfd, ns_udp_host_port(a.h), pkt, sizeof(pkt));
    wait_readable(ns_udp_host_fd(a.h));
    assert_int_equal(ns_udp_host_recv(a.h, &a.sctp, 1, now), 1);
    ns_udp_host_flush(a.h, now);
    assert_int_equal(a.sctp.stats.rx_bad_vtag, 1);
    assert_int_equal(ns_sctp_assoc_info(a.as, &ia), 0);
    assert_int_equal(ia.paths[0].addr.port, ns_udp_host_port(b.h));
    assert_int_equal(ia.stats.encap_port_changes, 0);

    /* b's HEARTBEAT, right tag, from another UDP port: the path moves. */
    uint16_t rp;
    int fd = raw_socket(&rp);
    mk_pkt(pkt, ia.local_vtag, 4);
    assert_true(ns_sctp_checksum_verify_buf(pkt, sizeof(pkt)));
    send_to(fd, ns_udp_host_port(a.h), pkt, sizeof(pkt));
    wait_readable(ns_udp_host_fd(a.h));
    assert_int_equal(ns_udp_host_recv(a.h, &a.sctp, 1, now), 1);
    ns_udp_host_flush(a.h, now);
    assert_int_equal(a.sctp.stats.rx_ootb, 0);
    assert_int_equal(a.sctp.stats.tx_ootb_abort, 0);
    assert_int_equal(ns_sctp_assoc_info(a.as, &ia), 0);
    assert_int_equal(ia.n_paths, 1);
    assert_int_equal(ia.paths[0].addr.port, rp);
    assert_int_equal(ia.stats.encap_port_changes, 1);
    assert_int_equal(ia.stats.hb_rx, 1);

    /* The HEARTBEAT ACK goes to the new port, with b's tag. */
    uint8_t r[256];
    wait_readable(fd);
    ssize_t n = recv(fd, r, sizeof(r), 0);
    assert_int_equal(n, 24);
    assert_int_equal(r[12], 5); /* HEARTBEAT ACK */
    assert_int_equal((uint32_t)r[4] << 24 | (uint32_t)r[5] << 16 | (uint32_t)r[6] << 8 | r[7],
                     ia.peer_vtag);
    /* And so does data. */
    assert_int_equal(ns_sctp_send(a.as, 0, 7, 0, "after", 5, 0, now), 0);
    ns_udp_host_flush(a.h, now);
    wait_readable(fd);
    n = recv(fd, r, sizeof(r), 0);
    assert_true(n >= 12 + 16 + 5);
    assert_true(ns_sctp_checksum_verify_buf(r, (size_t)n));
    assert_int_equal(r[12], 0); /* DATA */
    assert_memory_equal(r + 12 + 16, "after", 5);
    assert_int_equal(ns_sctp_assoc_state(a.as), NS_SCTP_ESTABLISHED);
    close(fd);
    close(xfd);

    ns_sctp_abort(a.as, NULL, 0, now);
    ns_sctp_assoc_release(a.as, now);
    ns_sctp_assoc_release(b.as, now);
    side_free(&a);
    side_free(&b);
    g_sides[0] = g_sides[1] = NULL;
}

/* ---- Segmentation offload (UDP_SEGMENT / UDP_GRO) ------------------- */

#define MAXP 64

/* A valid SCTP packet of len bytes (a multiple of 4, >= 16): 5002 -> 5001,
 * tag `tag`, one ABORT chunk whose cause carries a pattern of `tag`. Out of
 * the blue, so the engine counts it and discards it silently (RFC 9260
 * 8.4 rule 2); a byte changed on the way shows as rx_bad_csum. */
static void mk_abort(uint8_t *pkt, uint32_t len, uint32_t tag)
{
    memset(pkt, 0, len);
    pkt[0] = 0x13, pkt[1] = 0x8a, pkt[2] = 0x13, pkt[3] = 0x89;
    pkt[4] = (uint8_t)(tag >> 24);
    pkt[5] = (uint8_t)(tag >> 16);
    pkt[6] = (uint8_t)(tag >> 8);
    pkt[7] = (uint8_t)tag;
    uint8_t *c = pkt + 12;
    c[0] = 6;
    c[2] = (uint8_t)((len - 12) >> 8);
    c[3] = (uint8_t)(len - 12);
    if (len >= 20) {
        c[5] = 12; /* User-Initiated Abort */
        c[6] = (uint8_t)((len - 16) >> 8);
        c[7] = (uint8_t)(len - 16);
        for (uint32_t i = 20; i < len; i++)
            pkt[i] = (uint8_t)(tag * 31 + i * 7);
    }
    uint32_t crc = ns_sctp_checksum(pkt, len);
    memcpy(pkt + 8, &crc, 4);
}

/* What a pcap file must hold, record by record. */
struct rec {
    const uint8_t *d;
    uint32_t len;
};

/* Exactly n records: Ethernet/IPv4/UDP frames with ports sport -> dport,
 * IPv4 and UDP length fields matching the datagram, payload byte-exact. */
static void pcap_check(const char *path, const struct rec *r, unsigned n, uint16_t sport,
                       uint16_t dport)
{
    static uint8_t f[42 + 65536];
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(f, 1, 24, fp), 24);
    for (unsigned k = 0; k < n; k++) {
        uint8_t rh[16];
        assert_int_equal(fread(rh, 1, 16, fp), 16);
        uint32_t incl, orig;
        memcpy(&incl, rh + 8, 4);
        memcpy(&orig, rh + 12, 4);
        assert_int_equal(incl, 42 + r[k].len);
        assert_int_equal(orig, incl);
        assert_int_equal(fread(f, 1, incl, fp), incl);
        assert_int_equal((f[16] << 8) | f[17], 28 + r[k].len); /* IPv4 total length */
        assert_int_equal((f[34] << 8) | f[35], sport);
        assert_int_equal((f[36] << 8) | f[37], dport);
        assert_int_equal((f[38] << 8) | f[39], 8 + r[k].len); /* UDP length */
        assert_memory_equal(f + 42, r[k].d, r[k].len);
    }
    uint8_t x;
    assert_int_equal(fread(&x, 1, 1, fp), 0);
    fclose(fp);
}

static struct ns_pcap *pcap_tmp(char path[32])
{
    strcpy(path, "/tmp/test_udp_host_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct ns_pcap *pc = ns_pcap_open(path);
    assert_non_null(pc);
    return pc;
}

/* Receive until `want` datagrams reached b's engine. */
static void recv_n(struct side *b, unsigned want)
{
    unsigned got = 0;
    for (int i = 0; i < 100 && got < want; i++) {
        wait_readable(ns_udp_host_fd(b->h));
        got += ns_udp_host_recv(b->h, &b->sctp, 4, 0);
    }
    assert_int_equal(got, want);
    assert_int_equal(ns_udp_host_recv(b->h, &b->sctp, 4, 0), 0);
}

/* b's engine got exactly n packets, every checksum good, all discarded
 * silently as OOTB ABORTs. */
static void engine_got(struct side *b, unsigned n)
{
    assert_int_equal(b->sctp.stats.rx_packets, n);
    assert_int_equal(b->sctp.stats.rx_bad_csum, 0);
    assert_int_equal(b->sctp.stats.rx_malformed, 0);
    assert_int_equal(b->sctp.stats.tx_ootb_abort, 0);
}

/* 40 packets of 1200 bytes and one of 400 to one peer: with the batch of
 * 32, the 33rd output flushes a run of 32, the last flush a run of 9 (8
 * full, the short one last). The receiver's engine gets 41 packets in
 * order, byte-exact (its capture, written where each is handed to
 * ns_sctp_input). no_offload: the same datagrams, no runs. no_check:
 * the sender's UDP checksums are off, which the kernel refuses with GSO. */
static void run_equal(bool no_offload, bool no_check)
{
    static struct side a, b;
    side_init_opts(&a, 11, no_offload);
    side_init(&b, 12);
    if (!no_offload && !ns_udp_host_gso(a.h)) {
        side_free(&a);
        side_free(&b);
        skip();
    }
    assert_int_equal(ns_udp_host_gso(a.h), !no_offload);
    assert_int_equal(ns_udp_host_gro(a.h), !no_offload);
    if (no_check) {
        /* UDP checksums off: the kernel refuses UDP_SEGMENT (EINVAL). */
        int one = 1;
        assert_int_equal(
            setsockopt(ns_udp_host_fd(a.h), SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)), 0);
    }
    char path[32];
    struct ns_pcap *pc = pcap_tmp(path);
    ns_udp_host_set_capture(b.h, ns_pcap_capture, pc);
    static uint8_t pk[41][1200];
    struct rec r[41];
    struct ns_sctp_addr dst = {NS_SCTP_AF_INET4, ns_udp_host_port(b.h), LO};
    for (unsigned i = 0; i < 41; i++) {
        r[i] = (struct rec){pk[i], i < 40 ? 1200 : 400};
        mk_abort(pk[i], r[i].len, i + 1);
        ns_udp_host_output(a.h, ns_pkt_from(pk[i], r[i].len), NULL, &dst, 0);
    }
    ns_udp_host_flush(a.h, 0);
    const struct ns_udp_host_stats *sa = ns_udp_host_stats(a.h);
    assert_int_equal(sa->tx_datagrams, 41);
    assert_int_equal(sa->tx_bytes, 40 * 1200 + 400);
    assert_int_equal(sa->tx_errors, 0);
    if (no_offload || no_check) {
        assert_int_equal(sa->tx_gso_runs, 0);
        assert_int_equal(sa->tx_gso_segs, 0);
        /* Fallback: each refused run (32, then 9) again plain; EINVAL
         * may be about one route, so UDP_SEGMENT stays on. */
        assert_int_equal(sa->tx_batches, no_check ? 4 : 2);
        assert_int_equal(sa->gso_fallbacks, no_check ? 2 : 0);
        assert_int_equal(ns_udp_host_gso(a.h), no_check);
    } else {
        assert_int_equal(sa->tx_gso_runs, 2);
        assert_int_equal(sa->tx_gso_segs, 41);
        assert_int_equal(sa->tx_batches, 2);
        assert_int_equal(sa->gso_fallbacks, 0);
    }

    recv_n(&b, 41);
    engine_got(&b, 41);
    const struct ns_udp_host_stats *sb = ns_udp_host_stats(b.h);
    assert_int_equal(sb->rx_datagrams, 41);
    assert_int_equal(sb->rx_bytes, 40 * 1200 + 400);
    assert_int_equal(sb->rx_gro_segs, sb->rx_gro_buffers ? 41 : 0);
    if (no_offload || no_check)
        assert_int_equal(sb->rx_gro_buffers, 0);
    print_message("  receiver: %llu GRO buffers, %llu datagrams from them\n",
                  (unsigned long long)sb->rx_gro_buffers, (unsigned long long)sb->rx_gro_segs);
    assert_int_equal(ns_pcap_close(pc), 0);
    ns_udp_host_set_capture(b.h, NULL, NULL);
    pcap_check(path, r, 41, ns_udp_host_port(a.h), ns_udp_host_port(b.h));
    unlink(path);
    side_free(&a);
    side_free(&b);
}

static void test_gso_equal_run(void **state)
{
    run_equal(false, false);
}

static void test_gso_off(void **state)
{
    run_equal(true, false);
}

/* The kernel refuses each run (checksums off: EINVAL): the runs go again
 * as single datagrams, nothing lost. */
static void test_gso_fallback(void **state)
{
    run_equal(false, true);
}

/* Mixed sizes to two peers, interleaved in blocks: runs form only from
 * consecutive equal-size datagrams to one peer (a shorter one ends a run,
 * a longer one starts the next entry); each peer gets its own datagrams in
 * order, byte-exact. */
static void test_gso_mixed(void **state)
{
    static struct side a, b, c;
    side_init(&a, 21);
    side_init(&b, 22);
    side_init(&c, 23);
    if (!ns_udp_host_gso(a.h)) {
        side_free(&a);
        side_free(&b);
        side_free(&c);
        skip();
    }
    /* to: 0 = b, 1 = c. Runs: b 1000x4, c 1000x3+500, b 900x3+100, c
     * 1200x2; single entries: b 600, b 700, c 300, b 900, b 16. */
    static const struct {
        int to;
        uint32_t len;
    } seq[] = {
        {0, 1000}, {0, 1000}, {0, 1000}, {0, 1000}, {1, 1000}, {1, 1000}, {1, 1000},
        {1, 500},  {0, 600},  {0, 700},  {1, 300},  {0, 900},  {0, 900},  {0, 900},
        {0, 100},  {0, 900},  {1, 1200}, {1, 1200}, {0, 16},
    };
    enum { N = sizeof(seq) / sizeof(seq[0]) };
    char pb[32], pcp[32];
    struct ns_pcap *pcb = pcap_tmp(pb), *pcc = pcap_tmp(pcp);
    ns_udp_host_set_capture(b.h, ns_pcap_capture, pcb);
    ns_udp_host_set_capture(c.h, ns_pcap_capture, pcc);
    static uint8_t pk[N][1200];
    struct rec rb[N], rc[N];
    unsigned nb = 0, nc = 0;
    uint64_t bytes = 0;
    for (unsigned i = 0; i < N; i++) {
        mk_abort(pk[i], seq[i].len, 100 + i);
        struct side *to = seq[i].to ? &c : &b;
        struct ns_sctp_addr dst = {NS_SCTP_AF_INET4, ns_udp_host_port(to->h), LO};
        ns_udp_host_output(a.h, ns_pkt_from(pk[i], seq[i].len), NULL, &dst, 0);
        if (seq[i].to)
            rc[nc++] = (struct rec){pk[i], seq[i].len};
        else
            rb[nb++] = (struct rec){pk[i], seq[i].len};
        bytes += seq[i].len;
    }
    assert_int_equal(ns_udp_host_pending(a.h), N);
    ns_udp_host_flush(a.h, 0);
    const struct ns_udp_host_stats *sa = ns_udp_host_stats(a.h);
    assert_int_equal(sa->tx_datagrams, N);
    assert_int_equal(sa->tx_bytes, bytes);
    assert_int_equal(sa->tx_batches, 1);
    assert_int_equal(sa->tx_gso_runs, 4);
    assert_int_equal(sa->tx_gso_segs, 14);
    assert_int_equal(sa->tx_errors, 0);

    recv_n(&b, nb);
    recv_n(&c, nc);
    engine_got(&b, nb);
    engine_got(&c, nc);
    assert_int_equal(ns_pcap_close(pcb), 0);
    assert_int_equal(ns_pcap_close(pcc), 0);
    ns_udp_host_set_capture(b.h, NULL, NULL);
    ns_udp_host_set_capture(c.h, NULL, NULL);
    pcap_check(pb, rb, nb, ns_udp_host_port(a.h), ns_udp_host_port(b.h));
    pcap_check(pcp, rc, nc, ns_udp_host_port(a.h), ns_udp_host_port(c.h));
    unlink(pb);
    unlink(pcp);
    side_free(&a);
    side_free(&b);
    side_free(&c);
}

/* A plain host socket sends one UDP_SEGMENT buffer of 10 datagrams (9 of
 * 1000 bytes, one of 600): 10 packets reach the engine, whether the kernel
 * hands them over as one GRO buffer or one by one. */
static void test_gro_rx(void **state)
{
    static struct side b;
    side_init(&b, 31);
    uint16_t rp;
    int fd = raw_socket(&rp);
    char path[32];
    struct ns_pcap *pc = pcap_tmp(path);
    ns_udp_host_set_capture(b.h, ns_pcap_capture, pc);
    static uint8_t buf[9 * 1000 + 600];
    struct rec r[10];
    for (unsigned i = 0; i < 10; i++) {
        r[i] = (struct rec){buf + i * 1000, i < 9 ? 1000 : 600};
        mk_abort(buf + i * 1000, r[i].len, 200 + i);
    }
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(ns_udp_host_port(b.h)),
                             .sin_addr.s_addr = htonl(LO)};
    struct iovec iov = {buf, sizeof(buf)};
    union {
        uint8_t b[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } cm;
    memset(&cm, 0, sizeof(cm));
    struct msghdr mh = {.msg_name = &sa,
                        .msg_namelen = sizeof(sa),
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cm.b,
                        .msg_controllen = sizeof(cm.b)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t gs = 1000;
    memcpy(CMSG_DATA(c), &gs, sizeof(gs));
    ssize_t n = sendmsg(fd, &mh, 0);
    if (n < 0 && (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT)) {
        close(fd);
        ns_pcap_close(pc);
        unlink(path);
        side_free(&b);
        skip();
    }
    assert_int_equal(n, (ssize_t)sizeof(buf));

    recv_n(&b, 10);
    engine_got(&b, 10);
    const struct ns_udp_host_stats *sb = ns_udp_host_stats(b.h);
    assert_int_equal(sb->rx_datagrams, 10);
    assert_int_equal(sb->rx_bytes, sizeof(buf));
    print_message("  receiver: %llu GRO buffers, %llu datagrams from them, %llu recvmmsg\n",
                  (unsigned long long)sb->rx_gro_buffers, (unsigned long long)sb->rx_gro_segs,
                  (unsigned long long)sb->rx_batches);
    if (sb->rx_gro_buffers) {
        assert_int_equal(sb->rx_gro_buffers, 1);
        assert_int_equal(sb->rx_gro_segs, 10);
    } else {
        assert_int_equal(sb->rx_gro_segs, 0);
    }
    assert_int_equal(ns_pcap_close(pc), 0);
    ns_udp_host_set_capture(b.h, NULL, NULL);
    pcap_check(path, r, 10, rp, ns_udp_host_port(b.h));
    unlink(path);
    close(fd);
    side_free(&b);
}

/* The sender's capture of its runs: one record per datagram, each with its
 * own IPv4 and UDP length, in queue order. */
static void test_gso_pcap(void **state)
{
    static struct side a;
    side_init(&a, 41);
    if (!ns_udp_host_gso(a.h)) {
        side_free(&a);
        skip();
    }
    uint16_t rp;
    int fd = raw_socket(&rp);
    char path[32];
    struct ns_pcap *pc = pcap_tmp(path);
    ns_udp_host_set_capture(a.h, ns_pcap_capture, pc);
    static uint8_t pk[41][1200];
    struct rec r[41];
    struct ns_sctp_addr dst = {NS_SCTP_AF_INET4, rp, LO};
    for (unsigned i = 0; i < 41; i++) {
        r[i] = (struct rec){pk[i], i < 40 ? 1200 : 400};
        mk_abort(pk[i], r[i].len, 300 + i);
        /* Some packets in pieces: a head and fragments, as the engine
         * builds DATA packets. */
        struct ns_pkt *p;
        if (i % 3 == 0) {
            /* 20-byte head, NS_PKT_MAX_FRAGS fragments for the rest. */
            p = ns_pkt_from(pk[i], 20);
            uint32_t off = 20, piece = (r[i].len - 20) / NS_PKT_MAX_FRAGS;
            for (unsigned k = 0; k < NS_PKT_MAX_FRAGS; k++) {
                uint32_t l = k + 1 < NS_PKT_MAX_FRAGS ? piece : r[i].len - off;
                struct ns_buf *fb = ns_buf_alloc(l);
                assert_non_null(fb);
                memcpy(fb->data, pk[i] + off, l);
                assert_true(ns_pkt_add_frag(p, fb, 0, l));
                ns_buf_put(fb);
                off += l;
            }
        } else {
            p = ns_pkt_from(pk[i], r[i].len);
        }
        assert_int_equal(ns_pkt_len(p), r[i].len);
        ns_udp_host_output(a.h, p, NULL, &dst, 0);
    }
    ns_udp_host_flush(a.h, 0);
    const struct ns_udp_host_stats *sa = ns_udp_host_stats(a.h);
    assert_int_equal(sa->tx_gso_runs, 2);
    assert_int_equal(sa->tx_gso_segs, 41);
    assert_int_equal(ns_pcap_records(pc), 41);
    assert_int_equal(ns_pcap_close(pc), 0);
    ns_udp_host_set_capture(a.h, NULL, NULL);
    pcap_check(path, r, 41, ns_udp_host_port(a.h), rp);
    unlink(path);
    /* And the wire: 41 datagrams of the right sizes and bytes. */
    for (unsigned i = 0; i < 41; i++) {
        static uint8_t d[2048];
        wait_readable(fd);
        ssize_t n = recv(fd, d, sizeof(d), 0);
        assert_int_equal(n, r[i].len);
        assert_memory_equal(d, r[i].d, r[i].len);
    }
    close(fd);
    side_free(&a);
}

/* A bulk association whose sender segments and whose receiver does not
 * take GRO buffers (as usrsctp's sockets): the kernel splits the runs
 * before the receiving socket, and the message arrives whole. */
static void test_gso_bulk_to_plain(void **state)
{
    static struct side a, b;
    side_init(&a, 51);
    side_init_opts(&b, 52, true);
    g_sides[0] = &a;
    g_sides[1] = &b;
    uint64_t now = 0;
    assoc_up(&a, &b, &now);
    static uint8_t big[60000], out[60000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 13 + (i >> 8));
    assert_int_equal(ns_sctp_send(a.as, 0, 9, 0, big, sizeof(big), 0, now), 0);
    ns_udp_host_flush(a.h, now);
    for (int i = 0; i < 5000 && !b.rq.count; i++)
        pump(&a, &b, &now, 1);
    assert_int_equal(b.rq.count, 1);
    assert_int_equal(b.rq.head->len, sizeof(big));
    assert_int_equal(ns_sctp_rmsg_copy(b.rq.head, 0, out, sizeof(out)), sizeof(out));
    assert_memory_equal(out, big, sizeof(big));
    const struct ns_udp_host_stats *sa = ns_udp_host_stats(a.h);
    const struct ns_udp_host_stats *sb = ns_udp_host_stats(b.h);
    if (ns_udp_host_gso(a.h))
        assert_true(sa->tx_gso_runs > 0);
    assert_int_equal(sb->rx_gro_buffers, 0);
    assert_int_equal(sa->tx_datagrams, sb->rx_datagrams);
    assert_int_equal(b.sctp.stats.rx_bad_csum, 0);
    print_message("  sender: %llu datagrams, %llu in %llu runs\n",
                  (unsigned long long)sa->tx_datagrams, (unsigned long long)sa->tx_gso_segs,
                  (unsigned long long)sa->tx_gso_runs);
    for (struct ns_sctp_rmsg *m; (m = ns_sctp_rmsgq_pop(&b.rq));)
        ns_sctp_msg_free(b.as, m, now);
    ns_sctp_abort(a.as, NULL, 0, now);
    ns_sctp_assoc_release(a.as, now);
    ns_sctp_assoc_release(b.as, now);
    side_free(&a);
    side_free(&b);
    g_sides[0] = g_sides[1] = NULL;
}

static void test_open_errors(void **state)
{
    int err = 0;
    struct ns_udp_host_opts o = {.addr = LO, .ephemeral = true};
    struct ns_udp_host *h = ns_udp_host_open_opts(&o, &err);
    assert_non_null(h);
    struct ns_udp_host *h2 = ns_udp_host_open(LO, ns_udp_host_port(h), &err);
    assert_null(h2);
    assert_int_equal(err, -EADDRINUSE);
    /* 198.18.0.1 is not ours: bind fails. */
    assert_null(ns_udp_host_open(0xc6120001u, 0, &err));
    assert_int_equal(err, -EADDRNOTAVAIL);
    ns_udp_host_close(h, 0);
}

/* A UDP port of 127.0.0.1 nobody listens on (bound, then closed). */
static uint16_t closed_port(void)
{
    uint16_t port;
    close(raw_socket(&port));
    return port;
}

/* RFC 6951 5.6 through IP_RECVERR: an INIT to a UDP port where nobody
 * listens draws the kernel's port unreachable, which ends the handshake
 * at once (not after eight INIT retransmissions, a minute later). Before
 * it, a datagram with the association's ports but a tag that is not ours
 * draws one too, which changes nothing. Afterwards the error queue is
 * empty: poll no longer reports POLLERR. */
static void test_icmp_port_unreachable(void **state)
{
    static struct side a;
    side_init(&a, 41);
    g_sides[0] = &a;
    uint16_t dead = closed_port();
    int err = 0;
    a.ep = ns_sctp_ep_new(&a.sctp, 5001, NULL, 0, &err);
    assert_non_null(a.ep);
    struct ns_sctp_addr peer = {NS_SCTP_AF_INET4, dead, LO};
    /* 5001 -> 5002, tag 0x1234: not the INIT's (tag 0), not a peer tag. */
    uint8_t forged[16] = {0x13, 0x89, 0x13, 0x8a, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 6, 0, 0, 4};
    struct ns_pkt *fp = ns_pkt_from(forged, sizeof(forged));
    assert_true(ns_sctp_checksum_fill(fp));
    ns_udp_host_output(a.h, fp, NULL, &peer, 0);
    uint64_t now = 1000;
    a.as = ns_sctp_connect(a.ep, &peer, 1, 5002, now, &err);
    assert_non_null(a.as);
    ns_udp_host_flush(a.h, now);
    const struct ns_udp_host_stats *st = ns_udp_host_stats(a.h);
    assert_int_equal(st->tx_datagrams, 2);
    assert_int_equal(st->tx_errors, 0);

    /* Virtual time stays far below the 1 s T1-init while the kernel's two
     * ICMP messages come back on the host's loopback. */
    for (int i = 0; i < 100 && st->icmp_errors < 2; i++) {
        struct pollfd pf = {ns_udp_host_fd(a.h), POLLIN, 0};
        if (poll(&pf, 1, 10) > 0)
            assert_true(pf.revents & POLLERR);
        now += 100;
        assert_int_equal(ns_udp_host_recv(a.h, &a.sctp, 1, now), 0);
        ns_timers_run(&a.timers, now);
        ns_udp_host_flush(a.h, now);
    }
    assert_int_equal(st->icmp_errors, 2);
    assert_int_equal(st->icmp_port_unreach, 2);
    assert_int_equal(st->icmp_unverified, 1);
    assert_int_equal(st->icmp_aborts, 1);
    assert_int_equal(st->icmp_frag_needed + st->icmp_ignored + st->icmp_pmtu_lowered, 0);
    assert_int_equal(st->rx_errors, 0);
    assert_true(now < 1000 + 100 * 100);
    assert_int_equal(a.cant_start, 1);
    assert_int_equal(a.comm_lost, 0);
    assert_int_equal(a.last_reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(ns_sctp_assoc_state(a.as), NS_SCTP_CLOSED);
    struct ns_sctp_assoc_info info;
    assert_int_equal(ns_sctp_assoc_info(a.as, &info), 0);
    assert_int_equal(info.stats.t1_timeouts, 0);
    assert_int_equal(a.sctp.stats.aborts_rx, 1);
    assert_int_equal(a.sctp.stats.cant_start, 1);
    /* Only the INIT went out: nothing was retransmitted. */
    assert_int_equal(st->tx_datagrams, 2);
    struct pollfd pf = {ns_udp_host_fd(a.h), POLLIN, 0};
    assert_int_equal(poll(&pf, 1, 0), 0);
    /* The counters are named in `nstack stats udp_host`. */
    struct ns_ctr_group g;
    assert_int_equal(ns_udp_host_counters(a.h, &g, 1), 1);
    bool named = false;
    for (size_t i = 0; i < g.n; i++)
        named |= strcmp(g.names[i], "icmp_port_unreach") == 0 && g.vals[i] == 2;
    assert_true(named);

    ns_sctp_assoc_release(a.as, now);
    a.as = NULL;
    side_free(&a);
    g_sides[0] = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_dropped),
        cmocka_unit_test(test_output_batches),
        cmocka_unit_test(test_association),
        cmocka_unit_test(test_port_change_followed),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_gso_equal_run),
        cmocka_unit_test(test_gso_off),
        cmocka_unit_test(test_gso_fallback),
        cmocka_unit_test(test_gso_mixed),
        cmocka_unit_test(test_gro_rx),
        cmocka_unit_test(test_gso_pcap),
        cmocka_unit_test(test_gso_bulk_to_plain),
        cmocka_unit_test(test_icmp_port_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
