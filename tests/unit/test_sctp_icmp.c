/* The engine's ICMP rules (sctp/icmp.c: RFC 9260 Appendix C, RFC 6951
 * 5.6), transport-free on tests/support/sctp_pipe: which quotes are ours
 * (the peer's tag, or tag 0 with our INIT's initiate tag while in
 * COOKIE-WAIT), the encapsulation port, protocol unreachable ending the
 * association in setup and when established as the peer's ABORT would,
 * and fragmentation needed only ever lowering a path MTU (to at least
 * NS_SCTP_MIN_PMTU, 4-byte aligned), with the packets that follow fitting
 * it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/timer.h"
#include "sctp_pipe.h"
#include "wire.h"

/* A quoted packet of ours: sport -> dport with tag vtag and a first chunk
 * of type `type` (an INIT carries itag at offset 16). */
static void quote(uint8_t q[20], uint16_t sport, uint16_t dport, uint32_t vtag, uint8_t type,
                  uint32_t itag)
{
    memset(q, 0, 20);
    ns_wr16(q, sport);
    ns_wr16(q + 2, dport);
    ns_wr32(q + 4, vtag);
    q[12] = type;
    ns_wr16(q + 14, 20);
    ns_wr32(q + 16, itag);
}

static struct ns_sctp_assoc_info info_of(struct ns_sctp_assoc *a)
{
    struct ns_sctp_assoc_info i;
    assert_int_equal(ns_sctp_assoc_info(a, &i), 0);
    return i;
}

static enum ns_sctp_icmp_verdict icmp(struct sp_node *n, struct ns_sctp_addr peer, const uint8_t *q,
                                      uint32_t len, enum ns_sctp_icmp_kind k, uint32_t pmtu)
{
    return ns_sctp_icmp_error(&n->sctp, &peer, q, len, k, pmtu, n->net->now);
}

/* Quotes that are not ours change nothing, whatever they claim. */
static void test_not_ours(void **st)
{
    (void)st;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 1, NULL, NULL, 1, 1, 1000));
    struct ns_sctp_assoc_info ia = info_of(p.aa);
    struct ns_sctp_addr b = sp_addr(SP_IP_B);
    uint8_t q[20];
    const enum ns_sctp_icmp_kind PU = NS_SCTP_ICMP_PROT_UNREACH, FN = NS_SCTP_ICMP_FRAG_NEEDED;

    quote(q, SP_PORT_A, SP_PORT_B, ia.peer_vtag, 0, 0);
    /* Shorter than the common header's ports and tag. */
    assert_int_equal(icmp(p.a, b, q, 7, PU, 0), NS_SCTP_ICMP_NO_ASSOC);
    /* Another peer address, other ports. */
    assert_int_equal(icmp(p.a, sp_addr(SP_IP_B2), q, 8, PU, 0), NS_SCTP_ICMP_NO_ASSOC);
    quote(q, SP_PORT_A, SP_PORT_B + 1, ia.peer_vtag, 0, 0);
    assert_int_equal(icmp(p.a, b, q, 8, PU, 0), NS_SCTP_ICMP_NO_ASSOC);
    quote(q, SP_PORT_B, SP_PORT_A, ia.peer_vtag, 0, 0); /* the peer's direction */
    assert_int_equal(icmp(p.a, b, q, 8, PU, 0), NS_SCTP_ICMP_NO_ASSOC);
    /* Our ports, a wrong tag; our own tag (what the peer puts in its
     * packets) is wrong too; tag 0 is an INIT, and ours was answered. */
    quote(q, SP_PORT_A, SP_PORT_B, ia.peer_vtag ^ 1, 0, 0);
    assert_int_equal(icmp(p.a, b, q, 8, PU, 0), NS_SCTP_ICMP_BAD_TAG);
    quote(q, SP_PORT_A, SP_PORT_B, ia.local_vtag, 0, 0);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 600), NS_SCTP_ICMP_BAD_TAG);
    quote(q, SP_PORT_A, SP_PORT_B, 0, 1, ia.local_vtag);
    assert_int_equal(icmp(p.a, b, q, 20, PU, 0), NS_SCTP_ICMP_BAD_TAG);
    /* The right tag, but it went over UDP to port 9899: not this path. */
    quote(q, SP_PORT_A, SP_PORT_B, ia.peer_vtag, 0, 0);
    struct ns_sctp_addr bu = b;
    bu.port = 9899;
    assert_int_equal(icmp(p.a, bu, q, 8, PU, 0), NS_SCTP_ICMP_WRONG_PORT);
    assert_int_equal(icmp(p.a, bu, q, 8, FN, 600), NS_SCTP_ICMP_WRONG_PORT);

    ia = info_of(p.aa);
    assert_int_equal(ia.state, NS_SCTP_ESTABLISHED);
    assert_int_equal(ia.paths[0].pmtu, NS_SCTP_DEFAULT_PMTU);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 0);
    assert_int_equal(p.a->sctp.stats.aborts_rx, 0);
    /* Still works. */
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "ok", 2, 0, p.net->now), 0);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    sp_pair_free(&p);
}

/* ICMP8 when established: COMM_LOST as for the peer's ABORT; nothing is
 * sent (the peer has no SCTP to tell), and the closed association no
 * longer matches. */
static void test_prot_unreach_established(void **st)
{
    (void)st;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 2, NULL, NULL, 1, 1, 1000));
    struct ns_sctp_assoc_info ia = info_of(p.aa);
    uint8_t q[20];
    quote(q, SP_PORT_A, SP_PORT_B, ia.peer_vtag, 0, 0);
    uint64_t tx = p.a->sctp.stats.tx_packets;
    assert_int_equal(icmp(p.a, sp_addr(SP_IP_B), q, 8, NS_SCTP_ICMP_PROT_UNREACH, 0),
                     NS_SCTP_ICMP_ABORTED);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 1);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC), 0);
    const struct ns_sctp_event *ev = sp_last_ev(p.a, NS_SCTP_EV_COMM_LOST);
    assert_ptr_equal(ev->assoc, p.aa);
    assert_int_equal(ev->reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(ev->cause, 0);
    assert_int_equal(p.a->sctp.stats.aborts_rx, 1);
    assert_int_equal(p.a->sctp.stats.comm_lost, 1);
    assert_int_equal(p.a->sctp.stats.tx_packets, tx);
    assert_int_equal(icmp(p.a, sp_addr(SP_IP_B), q, 8, NS_SCTP_ICMP_PROT_UNREACH, 0),
                     NS_SCTP_ICMP_NO_ASSOC);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 1);
    ns_sctp_assoc_release(p.aa, p.net->now);
    sp_pair_free(&p);
}

/* ICMP8 during setup, quoting the INIT a really sent (tag 0): only the
 * INIT's own initiate tag, in a quote long enough to show it, matches.
 * Then CANT_STR_ASSOC at once, and no INIT is retransmitted. */
static void test_prot_unreach_init(void **st)
{
    (void)st;
    struct sp_pair p;
    sp_pair_nodes(&p, 3, NULL, NULL, 1, 1, 1000);
    p.a->capture = true;
    struct ns_sctp_addr b = sp_addr(SP_IP_B);
    p.aa = ns_sctp_connect(p.ea, &b, 1, SP_PORT_B, p.net->now, NULL);
    assert_non_null(p.aa);
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *init = sp_out_bytes(p.a, 0, &len);
    assert_non_null(init);
    assert_int_equal(sp_chunk_type(init, len, 0), 1);
    assert_true(len >= 20);
    uint8_t q[64];
    memcpy(q, init, len < sizeof(q) ? len : sizeof(q));
    sp_out_clear(p.a);
    struct ns_sctp_assoc_info ia = info_of(p.aa);
    assert_int_equal(ia.state, NS_SCTP_COOKIE_WAIT);
    assert_int_equal(sp_rd32(q + 16), ia.local_vtag);

    assert_int_equal(icmp(p.a, b, q, 16, NS_SCTP_ICMP_PROT_UNREACH, 0), NS_SCTP_ICMP_BAD_TAG);
    uint8_t bad[20];
    quote(bad, SP_PORT_A, SP_PORT_B, 0, 1, ia.local_vtag ^ 0x100);
    assert_int_equal(icmp(p.a, b, bad, 20, NS_SCTP_ICMP_PROT_UNREACH, 0), NS_SCTP_ICMP_BAD_TAG);
    quote(bad, SP_PORT_A, SP_PORT_B, 0, 10 /* COOKIE ECHO */, ia.local_vtag);
    assert_int_equal(icmp(p.a, b, bad, 20, NS_SCTP_ICMP_PROT_UNREACH, 0), NS_SCTP_ICMP_BAD_TAG);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_COOKIE_WAIT);

    assert_int_equal(icmp(p.a, b, q, 20, NS_SCTP_ICMP_PROT_UNREACH, 0), NS_SCTP_ICMP_ABORTED);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC), 1);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 0);
    assert_int_equal(sp_last_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC)->reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(p.a->sctp.stats.cant_start, 1);
    sp_run_for(p.net, 10 * NS_SEC);
    assert_int_equal(p.a->n_out, 0);
    assert_int_equal(info_of(p.aa).stats.t1_timeouts, 0);
    ns_sctp_assoc_release(p.aa, p.net->now);
    sp_pair_free(&p);
}

/* UDP encapsulation (RFC 6951 5.6): the quote must be about the port the
 * path uses; a verified frag-needed works in COOKIE-WAIT too. */
static void test_encap_port(void **st)
{
    (void)st;
    struct sp_pair p;
    sp_pair_nodes(&p, 4, NULL, NULL, 1, 1, 1000);
    p.a->capture = true;
    struct ns_sctp_addr bu = {NS_SCTP_AF_INET4, 9899, SP_IP_B};
    p.aa = ns_sctp_connect(p.ea, &bu, 1, SP_PORT_B, p.net->now, NULL);
    assert_non_null(p.aa);
    struct ns_sctp_assoc_info ia = info_of(p.aa);
    uint8_t q[20];
    quote(q, SP_PORT_A, SP_PORT_B, 0, 1, ia.local_vtag);
    struct ns_sctp_addr other = bu, raw = bu;
    other.port = 4000;
    raw.port = 0;
    assert_int_equal(icmp(p.a, other, q, 20, NS_SCTP_ICMP_PROT_UNREACH, 0),
                     NS_SCTP_ICMP_WRONG_PORT);
    assert_int_equal(icmp(p.a, raw, q, 20, NS_SCTP_ICMP_PROT_UNREACH, 0), NS_SCTP_ICMP_WRONG_PORT);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_COOKIE_WAIT);
    assert_int_equal(icmp(p.a, bu, q, 20, NS_SCTP_ICMP_FRAG_NEEDED, 1000 - 28),
                     NS_SCTP_ICMP_PMTU_LOWERED);
    assert_int_equal(info_of(p.aa).paths[0].pmtu, 972);
    assert_int_equal(icmp(p.a, bu, q, 20, NS_SCTP_ICMP_PROT_UNREACH, 0), NS_SCTP_ICMP_ABORTED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC), 1);
    ns_sctp_assoc_release(p.aa, p.net->now);
    sp_pair_free(&p);
}

struct maxlen {
    uint32_t a_max;
};

static bool track_len(void *ctx, struct sp_net *net, const uint8_t *pkt, uint32_t len,
                      const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst)
{
    (void)net;
    (void)pkt;
    (void)dst;
    struct maxlen *m = ctx;
    if (src->addr == SP_IP_A && len > m->a_max)
        m->a_max = len;
    return true;
}

/* Fragmentation needed only lowers (RFC 1191 section 6): not to the same
 * or a larger value, never below NS_SCTP_MIN_PMTU, 4-byte aligned; the
 * association lives and its packets fit the new MTU. */
static void test_frag_needed(void **st)
{
    (void)st;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 5, NULL, NULL, 1, 1, 1000));
    struct ns_sctp_assoc_info ia = info_of(p.aa);
    struct ns_sctp_addr b = sp_addr(SP_IP_B);
    uint8_t q[20];
    quote(q, SP_PORT_A, SP_PORT_B, ia.peer_vtag, 0, 0);
    const enum ns_sctp_icmp_kind FN = NS_SCTP_ICMP_FRAG_NEEDED;
    assert_int_equal(ia.paths[0].pmtu, 1472);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 1500), NS_SCTP_ICMP_IGNORED);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 1472), NS_SCTP_ICMP_IGNORED);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 0), NS_SCTP_ICMP_IGNORED);
    assert_int_equal(info_of(p.aa).paths[0].pmtu, 1472);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 1203), NS_SCTP_ICMP_PMTU_LOWERED);
    assert_int_equal(info_of(p.aa).paths[0].pmtu, 1200);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 1201), NS_SCTP_ICMP_IGNORED);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 1400), NS_SCTP_ICMP_IGNORED);
    assert_int_equal(info_of(p.aa).paths[0].pmtu, 1200);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 100), NS_SCTP_ICMP_PMTU_LOWERED);
    assert_int_equal(info_of(p.aa).paths[0].pmtu, NS_SCTP_MIN_PMTU);
    assert_int_equal(icmp(p.a, b, q, 8, FN, 100), NS_SCTP_ICMP_IGNORED);
    /* A protocol unreachable's frag-needed counterpart never aborts. */
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_ESTABLISHED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 0);

    struct maxlen m = {0};
    p.net->filter = track_len;
    p.net->filter_ctx = &m;
    static uint8_t big[6000];
    memset(big, 0x5a, sizeof(big));
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, big, sizeof(big), 0, p.net->now), 0);
    sp_run_for(p.net, 2 * NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    assert_true(m.a_max > 400);
    assert_true(m.a_max <= NS_SCTP_MIN_PMTU);
    sp_pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_ours),          cmocka_unit_test(test_prot_unreach_established),
        cmocka_unit_test(test_prot_unreach_init), cmocka_unit_test(test_encap_port),
        cmocka_unit_test(test_frag_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
