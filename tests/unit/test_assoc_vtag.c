/* SCTP verification tag rules (RFC 9260 8.5, 8.5.1: T bit of ABORT and
 * SHUTDOWN COMPLETE, tag 0 only for INIT), out-of-the-blue packets (8.4),
 * unrecognized chunk types by their upper bits (3.2) end to end, checksum
 * and malformed-packet drops. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/chunk.h"
#include "sctp/crc32c.h"
#include "sctp_pipe.h"

#define DELAY (10 * NS_MS)

static struct ns_sctp_addr A(void) {
    return sp_addr(SP_IP_A);
} static struct ns_sctp_addr B(void) {
    return sp_addr(SP_IP_B);
}

/* A packet from a (port A) to b (port B) with the given tag, holding one
 * control chunk with an opaque value. */
static struct ns_pkt *
one_chunk(uint16_t sport, uint16_t dport, uint32_t vtag, uint8_t type, uint8_t flags, const void *v,
          uint32_t vlen)
{
    struct ns_sctp_writer w;
    assert_int_equal(ns_sctp_wr_start(&w, 1472, sport, dport, vtag), NS_SCTP_WR_OK);
    assert_int_equal(ns_sctp_wr_chunk(&w, type, flags, v, vlen), NS_SCTP_WR_OK);
    return ns_sctp_wr_finish(&w);
}

static struct ns_sctp_chunk_data mkdata(uint32_t tsn, const char *s)
{
    static struct ns_buf *b;
    if (!b)
        b = ns_buf_alloc(256);
    size_t n = strlen(s);
    memcpy(b->data, s, n);
    return (struct ns_sctp_chunk_data){.tsn = tsn,
                                       .sid = 0,
                                       .ssn = 0,
                                       .ppid = 0,
                                       .flags = NS_SCTP_DATA_B | NS_SCTP_DATA_E | NS_SCTP_DATA_U,
                                       .buf = b,
                                       .off = 0,
                                       .len = (uint32_t)n};
}

struct fixture {
    struct sp_pair p;
    struct ns_sctp_assoc_info ia, ib;
};

static void setup_pair(struct fixture *f, uint64_t seed)
{
    assert_true(sp_pair_setup(&f->p, seed, NULL, NULL, 1, 1, DELAY));
    ns_sctp_assoc_info(f->p.aa, &f->ia);
    ns_sctp_assoc_info(f->p.ab, &f->ib);
    f->p.a->capture = f->p.b->capture = true;
}

/* A packet to b's association with the given tag (b's own tag is right). */
static void to_b(struct fixture *f, struct ns_pkt *pkt)
{
    struct ns_sctp_addr src = A(), dst = B();
    ns_sctp_input(&f->p.b->sctp, pkt, &src, &dst, f->p.net->now);
}

static void test_wrong_tag_dropped(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 31);
    struct ns_sctp_writer w;
    struct ns_sctp_chunk_data d = mkdata(f.ia.next_tsn, "hi");
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, f.ib.local_vtag ^ 1);
    ns_sctp_wr_data(&w, &d);
    to_b(&f, ns_sctp_wr_finish(&w));
    struct ns_sctp_assoc_info ib;
    ns_sctp_assoc_info(f.p.ab, &ib);
    assert_int_equal(ib.stats.drop_bad_vtag, 1);
    assert_int_equal(ib.stats.rx_data, 0);
    assert_int_equal(ib.peer_cum_tsn, f.ib.peer_cum_tsn);
    assert_int_equal(f.p.b->sctp.stats.rx_bad_vtag, 1);
    assert_int_equal(f.p.b->n_out, 0);
    /* The right tag is accepted. */
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, f.ib.local_vtag);
    ns_sctp_wr_data(&w, &d);
    to_b(&f, ns_sctp_wr_finish(&w));
    ns_sctp_assoc_info(f.p.ab, &ib);
    assert_int_equal(ib.stats.rx_data, 1);
    assert_int_equal(ib.peer_cum_tsn, f.ia.next_tsn);
    sp_pair_free(&f.p);
}

static void test_abort_tbit(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 32);
    /* T clear: must carry b's own tag. */
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.peer_vtag, NS_SCTP_CT_ABORT, 0, NULL, 0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_ESTABLISHED);
    /* T set: must carry the peer's tag (reflected). */
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.local_vtag, NS_SCTP_CT_ABORT, NS_SCTP_FLAG_T,
                       NULL, 0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_ESTABLISHED);
    struct ns_sctp_assoc_info ib;
    ns_sctp_assoc_info(f.p.ab, &ib);
    assert_int_equal(ib.stats.drop_bad_vtag, 2);
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.peer_vtag, NS_SCTP_CT_ABORT, NS_SCTP_FLAG_T, NULL,
                       0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_CLOSED);
    const struct ns_sctp_event *e = sp_last_ev(f.p.b, NS_SCTP_EV_COMM_LOST);
    assert_non_null(e);
    assert_int_equal(e->reason, NS_SCTP_R_PEER_ABORT);
    assert_int_equal(e->cause, 0);
    assert_int_equal(f.p.b->n_out, 0); /* an ABORT is never answered */
    /* Now out of the blue: another ABORT is silently dropped. */
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.local_vtag, NS_SCTP_CT_ABORT, 0, NULL, 0));
    assert_int_equal(f.p.b->n_out, 0);
    assert_int_equal(f.p.b->sctp.stats.rx_ootb, 1);

    /* On a's side: T clear with a's tag works too. */
    struct ns_sctp_addr src = B(), dst = A();
    uint8_t cause[8] = {0, NS_SCTP_CAUSE_USER_ABORT, 0, 8, 'b', 'y', 'e', '!'};
    ns_sctp_input(&f.p.a->sctp,
                  one_chunk(SP_PORT_B, SP_PORT_A, f.ia.local_vtag, NS_SCTP_CT_ABORT, 0, cause, 8),
                  &src, &dst, f.p.net->now);
    e = sp_last_ev(f.p.a, NS_SCTP_EV_COMM_LOST);
    assert_non_null(e);
    assert_int_equal(e->cause, NS_SCTP_CAUSE_USER_ABORT);
    assert_int_equal(e->info_len, 4);
    assert_memory_equal(e->info, "bye!", 4);
    sp_pair_free(&f.p);
}

/* SHUTDOWN COMPLETE: the same T bit rule, and only in SHUTDOWN-ACK-SENT. */
static void test_shutdown_complete_tbit(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 33);
    /* In ESTABLISHED it is ignored even with the right tag. */
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.local_vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE, 0, NULL,
                       0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_ESTABLISHED);
    /* a shuts down; b answers with SHUTDOWN ACK (dropped). */
    ns_sctp_shutdown(f.p.aa, f.p.net->now);
    sp_out_forward(f.p.a, 0);
    sp_run_for(f.p.net, DELAY);
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_SHUTDOWN_ACK_SENT);
    assert_int_equal(sp_count_ev(f.p.b, NS_SCTP_EV_SHUTDOWN), 1);
    sp_out_clear(f.p.b);
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.local_vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE,
                       NS_SCTP_FLAG_T, NULL, 0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_SHUTDOWN_ACK_SENT);
    to_b(&f,
         one_chunk(SP_PORT_A, SP_PORT_B, f.ib.peer_vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE, 0, NULL, 0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_SHUTDOWN_ACK_SENT);
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, f.ib.peer_vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE,
                       NS_SCTP_FLAG_T, NULL, 0));
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_CLOSED);
    assert_int_equal(sp_count_ev(f.p.b, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    assert_int_equal(f.p.b->n_out, 0);
    sp_pair_free(&f.p);
}

static void test_tag_zero_and_bundling(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 34);
    /* Tag 0 without INIT: dropped. */
    to_b(&f, one_chunk(SP_PORT_A, SP_PORT_B, 0, NS_SCTP_CT_HEARTBEAT, 0, "\0\1\0\010abcd", 8));
    assert_int_equal(f.p.b->sctp.stats.rx_bad_vtag, 1);
    assert_int_equal(f.p.b->n_out, 0);
    /* INIT bundled with another chunk: dropped whole. */
    struct ns_sctp_writer w;
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, 0);
    ns_sctp_wr_chunk(&w, NS_SCTP_CT_COOKIE_ACK, 0, NULL, 0);
    uint8_t initv[16] = {0, 0, 0, 5, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1};
    ns_sctp_wr_chunk(&w, NS_SCTP_CT_COOKIE_ACK, 0, NULL, 0);
    struct ns_pkt *pk = ns_sctp_wr_finish(&w);
    /* Turn the second COOKIE ACK into an INIT by hand. */
    ns_pkt_linearize(pk, 0);
    uint8_t *raw = malloc(pk->len + 16);
    memcpy(raw, pk->data, pk->len);
    raw[16] = NS_SCTP_CT_INIT;
    raw[18] = 0;
    raw[19] = 20;
    memcpy(raw + 20, initv, 16);
    sp_fix_csum(raw, pk->len + 16);
    struct ns_sctp_addr src = A(), dst = B();
    sp_inject(f.p.net, f.p.b, raw, pk->len + 16, &src, &dst);
    ns_pkt_free(pk);
    free(raw);
    assert_int_equal(f.p.b->sctp.stats.rx_bad_bundling, 1);
    assert_int_equal(f.p.b->n_out, 0);
    sp_pair_free(&f.p);
}

static void test_checksum_and_malformed(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 35);
    struct ns_pkt *pk = one_chunk(SP_PORT_A, SP_PORT_B, f.ib.local_vtag, NS_SCTP_CT_HEARTBEAT, 0,
                                  "\0\1\0\010abcd", 8);
    ns_pkt_linearize(pk, 0);
    pk->data[20] ^= 0x40; /* payload changed, CRC not */
    to_b(&f, pk);
    assert_int_equal(f.p.b->sctp.stats.rx_bad_csum, 1);
    assert_int_equal(f.p.b->n_out, 0);
    /* A chunk length running past the end. */
    uint8_t bad[20] = {0};
    bad[1] = (uint8_t)(SP_PORT_A & 0xff);
    bad[0] = SP_PORT_A >> 8;
    bad[2] = SP_PORT_B >> 8;
    bad[3] = SP_PORT_B & 0xff;
    bad[12] = NS_SCTP_CT_HEARTBEAT;
    bad[15] = 40;
    sp_fix_csum(bad, sizeof(bad));
    struct ns_sctp_addr src = A(), dst = B();
    sp_inject(f.p.net, f.p.b, bad, sizeof(bad), &src, &dst);
    assert_int_equal(f.p.b->sctp.stats.rx_malformed, 1);
    sp_inject(f.p.net, f.p.b, bad, 8, &src, &dst);
    assert_int_equal(f.p.b->sctp.stats.rx_malformed, 2);
    assert_int_equal(f.p.b->n_out, 0);
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_ESTABLISHED);
    sp_pair_free(&f.p);
}

/* 8.4: what an endpoint without a matching association answers. */
static void test_ootb(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 36, NULL, NULL, 1, 1, DELAY);
    p.b->capture = true;
    struct ns_sctp_addr src = A(), dst = B();
    uint32_t len;
    const uint8_t *k;
    struct sp_node *b = p.b;
#define IN(pkt) ns_sctp_input(&b->sctp, (pkt), &src, &dst, p.net->now)
    /* DATA (or anything else): ABORT with T, the tag reflected. */
    struct ns_sctp_writer w;
    struct ns_sctp_chunk_data d = mkdata(5, "x");
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, 0xdeadbeef);
    ns_sctp_wr_data(&w, &d);
    IN(ns_sctp_wr_finish(&w));
    assert_int_equal(b->n_out, 1);
    k = sp_out_bytes(b, 0, &len);
    assert_int_equal(sp_rd16(k), SP_PORT_B);
    assert_int_equal(sp_rd16(k + 2), SP_PORT_A);
    assert_int_equal(sp_rd32(k + 4), 0xdeadbeef);
    assert_int_equal(sp_chunk_count(k, len), 1);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], NS_SCTP_FLAG_T);
    assert_int_equal(b->out[0].dst.addr, SP_IP_A);
    sp_out_clear(b);
    /* To a port nobody has: the same. */
    IN(one_chunk(SP_PORT_A, 9999, 0x1234, NS_SCTP_CT_SACK, 0, "\0\0\0\1\0\0\1\0\0\0\0\0", 12));
    k = sp_out_bytes(b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(sp_rd32(k + 4), 0x1234);
    assert_int_equal(sp_rd16(k), 9999);
    sp_out_clear(b);
    assert_int_equal(b->sctp.stats.rx_no_endpoint, 1);
    /* SHUTDOWN ACK: SHUTDOWN COMPLETE with T, the tag reflected. */
    IN(one_chunk(SP_PORT_A, SP_PORT_B, 0x55aa55aa, NS_SCTP_CT_SHUTDOWN_ACK, 0, NULL, 0));
    k = sp_out_bytes(b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_SHUTDOWN_COMPLETE);
    assert_int_equal(k[13], NS_SCTP_FLAG_T);
    assert_int_equal(sp_rd32(k + 4), 0x55aa55aa);
    sp_out_clear(b);
    /* ABORT, SHUTDOWN COMPLETE, COOKIE ACK, Stale Cookie ERROR: nothing. */
    IN(one_chunk(SP_PORT_A, SP_PORT_B, 1, NS_SCTP_CT_ABORT, 0, NULL, 0));
    IN(one_chunk(SP_PORT_A, SP_PORT_B, 1, NS_SCTP_CT_SHUTDOWN_COMPLETE, 0, NULL, 0));
    IN(one_chunk(SP_PORT_A, SP_PORT_B, 1, NS_SCTP_CT_COOKIE_ACK, 0, NULL, 0));
    IN(one_chunk(SP_PORT_A, SP_PORT_B, 1, NS_SCTP_CT_ERROR, 0, "\0\3\0\010\0\0\1\0", 8));
    assert_int_equal(b->n_out, 0);
    /* Any other ERROR: ABORT. */
    IN(one_chunk(SP_PORT_A, SP_PORT_B, 2, NS_SCTP_CT_ERROR, 0, "\0\1\0\010\0\1\0\0", 8));
    assert_int_equal(b->n_out, 1);
    sp_out_clear(b);
    /* INIT to a port without an endpoint: ABORT with the INIT's tag, no T. */
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, 7777, 0);
    ns_sctp_wr_init_begin(&w, false, 0x0badcafe, 10000, 1, 1, 1);
    ns_sctp_wr_end(&w);
    IN(ns_sctp_wr_finish(&w));
    k = sp_out_bytes(b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], 0);
    assert_int_equal(sp_rd32(k + 4), 0x0badcafe);
    sp_out_clear(b);
    /* A COOKIE ECHO to a port without an endpoint: ABORT (T). */
    IN(one_chunk(SP_PORT_A, 7777, 3, NS_SCTP_CT_COOKIE_ECHO, 0, "cookie", 6));
    k = sp_out_bytes(b, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    assert_int_equal(k[13], NS_SCTP_FLAG_T);
    sp_out_clear(b);
    assert_int_equal(b->sctp.n_assocs, 0);
    assert_int_equal(b->sctp.stats.tx_ootb_abort, 5);
    assert_int_equal(b->sctp.stats.tx_ootb_shutdown_complete, 1);
#undef IN
    sp_pair_free(&p);
}

/* A SHUTDOWN ACK reaching an association still in COOKIE-WAIT is treated
 * as out of the blue (8.5.1 E). */
static void test_shutdown_ack_in_cookie_wait(void **state)
{
    (void)state;
    struct sp_pair p;
    sp_pair_nodes(&p, 37, NULL, NULL, 1, 1, DELAY);
    p.a->capture = true;
    struct ns_sctp_addr pb = B(), pa = A();
    struct ns_sctp_assoc *aa = ns_sctp_connect(p.ea, &pb, 1, SP_PORT_B, p.net->now, NULL);
    sp_out_clear(p.a);
    ns_sctp_input(&p.a->sctp,
                  one_chunk(SP_PORT_B, SP_PORT_A, 0x31415926, NS_SCTP_CT_SHUTDOWN_ACK, 0, NULL, 0),
                  &pb, &pa, p.net->now);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_non_null(k);
    assert_int_equal(k[12], NS_SCTP_CT_SHUTDOWN_COMPLETE);
    assert_int_equal(k[13], NS_SCTP_FLAG_T);
    assert_int_equal(sp_rd32(k + 4), 0x31415926);
    assert_int_equal(ns_sctp_assoc_state(aa), NS_SCTP_COOKIE_WAIT);
    sp_pair_free(&p);
}

/* Unrecognized chunk types, each followed by a DATA chunk (3.2):
 * 00 stop and discard, 01 stop and report, 10 skip, 11 skip and report. */
static void test_unknown_chunks(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 38);
    const struct {
        uint8_t type;
        bool data_taken, reported;
    } cases[] = {
        {0x3f, false, false},
        {0x7f, false, true},
        {0xbf, true, false},
        {0xff, true, true},
        {NS_SCTP_CT_ECNE, false, false}, /* known to the codec, not negotiated */
        {NS_SCTP_CT_FORWARD_TSN, true, true},
    };
    uint32_t tsn = f.ia.next_tsn;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ns_sctp_writer w;
        ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, f.ib.local_vtag);
        uint8_t v[8] = {0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 1, 2};
        ns_sctp_wr_chunk(&w, cases[i].type, 0x5a, v, 6);
        struct ns_sctp_chunk_data d = mkdata(tsn, "payload");
        ns_sctp_wr_data(&w, &d);
        to_b(&f, ns_sctp_wr_finish(&w));
        struct ns_sctp_assoc_info ib;
        ns_sctp_assoc_info(f.p.ab, &ib);
        assert_int_equal(ib.stats.drop_unknown_chunk, i + 1);
        assert_int_equal(ib.peer_cum_tsn, cases[i].data_taken ? tsn : tsn - 1);
        bool err = false;
        for (size_t k = 0; k < f.p.b->n_out; k++) {
            uint32_t len;
            const uint8_t *b = sp_out_bytes(f.p.b, k, &len);
            for (int c = 0; c < sp_chunk_count(b, len); c++) {
                uint32_t off = sp_chunk_off(b, len, c);
                if (b[off] != NS_SCTP_CT_ERROR)
                    continue;
                err = true;
                /* Unrecognized Chunk Type with the chunk as received. */
                assert_int_equal(sp_rd16(b + off + 4), NS_SCTP_CAUSE_UNRECOGNIZED_CHUNK);
                /* 10 bytes and their padding (the copy is a chunk). */
                assert_int_equal(sp_rd16(b + off + 6), 4 + 12);
                assert_int_equal(b[off + 8], cases[i].type);
                assert_int_equal(b[off + 9], 0x5a);
                assert_int_equal(sp_rd16(b + off + 10), 10);
                assert_memory_equal(b + off + 12, v, 6);
                assert_memory_equal(b + off + 18, "\0\0", 2);
            }
        }
        assert_int_equal(err, cases[i].reported);
        sp_out_clear(f.p.b);
        if (cases[i].data_taken)
            tsn++;
    }
    assert_int_equal(ns_sctp_assoc_state(f.p.ab), NS_SCTP_ESTABLISHED);
    sp_pair_free(&f.p);
}

/* After a restart (5.2.4 A) only the new tags are valid (8.5): every chunk
 * a peer may send, carrying the tags of the association before the
 * restart, is dropped and counted, and changes nothing; the new tags
 * work. */
static void test_restart_old_tags_dropped(void **state)
{
    (void)state;
    struct fixture f;
    setup_pair(&f, 38);
    f.p.a->capture = f.p.b->capture = false;
    struct ns_sctp_assoc_info old = f.ib;
    sp_node_reboot(f.p.a);
    f.p.ea = ns_sctp_ep_new(&f.p.a->sctp, SP_PORT_A, NULL, 0, NULL);
    struct ns_sctp_addr pb = B();
    struct ns_sctp_assoc *na = ns_sctp_connect(f.p.ea, &pb, 1, SP_PORT_B, f.p.net->now, NULL);
    sp_run_for(f.p.net, NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(na), NS_SCTP_ESTABLISHED);
    assert_int_equal(f.p.b->sctp.stats.restarts, 1);
    struct ns_sctp_assoc_info now_b, after;
    ns_sctp_assoc_info(f.p.ab, &now_b);
    assert_int_not_equal(now_b.local_vtag, old.local_vtag);
    assert_int_not_equal(now_b.peer_vtag, old.peer_vtag);
    f.p.b->capture = true;

    struct ns_sctp_assoc_info na_info;
    ns_sctp_assoc_info(na, &na_info);
    struct ns_sctp_chunk_data d = mkdata(na_info.next_tsn, "old");
    uint8_t hb[8] = {0, 1, 0, 8, 'o', 'l', 'd', '!'};
    uint8_t sack[12] = {0};
    uint32_t cum = now_b.next_tsn - 1;
    sack[0] = (uint8_t)(cum >> 24), sack[1] = (uint8_t)(cum >> 16);
    sack[2] = (uint8_t)(cum >> 8), sack[3] = (uint8_t)cum;
    sack[4] = 0, sack[5] = 1; /* a_rwnd 65536 */
    uint8_t shut[4] = {sack[0], sack[1], sack[2], sack[3]};
    uint8_t cause[4] = {0, NS_SCTP_CAUSE_INVALID_STREAM, 0, 4};
    struct {
        uint32_t vtag;
        uint8_t type, flags;
        const void *v;
        uint32_t len;
    } old_pkts[] = {
        {old.local_vtag, NS_SCTP_CT_DATA, 0, NULL, 0}, /* built with wr_data below */
        {old.local_vtag, NS_SCTP_CT_SACK, 0, sack, sizeof(sack)},
        {old.local_vtag, NS_SCTP_CT_HEARTBEAT, 0, hb, sizeof(hb)},
        {old.local_vtag, NS_SCTP_CT_HEARTBEAT_ACK, 0, hb, sizeof(hb)},
        {old.local_vtag, NS_SCTP_CT_ERROR, 0, cause, sizeof(cause)},
        {old.local_vtag, NS_SCTP_CT_SHUTDOWN, 0, shut, sizeof(shut)},
        {old.local_vtag, NS_SCTP_CT_SHUTDOWN_ACK, 0, NULL, 0},
        {old.local_vtag, NS_SCTP_CT_COOKIE_ACK, 0, NULL, 0},
        {old.local_vtag, NS_SCTP_CT_ABORT, 0, NULL, 0},
        {old.peer_vtag, NS_SCTP_CT_ABORT, NS_SCTP_FLAG_T, NULL, 0},
        {old.peer_vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE, NS_SCTP_FLAG_T, NULL, 0},
        {old.local_vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE, 0, NULL, 0},
    };
    uint64_t drops = now_b.stats.drop_bad_vtag;
    for (size_t i = 0; i < sizeof(old_pkts) / sizeof(old_pkts[0]); i++) {
        struct ns_pkt *pk;
        if (old_pkts[i].type == NS_SCTP_CT_DATA) {
            struct ns_sctp_writer w;
            ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, old_pkts[i].vtag);
            ns_sctp_wr_data(&w, &d);
            pk = ns_sctp_wr_finish(&w);
        } else {
            pk = one_chunk(SP_PORT_A, SP_PORT_B, old_pkts[i].vtag, old_pkts[i].type,
                           old_pkts[i].flags, old_pkts[i].v, old_pkts[i].len);
        }
        to_b(&f, pk);
        ns_sctp_assoc_info(f.p.ab, &after);
        assert_int_equal(after.state, NS_SCTP_ESTABLISHED);
        assert_int_equal(after.stats.drop_bad_vtag, drops + i + 1);
        assert_int_equal(after.stats.rx_data, now_b.stats.rx_data);
        assert_int_equal(after.peer_cum_tsn, now_b.peer_cum_tsn);
        assert_int_equal(after.local_vtag, now_b.local_vtag);
        assert_int_equal(after.peer_vtag, now_b.peer_vtag);
        assert_int_equal(f.p.b->n_out, 0); /* not answered, not SACKed */
    }
    /* The cookie of the old association, with its tag, is no restart. */
    assert_int_equal(f.p.b->sctp.stats.restarts, 1);
    /* The new tag works. */
    struct ns_sctp_writer w;
    ns_sctp_wr_start(&w, 1472, SP_PORT_A, SP_PORT_B, now_b.local_vtag);
    ns_sctp_wr_data(&w, &d);
    to_b(&f, ns_sctp_wr_finish(&w));
    ns_sctp_assoc_info(f.p.ab, &after);
    assert_int_equal(after.stats.rx_data, now_b.stats.rx_data + 1);
    sp_pair_free(&f.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrong_tag_dropped),
        cmocka_unit_test(test_abort_tbit),
        cmocka_unit_test(test_shutdown_complete_tbit),
        cmocka_unit_test(test_tag_zero_and_bundling),
        cmocka_unit_test(test_checksum_and_malformed),
        cmocka_unit_test(test_ootb),
        cmocka_unit_test(test_shutdown_ack_in_cookie_wait),
        cmocka_unit_test(test_unknown_chunks),
        cmocka_unit_test(test_restart_old_tags_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
