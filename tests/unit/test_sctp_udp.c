/* SCTP over UDP encapsulation (RFC 6951) on nstack's own UDP
 * (stack/sctp_udp_glue.c), on a virtual clock:
 *  - two stacks on a memlink with sctp.udp_port 9899: the association comes
 *    up over UDP (the passive side learning the port from the INIT), data
 *    both ways intact, every frame on the wire UDP 9899 -> 9899 with a good
 *    UDP checksum and a good SCTP CRC32c, nothing as IP protocol 132, path
 *    MTU 1500 - 20 - 8;
 *  - ICMP (5.6): port unreachable for the encapsulation port ends an
 *    association like an ABORT (also one in COOKIE-WAIT), fragmentation-
 *    needed lowers the path MTU by the UDP header too, and a quote of
 *    another UDP port or a wrong tag changes nothing;
 *  - sysctls: sctp.udp_port binds and unbinds, sctp.encap_port picks UDP
 *    for new associations, hosted mode's fixed port;
 *  - the engine (5.4, sctp_pipe): a peer behind a rebinding NAT moves the
 *    path to its new source port once a packet with the right tag comes
 *    from it; data follows; packets with a wrong tag or no association from
 *    yet another port move nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/checksum.h"
#include "sctp/crc32c.h"
#include "sctp_pipe.h"
#include "sim.h"
#include "stack/stack.h"

#define A_IP SIM_IP(198, 18, 0, 1)
#define B_IP SIM_IP(198, 18, 0, 2)
#define PORT 5001
#define UDPP 9899

struct app {
    struct ns_sctp_assoc *assoc;
    int comm_up, comm_lost, cant_start;
    enum ns_sctp_reason last_reason;
    uint8_t *rx;
    size_t rx_len, rx_cap;
    uint32_t msgs;
};

static void app_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct app *ap = ctx;
    switch (ev->type) {
    case NS_SCTP_EV_COMM_UP:
        ap->comm_up++;
        ap->assoc = ev->assoc;
        break;
    case NS_SCTP_EV_COMM_LOST:
        ap->comm_lost++;
        ap->last_reason = ev->reason;
        break;
    case NS_SCTP_EV_CANT_STR_ASSOC:
        ap->cant_start++;
        ap->last_reason = ev->reason;
        break;
    case NS_SCTP_EV_DATA_READY: {
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_recv_take(ev->assoc, &q);
        for (struct ns_sctp_rmsg *m; (m = ns_sctp_rmsgq_pop(&q));) {
            if (ap->rx_len + m->len > ap->rx_cap) {
                ap->rx_cap = (ap->rx_len + m->len) * 2;
                ap->rx = realloc(ap->rx, ap->rx_cap);
                assert_non_null(ap->rx);
            }
            assert_int_equal(ns_sctp_rmsg_copy(m, 0, ap->rx + ap->rx_len, m->len), m->len);
            ap->rx_len += m->len;
            ap->msgs += (m->flags & NS_SCTP_RMSG_EOR) != 0;
            ns_sctp_msg_free(ev->assoc, m, now);
        }
        break;
    }
    default:
        break;
    }
}

struct pair {
    struct sim *sim;
    int a, b, link;
    struct ns_stack *sa, *sb;
    struct app aa, ab;
    struct ns_sctp_ep *ep_a, *ep_b;
    char pcap[64];
};

/* udp_b: b's sctp.udp_port (0: b has no SCTP over UDP). */
static void pair_setup(struct pair *p, uint64_t seed, uint16_t udp_b)
{
    memset(p, 0, sizeof(*p));
    p->sim = sim_new(seed);
    assert_non_null(p->sim);
    p->a = sim_add_stack(p->sim, "a", A_IP, 24, NULL);
    p->b = sim_add_stack(p->sim, "b", B_IP, 24, NULL);
    p->sa = sim_stack(p->sim, p->a);
    p->sb = sim_stack(p->sim, p->b);
    ns_stack_set_sctp_event(p->sa, app_event, &p->aa);
    ns_stack_set_sctp_event(p->sb, app_event, &p->ab);
    struct ns_memlink_cfg c = {.delay_us = 1000};
    p->link = sim_link(p->sim, p->a, p->b, &c);
    assert_true(p->link >= 0);
    snprintf(p->pcap, sizeof(p->pcap), "/tmp/test_sctp_udp_%d.pcap", (int)getpid());
    assert_int_equal(sim_link_pcap(p->sim, p->link, 0, p->pcap), 0);
    sim_run_for(p->sim, 10 * NS_MS);
    uint64_t now = sim_now(p->sim);
    /* a: SCTP over UDP on 9899, new associations to 9899. b: listening on
     * its UDP port, no encap_port of its own (it answers where the INIT
     * came from). */
    assert_int_equal(ns_sysctl_set(p->sa, "sctp.udp_port", UDPP, now), 0);
    assert_int_equal(ns_sysctl_set(p->sa, "sctp.encap_port", UDPP, now), 0);
    if (udp_b)
        assert_int_equal(ns_sysctl_set(p->sb, "sctp.udp_port", udp_b, now), 0);
    int err = 0;
    p->ep_b = ns_sctp_ep_new(&p->sb->sctp, PORT, NULL, 0, &err);
    assert_non_null(p->ep_b);
    ns_sctp_ep_listen(p->ep_b, true);
    p->ep_a = ns_sctp_ep_new(&p->sa->sctp, 0, NULL, 0, &err);
    assert_non_null(p->ep_a);
}

static void pair_free(struct pair *p)
{
    free(p->aa.rx);
    free(p->ab.rx);
    sim_free(p->sim);
    unlink(p->pcap);
}

static void connect_udp(struct pair *p)
{
    int err = 0;
    p->aa.assoc = ns_stack_sctp_connect(p->sa, p->ep_a, B_IP, PORT, sim_now(p->sim), &err);
    assert_non_null(p->aa.assoc);
    sim_run_for(p->sim, 100 * NS_MS);
    assert_int_equal(p->aa.comm_up, 1);
    assert_int_equal(p->ab.comm_up, 1);
}

/* Every IPv4 frame of the capture: UDP 9899 -> 9899, good UDP checksum,
 * SCTP packet with a good CRC32c as the whole payload. Returns the count. */
static unsigned check_capture(const char *path, unsigned *n_init)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t b[70000];
    assert_int_equal(fread(b, 1, 24, f), 24);
    unsigned n = 0;
    *n_init = 0;
    uint8_t rh[16];
    while (fread(rh, 1, 16, f) == 16) {
        uint32_t incl;
        memcpy(&incl, rh + 8, 4);
        assert_true(incl <= sizeof(b));
        assert_int_equal(fread(b, 1, incl, f), incl);
        if (incl < 14 || b[12] != 0x08 || b[13] != 0x00)
            continue; /* ARP */
        const uint8_t *ip = b + 14;
        assert_int_equal(ip[0], 0x45);
        assert_int_equal(ip[9], 17); /* UDP, never protocol 132 */
        uint16_t tot = ns_rd16(ip + 2);
        assert_true(tot <= incl - 14 && (tot == incl - 14 || incl == 60));
        assert_int_equal(ns_rd16(ip + 6) & 0x3fff, 0x0000); /* not a fragment */
        const uint8_t *u = ip + 20;
        uint16_t ulen = ns_rd16(u + 4);
        assert_int_equal(ulen, tot - 20);
        assert_int_equal(ns_rd16(u), UDPP);
        assert_int_equal(ns_rd16(u + 2), UDPP);
        assert_int_not_equal(ns_rd16(u + 6), 0);
        uint32_t sum = ns_csum_pseudo(ns_rd32(ip + 12), ns_rd32(ip + 16), 17, ulen);
        assert_int_equal(ns_csum_fold(ns_csum_add(sum, u, ulen)), 0xffff);
        assert_true(ulen >= 8 + 16);
        assert_true(ns_sctp_checksum_verify_buf(u + 8, ulen - 8u));
        *n_init += u[8 + 12] == 1;
        n++;
    }
    fclose(f);
    return n;
}

static void test_udp_association(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 21, UDPP);
    connect_udp(&p);

    struct ns_sctp_assoc_info ia, ib;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ns_sctp_assoc_info(p.ab.assoc, &ib), 0);
    assert_int_equal(ia.paths[0].addr.port, UDPP);
    assert_int_equal(ib.paths[0].addr.port, UDPP); /* learned from the INIT */
    assert_int_equal(ib.paths[0].addr.addr, A_IP);
    /* 1500 - IPv4 - UDP. */
    assert_int_equal(ia.paths[0].pmtu, 1472);
    assert_int_equal(ib.paths[0].pmtu, 1472);

    static uint8_t big[100000], back[5000];
    sim_pattern(big, sizeof(big), 9);
    sim_pattern(back, sizeof(back), 4);
    uint64_t now = sim_now(p.sim);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 42, 0, "x", 1, 0, now), 0);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 1, 42, 0, big, sizeof(big), 0, now), 0);
    assert_int_equal(ns_sctp_send(p.ab.assoc, 0, 43, 0, back, sizeof(back), 0, now), 0);
    sim_run_for(p.sim, 2 * NS_SEC);
    assert_int_equal(p.ab.msgs, 2);
    assert_int_equal(p.ab.rx_len, 1 + sizeof(big));
    assert_memory_equal(p.ab.rx, "x", 1);
    assert_memory_equal(p.ab.rx + 1, big, sizeof(big));
    assert_int_equal(p.aa.msgs, 1);
    assert_int_equal(p.aa.rx_len, sizeof(back));
    assert_memory_equal(p.aa.rx, back, sizeof(back));

    /* Over UDP only: nothing for the raw IP glue, nothing fragmented. */
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "tx_packets"), 0);
    assert_int_equal(sim_ctr(p.sb, "sctp_glue", "rx_packets"), 0);
    assert_true(sim_ctr(p.sa, "sctp_udp", "tx_packets") >= 70);
    assert_int_equal(sim_ctr(p.sb, "sctp_udp", "rx_packets"),
                     sim_ctr(p.sa, "sctp_udp", "tx_packets"));
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "rx_packets"),
                     sim_ctr(p.sb, "sctp_udp", "tx_packets"));
    assert_int_equal(
        sim_ctr(p.sa, "sctp_udp", "tx_errors") + sim_ctr(p.sb, "sctp_udp", "tx_errors"), 0);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "tx_frag_fallback"), 0);
    assert_int_equal(p.sa->ip.stats.frag_creates + p.sb->ip.stats.frag_creates, 0);
    assert_int_equal(sim_ctr(p.sb, "sctp", "rx_bad_csum") + sim_ctr(p.sa, "sctp", "rx_bad_csum"),
                     0);
    assert_int_equal(sim_ctr(p.sb, "udp", "in_csum_errors"), 0);
    assert_int_equal(p.aa.comm_lost + p.ab.comm_lost, 0);

    /* The wire: all of it UDP 9899 <-> 9899 with good checksums. */
    uint64_t sent =
        sim_ctr(p.sa, "sctp_udp", "tx_packets") + sim_ctr(p.sb, "sctp_udp", "tx_packets");
    sim_free(p.sim); /* flushes and closes the capture */
    p.sim = NULL;
    unsigned inits = 0;
    unsigned frames = check_capture(p.pcap, &inits);
    assert_int_equal(frames, sent);
    assert_int_equal(inits, 1);
    free(p.aa.rx);
    free(p.ab.rx);
    unlink(p.pcap);
}

/* The peer has no SCTP over UDP on 9899: its UDP answers our INIT with a
 * port unreachable, which ends the handshake at once (not after eight
 * INIT retransmissions). */
static void test_port_unreachable_init(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 22, 0);
    int err = 0;
    p.aa.assoc = ns_stack_sctp_connect(p.sa, p.ep_a, B_IP, PORT, sim_now(p.sim), &err);
    assert_non_null(p.aa.assoc);
    sim_run_for(p.sim, 100 * NS_MS);
    assert_int_equal(p.aa.cant_start, 1);
    assert_int_equal(p.aa.last_reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(ns_sctp_assoc_state(p.aa.assoc), NS_SCTP_CLOSED);
    assert_int_equal(sim_ctr(p.sb, "udp", "no_ports"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "icmp_errors"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "icmp_port_unreach"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_prot_unreach_aborts"), 1);
    ns_sctp_assoc_release(p.aa.assoc, sim_now(p.sim));
    pair_free(&p);
}

/* An established association whose peer closes its encapsulation port:
 * the next DATA draws a port unreachable and the association is lost as
 * if the peer had aborted. */
static void test_port_unreachable_established(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 23, UDPP);
    connect_udp(&p);
    uint64_t now = sim_now(p.sim);
    assert_int_equal(ns_sysctl_set(p.sb, "sctp.udp_port", 0, now), 0);
    assert_null(p.sb->sctp_udp_sock);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 1, 0, "gone?", 5, 0, now), 0);
    sim_run_for(p.sim, 100 * NS_MS);
    assert_int_equal(p.aa.comm_lost, 1);
    assert_int_equal(p.aa.last_reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "icmp_port_unreach"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_prot_unreach_aborts"), 1);
    pair_free(&p);
}

/* An ICMP destination unreachable (code, mtu) from 198.18.0.254 to A,
 * quoting a UDP datagram A sent from 9899 to B's dport carrying an SCTP
 * common header (sport, PORT, vtag). */
static void inject_udp_unreach(struct pair *p, uint8_t code, uint16_t mtu, uint16_t dport,
                               uint16_t sport, uint32_t vtag)
{
    uint8_t f[14 + 20 + 8 + 20 + 8 + 12];
    memset(f, 0, sizeof(f));
    struct ns_iface *ifa = ns_stack_iface(p->sa, sim_ifindex(p->sim, p->link, 0));
    struct ns_iface *ifb = ns_stack_iface(p->sb, sim_ifindex(p->sim, p->link, 1));
    ns_eth_write(f, &ifa->mac, &ifb->mac, NS_ETHERTYPE_IPV4);
    struct ns_ip_hdr oh = {.tot_len = (uint16_t)(sizeof(f) - 14),
                           .ttl = 64,
                           .proto = NS_IPPROTO_ICMP,
                           .src = SIM_IP(198, 18, 0, 254),
                           .dst = A_IP};
    ns_ip_write(f + 14, &oh);
    uint8_t *icmp = f + 34;
    icmp[0] = NS_ICMP_DEST_UNREACH;
    icmp[1] = code;
    ns_wr16(icmp + 6, mtu);
    struct ns_ip_hdr qh = {.tot_len = 1500,
                           .frag = NS_IP_DF,
                           .ttl = 64,
                           .proto = NS_IPPROTO_UDP,
                           .src = A_IP,
                           .dst = B_IP};
    ns_ip_write(icmp + 8, &qh);
    uint8_t *u = icmp + 28;
    ns_wr16(u, UDPP);
    ns_wr16(u + 2, dport);
    ns_wr16(u + 4, 1480);
    ns_wr16(u + 8, sport);
    ns_wr16(u + 10, PORT);
    ns_wr32(u + 12, vtag);
    ns_wr16(icmp + 2, ns_csum(icmp, sizeof(f) - 34));
    ns_stack_input(p->sa, ifa->index, f, sizeof(f), sim_now(p->sim));
}

static void test_frag_needed_udp(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 24, UDPP);
    connect_udp(&p);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 1472);
    /* Wrong tag, then a UDP port the path does not use: nothing moves. */
    inject_udp_unreach(&p, NS_ICMP_FRAG_NEEDED, 1200, UDPP, ia.local_port, ia.peer_vtag ^ 1);
    inject_udp_unreach(&p, NS_ICMP_FRAG_NEEDED, 1200, 4000, ia.local_port, ia.peer_vtag);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "icmp_errors"), 2);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_no_assoc"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "icmp_bad_port"), 1);
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 1472);
    /* Nor does a port unreachable quoting another port: the association
     * lives. */
    inject_udp_unreach(&p, NS_ICMP_PORT_UNREACH, 0, 4000, ia.local_port, ia.peer_vtag);
    assert_int_equal(ns_sctp_assoc_state(p.aa.assoc), NS_SCTP_ESTABLISHED);
    /* The real one: 1200 - 20 - 8. */
    inject_udp_unreach(&p, NS_ICMP_FRAG_NEEDED, 1200, UDPP, ia.local_port, ia.peer_vtag);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_pmtu_lowered"), 1);
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 1172);
    /* Data still flows, in smaller packets, without IPv4 fragments. */
    static uint8_t big[20000];
    sim_pattern(big, sizeof(big), 1);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 1, 0, big, sizeof(big), 0, sim_now(p.sim)), 0);
    sim_run_for(p.sim, NS_SEC);
    assert_int_equal(p.ab.rx_len, sizeof(big));
    assert_memory_equal(p.ab.rx, big, sizeof(big));
    assert_int_equal(p.sa->ip.stats.frag_creates, 0);
    pair_free(&p);
}

static void test_sysctls(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 25, UDPP);
    uint64_t now = sim_now(p.sim);
    uint32_t v = 1;
    assert_int_equal(ns_sysctl_get(p.sa, "sctp.udp_port", &v), 0);
    assert_int_equal(v, UDPP);
    assert_non_null(p.sa->sctp_udp_sock);
    assert_int_equal(p.sa->sctp_udp_sock->lport, UDPP);
    /* A port nstack's UDP already uses: refused, the old one kept. */
    struct ns_udp_sock *other = ns_udp_open(&p.sa->ip);
    assert_int_equal(ns_udp_bind(other, 0, 7777), 0);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.udp_port", 7777, now), -EADDRINUSE);
    assert_int_equal(ns_sysctl_get(p.sa, "sctp.udp_port", &v), 0);
    assert_int_equal(v, UDPP);
    assert_int_equal(p.sa->sctp_udp_sock->lport, UDPP);
    ns_udp_close(other);
    /* encap_port 0: raw IP for new associations; a per-peer port wins. */
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.encap_port", 0, now), 0);
    assert_int_equal(ns_stack_sctp_encap_port(p.sa, B_IP), 0);
    assert_int_equal(ns_stack_sctp_set_encap_port(p.sa, B_IP, 4242), 0);
    assert_int_equal(ns_stack_sctp_encap_port(p.sa, B_IP), 4242);
    assert_int_equal(ns_stack_sctp_encap_port(p.sa, A_IP), 0);
    assert_int_equal(ns_stack_sctp_set_encap_port(p.sa, B_IP, 0), 0);
    assert_int_equal(ns_stack_sctp_encap_port(p.sa, B_IP), 0);
    for (uint32_t i = 0; i < NS_SCTP_ENCAP_PEERS; i++)
        assert_int_equal(ns_stack_sctp_set_encap_port(p.sa, 100 + i, 1), 0);
    assert_int_equal(ns_stack_sctp_set_encap_port(p.sa, 99, 1), -ENOSPC);
    /* Raw IP association with encap_port 0 still works next to UDP. */
    int err = 0;
    p.aa.assoc = ns_stack_sctp_connect(p.sa, p.ep_a, B_IP, PORT, now, &err);
    assert_non_null(p.aa.assoc);
    sim_run_for(p.sim, 100 * NS_MS);
    assert_int_equal(p.aa.comm_up, 1);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].addr.port, 0);
    assert_int_equal(ia.paths[0].pmtu, 1480);
    assert_true(sim_ctr(p.sa, "sctp_glue", "tx_packets") > 0);
    assert_int_equal(sim_ctr(p.sa, "sctp_udp", "tx_packets"), 0);
    /* udp_port 0 closes the socket. */
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.udp_port", 0, now), 0);
    assert_null(p.sa->sctp_udp_sock);
    pair_free(&p);
}

static void hosted_out(void *ctx, struct ns_pkt *pk, const struct ns_sctp_addr *src,
                       const struct ns_sctp_addr *dst, uint64_t now)
{
    int *n = ctx;
    (*n)++;
    assert_int_equal(dst->port, 9899);
    ns_pkt_free(pk);
}

/* Hosted mode: no raw IP, the port is the embedder's, packets go to the
 * hook. */
static void test_hosted_hook(void **st)
{
    (void)st;
    struct ns_stack_config cfg = {.seed = 5};
    struct ns_stack *s = ns_stack_new(&cfg, 0);
    assert_non_null(s);
    int sent = 0;
    ns_stack_sctp_hosted(s, hosted_out, &sent, 30000, 0);
    assert_true(ns_stack_sctp_is_hosted(s));
    uint32_t v;
    assert_int_equal(ns_sysctl_get(s, "sctp.udp_port", &v), 0);
    assert_int_equal(v, 30000);
    assert_int_equal(ns_sysctl_get(s, "sctp.encap_port", &v), 0);
    assert_int_equal(v, 9899);
    assert_int_equal(ns_sysctl_set(s, "sctp.udp_port", 30001, 0), -EINVAL);
    assert_int_equal(ns_sysctl_set(s, "sctp.udp_port", 30000, 0), 0);
    int err = 0;
    struct ns_sctp_ep *ep = ns_sctp_ep_new(&s->sctp, 0, NULL, 0, &err);
    struct ns_sctp_assoc *a = ns_stack_sctp_connect(s, ep, 0x7f000001u, PORT, 0, &err);
    assert_non_null(a);
    assert_int_equal(sent, 1); /* the INIT */
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(a, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, NS_SCTP_DEFAULT_PMTU);
    assert_int_equal(sim_ctr(s, "sctp_udp", "tx_packets"), 1);
    ns_sctp_abort(a, NULL, 0, 0);
    ns_sctp_assoc_release(a, 0);
    ns_stack_free(s);
}

/* ---- the engine: RFC 6951 5.4 with a rebinding NAT (sctp_pipe) ---- */

static uint8_t *hb_packet(uint32_t vtag, uint8_t out[24])
{
    memset(out, 0, 24);
    ns_wr16(out, SP_PORT_B);
    ns_wr16(out + 2, SP_PORT_A);
    ns_wr32(out + 4, vtag);
    out[12] = 4; /* HEARTBEAT */
    out[15] = 12;
    out[17] = 1;
    out[19] = 8;
    sp_fix_csum(out, 24);
    return out;
}

static void test_engine_port_follows_peer(void **st)
{
    (void)st;
    struct sp_net *net = sp_net_new(31);
    struct sp_node *a = sp_node_new(net, (uint32_t[]){SP_IP_A}, 1, NULL);
    struct sp_node *b = sp_node_new(net, (uint32_t[]){SP_IP_B}, 1, NULL);
    int err = 0;
    struct ns_sctp_ep *ea = ns_sctp_ep_new(&a->sctp, SP_PORT_A, NULL, 0, &err);
    struct ns_sctp_ep *eb = ns_sctp_ep_new(&b->sctp, SP_PORT_B, NULL, 0, &err);
    ns_sctp_ep_listen(eb, true);
    struct ns_sctp_addr peer = {NS_SCTP_AF_INET4, 9899, SP_IP_B};
    struct ns_sctp_assoc *aa = ns_sctp_connect(ea, &peer, 1, SP_PORT_B, net->now, &err);
    assert_non_null(aa);
    sp_run_for(net, NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
    const struct ns_sctp_event *up = sp_last_ev(b, NS_SCTP_EV_COMM_UP);
    assert_non_null(up);
    struct ns_sctp_assoc *ab = up->assoc;
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(aa, &ia), 0);
    assert_int_equal(ia.paths[0].addr.port, 9899);

    /* b's NAT rebinds: its packets now come from port 40000. */
    b->capture = true;
    a->capture = true;
    assert_int_equal(ns_sctp_send(ab, 0, 1, 0, "via nat", 7, 0, net->now), 0);
    assert_true(b->n_out >= 1);
    while (b->n_out) {
        struct sp_out o = b->out[0];
        uint32_t len;
        const uint8_t *bytes = sp_out_bytes(b, 0, &len);
        o.src.port = 40000;
        sp_inject(net, a, bytes, len, &o.src, &o.dst);
        sp_out_drop(b, 0);
    }
    assert_int_equal(ns_sctp_assoc_info(aa, &ia), 0);
    assert_int_equal(ia.n_paths, 1);
    assert_int_equal(ia.paths[0].addr.port, 40000);
    assert_int_equal(ia.stats.encap_port_changes, 1);
    assert_int_equal(ia.stats.rx_data, 1);
    assert_int_equal(a->sctp.stats.rx_ootb, 0);
    assert_int_equal(sp_drain(net, aa), 1);

    /* a's data (and SACKs) go to the new port. */
    assert_int_equal(ns_sctp_send(aa, 0, 1, 0, "back", 4, 0, net->now), 0);
    sp_run_for(net, 300 * NS_MS);
    assert_true(a->n_out >= 1);
    bool data = false;
    for (size_t i = 0; i < a->n_out; i++) {
        assert_int_equal(a->out[i].dst.port, 40000);
        assert_int_equal(a->out[i].dst.addr, SP_IP_B);
        uint32_t len;
        const uint8_t *bytes = sp_out_bytes(a, i, &len);
        data |= sp_chunk_type(bytes, len, 0) == 0;
    }
    assert_true(data);
    sp_out_clear(a);

    /* From yet another port: a HEARTBEAT with a wrong tag, and one with no
     * association behind it (other SCTP ports): nothing moves. */
    uint8_t hb[24];
    struct ns_sctp_addr from = {NS_SCTP_AF_INET4, 50000, SP_IP_B};
    struct ns_sctp_addr to = {NS_SCTP_AF_INET4, 9899, SP_IP_A};
    sp_inject(net, a, hb_packet(ia.local_vtag ^ 0x10, hb), 24, &from, &to);
    assert_int_equal(a->sctp.stats.rx_bad_vtag, 1);
    ns_wr16(hb, SP_PORT_B + 1);
    sp_fix_csum(hb, 24);
    sp_inject(net, a, hb, 24, &from, &to);
    assert_int_equal(a->sctp.stats.rx_ootb, 1);
    assert_int_equal(ns_sctp_assoc_info(aa, &ia), 0);
    assert_int_equal(ia.paths[0].addr.port, 40000);
    assert_int_equal(ia.stats.encap_port_changes, 1);
    /* The right tag from 50000 does move it (the NAT rebound again). */
    sp_inject(net, a, hb_packet(ia.local_vtag, hb), 24, &from, &to);
    assert_int_equal(ns_sctp_assoc_info(aa, &ia), 0);
    assert_int_equal(ia.paths[0].addr.port, 50000);
    assert_int_equal(ia.stats.encap_port_changes, 2);
    assert_int_equal(ia.stats.hb_rx, 1);
    assert_true(a->n_out >= 1);
    assert_int_equal(a->out[a->n_out - 1].dst.port, 50000);
    sp_out_clear(a);
    sp_out_clear(b);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
    ns_sctp_assoc_release(aa, net->now);
    ns_sctp_assoc_release(ab, net->now);
    sp_net_free(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udp_association),
        cmocka_unit_test(test_port_unreachable_init),
        cmocka_unit_test(test_port_unreachable_established),
        cmocka_unit_test(test_frag_needed_udp),
        cmocka_unit_test(test_sysctls),
        cmocka_unit_test(test_hosted_hook),
        cmocka_unit_test(test_engine_port_follows_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
