/* SCTP association endings: graceful shutdown (RFC 9260 9.2) and abort
 * (9.1) requested in every state and received in every state, T2-shutdown
 * back-off and Association.Max.Retrans, T5-shutdown-guard, T3 exhaustion,
 * SHUTDOWN with data still queued, simultaneous shutdown, and the handle
 * release rules of sctp.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sctp/chunk.h"
#include "sctp_pipe.h"

#define DELAY (10 * NS_MS)

enum st { CW, CE, EST, SPEND, SSENT, SRECV, SACKSENT, N_ST };
static const enum ns_sctp_state st_state[N_ST] = {
    NS_SCTP_COOKIE_WAIT,       NS_SCTP_COOKIE_ECHOED, NS_SCTP_ESTABLISHED,
    NS_SCTP_SHUTDOWN_PENDING,  NS_SCTP_SHUTDOWN_SENT, NS_SCTP_SHUTDOWN_RECEIVED,
    NS_SCTP_SHUTDOWN_ACK_SENT,
};

static void forward_all(struct sp_pair *p, struct sp_node *n)
{
    while (n->n_out)
        sp_out_forward(n, 0);
    sp_run_for(p->net, DELAY);
}

/* Bring a's association into state st. On return a captures its output
 * (cleared) and b does not. */
static void reach(struct sp_pair *p, enum st st, uint64_t seed, const struct ns_sctp_params *pa)
{
    struct ns_sctp_addr pb = sp_addr(SP_IP_B);
    if (st == CW || st == CE) {
        sp_pair_nodes(p, seed, pa, NULL, 1, 1, DELAY);
        p->a->capture = true;
        p->aa = ns_sctp_connect(p->ea, &pb, 1, SP_PORT_B, p->net->now, NULL);
        if (st == CE) {
            forward_all(p, p->a);
            sp_run_for(p->net, DELAY);
        }
        sp_out_clear(p->a);
    } else {
        assert_true(sp_pair_setup(p, seed, pa, NULL, 1, 1, DELAY));
        switch (st) {
        case SPEND:
            /* Data reaches b, whose SACK is lost: a cannot send SHUTDOWN. */
            p->b->capture = true;
            assert_int_equal(ns_sctp_send(p->aa, 0, 0, 0, "pending", 7, 77, p->net->now), 0);
            sp_run_for(p->net, DELAY + 300 * NS_MS);
            sp_out_clear(p->b);
            p->b->capture = false;
            p->a->capture = true;
            ns_sctp_shutdown(p->aa, p->net->now);
            break;
        case SSENT:
            p->a->capture = true;
            ns_sctp_shutdown(p->aa, p->net->now);
            break;
        case SRECV:
            /* a has data outstanding when b's SHUTDOWN comes. */
            p->a->capture = true;
            assert_int_equal(ns_sctp_send(p->aa, 0, 0, 0, "pending", 7, 77, p->net->now), 0);
            sp_out_clear(p->a);
            ns_sctp_shutdown(p->ab, p->net->now);
            sp_run_for(p->net, DELAY);
            break;
        case SACKSENT:
            p->a->capture = true;
            ns_sctp_shutdown(p->ab, p->net->now);
            sp_run_for(p->net, DELAY);
            break;
        default:
            p->a->capture = true;
            break;
        }
        sp_out_clear(p->a);
    }
    assert_int_equal(ns_sctp_assoc_state(p->aa), st_state[st]);
}

/* Drop the HEARTBEAT ACKs a sends to b's heartbeats (b keeps its
 * association up in these tests); returns what is left. */
static size_t strip_hb_acks(struct sp_node *n)
{
    for (size_t i = 0; i < n->n_out;) {
        uint32_t len;
        const uint8_t *k = sp_out_bytes(n, i, &len);
        if (k[12] == NS_SCTP_CT_HEARTBEAT_ACK)
            sp_out_drop(n, i);
        else
            i++;
    }
    return n->n_out;
}

static bool b_has_assoc(const struct sp_pair *p)
{
    return sp_last_ev(p->b, NS_SCTP_EV_COMM_UP) != NULL;
}

static void test_abort_every_state(void **state)
{
    (void)state;
    for (enum st st = CW; st < N_ST; st++) {
        struct sp_pair p;
        reach(&p, st, 100 + st, NULL);
        struct ns_sctp_assoc_info ia;
        ns_sctp_assoc_info(p.aa, &ia);
        assert_int_equal(ns_sctp_abort(p.aa, "why", 3, p.net->now), 0);
        assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
        bool pre = st == CW || st == CE;
        const struct ns_sctp_event *e =
            sp_last_ev(p.a, pre ? NS_SCTP_EV_CANT_STR_ASSOC : NS_SCTP_EV_COMM_LOST);
        assert_non_null(e);
        assert_int_equal(e->reason, NS_SCTP_R_USER_ABORT);
        if (st == CW) {
            assert_int_equal(p.a->n_out, 0); /* the peer has no state */
        } else {
            assert_int_equal(p.a->n_out, 1);
            uint32_t len;
            const uint8_t *k = sp_out_bytes(p.a, 0, &len);
            assert_int_equal(sp_rd32(k + 4), ia.peer_vtag);
            assert_int_equal(k[12], NS_SCTP_CT_ABORT);
            assert_int_equal(k[13], 0);
            assert_int_equal(sp_rd16(k + 16), NS_SCTP_CAUSE_USER_ABORT);
            assert_int_equal(sp_rd16(k + 18), 4 + 3);
            assert_memory_equal(k + 20, "why", 3);
        }
        if (st == SPEND || st == SRECV) {
            const struct ns_sctp_event *sf = sp_last_ev(p.a, NS_SCTP_EV_SEND_FAILED);
            assert_non_null(sf);
            assert_int_equal(sf->context, 77);
            assert_int_equal(sf->len, 7);
        }
        /* Everything fails the same way from now on. */
        assert_int_equal(ns_sctp_abort(p.aa, NULL, 0, p.net->now), -ENOTCONN);
        assert_int_equal(ns_sctp_shutdown(p.aa, p.net->now), -ENOTCONN);
        assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 1, 0, p.net->now), -ENOTCONN);
        assert_int_equal(ns_timers_next(&p.a->timers), NS_TIME_NEVER);
        forward_all(&p, p.a);
        if (b_has_assoc(&p) && st != CE) {
            struct ns_sctp_assoc *ab = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP)->assoc;
            assert_int_equal(ns_sctp_assoc_state(ab), NS_SCTP_CLOSED);
            const struct ns_sctp_event *l = sp_last_ev(p.b, NS_SCTP_EV_COMM_LOST);
            assert_non_null(l);
            assert_int_equal(l->cause, NS_SCTP_CAUSE_USER_ABORT);
            assert_int_equal(l->info_len, 3);
            assert_memory_equal(l->info, "why", 3);
        }
        ns_sctp_assoc_release(p.aa, p.net->now);
        assert_int_equal(p.a->sctp.n_assocs, 0);
        sp_pair_free(&p);
    }
}

static void test_shutdown_every_state(void **state)
{
    (void)state;
    for (enum st st = CW; st < N_ST; st++) {
        struct sp_pair p;
        reach(&p, st, 200 + st, NULL);
        assert_int_equal(ns_sctp_shutdown(p.aa, p.net->now), 0);
        assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "x", 1, 0, p.net->now), -EPIPE);
        /* Let everything flow; lost packets are recovered by the timers. */
        p.a->capture = false;
        sp_run_for(p.net, 30 * NS_SEC);
        assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
        assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
        assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_COMM_LOST), 0);
        struct ns_sctp_assoc *ab = sp_last_ev(p.b, NS_SCTP_EV_COMM_UP)->assoc;
        assert_int_equal(ns_sctp_assoc_state(ab), NS_SCTP_CLOSED);
        assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
        assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_LOST), 0);
        if (st == SPEND || st == SRECV)
            assert_int_equal(sp_drain(p.net, ab), 1); /* the data made it */
        /* The side that did not call shutdown heard SHUTDOWN_EVENT. */
        if (st != SRECV && st != SACKSENT)
            assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_SHUTDOWN), 1);
        else
            assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN), 1);
        assert_int_equal(ns_timers_next(&p.a->timers), NS_TIME_NEVER);
        assert_int_equal(ns_timers_next(&p.b->timers), NS_TIME_NEVER);
        sp_pair_free(&p);
    }
}

static void test_abort_received_every_state(void **state)
{
    (void)state;
    for (enum st st = CW; st < N_ST; st++) {
        struct sp_pair p;
        reach(&p, st, 300 + st, NULL);
        struct ns_sctp_assoc_info ia;
        ns_sctp_assoc_info(p.aa, &ia);
        struct ns_sctp_writer w;
        ns_sctp_wr_start(&w, 1472, SP_PORT_B, SP_PORT_A, ia.local_vtag);
        ns_sctp_wr_abort_begin(&w, false);
        ns_sctp_wr_cause_protocol_violation(&w, "no", 2);
        ns_sctp_wr_end(&w);
        struct ns_sctp_addr src = sp_addr(SP_IP_B), dst = sp_addr(SP_IP_A);
        ns_sctp_input(&p.a->sctp, ns_sctp_wr_finish(&w), &src, &dst, p.net->now);
        assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
        bool pre = st == CW || st == CE;
        const struct ns_sctp_event *e =
            sp_last_ev(p.a, pre ? NS_SCTP_EV_CANT_STR_ASSOC : NS_SCTP_EV_COMM_LOST);
        assert_non_null(e);
        assert_int_equal(e->reason, NS_SCTP_R_PEER_ABORT);
        assert_int_equal(e->cause, NS_SCTP_CAUSE_PROTOCOL_VIOLATION);
        assert_int_equal(p.a->n_out, 0);
        assert_int_equal(p.a->sctp.stats.aborts_rx, 1);
        assert_int_equal(ns_timers_next(&p.a->timers), NS_TIME_NEVER);
        sp_pair_free(&p);
    }
}

/* T2 doubles from the RTO; Association.Max.Retrans (2 here) ends it. */
static void test_t2_max_retrans(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.association_max_retrans = 2;
    struct sp_pair p;
    reach(&p, EST, 400, &pa);
    uint64_t t0 = p.net->now;
    ns_sctp_shutdown(p.aa, t0);
    assert_int_equal(p.a->n_out, 1);
    const uint64_t at[] = {1, 3};
    for (int i = 0; i < 2; i++) {
        sp_out_clear(p.a);
        sp_run_until(p.net, t0 + at[i] * NS_SEC - 1);
        assert_int_equal(p.a->n_out, 0);
        sp_run_until(p.net, t0 + at[i] * NS_SEC);
        assert_int_equal(p.a->n_out, 1);
        uint32_t len;
        const uint8_t *k = sp_out_bytes(p.a, 0, &len);
        assert_int_equal(k[12], NS_SCTP_CT_SHUTDOWN);
    }
    sp_out_clear(p.a);
    sp_run_until(p.net, t0 + 7 * NS_SEC - 1);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_SHUTDOWN_SENT);
    sp_run_until(p.net, t0 + 7 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_COMM_LOST);
    assert_non_null(e);
    assert_int_equal(e->reason, NS_SCTP_R_MAX_RETRANS);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.stats.t2_timeouts, 3);
    sp_pair_free(&p);
}

/* T5-shutdown-guard (5 x RTO.Max) ends a shutdown that T2 alone would
 * keep retrying (Association.Max.Retrans 10 takes longer). */
static void test_t5_guard(void **state)
{
    (void)state;
    struct sp_pair p;
    reach(&p, EST, 401, NULL);
    uint64_t t0 = p.net->now;
    ns_sctp_shutdown(p.aa, t0);
    const uint64_t at[] = {0, 1, 3, 7, 15, 31, 63, 123, 183, 243};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        sp_run_until(p.net, t0 + at[i] * NS_SEC);
        assert_int_equal(strip_hb_acks(p.a), 1);
        assert_int_equal(p.a->out[0].at, t0 + at[i] * NS_SEC);
        sp_out_clear(p.a);
    }
    sp_run_until(p.net, t0 + 300 * NS_SEC - 1);
    sp_out_clear(p.a);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_SHUTDOWN_SENT);
    sp_run_until(p.net, t0 + 300 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    assert_int_equal(p.a->n_out, 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_COMM_LOST);
    assert_int_equal(e->reason, NS_SCTP_R_SHUTDOWN_GUARD);
    /* The path went inactive on the way (Path.Max.Retrans 5). */
    const struct ns_sctp_event *pc = sp_last_ev(p.a, NS_SCTP_EV_PEER_ADDR_CHANGE);
    assert_non_null(pc);
    assert_int_equal(pc->addr_state, NS_SCTP_ADDR_UNREACHABLE);
    sp_pair_free(&p);
}

/* T3-rtx exhaustion: Association.Max.Retrans (10) consecutive T3 expiries,
 * the 11th aborts. Heartbeats are off so only T3 counts. */
static void test_t3_max_retrans(void **state)
{
    (void)state;
    struct ns_sctp_params pa;
    ns_sctp_params_default(&pa);
    pa.hb_interval_ms = 0;
    struct sp_pair p;
    reach(&p, EST, 402, &pa);
    uint64_t t0 = p.net->now;
    assert_int_equal(ns_sctp_send(p.aa, 1, 0, 0, "doomed", 6, 5, t0), 0);
    const uint64_t at[] = {0, 1, 3, 7, 15, 31, 63, 123, 183, 243, 303};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        sp_run_until(p.net, t0 + at[i] * NS_SEC);
        assert_int_equal(strip_hb_acks(p.a), 1);
        assert_int_equal(p.a->out[0].at, t0 + at[i] * NS_SEC);
        uint32_t len;
        const uint8_t *k = sp_out_bytes(p.a, 0, &len);
        assert_int_equal(k[12], NS_SCTP_CT_DATA);
        sp_out_clear(p.a);
    }
    sp_run_until(p.net, t0 + 363 * NS_SEC - 1);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_ESTABLISHED);
    struct ns_sctp_assoc_info ia;
    ns_sctp_assoc_info(p.aa, &ia);
    assert_int_equal(ia.errors, 10);
    assert_int_equal(ia.stats.t3_timeouts, 10);
    assert_int_equal(ia.stats.retransmissions, 10);
    assert_int_equal(ia.paths[0].active, false);
    sp_out_clear(p.a);
    sp_run_until(p.net, t0 + 363 * NS_SEC);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    assert_int_equal(strip_hb_acks(p.a), 1);
    uint32_t len;
    const uint8_t *k = sp_out_bytes(p.a, 0, &len);
    assert_int_equal(k[12], NS_SCTP_CT_ABORT);
    const struct ns_sctp_event *e = sp_last_ev(p.a, NS_SCTP_EV_COMM_LOST);
    assert_int_equal(e->reason, NS_SCTP_R_MAX_RETRANS);
    const struct ns_sctp_event *sf = sp_last_ev(p.a, NS_SCTP_EV_SEND_FAILED);
    assert_non_null(sf);
    assert_int_equal(sf->context, 5);
    assert_int_equal(sf->flags, NS_SCTP_SF_SENT);
    assert_int_equal(sf->sid, 1);
    sp_pair_free(&p);
}

/* The peer shuts down while we still have a lot queued: everything is
 * delivered before SHUTDOWN ACK (9.2). */
static void test_shutdown_received_with_queue(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 403, NULL, NULL, 1, 1, DELAY));
    char buf[1000];
    int sent = 0;
    for (int i = 0; i < 150; i++) {
        memset(buf, i, sizeof(buf));
        if (ns_sctp_send(p.aa, (uint16_t)(i % 3), 0, 0, buf, sizeof(buf), (uint32_t)i,
                         p.net->now) == 0)
            sent++;
    }
    assert_int_equal(sent, 150);
    ns_sctp_shutdown(p.ab, p.net->now);
    sp_run_for(p.net, 3 * DELAY);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_SHUTDOWN_RECEIVED);
    assert_int_equal(ns_sctp_send(p.aa, 0, 0, 0, "late", 4, 0, p.net->now), -EPIPE);
    uint32_t got = 0;
    for (int i = 0; i < 100 && ns_sctp_assoc_state(p.ab) != NS_SCTP_CLOSED; i++) {
        sp_run_for(p.net, 50 * NS_MS);
        got += sp_drain(p.net, p.ab);
    }
    sp_run_for(p.net, 2 * DELAY); /* the SHUTDOWN COMPLETE reaches a */
    got += sp_drain(p.net, p.ab);
    assert_int_equal(got, 150);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SEND_FAILED), 0);
    sp_pair_free(&p);
}

static void test_simultaneous_shutdown(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 404, NULL, NULL, 1, 1, DELAY));
    ns_sctp_shutdown(p.aa, p.net->now);
    ns_sctp_shutdown(p.ab, p.net->now);
    sp_run_for(p.net, 5 * DELAY);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    assert_int_equal(ns_sctp_assoc_state(p.ab), NS_SCTP_CLOSED);
    assert_int_equal(sp_count_ev(p.a, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    sp_pair_free(&p);
}

/* Every state change is one counted transition (assoc_set_state): the
 * initiator goes CLOSED, COOKIE-WAIT, COOKIE-ECHOED, ESTABLISHED,
 * SHUTDOWN-PENDING, SHUTDOWN-SENT, CLOSED; the listener CLOSED (a new TCB),
 * ESTABLISHED, SHUTDOWN-RECEIVED, SHUTDOWN-ACK-SENT, CLOSED. */
static void test_state_changes_counted(void **state)
{
    (void)state;
    struct sp_pair p;
    struct ns_sctp_assoc_info ia, ib;
    assert_true(sp_pair_setup(&p, 407, NULL, NULL, 1, 1, DELAY));
    ns_sctp_assoc_info(p.aa, &ia);
    ns_sctp_assoc_info(p.ab, &ib);
    assert_int_equal(ia.stats.state_changes, 3);
    assert_int_equal(ib.stats.state_changes, 1);
    ns_sctp_shutdown(p.aa, p.net->now);
    sp_run_for(p.net, 5 * DELAY);
    assert_int_equal(ns_sctp_assoc_state(p.aa), NS_SCTP_CLOSED);
    assert_int_equal(ns_sctp_assoc_state(p.ab), NS_SCTP_CLOSED);
    ns_sctp_assoc_info(p.aa, &ia);
    ns_sctp_assoc_info(p.ab, &ib);
    assert_int_equal(ia.stats.state_changes, 6);
    assert_int_equal(ib.stats.state_changes, 4);
    assert_int_equal(p.a->sctp.stats.state_changes, 6);
    assert_int_equal(p.b->sctp.stats.state_changes, 4);
    sp_pair_free(&p);
}

/* Releasing a live handle shuts down gracefully; the engine frees the
 * association when done and reports nothing more. */
static void test_release(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 405, NULL, NULL, 1, 1, DELAY));
    ns_sctp_send(p.aa, 0, 0, 0, "last words", 10, 0, p.net->now);
    size_t ev = p.a->n_ev;
    ns_sctp_assoc_release(p.aa, p.net->now);
    assert_int_equal(p.a->sctp.n_assocs, 1);
    sp_run_for(p.net, NS_SEC);
    assert_int_equal(p.a->sctp.n_assocs, 0);
    assert_int_equal(p.a->n_ev, ev);
    assert_int_equal(sp_drain(p.net, p.ab), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_SHUTDOWN_COMPLETE), 1);
    sp_pair_free(&p);
}

static void release_on_lost(void *ctx, struct sp_node *n, const struct ns_sctp_event *ev,
                            uint64_t now)
{
    (void)ctx;
    (void)n;
    if (ev->type == NS_SCTP_EV_COMM_LOST)
        ns_sctp_assoc_release(ev->assoc, now);
}

static void test_release_in_callback(void **state)
{
    (void)state;
    struct sp_pair p;
    assert_true(sp_pair_setup(&p, 406, NULL, NULL, 1, 1, DELAY));
    p.b->on_event = release_on_lost;
    ns_sctp_send(p.ab, 0, 0, 0, "queued", 6, 1, p.net->now);
    ns_sctp_abort(p.aa, NULL, 0, p.net->now);
    sp_run_for(p.net, NS_SEC);
    /* b heard SEND_FAILED then COMM_LOST, released in the callback, and
     * the association was freed once the callback returned. */
    assert_int_equal(p.b->sctp.n_assocs, 0);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_SEND_FAILED), 1);
    assert_int_equal(sp_count_ev(p.b, NS_SCTP_EV_COMM_LOST), 1);
    assert_int_equal(p.b->ev[p.b->n_ev - 1].type, NS_SCTP_EV_COMM_LOST);
    sp_pair_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abort_every_state),
        cmocka_unit_test(test_shutdown_every_state),
        cmocka_unit_test(test_abort_received_every_state),
        cmocka_unit_test(test_t2_max_retrans),
        cmocka_unit_test(test_t5_guard),
        cmocka_unit_test(test_t3_max_retrans),
        cmocka_unit_test(test_shutdown_received_with_queue),
        cmocka_unit_test(test_simultaneous_shutdown),
        cmocka_unit_test(test_state_changes_counted),
        cmocka_unit_test(test_release),
        cmocka_unit_test(test_release_in_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
