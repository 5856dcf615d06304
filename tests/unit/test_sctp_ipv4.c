/* SCTP over nstack's IPv4 (stack/sctp_glue.c): two full stacks on a
 * memlink (tests/support/sim.h) on a virtual clock. ARP resolution then
 * the four-way handshake to 198.18.0.2:5001, COMM_UP on both sides,
 * messages of 1, 1000 and 100000 bytes delivered intact and segmented by
 * SCTP, never fragmented by IPv4; an ICMP fragmentation-needed lowering
 * the path MTU (and a forged one ignored); protocol unreachable ending an
 * association (also one still in COOKIE-WAIT) like an ABORT; SACKs keeping the neighbour
 * entry REACHABLE without ARP probes; graceful shutdown; protocol 132 no
 * longer answered with ICMP protocol unreachable; the sctp.* sysctl keys;
 * counters; `nstack sctp show` through the command engine.
 *
 * The tools are not part of the library, so their sources are compiled
 * into this test directly (as test_ctl.c does). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/tools/addrcmd.c"
#include "../../src/tools/cmd.c"
#include "../../src/tools/ctl.c"
#include "../../src/tools/neighcmd.c"
#include "../../src/tools/ping.c"
#include "../../src/tools/perfcmd.c"
#include "../../src/tools/pingstat.c"
#include "../../src/tools/sctpcmd.c"
#include "../../src/tools/services.c"
#include "../../src/tools/statscmd.c"
#include "../../src/tools/sysctlcmd.c"
#include "../../src/tools/text.c"
#include "../../src/tools/udpcmd.c"
#include "../../src/tools/usage.c"
#include "core/checksum.h"
#include "sim.h"

#define A_IP SIM_IP(198, 18, 0, 1)
#define B_IP SIM_IP(198, 18, 0, 2)
#define PORT 5001

struct app {
    struct ns_stack *s;
    struct ns_sctp_assoc *assoc; /* connect's, or the listener's from COMM_UP */
    int comm_up, comm_lost, cant_start, shutdown, shutdown_complete, data_ready;
    uint16_t in_streams, out_streams;
    enum ns_sctp_reason last_reason; /* of COMM_LOST / CANT_STR_ASSOC */
    uint8_t *rx;                     /* every received byte, in order */
    size_t rx_len, rx_cap;
    uint32_t msgs;        /* complete messages */
    uint32_t msg_len[16]; /* the first ones' lengths */
};

static void app_rx(struct app *ap, struct ns_sctp_assoc *a, uint64_t now)
{
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    ns_sctp_recv_take(a, &q);
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&q))) {
        if (ap->rx_len + m->len > ap->rx_cap) {
            ap->rx_cap = (ap->rx_len + m->len) * 2;
            ap->rx = realloc(ap->rx, ap->rx_cap);
            assert_non_null(ap->rx);
        }
        assert_int_equal(ns_sctp_rmsg_copy(m, 0, ap->rx + ap->rx_len, m->len), m->len);
        ap->rx_len += m->len;
        if (m->flags & NS_SCTP_RMSG_EOR) {
            if (ap->msgs < 16)
                ap->msg_len[ap->msgs] = m->len;
            ap->msgs++;
        }
        ns_sctp_msg_free(a, m, now);
    }
}

static void app_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct app *ap = ctx;
    switch (ev->type) {
    case NS_SCTP_EV_COMM_UP:
        ap->comm_up++;
        ap->assoc = ev->assoc;
        ap->in_streams = ev->in_streams;
        ap->out_streams = ev->out_streams;
        break;
    case NS_SCTP_EV_COMM_LOST:
        ap->comm_lost++;
        ap->last_reason = ev->reason;
        break;
    case NS_SCTP_EV_CANT_STR_ASSOC:
        ap->cant_start++;
        ap->last_reason = ev->reason;
        break;
    case NS_SCTP_EV_SHUTDOWN:
        ap->shutdown++;
        break;
    case NS_SCTP_EV_SHUTDOWN_COMPLETE:
        ap->shutdown_complete++;
        break;
    case NS_SCTP_EV_DATA_READY:
        ap->data_ready++;
        app_rx(ap, ev->assoc, now);
        break;
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
};

static void pair_setup(struct pair *p, uint64_t seed, const struct ns_memlink_cfg *cfg)
{
    memset(p, 0, sizeof(*p));
    p->sim = sim_new(seed);
    assert_non_null(p->sim);
    p->a = sim_add_stack(p->sim, "a", A_IP, 24, NULL);
    p->b = sim_add_stack(p->sim, "b", B_IP, 24, NULL);
    p->sa = sim_stack(p->sim, p->a);
    p->sb = sim_stack(p->sim, p->b);
    p->aa.s = p->sa;
    p->ab.s = p->sb;
    ns_stack_set_sctp_event(p->sa, app_event, &p->aa);
    ns_stack_set_sctp_event(p->sb, app_event, &p->ab);
    struct ns_memlink_cfg c = cfg ? *cfg : (struct ns_memlink_cfg){.delay_us = 1000};
    p->link = sim_link(p->sim, p->a, p->b, &c);
    assert_true(p->link >= 0);
    /* Let the gratuitous ARPs of the link-up pass. */
    sim_run_for(p->sim, 10 * NS_MS);
    int err = 0;
    p->ep_b = ns_sctp_ep_new(&p->sb->sctp, PORT, NULL, 0, &err);
    assert_non_null(p->ep_b);
    ns_sctp_ep_listen(p->ep_b, true);
    p->ep_a = ns_sctp_ep_new(&p->sa->sctp, 0, NULL, 0, &err);
    assert_non_null(p->ep_a);
}

static void pair_connect(struct pair *p)
{
    int err = 0;
    p->aa.assoc = ns_stack_sctp_connect(p->sa, p->ep_a, B_IP, PORT, sim_now(p->sim), &err);
    assert_non_null(p->aa.assoc);
    sim_run_for(p->sim, 100 * NS_MS);
    assert_int_equal(p->aa.comm_up, 1);
    assert_int_equal(p->ab.comm_up, 1);
    assert_non_null(p->ab.assoc);
    assert_int_equal(ns_sctp_assoc_state(p->aa.assoc), NS_SCTP_ESTABLISHED);
    assert_int_equal(ns_sctp_assoc_state(p->ab.assoc), NS_SCTP_ESTABLISHED);
}

static void pair_free(struct pair *p)
{
    free(p->aa.rx);
    free(p->ab.rx);
    sim_free(p->sim);
}

/* ------------------------------------------------------------------ */

static void test_connect_and_messages(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 11, NULL);
    uint64_t arp_req0 = p.sa->arp.stats.tx_requests;
    pair_connect(&p);
    /* The INIT waited for ARP: exactly one request, answered. */
    assert_int_equal(p.sa->arp.stats.tx_requests - arp_req0, 1);
    assert_int_equal(p.aa.out_streams, 10);
    assert_int_equal(p.ab.in_streams, 10);

    /* Paths sized from the route: 1500 - 20. */
    struct ns_sctp_assoc_info ia, ib;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ns_sctp_assoc_info(p.ab.assoc, &ib), 0);
    assert_int_equal(ia.n_paths, 1);
    assert_int_equal(ia.paths[0].addr.addr, B_IP);
    assert_int_equal(ia.paths[0].pmtu, 1480);
    assert_int_equal(ib.paths[0].addr.addr, A_IP);
    assert_int_equal(ib.paths[0].pmtu, 1480);
    assert_int_equal(ia.peer_port, PORT);
    assert_int_equal(ib.local_port, PORT);
    assert_int_equal(ia.local_port, ib.peer_port);
    assert_int_equal(ia.peer_vtag, ib.local_vtag);

    static uint8_t big[100000];
    uint8_t m1 = 0x5a, m2[1000];
    sim_pattern(m2, sizeof(m2), 3);
    sim_pattern(big, sizeof(big), 9);
    uint64_t now = sim_now(p.sim);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 42, 0, &m1, 1, 0, now), 0);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 1, 42, 0, m2, sizeof(m2), 0, now), 0);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 42, 0, big, sizeof(big), 0, now), 0);
    sim_run_for(p.sim, 2 * NS_SEC);

    assert_int_equal(p.ab.msgs, 3);
    assert_int_equal(p.ab.msg_len[0], 1);
    assert_int_equal(p.ab.msg_len[1], 1000);
    assert_int_equal(p.ab.msg_len[2], 100000);
    assert_int_equal(p.ab.rx_len, 1 + 1000 + 100000);
    /* Streams 0 and 1 are independent; compare per message. */
    size_t off = 0;
    for (uint32_t i = 0; i < 3; i++) {
        const uint8_t *want = p.ab.msg_len[i] == 1 ? &m1 : p.ab.msg_len[i] == 1000 ? m2 : big;
        assert_memory_equal(p.ab.rx + off, want, p.ab.msg_len[i]);
        off += p.ab.msg_len[i];
    }

    /* Segmented by SCTP (100000 / 1480-ish = 70+ DATA chunks), never by
     * IPv4: no fragment created, none reassembled, nothing fell back. */
    assert_int_equal(p.sa->ip.stats.frag_creates, 0);
    assert_int_equal(p.sa->ip.stats.frag_oks, 0);
    assert_int_equal(p.sb->ip.stats.reasm_reqds, 0);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "tx_frag_fallback"), 0);
    assert_true(sim_ctr(p.sa, "sctp_glue", "tx_packets") >= 70);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "tx_errors"), 0);
    assert_int_equal(sim_ctr(p.sb, "sctp_glue", "rx_packets"),
                     sim_ctr(p.sa, "sctp_glue", "tx_packets"));
    assert_int_equal(sim_ctr(p.sa, "sctp", "established"), 1);
    assert_int_equal(sim_ctr(p.sb, "sctp", "passive_opens"), 1);
    assert_int_equal(p.sb->ip.stats.in_unknown_protos, 0);
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.flight, 0);
    assert_true(ia.stats.tx_data >= 70);
    assert_int_equal(ia.stats.retransmissions, 0);
    assert_int_equal(p.aa.comm_lost + p.ab.comm_lost, 0);
    pair_free(&p);
}

/* An ICMP destination unreachable (code) from `from` to A, quoting an
 * SCTP packet A sent to B whose first quoted bytes are l4[0..l4_len). */
static void inject_unreach(struct pair *p, uint32_t from, uint8_t code, uint16_t mtu,
                           const uint8_t *l4, uint32_t l4_len)
{
    uint8_t f[14 + 20 + 8 + 20 + 64];
    uint32_t len = 14 + 20 + 8 + 20 + l4_len;
    assert_true(len <= sizeof(f));
    memset(f, 0, sizeof(f));
    struct ns_iface *ifa = ns_stack_iface(p->sa, sim_ifindex(p->sim, p->link, 0));
    struct ns_iface *ifb = ns_stack_iface(p->sb, sim_ifindex(p->sim, p->link, 1));
    ns_eth_write(f, &ifa->mac, &ifb->mac, NS_ETHERTYPE_IPV4);
    struct ns_ip_hdr oh = {.tot_len = (uint16_t)(len - 14),
                           .ttl = 64,
                           .proto = NS_IPPROTO_ICMP,
                           .src = from,
                           .dst = A_IP};
    ns_ip_write(f + 14, &oh);
    uint8_t *icmp = f + 34;
    icmp[0] = NS_ICMP_DEST_UNREACH;
    icmp[1] = code;
    ns_wr16(icmp + 6, mtu);
    struct ns_ip_hdr qh = {.tot_len = 1500,
                           .frag = NS_IP_DF,
                           .ttl = 64,
                           .proto = NS_IPPROTO_SCTP,
                           .src = A_IP,
                           .dst = B_IP};
    ns_ip_write(icmp + 8, &qh);
    memcpy(icmp + 28, l4, l4_len);
    ns_wr16(icmp + 2, ns_csum(icmp, 8 + 20 + l4_len));
    ns_stack_input(p->sa, ifa->index, f, len, sim_now(p->sim));
}

static void inject_frag_needed(struct pair *p, uint32_t from, uint16_t mtu, uint16_t sport,
                               uint16_t dport, uint32_t vtag)
{
    uint8_t l4[8];
    ns_wr16(l4, sport);
    ns_wr16(l4 + 2, dport);
    ns_wr32(l4 + 4, vtag);
    inject_unreach(p, from, NS_ICMP_FRAG_NEEDED, mtu, l4, sizeof(l4));
}

static void test_frag_needed_lowers_pmtu(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 12, NULL);
    pair_connect(&p);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);

    /* A forged one (wrong tag) changes nothing in SCTP. */
    inject_frag_needed(&p, SIM_IP(198, 18, 0, 254), 1200, ia.local_port, PORT, ia.peer_vtag ^ 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_no_assoc"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_pmtu_lowered"), 0);
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 1480);
    /* ... nor in IPv4's path-MTU cache (Appendix C: the tag is checked
     * before anything changes). */
    assert_int_equal(ns_pmtu_get(&p.sa->ip, B_IP, sim_now(p.sim)), 0);

    /* The real one: 1200 - 20 for SCTP. */
    inject_frag_needed(&p, SIM_IP(198, 18, 0, 254), 1200, ia.local_port, PORT, ia.peer_vtag);
    assert_int_equal(p.sa->ip.icmp_stats.in_frag_needed, 2);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_frag_needed"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_pmtu_lowered"), 1);
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 1180);
    assert_int_equal(ia.paths[0].cwnd >= 1180, true);
    assert_int_equal(ns_pmtu_get(&p.sa->ip, B_IP, sim_now(p.sim)), 1200);

    /* A larger MTU in a later ICMP does not raise it. */
    inject_frag_needed(&p, SIM_IP(198, 18, 0, 254), 1400, ia.local_port, PORT, ia.peer_vtag);
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 1180);

    /* Data now fits 1200-byte IPv4 packets: IPv4 (whose route MTU the
     * same ICMP lowered) never fragments and nothing falls back. */
    static uint8_t msg[20000];
    sim_pattern(msg, sizeof(msg), 5);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 0, 0, msg, sizeof(msg), 0, sim_now(p.sim)), 0);
    sim_run_for(p.sim, 2 * NS_SEC);
    assert_int_equal(p.ab.msgs, 1);
    assert_int_equal(p.ab.rx_len, sizeof(msg));
    assert_memory_equal(p.ab.rx, msg, sizeof(msg));
    assert_int_equal(p.sa->ip.stats.frag_creates, 0);
    assert_int_equal(p.sa->ip.stats.frag_fails, 0);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "tx_frag_fallback"), 0);
    /* 20000 bytes in chunks of at most 1180 - 12 - 16: at least 18. */
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_true(ia.stats.tx_data >= 18);
    pair_free(&p);
}

/* The IPv4 route MTU shrinks behind the engine's back (a PMTU cache entry
 * learnt elsewhere): packets already sized for 1480 go out without DF and
 * are fragmented by IPv4 instead of being lost, and the path MTU is
 * resynced at the next input or poll. */
static void test_route_mtu_fallback_and_resync(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 18, NULL);
    pair_connect(&p);
    ns_pmtu_update(&p.sa->ip, B_IP, 1000, sim_now(p.sim));
    static uint8_t msg[6000];
    sim_pattern(msg, sizeof(msg), 8);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 0, 0, msg, sizeof(msg), 0, sim_now(p.sim)), 0);
    assert_true(sim_ctr(p.sa, "sctp_glue", "tx_frag_fallback") >= 1);
    assert_true(p.sa->ip.stats.frag_creates >= 2);
    assert_int_equal(p.sa->ip.stats.frag_fails, 0);
    sim_run_for(p.sim, 1 * NS_SEC);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.paths[0].pmtu, 980);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "pmtu_syncs"), 1);
    assert_int_equal(p.ab.msgs, 1);
    assert_memory_equal(p.ab.rx, msg, sizeof(msg));
    assert_true(p.sb->ip.stats.reasm_oks >= 1);
    /* From now on SCTP segments to 980: no more fallbacks. */
    uint64_t fb = sim_ctr(p.sa, "sctp_glue", "tx_frag_fallback");
    uint64_t fc = p.sa->ip.stats.frag_creates;
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 0, 0, msg, sizeof(msg), 0, sim_now(p.sim)), 0);
    sim_run_for(p.sim, 1 * NS_SEC);
    assert_int_equal(p.ab.msgs, 2);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "tx_frag_fallback"), fb);
    assert_int_equal(p.sa->ip.stats.frag_creates, fc);
    pair_free(&p);
}

/* RFC 9260 Appendix C, ICMP8: protocol unreachable from the peer ends the
 * association as an ABORT would; ICMP3: port unreachable is ignored; a
 * wrong tag is ignored. */
static void test_prot_unreach_aborts(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 19, NULL);
    pair_connect(&p);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    uint8_t l4[8];
    ns_wr16(l4, ia.local_port);
    ns_wr16(l4 + 2, PORT);
    ns_wr32(l4 + 4, ia.peer_vtag);
    inject_unreach(&p, B_IP, NS_ICMP_PORT_UNREACH, 0, l4, sizeof(l4));
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_other"), 1);
    ns_wr32(l4 + 4, ia.peer_vtag + 1);
    inject_unreach(&p, B_IP, NS_ICMP_PROT_UNREACH, 0, l4, sizeof(l4));
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_no_assoc"), 1);
    assert_int_equal(ns_sctp_assoc_state(p.aa.assoc), NS_SCTP_ESTABLISHED);
    assert_int_equal(p.aa.comm_lost, 0);

    ns_wr32(l4 + 4, ia.peer_vtag);
    inject_unreach(&p, B_IP, NS_ICMP_PROT_UNREACH, 0, l4, sizeof(l4));
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_prot_unreach_aborts"), 1);
    assert_int_equal(ns_sctp_assoc_state(p.aa.assoc), NS_SCTP_CLOSED);
    assert_int_equal(p.aa.comm_lost, 1);
    assert_int_equal(p.aa.last_reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(sim_ctr(p.sa, "sctp", "aborts_rx"), 1);
    ns_sctp_assoc_release(p.aa.assoc, sim_now(p.sim));
    pair_free(&p);
}

/* The same while the INIT is outstanding: the quote carries tag 0, so the
 * INIT's initiate tag (20 bytes into the quote) identifies it. */
static void test_prot_unreach_during_init(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 20, NULL);
    int err = 0;
    struct ns_sctp_assoc *a = ns_stack_sctp_connect(p.sa, p.ep_a, B_IP, PORT, sim_now(p.sim), &err);
    assert_non_null(a);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(a, &ia), 0);
    assert_int_equal(ia.state, NS_SCTP_COOKIE_WAIT);
    uint8_t l4[20] = {0};
    ns_wr16(l4, ia.local_port);
    ns_wr16(l4 + 2, PORT);
    l4[12] = 1; /* INIT */
    ns_wr16(l4 + 14, 20);
    ns_wr32(l4 + 16, ia.local_vtag ^ 0x100);
    /* Wrong initiate tag; then the right one but a quote too short. */
    inject_unreach(&p, B_IP, NS_ICMP_PROT_UNREACH, 0, l4, 20);
    ns_wr32(l4 + 16, ia.local_vtag);
    inject_unreach(&p, B_IP, NS_ICMP_PROT_UNREACH, 0, l4, 16);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_no_assoc"), 2);
    assert_int_equal(ns_sctp_assoc_state(a), NS_SCTP_COOKIE_WAIT);
    inject_unreach(&p, B_IP, NS_ICMP_PROT_UNREACH, 0, l4, 20);
    assert_int_equal(sim_ctr(p.sa, "sctp_glue", "icmp_prot_unreach_aborts"), 1);
    assert_int_equal(ns_sctp_assoc_state(a), NS_SCTP_CLOSED);
    assert_int_equal(p.aa.cant_start, 1);
    assert_int_equal(p.aa.last_reason, NS_SCTP_R_PEER_ABORT);
    ns_sctp_assoc_release(a, sim_now(p.sim));
    pair_free(&p);
}

static uint8_t neigh_state(struct ns_stack *s, uint32_t ifindex, uint32_t ip)
{
    uint8_t key[4];
    ns_arp_key(ip, key);
    struct ns_neigh *n = ns_neigh_lookup(&s->arp.tbl, ifindex, key);
    return n ? n->state : 0;
}

static void test_sack_confirms_neighbour(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 13, NULL);
    pair_connect(&p);
    uint32_t ifa = sim_ifindex(p.sim, p.link, 0);
    assert_int_equal(neigh_state(p.sa, ifa, B_IP), NS_NUD_REACHABLE);
    uint64_t req0 = p.sa->arp.stats.tx_requests;
    uint64_t conf0 = sim_ctr(p.sa, "sctp_glue", "path_confirms");
    /* base_reachable_time is 30 s (the entry lives 15-45 s unconfirmed):
     * keep data flowing for 100 s and sample the entry. */
    uint8_t b[100];
    memset(b, 1, sizeof(b));
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 0, 0, b, sizeof(b), 0, sim_now(p.sim)), 0);
        sim_run_for(p.sim, 100 * NS_MS);
        assert_int_equal(neigh_state(p.sa, ifa, B_IP), NS_NUD_REACHABLE);
    }
    assert_int_equal(p.ab.msgs, 1000);
    assert_int_equal(p.sa->arp.stats.tx_requests, req0);
    /* One SACK per two packets (sack_freq 2): about 500 confirmations. */
    uint64_t confs = sim_ctr(p.sa, "sctp_glue", "path_confirms") - conf0;
    assert_in_range(confs, 450, 1000);
    pair_free(&p);
}

static void test_graceful_shutdown(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 14, NULL);
    pair_connect(&p);
    uint8_t b[3000];
    sim_pattern(b, sizeof(b), 1);
    uint64_t now = sim_now(p.sim);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 0, 0, b, sizeof(b), 0, now), 0);
    /* Queued data still goes out before the SHUTDOWN completes. */
    assert_int_equal(ns_sctp_shutdown(p.aa.assoc, now), 0);
    sim_run_for(p.sim, 1 * NS_SEC);
    assert_int_equal(p.ab.msgs, 1);
    assert_memory_equal(p.ab.rx, b, sizeof(b));
    assert_int_equal(p.ab.shutdown, 1);
    assert_int_equal(p.aa.shutdown_complete, 1);
    assert_int_equal(p.ab.shutdown_complete, 1);
    assert_int_equal(p.aa.comm_lost + p.ab.comm_lost, 0);
    assert_int_equal(ns_sctp_assoc_state(p.aa.assoc), NS_SCTP_CLOSED);
    assert_int_equal(ns_sctp_assoc_state(p.ab.assoc), NS_SCTP_CLOSED);
    assert_int_equal(sim_ctr(p.sa, "sctp", "shutdowns"), 1);
    assert_int_equal(sim_ctr(p.sb, "sctp", "shutdowns"), 1);
    ns_sctp_assoc_release(p.aa.assoc, sim_now(p.sim));
    ns_sctp_assoc_release(p.ab.assoc, sim_now(p.sim));
    sim_run_for(p.sim, 1 * NS_SEC);
    assert_null(ns_sctp_assoc_next(&p.sa->sctp, NULL));
    assert_null(ns_sctp_assoc_next(&p.sb->sctp, NULL));
    pair_free(&p);
}

static void test_no_protocol_unreachable(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 15, NULL);
    /* Nobody listens on 5002: B's engine answers the INIT with an ABORT
     * (RFC 9260 8.4), IPv4 no longer sends protocol unreachable. */
    int err = 0;
    struct ns_sctp_assoc *a = ns_stack_sctp_connect(p.sa, p.ep_a, B_IP, 5002, sim_now(p.sim), &err);
    assert_non_null(a);
    sim_run_for(p.sim, 100 * NS_MS);
    assert_int_equal(p.aa.cant_start, 1);
    assert_int_equal(ns_sctp_assoc_state(a), NS_SCTP_CLOSED);
    assert_int_equal(p.sb->ip.stats.in_unknown_protos, 0);
    assert_int_equal(p.sb->ip.icmp_stats.out_dest_unreachs, 0);
    assert_int_equal(p.sb->ip.stats.in_delivers, sim_ctr(p.sb, "sctp_glue", "rx_packets"));
    assert_int_equal(sim_ctr(p.sb, "sctp", "rx_no_endpoint"), 1);
    assert_int_equal(sim_ctr(p.sb, "sctp", "tx_ootb_abort"), 1);
    assert_int_equal(sim_ctr(p.sa, "sctp", "cant_start"), 1);
    ns_sctp_assoc_release(a, sim_now(p.sim));

    /* A broadcast SCTP packet is dropped by the glue before the engine. */
    uint8_t f[14 + 20 + 12];
    memset(f, 0, sizeof(f));
    struct ns_iface *ifb = ns_stack_iface(p.sb, sim_ifindex(p.sim, p.link, 1));
    ns_eth_write(f, &ns_mac_bcast, &ifb->mac, NS_ETHERTYPE_IPV4);
    struct ns_ip_hdr h = {.tot_len = 32,
                          .ttl = 64,
                          .proto = NS_IPPROTO_SCTP,
                          .src = A_IP,
                          .dst = SIM_IP(198, 18, 0, 255)};
    ns_ip_write(f + 14, &h);
    uint64_t rx0 = sim_ctr(p.sb, "sctp", "rx_packets");
    ns_stack_input(p.sb, ifb->index, f, sizeof(f), sim_now(p.sim));
    assert_int_equal(sim_ctr(p.sb, "sctp_glue", "rx_drop_bcast"), 1);
    assert_int_equal(sim_ctr(p.sb, "sctp", "rx_packets"), rx0);
    assert_int_equal(p.sb->ip.icmp_stats.out_dest_unreachs, 0);
    pair_free(&p);
}

static void test_sysctl_keys(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 16, NULL);
    static const char *const keys[] = {
        "sctp.rto_initial_ms",
        "sctp.rto_min_ms",
        "sctp.rto_max_ms",
        "sctp.max_burst",
        "sctp.valid_cookie_life_ms",
        "sctp.association_max_retrans",
        "sctp.path_max_retrans",
        "sctp.max_init_retransmits",
        "sctp.hb_interval_ms",
        "sctp.sack_timeout_ms",
        "sctp.sack_freq",
        "sctp.rcvbuf_bytes",
        "sctp.sndbuf_bytes",
        "sctp.max_message_bytes",
        "sctp.reasm_max_bytes",
        "sctp.out_streams",
        "sctp.max_in_streams",
        "sctp.cookie_secret_life_ms",
        "sctp.nodelay",
        "sctp.pd_point_bytes",
        "sctp.udp_port",
        "sctp.encap_port",
    };
    static const uint32_t defaults[] = {1000,  1000,  60000, 4,      60000,  10,     5,       8,
                                        30000, 200,   2,     212992, 212992, 262144, 4194304, 10,
                                        65535, 60000, 0,     0,      0,      0};
    size_t n_sctp = 0;
    for (size_t i = 0; ns_sysctl_at(i); i++)
        n_sctp += strncmp(ns_sysctl_at(i)->key, "sctp.", 5) == 0;
    /* One key per field of struct ns_sctp_params. */
    assert_int_equal(n_sctp, sizeof(struct ns_sctp_params) / sizeof(uint32_t));
    assert_int_equal(n_sctp, sizeof(keys) / sizeof(keys[0]));
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        uint32_t v = 12345;
        assert_int_equal(ns_sysctl_get(p.sa, keys[i], &v), 0);
        assert_int_equal(v, defaults[i]);
    }
    uint64_t now = sim_now(p.sim);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.sack_timeout_ms", 501, now), -ERANGE);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.out_streams", 0, now), -ERANGE);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.nodelay", 2, now), -ERANGE);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.rto_min_ms", 70000, now), -EINVAL);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.no_such_key", 1, now), -ENOENT);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.rto_max_ms", 120000, now), 0);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.rto_min_ms", 70000, now), 0);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.rto_max_ms", 60000, now), -EINVAL);
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.rto_min_ms", 1000, now), 0);
    uint32_t v;
    assert_int_equal(ns_sysctl_get(p.sa, "sctp.rto_max_ms", &v), 0);
    assert_int_equal(v, 120000);
    assert_int_equal(p.sa->params.sctp.rto_max_ms, 120000);
    assert_int_equal(p.sa->sctp.p.rto_max_ms, 120000);

    /* New associations take the values: 5 outbound streams asked by A,
     * B accepts at most 3 inbound. */
    assert_int_equal(ns_sysctl_set(p.sa, "sctp.out_streams", 5, now), 0);
    assert_int_equal(ns_sysctl_set(p.sb, "sctp.max_in_streams", 3, now), 0);
    assert_int_equal(ns_sysctl_set(p.sb, "sctp.rcvbuf_bytes", 65536, now), 0);
    pair_connect(&p);
    assert_int_equal(p.aa.out_streams, 3);
    assert_int_equal(p.ab.in_streams, 3);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);
    assert_int_equal(ia.out_streams, 3);
    assert_int_equal(ia.peer_rwnd, 65536);
    pair_free(&p);
}

/* ---- nstack sctp show, through the command engine ---- */

struct outbuf {
    struct ns_sbuf o, e;
    int status;
    bool done;
};

static void ob_write(void *ctx, int stream, const char *data, size_t n)
{
    struct outbuf *b = ctx;
    ns_sbuf_add(stream == 1 ? &b->o : &b->e, data, n);
}

static void ob_done(void *ctx, int status)
{
    struct outbuf *b = ctx;
    b->status = status;
    b->done = true;
}

static int run_cmd(struct ns_cmd_env *env, uint8_t flags, struct outbuf *b, uint64_t now, int argc,
                   char **argv)
{
    ns_sbuf_init(&b->o);
    ns_sbuf_init(&b->e);
    b->done = false;
    struct ns_cmd_out out = {.write = ob_write, .done = ob_done, .ctx = b};
    struct ns_cmd_sess *sess = ns_cmd_start(env, flags, argc, argv, &out, now);
    assert_non_null(sess);
    assert_true(ns_cmd_done(sess));
    ns_cmd_free(sess);
    assert_true(b->done);
    return b->status;
}

static void ob_free(struct outbuf *b)
{
    ns_sbuf_free(&b->o);
    ns_sbuf_free(&b->e);
}

static void test_sctp_show(void **st)
{
    (void)st;
    struct pair p;
    pair_setup(&p, 17, NULL);
    struct ns_cmd_env env;
    ns_cmd_env_init(&env, p.sa, 1);
    struct outbuf b;

    char *show[] = {"sctp", "show"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 2, show), 0);
    assert_string_equal(ns_sbuf_str(&b.o), "");
    ob_free(&b);
    assert_int_equal(run_cmd(&env, NS_CTL_F_JSON, &b, sim_now(p.sim), 2, show), 0);
    assert_string_equal(ns_sbuf_str(&b.o), "[]\n");
    ob_free(&b);

    pair_connect(&p);
    uint8_t m[3000];
    sim_pattern(m, sizeof(m), 2);
    assert_int_equal(ns_sctp_send(p.aa.assoc, 0, 0, 0, m, sizeof(m), 0, sim_now(p.sim)), 0);
    sim_run_for(p.sim, 1 * NS_SEC);
    struct ns_sctp_assoc_info ia;
    assert_int_equal(ns_sctp_assoc_info(p.aa.assoc, &ia), 0);

    char *bare[] = {"sctp"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 1, bare), 0);
    const char *o = ns_sbuf_str(&b.o);
    char want[256];
    snprintf(want, sizeof(want), "assoc %u ESTABLISHED 198.18.0.1:%u -> 198.18.0.2:5001\n", ia.id,
             ia.local_port);
    assert_memory_equal(o, want, strlen(want));
    snprintf(want, sizeof(want), "  vtag local 0x%08x peer 0x%08x streams in 10 out 10\n",
             ia.local_vtag, ia.peer_vtag);
    assert_non_null(strstr(o, want));
    snprintf(want, sizeof(want),
             "  cwnd %u ssthresh %u flight 0 outstanding 0 rwnd %u peer_rwnd %u\n", ia.cwnd,
             ia.ssthresh, ia.rwnd, ia.peer_rwnd);
    assert_non_null(strstr(o, want));
    snprintf(want, sizeof(want), "  tsn next %u cum_ack %u peer_cum %u\n", ia.next_tsn, ia.cum_ack,
             ia.peer_cum_tsn);
    assert_non_null(strstr(o, want));
    assert_non_null(strstr(o, "  path 198.18.0.2 active confirmed primary pmtu 1480 cwnd "));
    assert_non_null(strstr(o, "  counters:\n"));
    assert_non_null(strstr(o, "    tx_data 3\n"));
    assert_non_null(strstr(o, "    retransmissions 0\n"));
    assert_non_null(strstr(o, "    t3_timeouts 0\n"));
    assert_non_null(strstr(o, "    drop_bad_vtag 0\n"));
    assert_string_equal(ns_sbuf_str(&b.e), "");
    ob_free(&b);

    assert_int_equal(run_cmd(&env, NS_CTL_F_JSON, &b, sim_now(p.sim), 2, show), 0);
    o = ns_sbuf_str(&b.o);
    snprintf(want, sizeof(want),
             "[{\"id\":%u,\"state\":\"ESTABLISHED\",\"local_port\":%u,\"peer_port\":5001,", ia.id,
             ia.local_port);
    assert_memory_equal(o, want, strlen(want));
    assert_non_null(strstr(o, "\"in_streams\":10,\"out_streams\":10,"));
    assert_non_null(strstr(o, "\"paths\":[{\"addr\":\"198.18.0.2\",\"local\":"));
    assert_non_null(strstr(o, "\"pmtu\":1480,"));
    assert_non_null(strstr(o, "\"tx_data\":3,"));
    assert_non_null(strstr(o, "\"t3_timeouts\":0"));
    assert_int_equal(o[strlen(o) - 2], ']');
    assert_int_equal(o[strlen(o) - 1], '\n');
    ob_free(&b);

    /* One association by id; an unknown id. */
    char idbuf[16];
    snprintf(idbuf, sizeof(idbuf), "%u", ia.id);
    char *byid[] = {"sctp", "show", idbuf};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 3, byid), 0);
    snprintf(want, sizeof(want), "assoc %u ESTABLISHED ", ia.id);
    assert_memory_equal(ns_sbuf_str(&b.o), want, strlen(want));
    ob_free(&b);
    char *noid[] = {"sctp", "show", "777"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 3, noid), NS_EXIT_FAIL);
    assert_string_equal(ns_sbuf_str(&b.e), "nstack: sctp: no association 777\n");
    assert_string_equal(ns_sbuf_str(&b.o), "");
    ob_free(&b);

    /* Usage errors. */
    char *bad[] = {"sctp", "frob"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 2, bad), NS_EXIT_USAGE);
    assert_string_equal(ns_sbuf_str(&b.e),
                        "nstack: sctp: unknown argument 'frob' (usage: sctp [show [ID]])\n");
    ob_free(&b);

    /* stats shows the engine's and the glue's groups. */
    char *stats[] = {"stats", "sctp", "sctp_glue"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 3, stats), 0);
    assert_memory_equal(ns_sbuf_str(&b.o), "sctp:\n    rx_packets ", 21);
    assert_non_null(strstr(ns_sbuf_str(&b.o), "\nsctp_glue:\n    rx_packets "));
    assert_null(strstr(ns_sbuf_str(&b.o), "\nudp:"));
    ob_free(&b);

    /* sysctl through the command. */
    char *sysctl[] = {"sysctl", "sctp.max_burst"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 2, sysctl), 0);
    assert_string_equal(ns_sbuf_str(&b.o), "sctp.max_burst = 4\n");
    ob_free(&b);
    char *conflict[] = {"sysctl", "-w", "sctp.rto_min_ms=70000"};
    assert_int_equal(run_cmd(&env, 0, &b, sim_now(p.sim), 3, conflict), NS_EXIT_FAIL);
    assert_string_equal(ns_sbuf_str(&b.e), "nstack: sysctl: sctp.rto_min_ms: value 70000 conflicts "
                                           "with sctp.rto_min_ms <= sctp.rto_max_ms\n");
    ob_free(&b);

    ns_cmd_env_free(&env);
    pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_and_messages),
        cmocka_unit_test(test_frag_needed_lowers_pmtu),
        cmocka_unit_test(test_route_mtu_fallback_and_resync),
        cmocka_unit_test(test_prot_unreach_aborts),
        cmocka_unit_test(test_prot_unreach_during_init),
        cmocka_unit_test(test_sack_confirms_neighbour),
        cmocka_unit_test(test_graceful_shutdown),
        cmocka_unit_test(test_no_protocol_unreachable),
        cmocka_unit_test(test_sysctl_keys),
        cmocka_unit_test(test_sctp_show),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
