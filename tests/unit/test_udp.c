/* UDP (ipv4/udp.c) between two stacks joined by moving frames from one's
 * transmit queue to the other's input: datagrams both ways, fragmented
 * datagrams up to 65507 bytes, checksums (0 -> 0xffff on output, verified
 * on input, absent accepted), length errors, port unreachable becoming a
 * socket error, receive buffer limit, ephemeral ports, bind conflicts,
 * demultiplexing preference, ICMP errors to sockets. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/checksum.h"
#include "stack/stack.h"
#include "wire.h"

#define A_ADDR IP4(198, 18, 0, 1)
#define B_ADDR IP4(198, 18, 0, 2)

static const struct ns_mac mac_a = {{0x02, 0, 0, 0, 0, 0x0a}};
static const struct ns_mac mac_b = {{0x02, 0, 0, 0, 0, 0x0b}};

struct pair {
    struct ns_stack *a, *b;
    uint32_t ia, ib;
    uint64_t now;
    int ready;
    struct ns_udp_sock *last_ready;
};

static void on_ready(void *ctx, struct ns_udp_sock *sk)
{
    struct pair *p = ctx;
    p->ready++;
    p->last_ready = sk;
}

static struct ns_stack *mk(uint64_t seed, const struct ns_mac *mac, uint32_t addr, uint32_t peer,
                           const struct ns_mac *peer_mac, uint32_t *ifi)
{
    struct ns_stack_config cfg = {.seed = seed};
    struct ns_stack *s = ns_stack_new(&cfg, 0);
    *ifi = (uint32_t)ns_stack_add_iface(s, "eth0", mac, 1500);
    ns_stack_set_addr(s, *ifi, addr, 24, 0);
    ns_stack_iface_up(s, *ifi, 0);
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(s, *ifi)))
        ns_pkt_free(p);
    uint8_t key[4];
    ns_wr32(key, peer);
    assert_int_equal(ns_neigh_admin_set(&s->arp.tbl, *ifi, key, peer_mac->b, NS_NUD_PERMANENT, 0),
                     0);
    return s;
}

static int setup(void **state)
{
    struct pair *p = calloc(1, sizeof(*p));
    p->a = mk(21, &mac_a, A_ADDR, B_ADDR, &mac_b, &p->ia);
    p->b = mk(22, &mac_b, B_ADDR, A_ADDR, &mac_a, &p->ib);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    struct pair *p = *state;
    ns_stack_free(p->a);
    ns_stack_free(p->b);
    free(p);
    return 0;
}

/* Move frames both ways until both queues are empty; returns the count. */
static int shuttle(struct pair *p)
{
    int n = 0;
    for (;;) {
        struct ns_pkt *f = ns_stack_tx_pop(p->a, p->ia);
        if (f) {
            ns_stack_input_pkt(p->b, p->ib, f, p->now);
            n++;
            continue;
        }
        f = ns_stack_tx_pop(p->b, p->ib);
        if (f) {
            ns_stack_input_pkt(p->a, p->ia, f, p->now);
            n++;
            continue;
        }
        return n;
    }
}

static struct ns_udp_sock *sock(struct pair *p, struct ns_stack *s)
{
    struct ns_udp_sock *sk = ns_udp_open(&s->ip);
    assert_non_null(sk);
    sk->on_ready = on_ready;
    sk->ctx = p;
    return sk;
}

static void test_send_recv_both_ways(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sa = sock(p, p->a), *sb = sock(p, p->b);
    assert_int_equal(ns_udp_bind(sb, 0, 7000), 0);
    assert_int_equal(ns_udp_sendto(sa, "hello", 5, B_ADDR, 7000, 0), 5);
    assert_true(sa->lport >= 32768 && sa->lport <= 60999);

    /* the frame on the wire */
    struct ns_pkt *f = ns_stack_tx_pop(p->a, p->ia);
    assert_non_null(f);
    assert_true(ns_pkt_linearize(f, 0));
    assert_int_equal(f->len, 60); /* 47 bytes padded */
    const uint8_t *ip = f->data + 14, *u = ip + 20;
    struct ns_ip_hdr h;
    assert_int_equal(ns_ip_parse(ip, f->len - 14, &h), NS_IP_OK);
    assert_int_equal(h.tot_len, 33);
    assert_int_equal(h.proto, 17);
    assert_int_equal(h.src, A_ADDR);
    assert_int_equal(h.dst, B_ADDR);
    assert_int_equal(ns_rd16(u), sa->lport);
    assert_int_equal(ns_rd16(u + 2), 7000);
    assert_int_equal(ns_rd16(u + 4), 13);
    assert_int_not_equal(ns_rd16(u + 6), 0);
    assert_int_equal(ns_csum_fold(ns_csum_add(ns_csum_pseudo(A_ADDR, B_ADDR, 17, 13), u, 13)),
                     0xffff);
    assert_memory_equal(u + 8, "hello", 5);
    ns_stack_input_pkt(p->b, p->ib, f, 0);

    assert_int_equal(p->ready, 1);
    assert_ptr_equal(p->last_ready, sb);
    char buf[64];
    uint32_t src = 0;
    uint16_t sport = 0;
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), &src, &sport), 5);
    assert_memory_equal(buf, "hello", 5);
    assert_int_equal(src, A_ADDR);
    assert_int_equal(sport, sa->lport);
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), NULL, NULL), -EAGAIN);

    assert_int_equal(ns_udp_sendto(sb, "world!", 6, src, sport, 0), 6);
    assert_int_equal(shuttle(p), 1);
    assert_int_equal(p->ready, 2);
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), &src, &sport), 6);
    assert_memory_equal(buf, "world!", 6);
    assert_int_equal(src, B_ADDR);
    assert_int_equal(sport, 7000);
    /* truncation to the caller's buffer */
    assert_int_equal(ns_udp_sendto(sb, "0123456789", 10, A_ADDR, sa->lport, 0), 10);
    shuttle(p);
    assert_int_equal(ns_udp_recvfrom(sa, buf, 4, NULL, NULL), 4);
    assert_memory_equal(buf, "0123", 4);
    /* an empty datagram */
    assert_int_equal(ns_udp_sendto(sb, NULL, 0, A_ADDR, sa->lport, 0), 0);
    shuttle(p);
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), NULL, NULL), 0);

    assert_int_equal(p->a->ip.udp_stats.out_datagrams, 1);
    assert_int_equal(p->a->ip.udp_stats.in_datagrams, 3);
    assert_int_equal(p->b->ip.udp_stats.in_datagrams, 1);
    assert_int_equal(p->b->ip.udp_stats.out_datagrams, 3);
    ns_udp_close(sa);
    ns_udp_close(sb);
}

static void test_fragmented(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sa = sock(p, p->a), *sb = sock(p, p->b);
    assert_int_equal(ns_udp_bind(sb, B_ADDR, 9), 0);
    static uint8_t big[65508], got[65508];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 31 + (i >> 9));
    assert_int_equal(ns_udp_sendto(sa, big, 5000, B_ADDR, 9, 0), 5000);
    assert_int_equal(shuttle(p), 4); /* 1472+8 | 1480 | 1480 | 568 */
    assert_int_equal(ns_udp_recvfrom(sb, got, sizeof(got), NULL, NULL), 5000);
    assert_memory_equal(got, big, 5000);
    assert_int_equal(p->b->ip.stats.reasm_oks, 1);

    assert_int_equal(ns_udp_sendto(sa, big, 65507, B_ADDR, 9, 0), 65507);
    assert_int_equal(shuttle(p), 45);
    assert_int_equal(ns_udp_recvfrom(sb, got, sizeof(got), NULL, NULL), 65507);
    assert_memory_equal(got, big, 65507);
    assert_int_equal(ns_udp_sendto(sa, big, 65508, B_ADDR, 9, 0), -EMSGSIZE);
    assert_int_equal(shuttle(p), 0);
}

/* A UDP frame from A to B built by hand. */
static void raw_to_b(struct pair *p, uint16_t sport, uint16_t dport, const void *data, uint32_t len,
                     int ulen_delta, int csum_mode)
{
    uint8_t f[14 + 20 + 8 + 256];
    ns_eth_write(f, &mac_b, &mac_a, NS_ETHERTYPE_IPV4);
    uint8_t *ip = f + 14, *u = ip + 20;
    ip[0] = 0x45;
    ip[1] = 0;
    ns_wr16(ip + 2, (uint16_t)(28 + len));
    ns_wr16(ip + 4, 1);
    ns_wr16(ip + 6, 0);
    ip[8] = 64;
    ip[9] = 17;
    ns_wr16(ip + 10, 0);
    ns_wr32(ip + 12, A_ADDR);
    ns_wr32(ip + 16, B_ADDR);
    ns_wr16(ip + 10, ns_csum(ip, 20));
    ns_wr16(u, sport);
    ns_wr16(u + 2, dport);
    ns_wr16(u + 4, (uint16_t)(8 + len + ulen_delta));
    ns_wr16(u + 6, 0);
    memcpy(u + 8, data, len);
    if (csum_mode) {
        uint16_t c = (uint16_t)~ns_csum_fold(
            ns_csum_add(ns_csum_pseudo(A_ADDR, B_ADDR, 17, (uint16_t)(8 + len)), u, 8 + len));
        if (csum_mode == 2)
            c ^= 0x0100;
        ns_wr16(u + 6, c ? c : 0xffff);
    }
    ns_stack_input(p->b, p->ib, f, 34 + 8 + len, p->now);
}

static void test_checksum_and_length(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sb = sock(p, p->b);
    assert_int_equal(ns_udp_bind(sb, 0, 53), 0);
    struct ns_udp_stats *st = &p->b->ip.udp_stats;
    char buf[64];
    /* no checksum: accepted */
    raw_to_b(p, 1000, 53, "abc", 3, 0, 0);
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), NULL, NULL), 3);
    /* good checksum */
    raw_to_b(p, 1000, 53, "abcd", 4, 0, 1);
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), NULL, NULL), 4);
    /* bad checksum */
    raw_to_b(p, 1000, 53, "abcd", 4, 0, 2);
    assert_int_equal(st->in_csum_errors, 1);
    assert_int_equal(st->in_errors, 1);
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), NULL, NULL), -EAGAIN);
    /* UDP length beyond the IP payload, and below the header */
    raw_to_b(p, 1000, 53, "abcd", 4, 1, 0);
    assert_int_equal(st->in_errors, 2);
    raw_to_b(p, 1000, 53, "abcd", 4, -5, 0);
    assert_int_equal(st->in_errors, 3);
    /* shorter than the IP payload: the rest is not data */
    raw_to_b(p, 1000, 53, "abcdef", 6, -2, 0);
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), NULL, NULL), 4);
    assert_memory_equal(buf, "abcd", 4);
    assert_int_equal(st->in_datagrams, 3);
    assert_int_equal(st->no_ports, 0);
    assert_null(ns_stack_tx_pop(p->b, p->ib));
}

static void test_zero_checksum_sent_as_ones(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sa = sock(p, p->a), *sb = sock(p, p->b);
    assert_int_equal(ns_udp_bind(sa, 0, 1234), 0);
    assert_int_equal(ns_udp_bind(sb, 0, 4321), 0);
    /* pick the 2-byte payload that makes the checksum come out as 0 */
    uint8_t hdr[8] = {0x04, 0xd2, 0x10, 0xe1, 0x00, 0x0a, 0, 0};
    uint16_t r = ns_csum_fold(ns_csum_add(ns_csum_pseudo(A_ADDR, B_ADDR, 17, 10), hdr, 8));
    uint16_t x = (uint16_t)(0xffff - r);
    uint8_t data[2] = {(uint8_t)(x >> 8), (uint8_t)x};
    assert_int_equal(ns_udp_sendto(sa, data, 2, B_ADDR, 4321, 0), 2);
    struct ns_pkt *f = ns_stack_tx_pop(p->a, p->ia);
    assert_non_null(f);
    assert_true(ns_pkt_linearize(f, 0));
    assert_int_equal(ns_rd16(f->data + 34 + 6), 0xffff);
    ns_stack_input_pkt(p->b, p->ib, f, 0);
    uint8_t got[4];
    assert_int_equal(ns_udp_recvfrom(sb, got, sizeof(got), NULL, NULL), 2);
    assert_memory_equal(got, data, 2);
    assert_int_equal(p->b->ip.udp_stats.in_csum_errors, 0);
}

static void test_port_unreachable(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sa = sock(p, p->a);
    assert_int_equal(ns_udp_sendto(sa, "x", 1, B_ADDR, 9999, 0), 1);
    assert_int_equal(shuttle(p), 2); /* the datagram and the ICMP error */
    assert_int_equal(p->b->ip.udp_stats.no_ports, 1);
    assert_int_equal(p->b->ip.icmp_stats.out_dest_unreachs, 1);
    assert_int_equal(p->a->ip.icmp_stats.in_dest_unreachs, 1);
    assert_int_equal(sa->err, ECONNREFUSED);
    assert_int_equal(p->ready, 1);
    char buf[8];
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), NULL, NULL), -ECONNREFUSED);
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), NULL, NULL), -EAGAIN);
    /* to a broadcast address: no ICMP */
    p->now = 10 * NS_SEC;
    assert_int_equal(ns_udp_sendto(sa, "x", 1, IP4(198, 18, 0, 255), 9999, p->now), 1);
    assert_int_equal(shuttle(p), 1);
    assert_int_equal(ns_udp_sendto(sa, "x", 1, 0xffffffffu, 9999, p->now), 1);
    assert_int_equal(shuttle(p), 1);
    assert_int_equal(p->b->ip.udp_stats.no_ports, 3);
    assert_int_equal(p->b->ip.icmp_stats.out_dest_unreachs, 1);
    assert_int_equal(sa->err, 0);
    /* an error for another socket's port does not land here */
    struct ns_udp_sock *other = sock(p, p->a);
    assert_int_equal(ns_udp_sendto(other, "y", 1, B_ADDR, 9998, p->now), 1);
    assert_int_equal(shuttle(p), 2);
    assert_int_equal(other->err, ECONNREFUSED);
    assert_int_equal(sa->err, 0);
}

static void test_rcvbuf_limit(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sa = sock(p, p->a), *sb = sock(p, p->b);
    assert_int_equal(ns_udp_bind(sb, 0, 7), 0);
    sb->rcvbuf = 3 * (100 + NS_UDP_RX_OVERHEAD);
    uint8_t d[100] = {0};
    for (int i = 0; i < 4; i++) {
        d[0] = (uint8_t)i;
        assert_int_equal(ns_udp_sendto(sa, d, 100, B_ADDR, 7, 0), 100);
    }
    shuttle(p);
    assert_int_equal(sb->rxq.count, 3);
    assert_int_equal(p->b->ip.udp_stats.rcvbuf_errors, 1);
    assert_int_equal(p->b->ip.udp_stats.in_errors, 1);
    assert_int_equal(p->b->ip.udp_stats.in_datagrams, 3);
    assert_int_equal(p->ready, 3);
    uint8_t got[128];
    assert_int_equal(ns_udp_recvfrom(sb, got, sizeof(got), NULL, NULL), 100);
    assert_int_equal(got[0], 0);
    /* room for one more now */
    d[0] = 9;
    assert_int_equal(ns_udp_sendto(sa, d, 100, B_ADDR, 7, 0), 100);
    assert_int_equal(ns_udp_sendto(sa, d, 100, B_ADDR, 7, 0), 100);
    shuttle(p);
    assert_int_equal(p->b->ip.udp_stats.rcvbuf_errors, 2);
    for (int want = 1; want <= 3; want++) {
        assert_int_equal(ns_udp_recvfrom(sb, got, sizeof(got), NULL, NULL), 100);
        assert_int_equal(got[0], want == 3 ? 9 : want);
    }
    /* empty datagrams are charged too, so they cannot pile up */
    sb->rcvbuf = 2 * NS_UDP_RX_OVERHEAD;
    for (int i = 0; i < 5; i++)
        ns_udp_sendto(sa, NULL, 0, B_ADDR, 7, 0);
    shuttle(p);
    assert_int_equal(sb->rxq.count, 2);
    /* closing with queued data frees it (ASan checks) */
    ns_udp_close(sb);
}

static void test_ephemeral_and_bind(void **state)
{
    struct pair *p = *state;
    struct ns_stack *s = p->a;
    struct ns_udp_sock *k[6];
    for (int i = 0; i < 6; i++)
        k[i] = sock(p, s);
    s->ip.udp.next_ephemeral = 40000;
    assert_int_equal(ns_udp_bind(k[0], 0, 0), 0);
    assert_int_equal(k[0]->lport, 40000);
    assert_int_equal(ns_udp_bind(k[1], 0, 40002), 0);
    assert_int_equal(ns_udp_bind(k[2], 0, 0), 0);
    assert_int_equal(k[2]->lport, 40001);
    assert_int_equal(ns_udp_bind(k[3], 0, 0), 0);
    assert_int_equal(k[3]->lport, 40003); /* 40002 is taken */
    /* wrap at the top of the range */
    s->ip.udp.next_ephemeral = 60999;
    assert_int_equal(ns_udp_bind(k[4], 0, 0), 0);
    assert_int_equal(k[4]->lport, 60999);
    assert_int_equal(ns_udp_bind(k[5], 0, 0), 0);
    assert_int_equal(k[5]->lport, 32768);
    /* already bound */
    assert_int_equal(ns_udp_bind(k[5], 0, 1), -EINVAL);

    struct ns_udp_sock *x = sock(p, s), *y = sock(p, s);
    assert_int_equal(ns_udp_bind(x, A_ADDR, 5000), 0);
    assert_int_equal(ns_udp_bind(y, A_ADDR, 5000), -EADDRINUSE);
    assert_int_equal(ns_udp_bind(y, 0, 5000), -EADDRINUSE); /* wildcard vs specific */
    assert_int_equal(ns_udp_bind(y, 0, 40000), -EADDRINUSE);
    assert_int_equal(ns_udp_bind(y, A_ADDR, 40000), -EADDRINUSE); /* specific vs wildcard */
    assert_int_equal(ns_udp_bind(y, IP4(198, 18, 0, 77), 5001), -EADDRNOTAVAIL);
    assert_int_equal(ns_udp_bind(y, A_ADDR, 5001), 0);
    /* closing frees the port */
    ns_udp_close(x);
    struct ns_udp_sock *z = sock(p, s);
    assert_int_equal(ns_udp_bind(z, 0, 5000), 0);
    /* sendto on an unbound socket binds it */
    struct ns_udp_sock *w = sock(p, s);
    s->ip.udp.next_ephemeral = 50000;
    assert_int_equal(ns_udp_sendto(w, "a", 1, B_ADDR, 1, 0), 1);
    assert_int_equal(w->lport, 50000);
    /* sockets still open are freed by ns_stack_free (ASan checks) */
}

static void test_connect_and_errors(void **state)
{
    struct pair *p = *state;
    struct ns_udp_sock *sa = sock(p, p->a), *sb = sock(p, p->b);
    assert_int_equal(ns_udp_bind(sb, 0, 7000), 0);
    assert_int_equal(ns_udp_sendto(sa, "a", 1, 0, 0, 0), -EDESTADDRREQ);
    assert_int_equal(ns_udp_sendto(sa, "a", 1, B_ADDR, 0, 0), -EINVAL);
    assert_int_equal(ns_udp_connect(sa, 0, 1), -EINVAL);
    assert_int_equal(ns_udp_connect(sa, IP4(203, 0, 113, 1), 1), -ENETUNREACH);
    assert_int_equal(ns_udp_sendto(sa, "a", 1, IP4(203, 0, 113, 1), 1, 0), -ENETUNREACH);
    assert_int_equal(p->a->ip.stats.out_no_routes, 1);
    assert_int_equal(ns_udp_connect(sa, B_ADDR, 7000), 0);
    assert_int_equal(sa->laddr, A_ADDR);
    assert_true(sa->lport >= 32768);
    assert_int_equal(ns_udp_sendto(sa, "ping", 4, 0, 0, 0), 4);
    shuttle(p);
    char buf[16];
    uint32_t src;
    uint16_t sport;
    assert_int_equal(ns_udp_recvfrom(sb, buf, sizeof(buf), &src, &sport), 4);
    assert_int_equal(sport, sa->lport);
    /* from the connected peer: delivered */
    assert_int_equal(ns_udp_sendto(sb, "pong", 4, A_ADDR, sa->lport, 0), 4);
    shuttle(p);
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), NULL, NULL), 4);
    /* from another port of the peer: not for a connected socket */
    struct ns_udp_sock *sb2 = sock(p, p->b);
    assert_int_equal(ns_udp_sendto(sb2, "nope", 4, A_ADDR, sa->lport, 0), 4);
    assert_int_equal(shuttle(p), 2); /* datagram + port unreachable back */
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), NULL, NULL), -EAGAIN);
    assert_int_equal(p->a->ip.udp_stats.no_ports, 1);
    assert_int_equal(sb2->err, ECONNREFUSED);

    /* ICMP time exceeded quoting sa's datagram, from a router */
    ns_udp_icmp_error(&p->a->ip, A_ADDR, B_ADDR, sa->lport, 7000, EHOSTUNREACH);
    assert_int_equal(sa->err, EHOSTUNREACH);
    /* a quote of another flow does not match the connected socket */
    ns_udp_icmp_error(&p->a->ip, A_ADDR, B_ADDR, sa->lport, 7001, ENETUNREACH);
    assert_int_equal(sa->err, EHOSTUNREACH);
    assert_int_equal(ns_udp_recvfrom(sa, buf, sizeof(buf), NULL, NULL), -EHOSTUNREACH);
    assert_int_equal(sa->err, 0);
}

static void test_demux_preference(void **state)
{
    struct pair *p = *state;
    struct ns_stack *b = p->b;
    /* Opened most specific first: the socket list is newest first, so a
     * tie in the preference would pick the least specific. */
    struct ns_udp_sock *conn = sock(p, b), *bound = sock(p, b), *wild = sock(p, b);
    assert_int_equal(ns_udp_bind(wild, 0, 6000), 0);
    /* bind() would refuse sharing the port; the demultiplexer must still
     * prefer the most specific socket when they coexist. */
    bound->laddr = B_ADDR;
    bound->lport = 6000;
    conn->laddr = B_ADDR;
    conn->lport = 6000;
    conn->raddr = A_ADDR;
    conn->rport = 1111;
    char buf[8];
    raw_to_b(p, 1111, 6000, "c", 1, 0, 1);
    raw_to_b(p, 2222, 6000, "b", 1, 0, 1);
    assert_int_equal(ns_udp_recvfrom(conn, buf, sizeof(buf), NULL, NULL), 1);
    assert_int_equal(buf[0], 'c');
    assert_int_equal(ns_udp_recvfrom(bound, buf, sizeof(buf), NULL, NULL), 1);
    assert_int_equal(buf[0], 'b');
    assert_int_equal(ns_udp_recvfrom(wild, buf, sizeof(buf), NULL, NULL), -EAGAIN);
    ns_udp_close(bound);
    raw_to_b(p, 2222, 6000, "w", 1, 0, 1);
    assert_int_equal(ns_udp_recvfrom(wild, buf, sizeof(buf), NULL, NULL), 1);
    assert_int_equal(buf[0], 'w');
    ns_udp_close(conn);
    raw_to_b(p, 1111, 6000, "W", 1, 0, 1);
    assert_int_equal(ns_udp_recvfrom(wild, buf, sizeof(buf), NULL, NULL), 1);
    assert_int_equal(buf[0], 'W');
    /* a socket bound to another address of ours does not match */
    ns_udp_close(wild);
    struct ns_udp_sock *other = sock(p, b);
    other->laddr = IP4(198, 18, 0, 99);
    other->lport = 6000;
    raw_to_b(p, 1111, 6000, "x", 1, 0, 1);
    assert_int_equal(ns_udp_recvfrom(other, buf, sizeof(buf), NULL, NULL), -EAGAIN);
    assert_int_equal(b->ip.udp_stats.no_ports, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_send_recv_both_ways, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fragmented, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checksum_and_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_checksum_sent_as_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_port_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rcvbuf_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ephemeral_and_bind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connect_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_demux_preference, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
