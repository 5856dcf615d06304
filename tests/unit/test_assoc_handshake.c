/* SCTP association start-up: the four-way handshake byte by byte, the
 * stateless listener and its cookie, T1-init / T1-cookie back-off and
 * Max.Init.Retransmits, stale cookies and the Cookie Preservative retry,
 * INIT checks, unrecognized parameters, INIT collisions, restarts and the
 * COOKIE ECHO cases of RFC 9260 section 5.2.4 (table 2). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/assoc.h"
#include "sctp/chunk.h"
#include "sctp/cookie.h"
#include "sctp/crc32c.h"
#include "sctp_pipe.h"

#define DELAY (10 * NS_MS)

static struct ns_sctp_addr A(void) {
    return sp_addr(SP_IP_A);
} static struct ns_sctp_addr B(void) {
    return sp_addr(SP_IP_B);
}

/* Move every captured packet of n onto the wire and let it arrive. */
static void
forward_all(struct sp_pair *p, struct sp_node *n)
{
    while (n->n_out)
        sp_out_forward(n, 0);
    sp_run_for(p->net, DELAY);
}

static uint32_t init_tag(const uint8_t *pkt)
{
    return sp_rd32(pkt + 16);
}

/* Find parameter `type` in the INIT/INIT ACK at chunk offset 12. */
static const uint8_t *find_param(const uint8_t *pkt, uint32_t len, uint16_t type, uint16_t *plen)
{
    uint32_t clen = sp_rd16(pkt + 14);
    uint32_t off = 12 + 20, end = 12 + clen;
    while (off + 4 <= end && off + 4 <= len) {
        uint16_t t = sp_rd16(pkt + off), l = sp_rd16(pkt + off + 2);
        if (l < 4)
            return NULL;
        if (t == type) {
            *plen = l;
            return pkt + off;
        }
        off += (l + 3u) & ~3u;
    }
    return NULL;
}

static void test_handshake_bytes(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 11, NULL, NULL, 1, 1, DELAY);
    p.a->capture = p.b->capture = true;
    struct ns_sctp_addr peer = B();
    uint64_t t0 = p.net->now;
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &peer, 1, SP_PORT_B, t0, NULL);
    assert_non_null(aa);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_WAIT);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(aa, &ia);
    assert_int_not_equal(ia.local_vtag, 0);

    /* INIT: tag 0, alone, our tag/TSN/streams/window, IPv4 only. */
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_true(ns_sctp_checksum_verify_buf(k, len));
    assert_int_equal(sp_rd16(k), SP_PORT_A);
    assert_int_equal(sp_rd16(k + 2), SP_PORT_B);
    assert_int_equal(sp_rd32(k + 4), 0);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_INIT);
    assert_int_equal(init_tag(k), ia.local_vtag);
    assert_int_equal(sp_rd32(k + 20), 212992);
    assert_int_equal(sp_rd16(k + 24), 10);
    assert_int_equal(sp_rd16(k + 26), 65535);
    assert_int_equal(sp_rd32(k + 28), ia.local_initial_tsn);
    uint16_t pl;
    const uint8_t *sat = find_param(k, len, NS_SCTP_PT_SUPPORTED_ADDR_TYPES, &pl);
    assert_non_null(sat);
    assert_int_equal(pl, 6);
    assert_int_equal(sp_rd16(sat + 4), NS_SCTP_ADDRTYPE_IPV4);
    assert_null(find_param(k, len, NS_SCTP_PT_IPV4, &pl)); /* one address: none listed */
    forward_all(&p, p.a);

    /* INIT ACK: to the INIT's tag; the listener kept nothing. */
    assert_int_equal(p.b->sctp.n_assocs, 0);
    assert_int_equal(p.b->sctp.stats.tx_init_ack, 1);
    assert_int_equal(p.b->n_out, 1);
    k = sp_out_bytes(p.b, 0, &len);
    assert_true(ns_sctp_checksum_verify_buf(k, len));
    assert_int_equal(sp_rd32(k + 4), ia.local_vtag);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_INIT_ACK);
    uint32_t btag = init_tag(k), bitsn = sp_rd32(k + 28);
    assert_int_not_equal(btag, 0);
    assert_int_not_equal(btag, ia.local_vtag);
    assert_int_equal(sp_rd32(k + 20), 212992);
    assert_int_equal(sp_rd16(k + 24), 10);
    assert_int_equal(sp_rd16(k + 26), 65535);
    const uint8_t *ck = find_param(k, len, NS_SCTP_PT_STATE_COOKIE, &pl);
    assert_non_null(ck);
    uint16_t cklen = pl - 4;
    uint8_t cookie[NS_SCTP_COOKIE_MAX_LEN];
    memcpy(cookie, ck + 4, cklen);
    /* The cookie is exactly the documented fields and MAC: no room for a
     * pointer or anything else. */
    assert_int_equal(cklen, NS_SCTP_COOKIE_LEN(0));
    assert_int_equal(cookie[0], NS_SCTP_COOKIE_VERSION);
    assert_int_equal(cookie[1], 0);
    assert_int_equal(sp_rd32(cookie + 16), ia.local_vtag);
    assert_int_equal(sp_rd32(cookie + 20), 212992);
    assert_int_equal(sp_rd32(cookie + 24), ia.local_initial_tsn);
    assert_int_equal(sp_rd32(cookie + 32), btag);
    assert_int_equal(sp_rd32(cookie + 36), bitsn);
    assert_int_equal(sp_rd32(cookie + 48), 0); /* no tie-tags: no TCB */
    assert_int_equal(sp_rd32(cookie + 52), 0);
    assert_int_equal(sp_rd16(cookie + 56), SP_PORT_B);
    assert_int_equal(sp_rd16(cookie + 58), SP_PORT_A);
    assert_int_equal(cookie[60], NS_SCTP_AF_INET4);
    assert_int_equal(sp_rd32(cookie + 64), SP_IP_A);
    struct ns_sctp_cookie_tcb tcb;
    assert_int_equal(
        ns_sctp_cookie_verify(&p.b->sctp.cookie, cookie, cklen, p.net->now, &tcb, NULL),
        NS_SCTP_COOKIE_OK);
    assert_int_equal(tcb.created_us, t0 + DELAY);
    assert_int_equal(tcb.lifetime_ms, 60000);
    forward_all(&p, p.b);

    /* COOKIE ECHO: the listener's tag, the cookie unchanged. */
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_ECHOED);
    assert_int_equal(p.a->n_out, 1);
    k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_rd32(k + 4), btag);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_COOKIE_ECHO);
    assert_int_equal(sp_rd16(k + 14), 4 + cklen);
    assert_memory_equal(k + 16, cookie, cklen);
    forward_all(&p, p.a);

    /* COOKIE ACK: the initiator's tag; the listener is up. */
    assert_int_equal(p.b->sctp.n_assocs, 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_UP), 1);
    const struct ns_sctp_event *up = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP);
    assert_int_equal(up->in_streams, 10);
    assert_int_equal(up->out_streams, 10);
    struct ns_sctp_assoc *ab = up->assoc;
    struct ns_sctp_assoc_info ib;
    ns_sctp_assoc_info(ab, &ib);
    assert_int_equal(ib.state, NS_SCTP_ESTABLISHED);
    assert_int_equal(ib.local_vtag, btag);
    assert_int_equal(ib.peer_vtag, ia.local_vtag);
    assert_int_equal(ib.local_initial_tsn, bitsn);
    assert_int_equal(ib.peer_initial_tsn, ia.local_initial_tsn);
    assert_int_equal(p.b->n_out, 1);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(sp_rd32(k + 4), ia.local_vtag);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_COOKIE_ACK);
    forward_all(&p, p.b);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_UP), 1);
    assert_int_equal(p.a->sctp.stats.established, 1);

    /* The first DATA carries the initial TSN and SSN 0. */
    assert_int_equal(ns_sctp_send(aa, 3, 77, 0, "abc", 3, 1, p.net->now), 0);
    assert_int_equal(p.a->n_out, 1);
    k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_rd32(k + 4), btag);
    assert_int_equal(k[12], NS_SCTP_CT_DATA);
    assert_int_equal(k[13], NS_SCTP_DATA_B | NS_SCTP_DATA_E);
    assert_int_equal(sp_rd16(k + 14), 16 + 3);
    assert_int_equal(sp_rd32(k + 16), ia.local_initial_tsn);
    assert_int_equal(sp_rd16(k + 20), 3);
    assert_int_equal(sp_rd16(k + 22), 0);
    assert_int_equal(sp_rd32(k + 24), 77);
    assert_memory_equal(k + 28, "abc", 3);
    sp_pair_free(&p);
}

/* The handshake packets carry DATA queued before COMM_UP in the COOKIE
 * ECHO, and the listener answers COOKIE ACK + SACK in one packet. */
static void test_cookie_echo_bundles_data(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 12, NULL, NULL, 1, 1, DELAY);
    p.a->capture = p.b->capture = true;
    struct ns_sctp_addr peer = B();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &peer, 1, SP_PORT_B, p.net->now, NULL);
    assert_int_equal(ns_sctp_send(aa, 0, 5, 0, "early", 5, 9, p.net->now), 0);
    assert_int_equal(p.a->n_out, 1); /* only the INIT */
    forward_all(&p, p.a);
    forward_all(&p, p.b);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_chunk_count(k, len), 2);
    assert_int_equal(sp_chunk_type(k, len, 0), NS_SCTP_CT_COOKIE_ECHO);
    assert_int_equal(sp_chunk_type(k, len, 1), NS_SCTP_CT_DATA);
    forward_all(&p, p.a);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(sp_chunk_count(k, len), 2);
    assert_int_equal(sp_chunk_type(k, len, 0), NS_SCTP_CT_COOKIE_ACK);
    assert_int_equal(sp_chunk_type(k, len, 1), NS_SCTP_CT_SACK);
    struct ns_sctp_assoc *ab = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP)->assoc;
    /* COMM_UP before DATA_READY. */
    assert_int_equal(p.b->ev[0].type, NS_SCTP_EV_COMM_UP);
    assert_int_equal(p.b->ev[1].type, NS_SCTP_EV_DATA_READY);
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    ns_sctp_recv_take(ab, &q);
    assert_int_equal(q.count, 1);
    assert_int_equal(q.head->len, 5);
    assert_int_equal(q.head->ppid, 5);
    assert_int_equal(q.head->assoc_id, ns_sctp_assoc_id(ab));
    ns_sctp_msg_free(ab, ns_sctp_rmsgq_pop(&q), p.net->now);
    forward_all(&p, p.b);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(aa, &ia);
    assert_int_equal(ia.state, NS_SCTP_ESTABLISHED);
    assert_int_equal(ia.outstanding_chunks, 0);
    sp_pair_free(&p);
}

/* T1-init: RTO.Initial doubling to RTO.Max, Max.Init.Retransmits (8)
 * retransmissions, then CANT_STR_ASSOC. */
static void test_t1_init_backoff(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 13, NULL, NULL, 1, 1, DELAY);
    p.a->capture = true;
    struct ns_sctp_addr peer = B();
    uint64_t t0 = p.net->now;
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &peer, 1, SP_PORT_B, t0, NULL);
    const uint64_t at[] = {0, 1, 3, 7, 15, 31, 63, 123, 183};
    uint32_t len, tag0 = 0, tsn0 = 0;
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        sp_run_until(p.net, t0 + at[i] * NS_SEC - 1);
        assert_int_equal(p.a->n_out, i == 0 ? 1 : 0);
        sp_run_until(p.net, t0 + at[i] * NS_SEC);
        assert_int_equal(p.a->n_out, 1);
        const uint8_t *k = sp_out_bytes(p.a, 0, &len);
        assert_int_equal(k[12], NS_SCTP_CT_INIT);
        if (i == 0) {
            tag0 = init_tag(k);
            tsn0 = sp_rd32(k + 28);
        }
        /* Retransmissions are the same INIT. */
        assert_int_equal(init_tag(k), tag0);
        assert_int_equal(sp_rd32(k + 28), tsn0);
        sp_out_clear(p.a);
    }
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC), 0);
    sp_run_until(p.net, t0 + 243 * NS_SEC - 1);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_WAIT);
    sp_run_until(p.net, t0 + 243 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_CLOSED);
    assert_int_equal(p.a->n_out, 0);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC);
    assert_non_null(e);

    assert_int_equal(e->reason, NS_SCTP_R_INIT_TIMEOUT);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(aa, &ia);
    assert_int_equal(ia.stats.t1_timeouts, 9);
    assert_int_equal(ns_sctp_send(aa, 0, 0, 0, "x", 1, 0, p.net->now), -ENOTCONN);
    assert_int_equal(ns_timers_next(&p.a->timers), NS_TIME_NEVER);
    ns_sctp_assoc_release(aa, p.net->now);
    assert_int_equal(p.a->sctp.n_assocs, 0);
    sp_pair_free(&p);
}

/* T1-cookie: the COOKIE ECHO is retransmitted with the same back-off. */
static void test_t1_cookie_backoff(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 14, NULL, NULL, 1, 1, DELAY);
    p.a->capture = true;
    struct ns_sctp_addr peer = B();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &peer, 1, SP_PORT_B, p.net->now, NULL);
    forward_all(&p, p.a); /* INIT out, INIT ACK back (b not capturing) */
    sp_run_for(p.net, DELAY);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_ECHOED);
    uint64_t t0 = p.net->now; /* INIT ACK arrival */
    const uint64_t at[] = {0, 1, 3, 7, 15, 31, 63, 123, 183};
    uint32_t len;
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        sp_run_until(p.net, t0 + at[i] * NS_SEC);
        assert_int_equal(p.a->n_out, 1);
        assert_int_equal(p.a->out[0].at, t0 + at[i] * NS_SEC);
        const uint8_t *k = sp_out_bytes(p.a, 0, &len);
        assert_int_equal(k[12], NS_SCTP_CT_COOKIE_ECHO);
        sp_out_clear(p.a);
    }
    sp_run_until(p.net, t0 + 243 * NS_SEC - 1);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_ECHOED);
    sp_run_until(p.net, t0 + 243 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_CLOSED);
    assert_non_null(sp_last_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC));
    assert_int_equal(p.b->sctp.n_assocs, 0);
    sp_pair_free(&p);
}

/* 5.2.6: a stale cookie gets an ERROR with the staleness; the initiator
 * retries with a Cookie Preservative of twice that, which is granted. */
static void test_stale_cookie(void **state)
{
    (void)state;
    struct ns_sctp_params pb;
    ns_sctp_params_default(&pb);
    pb.valid_cookie_life_ms = 100;
    struct sp_pair p;
    sp_pair_nodes(&p, 15, NULL, &pb, 1, 1, DELAY);
    p.a->capture = true;
    struct ns_sctp_addr peer = B();
    uint64_t t0 = p.net->now;
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &peer, 1, SP_PORT_B, t0, NULL);
    forward_all(&p, p.a);
    sp_run_for(p.net, DELAY); /* INIT ACK in, COOKIE ECHO captured */
    assert_int_equal(p.a->n_out, 1);
    /* Hold the COOKIE ECHO for 300 ms: it reaches b 320 ms after the
     * cookie was made (t0 + 10 ms), 220 ms past its 100 ms life. */
    sp_run_until(p.net, t0 + 320 * NS_MS);
    sp_out_forward(p.a, 0);
    sp_run_for(p.net, DELAY);
    assert_int_equal(p.b->sctp.stats.cookie_stale, 1);
    assert_int_equal(p.b->sctp.n_assocs, 0);
    sp_run_for(p.net, DELAY); /* the ERROR reaches a, which sends a new INIT */
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_WAIT);
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_INIT);
    uint16_t pl;
    const uint8_t *cp = find_param(k, len, NS_SCTP_PT_COOKIE_PRESERVATIVE, &pl);
    assert_non_null(cp);
    assert_int_equal(pl, 8);
    /* Staleness = 330 ms (arrival) - 10 ms (creation) - 100 ms = 220 ms. */
    assert_int_equal(sp_rd32(cp + 4), 440);
    forward_all(&p, p.a);
    sp_run_for(p.net, DELAY);
    forward_all(&p, p.a); /* COOKIE ECHO, fresh: 20 ms old with 540 ms of life */
    sp_run_for(p.net, DELAY);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
    assert_int_equal(p.b->sctp.n_assocs, 1);
    sp_pair_free(&p);
}

/* ---- INIT checks and unrecognized parameters ------------------------------ */

static struct ns_pkt *make_init_rwnd(uint32_t vtag, uint32_t tag, uint32_t a_rwnd, uint16_t os,
                                     uint16_t mis, void (*params)(struct ns_sctp_writer *w))
{
    struct ns_sctp_writer w;
    assert_int_equal(ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, vtag), NS_SCTP_WR_OK);
    assert_int_equal(ns_sctp_wr_init_begin(&w, false, tag, a_rwnd, os, mis, 1000), NS_SCTP_WR_OK);
    if (params)
        params(&w);
    assert_int_equal(ns_sctp_wr_end(&w), NS_SCTP_WR_OK);
    return ns_sctp_wr_finish(&w);
}

static struct ns_pkt *make_init(uint32_t vtag, uint32_t tag, uint16_t os, uint16_t mis,
                                void (*params)(struct ns_sctp_writer *w))
{
    return make_init_rwnd(vtag, tag, 65536, os, mis, params);
}

static void put_unknown_params(struct ns_sctp_writer *w)
{
    uint8_t v[4] = {1, 2, 3, 4};
    ns_sctp_wr_tlv(w, 0xBFF0, v, 4);    /* skip */
    ns_sctp_wr_tlv(w, 0xFFF0, v, 4);    /* skip, report */
    ns_sctp_wr_tlv(w, 0x7FF0, v, 4);    /* stop, report */
    ns_sctp_wr_param_ipv4(w, SP_IP_A2); /* never looked at */
}

static void test_init_unrecognized_params(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 16, NULL, NULL, 1, 1, DELAY);
    p.b->capture = true;
    struct ns_sctp_addr src = A(), dst = B();
    ns_sctp_input(&p.b->sctp, make_init(0, 0x11223344, 5, 5, put_unknown_params), &src, &dst,
                  p.net->now);
    assert_int_equal(p.b->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_INIT_ACK);
    assert_int_equal(sp_rd32(k + 4), 0x11223344);
    /* OS is capped by the INIT's MIS. */
    assert_int_equal(sp_rd16(k + 24), 5);
    uint16_t pl;
    const uint8_t *ck = find_param(k, len, NS_SCTP_PT_STATE_COOKIE, &pl);
    assert_non_null(ck);
    assert_int_equal(pl - 4, NS_SCTP_COOKIE_LEN(0)); /* the IPv4 after the stop is ignored */
    /* Unrecognized Parameter for 0xFFF0 and 0x7FF0, in order, not 0xBFF0. */
    uint32_t off = (uint32_t)(ck - k) + ((pl + 3u) & ~3u);
    assert_int_equal(sp_rd16(k + off), NS_SCTP_PT_UNRECOGNIZED);
    assert_int_equal(sp_rd16(k + off + 2), 12);
    assert_int_equal(sp_rd16(k + off + 4), 0xFFF0);
    off += 12;
    assert_int_equal(sp_rd16(k + off), NS_SCTP_PT_UNRECOGNIZED);
    assert_int_equal(sp_rd16(k + off + 4), 0x7FF0);
    off += 12;
    assert_int_equal(off, 12 + sp_rd16(k + 14));
    sp_pair_free(&p);
}

static void put_hostname(struct ns_sctp_writer *w)
{
    ns_sctp_wr_tlv(w, NS_SCTP_PT_HOST_NAME, "host\0\0\0", 8);
}

static void test_init_invalid(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 17, NULL, NULL, 1, 1, DELAY);
    p.b->capture = true;
    struct ns_sctp_addr src = A(), dst = B();
    uint32_t len;
    /* Initiate Tag 0: silently discarded (RFC 9260 3.3.2). */
    ns_sctp_input(&p.b->sctp, make_init(0, 0, 5, 5, NULL), &src, &dst, p.net->now);
    assert_int_equal(p.b->n_out, 0);
    assert_int_equal(p.b->sctp.stats.rx_init_bad, 1);
    /* INIT with a non-zero packet tag: dropped (8.5.1 A). */
    ns_sctp_input(&p.b->sctp, make_init(7, 9, 5, 5, NULL), &src, &dst, p.net->now);
    assert_int_equal(p.b->n_out, 0);
    assert_int_equal(p.b->sctp.stats.rx_bad_vtag, 1);
    /* OS 0: ABORT with Invalid Mandatory Parameter, the INIT's tag, no T. */
    ns_sctp_input(&p.b->sctp, make_init(0, 0xabcd, 0, 5, NULL), &src, &dst, p.net->now);
    assert_int_equal(p.b->n_out, 1);
    const uint8_t *k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(sp_rd32(k + 4), 0xabcd);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], 0);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_INVALID_MANDATORY);
    sp_out_clear(p.b);
    /* MIS 0 likewise. */
    ns_sctp_input(&p.b->sctp, make_init(0, 0xabce, 5, 0, NULL), &src, &dst, p.net->now);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_INVALID_MANDATORY);
    sp_out_clear(p.b);
    /* a_rwnd below 1500 (RFC 9260 6: MUST NOT be advertised): refused like
     * OS 0, nothing kept; 1500 itself is fine. */
    ns_sctp_input(&p.b->sctp, make_init_rwnd(0, 0xabd0, 1499, 5, 5, NULL), &src, &dst, p.net->now);
    assert_int_equal(p.b->n_out, 1);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(sp_rd32(k + 4), 0xabd0);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], 0);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_INVALID_MANDATORY);
    assert_int_equal(p.b->sctp.stats.tx_init_ack, 0);
    sp_out_clear(p.b);
    ns_sctp_input(&p.b->sctp, make_init_rwnd(0, 0xabd1, 0, 5, 5, NULL), &src, &dst, p.net->now);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    sp_out_clear(p.b);
    ns_sctp_input(&p.b->sctp, make_init_rwnd(0, 0xabd2, 1500, 5, 5, NULL), &src, &dst, p.net->now);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_INIT_ACK);
    assert_int_equal(p.b->sctp.stats.tx_init_ack, 1);
    sp_out_clear(p.b);
    assert_int_equal(p.b->sctp.n_assocs, 0);
    /* Host Name Address: ABORT with Unresolvable Address carrying it. */
    ns_sctp_input(&p.b->sctp, make_init(0, 0xabcf, 5, 5, put_hostname), &src, &dst, p.net->now);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(sp_rd32(k + 4), 0xabcf);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_UNRESOLVABLE_ADDR);
    assert_int_equal(sp_rd16(k + 20), NS_SCTP_PT_HOST_NAME);
    sp_out_clear(p.b);
    /* Not listening: ABORT with the INIT's tag. */
    ns_sctp_ep_listen(p.eb, false);
    ns_sctp_input(&p.b->sctp, make_init(0, 0x5555, 5, 5, NULL), &src, &dst, p.net->now);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], 0);
    assert_int_equal(sp_rd32(k + 4), 0x5555);
    assert_int_equal(p.b->sctp.n_assocs, 0);
    sp_pair_free(&p);
}

/* An INIT ACK with a parameter asking to be reported: the COOKIE ECHO is
 * followed by an ERROR with an Unrecognized Parameters cause. Then an INIT
 * ACK without a cookie: ABORT (Missing Mandatory Parameter). */
static void test_init_ack_params(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 18, NULL, NULL, 1, 1, DELAY);
    p.a->capture = true;
    struct ns_sctp_addr peer = B(), me = A();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &peer, 1, SP_PORT_B, p.net->now, NULL);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(aa, &ia);
    sp_out_clear(p.a);
    struct ns_sctp_writer w;
    ns_sctp_wr_start(&w, 1472, SP_PORT_B, SP_PORT_A, ia.local_vtag);
    ns_sctp_wr_init_begin(&w, true, 0x77777777, 100000, 3, 4, 500);
    ns_sctp_wr_param_cookie(&w, "COOKIE!!", 8);
    uint8_t v[4] = {9, 9, 9, 9};
    ns_sctp_wr_tlv(&w, 0xC123, v, 4); /* 11: skip and report */
    ns_sctp_wr_end(&w);
    ns_sctp_input(&p.a->sctp, ns_sctp_wr_finish(&w), &peer, &me, p.net->now);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_ECHOED);
    ns_sctp_assoc_info(aa, &ia);
    assert_int_equal(ia.out_streams, 4); /* min(our OS 10, its MIS 4) */
    assert_int_equal(ia.in_streams, 3);  /* min(our MIS, its OS 3) */
    assert_int_equal(ia.peer_vtag, 0x77777777);
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_rd32(k + 4), 0x77777777);
    assert_int_equal(sp_chunk_count(k, len), 2);
    assert_int_equal(sp_chunk_type(k, len, 0), NS_SCTP_CT_COOKIE_ECHO);
    assert_memory_equal(k + 16, "COOKIE!!", 8);
    uint32_t off = sp_chunk_off(k, len, 1);
    assert_int_equal(k[off], NS_SCTP_CT_ERROR);
    assert_int_equal(sp_rd16(k + off + 4), NS_SCTP_CAUSE_UNRECOGNIZED_PARAMS);
    assert_int_equal(sp_rd16(k + off + 6), 4 + 8);
    assert_int_equal(sp_rd16(k + off + 8), 0xC123);
    sp_out_clear(p.a);
    /* T1-cookie retransmission: the COOKIE ECHO alone. */
    sp_run_for(p.net, NS_SEC);
    k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_chunk_count(k, len), 1);
    sp_out_clear(p.a);

    /* A second association gets an INIT ACK without a cookie. */
    struct ns_sctp_addr peer2 = sp_addr(SP_IP_B2);
    struct ns_sctp_assoc *a2 = ns_sctp_connect(p.ea, &peer2, 1, SP_PORT_B, p.net->now, NULL);
    ns_sctp_assoc_info(a2, &ia);
    sp_out_clear(p.a);
    ns_sctp_wr_start(&w, 1472, SP_PORT_B, SP_PORT_A, ia.local_vtag);
    ns_sctp_wr_init_begin(&w, true, 0x1234, 100000, 3, 4, 500);
    ns_sctp_wr_end(&w);
    ns_sctp_input(&p.a->sctp, ns_sctp_wr_finish(&w), &peer2, &me, p.net->now);
    assert_int_equal(ns_sctp_assoc_state(a2), NS_SCTP_CLOSED);
    k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(sp_rd32(k + 4), 0x1234);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_MISSING_PARAM);
    assert_int_equal(sp_rd32(k + 20), 1);
    assert_int_equal(sp_rd16(k + 24), NS_SCTP_PT_STATE_COOKIE);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC);
    assert_non_null(e);
    sp_out_clear(p.a);

    /* An INIT ACK advertising less than 1500 bytes: ABORT (Invalid
     * Mandatory Parameter), the association fails to start. */
    struct ns_sctp_addr peer3 = sp_addr(SP_IP_B + 7);
    size_t cant = sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC);
    struct ns_sctp_assoc *a3 = ns_sctp_connect(p.ea, &peer3, 1, SP_PORT_B, p.net->now, NULL);
    ns_sctp_assoc_info(a3, &ia);
    sp_out_clear(p.a);
    ns_sctp_wr_start(&w, 1472, SP_PORT_B, SP_PORT_A, ia.local_vtag);
    ns_sctp_wr_init_begin(&w, true, 0x4321, 1499, 3, 4, 500);
    ns_sctp_wr_param_cookie(&w, "COOKIE!!", 8);
    ns_sctp_wr_end(&w);
    ns_sctp_input(&p.a->sctp, ns_sctp_wr_finish(&w), &peer3, &me, p.net->now);
    assert_int_equal(ns_sctp_assoc_state(a3), NS_SCTP_CLOSED);
    assert_int_equal(p.a->n_out, 1);
    k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(sp_rd32(k + 4), 0x4321);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_INVALID_MANDATORY);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC), cant + 1);
    assert_ptr_equal(e->assoc, a2);
    assert_int_equal(e->reason, NS_SCTP_R_PROTOCOL);
    sp_pair_free(&p);
}

/* ---- Collisions and restarts ------------------------------------------------ */

static void test_simultaneous_connect(void **state)
{
    (void)state;
    for (uint64_t seed = 20; seed < 24; seed++) {
        struct sp_pair p;
        sp_pair_nodes(&p, seed, NULL, NULL, 1, 1, DELAY);
        ns_sctp_ep_listen(p.ea, true);
        struct ns_sctp_addr pa = A(), pb = B();
        struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
        struct ns_sctp_assoc *ab = ns_sctp_connect(p.eb, &pa, 1, SP_PORT_A, p.net->now, NULL);
        assert_non_null(aa);
        assert_non_null(ab);
        sp_run_for(p.net, 5 * NS_SEC);
        /* One association each, up once, with each other's tags. */
        assert_int_equal(p.a->sctp.n_assocs, 1);
        assert_int_equal(p.b->sctp.n_assocs, 1);
        assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_UP), 1);
        assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_UP), 1);
        assert_true(p.a->sctp.stats.collisions + p.b->sctp.stats.collisions >= 1);
        /* Equal delays: both reach COOKIE-ECHOED, then case D on both. */
        assert_int_equal(p.a->sctp.stats.cookie_duplicate, 1);
        assert_int_equal(p.b->sctp.stats.cookie_duplicate, 1);
        struct ns_sctp_assoc_info ia, ib;
        ns_sctp_assoc_info(aa, &ia);
        ns_sctp_assoc_info(ab, &ib);
        assert_int_equal(ia.state, NS_SCTP_ESTABLISHED);
        assert_int_equal(ib.state, NS_SCTP_ESTABLISHED);
        assert_int_equal(ia.local_vtag, ib.peer_vtag);
        assert_int_equal(ia.peer_vtag, ib.local_vtag);
        /* Data flows both ways. */
        assert_int_equal(ns_sctp_send(aa, 1, 0, 0, "ping", 4, 0, p.net->now), 0);
        assert_int_equal(ns_sctp_send(ab, 1, 0, 0, "pong", 4, 0, p.net->now), 0);
        sp_run_for(p.net, NS_SEC);
        assert_int_equal(sp_drain(p.net, ab), 1);
        assert_int_equal(sp_drain(p.net, aa), 1);
        sp_pair_free(&p);
    }
}

/* One INIT crosses an INIT ACK: the peer in COOKIE-ECHOED answers an INIT
 * with its own tag and the COOKIE ECHO it gets is case B or D. */
static void test_init_in_cookie_echoed(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 25, NULL, NULL, 1, 1, DELAY);
    ns_sctp_ep_listen(p.ea, true);
    p.a->capture = true;
    struct ns_sctp_addr pa = A(), pb = B();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
    forward_all(&p, p.a); /* INIT -> b, INIT ACK -> a */
    sp_run_for(p.net, DELAY);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_ECHOED);
    sp_out_clear(p.a); /* the COOKIE ECHO is lost */
    /* b connects too (its INIT finds a in COOKIE-ECHOED). */
    struct ns_sctp_assoc *ab = ns_sctp_connect(p.eb, &pa, 1, SP_PORT_A, p.net->now, NULL);
    sp_run_for(p.net, DELAY);
    assert_int_equal(p.a->sctp.stats.collisions, 1);
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_INIT_ACK);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(aa, &ia);
    assert_int_equal(init_tag(k), ia.local_vtag); /* 5.2.1: our existing tag */
    assert_int_equal(sp_rd32(k + 28), ia.local_initial_tsn);
    p.a->capture = false;
    forward_all(&p, p.a);
    sp_run_for(p.net, 3 * NS_SEC);
    /* b's COOKIE ECHO carries a's tag and b's new one: case B at a. */
    assert_int_equal(p.a->sctp.stats.cookie_collision, 1);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
    assert_int_equal(ns_sctp_assoc_state(ab), NS_SCTP_ESTABLISHED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_UP), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_UP), 1);
    assert_int_equal(p.b->sctp.n_assocs, 1);
    sp_pair_free(&p);
}

/* The peer loses its state and connects again from the same address and
 * port: RESTART (5.2.4 A), unacknowledged data reported SEND_FAILED. */
static void test_restart(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 26, NULL, NULL, 1, 1, DELAY));
    struct ns_sctp_assoc_info before;
    ns_sctp_assoc_info(p.ab, &before);
    /* b has data in flight that a will never acknowledge. */
    sp_addr_down(p.net, SP_IP_A, true);
    assert_int_equal(ns_sctp_send(p.ab, 0, 0, 0, "lost", 4, 4242, p.net->now), 0);
    sp_run_for(p.net, 50 * NS_MS);
    sp_addr_down(p.net, SP_IP_A, false);
    sp_node_reboot(p.a);
    p.ea = ns_sctp_ep_new(&p.a->sctp, SP_PORT_A, NULL, 0, NULL);
    struct ns_sctp_addr pb = B();
    struct ns_sctp_assoc *na = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(na), NS_SCTP_ESTABLISHED);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_RESTART), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_UP), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_LOST), 0);
    assert_int_equal(p.b->sctp.stats.restarts, 1);
    assert_int_equal(p.b->sctp.n_assocs, 1);
    const struct ns_sctp_event *sf = sp_last_ev(p.b, NS_SCTP_EV_SEND_FAILED);
    assert_non_null(sf);
    assert_int_equal(sf->context, 4242);
    assert_int_equal(sf->flags, NS_SCTP_SF_SENT);
    /* Same handle and id, new tags. */
    struct ns_sctp_assoc_info after, ia;
    ns_sctp_assoc_info(p.ab, &after);
    ns_sctp_assoc_info(na, &ia);
    assert_int_equal(after.id, before.id);
    assert_int_equal(after.state, NS_SCTP_ESTABLISHED);
    assert_int_not_equal(after.local_vtag, before.local_vtag);
    assert_int_equal(after.peer_vtag, ia.local_vtag);
    assert_int_equal(after.local_vtag, ia.peer_vtag);
    /* And it works in both directions. */
    assert_int_equal(ns_sctp_send(na, 0, 0, 0, "again", 5, 0, p.net->now), 0);
    assert_int_equal(ns_sctp_send(p.ab, 0, 0, 0, "back", 4, 0, p.net->now), 0);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    assert_int_equal(sp_drain(p.net, na), 1);
    sp_pair_free(&p);
}

/* A restart that brings a new address is refused (5.2.2). */
static void test_restart_new_address(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 27, NULL, NULL, 1, 1, DELAY));
    struct ns_sctp_assoc_info before;
    ns_sctp_assoc_info(p.ab, &before);
    sp_node_reboot(p.a);
    p.a->n_addrs = 2;
    p.a->addrs[1] = sp_addr(SP_IP_A2);
    struct ns_sctp_addr la[2] = {A(), sp_addr(SP_IP_A2)};
    p.ea = ns_sctp_ep_new(&p.a->sctp, SP_PORT_A, la, 2, NULL);
    p.b->capture = true;
    struct ns_sctp_addr pb = B();
    struct ns_sctp_assoc *na = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
    ns_sctp_assoc_info(na, &before);
    sp_run_for(p.net, DELAY);
    assert_int_equal(p.b->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], 0);
    assert_int_equal(sp_rd32(k + 4), before.local_vtag);
    assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_RESTART_NEW_ADDRS);
    assert_int_equal(sp_rd16(k + 18), 4 + 8);
    assert_int_equal(sp_rd16(k + 20), NS_SCTP_PT_IPV4);
    assert_int_equal(sp_rd32(k + 24), SP_IP_A2);
    forward_all(&p, p.b);
    assert_int_equal(ns_sctp_assoc_state(na), NS_SCTP_CLOSED);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_CANT_STR_ASSOC);
    assert_non_null(e);
    assert_int_equal(e->cause, NS_SCTP_CAUSE_RESTART_NEW_ADDRS);
    assert_int_equal(ns_sctp_assoc_state(p.ab), NS_SCTP_ESTABLISHED);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_RESTART), 0);
    sp_pair_free(&p);
}

/* Case D: the same COOKIE ECHO again gets a COOKIE ACK and changes
 * nothing. Case C: a late cookie from an earlier INIT ACK is discarded. */
static void test_duplicate_and_late_cookie(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 28, NULL, NULL, 1, 1, DELAY);
    p.a->capture = p.b->capture = true;
    struct ns_sctp_addr pa = A(), pb = B();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    uint8_t init[256];
    uint32_t init_len = len;
    memcpy(init, k, len);
    forward_all(&p, p.a);
    /* The same INIT twice: two stateless INIT ACKs with different tags. */
    sp_inject(p.net, p.b, init, init_len, &pa, &pb);
    assert_int_equal(p.b->n_out, 2);
    uint8_t ack2[512];
    k = sp_out_bytes(p.b, 1, &len);
    uint32_t ack2_len = len;
    memcpy(ack2, k, len);
    sp_out_drop(p.b, 1);
    forward_all(&p, p.b);
    uint8_t echo[512];
    k = sp_out_bytes(p.a, 0, &len);
    uint32_t echo_len = len;
    memcpy(echo, k, len);
    forward_all(&p, p.a);
    forward_all(&p, p.b);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_ESTABLISHED);
    struct ns_sctp_assoc *ab = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP)->assoc;
    struct ns_sctp_assoc_info ib;
    ns_sctp_assoc_info(ab, &ib);

    /* D: duplicate. */
    sp_inject(p.net, p.b, echo, echo_len, &pa, &pb);
    assert_int_equal(p.b->sctp.stats.cookie_duplicate, 1);
    assert_int_equal(p.b->n_out, 1);
    k = sp_out_bytes(p.b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_COOKIE_ACK);
    assert_int_equal(sp_rd32(k + 4), ib.peer_vtag);
    sp_out_clear(p.b);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_UP), 1);
    assert_int_equal(p.b->sctp.n_assocs, 1);

    /* C: the cookie of the second INIT ACK (another local tag, the same
     * peer tag, no tie-tags). */
    uint16_t pl;
    const uint8_t *ck = find_param(ack2, ack2_len, NS_SCTP_PT_STATE_COOKIE, &pl);
    struct ns_sctp_writer w;
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, init_tag(ack2));
    ns_sctp_wr_cookie_echo(&w, ck + 4, pl - 4);
    struct ns_pkt *late = ns_sctp_wr_finish(&w);
    ns_sctp_input(&p.b->sctp, late, &pa, &pb, p.net->now);
    assert_int_equal(p.b->n_out, 0);
    assert_int_equal(p.b->sctp.stats.cookie_unmatched, 1);
    struct ns_sctp_assoc_info ib2;
    ns_sctp_assoc_info(ab, &ib2);
    assert_int_equal(ib2.local_vtag, ib.local_vtag);
    assert_int_equal(ib2.state, NS_SCTP_ESTABLISHED);

    /* A forged cookie (one bit flipped) is dropped. */
    echo[40] ^= 1;
    sp_fix_csum(echo, echo_len);
    sp_inject(p.net, p.b, echo, echo_len, &pa, &pb);
    assert_int_equal(p.b->n_out, 0);
    assert_int_equal(p.b->sctp.stats.cookie_bad, 1);
    sp_pair_free(&p);
}

/* 5.2.3 and 5.2.5: an INIT ACK or a COOKIE ACK for an association that is
 * already up is ignored. */
static void test_unexpected_init_ack_cookie_ack(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 30, NULL, NULL, 1, 1, DELAY));
    p.a->capture = true;
    struct ns_sctp_assoc_info ia, ia2;
    ns_sctp_assoc_info(p.aa, &ia);
    struct ns_sctp_addr src = B(), dst = A();
    struct ns_sctp_writer w;
    ns_sctp_wr_start(&w, 1472, SP_PORT_B, SP_PORT_A, ia.local_vtag);
    ns_sctp_wr_cookie_ack(&w);
    ns_sctp_input(&p.a->sctp, ns_sctp_wr_finish(&w), &src, &dst, p.net->now);
    ns_sctp_wr_start(&w, 1472, SP_PORT_B, SP_PORT_A, ia.local_vtag);
    ns_sctp_wr_init_begin(&w, true, 0x4242, 10000, 1, 1, 1);
    ns_sctp_wr_param_cookie(&w, "c", 1);
    ns_sctp_wr_end(&w);
    ns_sctp_input(&p.a->sctp, ns_sctp_wr_finish(&w), &src, &dst, p.net->now);
    ns_sctp_assoc_info(p.aa, &ia2);
    assert_int_equal(ia2.stats.drop_state, ia.stats.drop_state + 2);
    assert_int_equal(ia2.state, NS_SCTP_ESTABLISHED);
    assert_int_equal(ia2.peer_vtag, ia.peer_vtag);
    assert_int_equal(p.a->n_out, 0);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_UP), 1);
    sp_pair_free(&p);
}

/* connect() errors and the association id table. */
static void test_connect_errors(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 29, NULL, NULL, 1, 1, DELAY));
    int err = 0;
    struct ns_sctp_addr pb = B();
    assert_null(ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, &err));
    assert_int_equal(err, -EISCONN);
    assert_null(ns_sctp_connect(p.ea, &pb, 0, SP_PORT_B, p.net->now, &err));
    assert_int_equal(err, -EINVAL);
    assert_null(ns_sctp_connect(p.ea, &pb, 1, 0, p.net->now, &err));
    assert_int_equal(err, -EINVAL);
    assert_ptr_equal(ns_sctp_assoc_by_id(&p.a->sctp, ns_sctp_assoc_id(p.aa)), p.aa);
    assert_null(ns_sctp_assoc_by_id(&p.a->sctp, 999));
    /* Two endpoints on one port clash; port 0 picks an ephemeral one. */
    assert_null(ns_sctp_ep_new(&p.a->sctp, SP_PORT_A, NULL, 0, &err));
    assert_int_equal(err, -EADDRINUSE);
    struct ns_sctp_ep *e2 = ns_sctp_ep_new(&p.a->sctp, 0, NULL, 0, &err);
    assert_non_null(e2);
    assert_true(ns_sctp_ep_port(e2) >= 49152);
    sp_pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake_bytes),
        cmocka_unit_test(test_cookie_echo_bundles_data),
        cmocka_unit_test(test_t1_init_backoff),
        cmocka_unit_test(test_t1_cookie_backoff),
        cmocka_unit_test(test_stale_cookie),
        cmocka_unit_test(test_init_unrecognized_params),
        cmocka_unit_test(test_init_invalid),
        cmocka_unit_test(test_init_ack_params),
        cmocka_unit_test(test_simultaneous_connect),
        cmocka_unit_test(test_init_in_cookie_echoed),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_restart_new_address),
        cmocka_unit_test(test_duplicate_and_late_cookie),
        cmocka_unit_test(test_unexpected_init_ack_cookie_ack),
        cmocka_unit_test(test_connect_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
