/* SCTP over nstack's IPv4 on an impaired memlink: 2% loss, 2% duplication
 * and 3% reordering in each direction from a fixed seed. A connects to
 * B:5001 (ARP and the handshake over the lossy link) and sends 10000
 * messages of 1-3000 bytes on one ordered stream; B must receive every
 * one exactly once, in order, intact; then a graceful shutdown. IPv4
 * never fragments (SCTP segments to the path MTU). The outcome for a seed
 * is exact and repeatable: the run is done twice and compared. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim.h"

#define N_MSGS 10000
#define PORT   5001
#define IP_A   SIM_IP(198, 18, 0, 1)
#define IP_B   SIM_IP(198, 18, 0, 2)

struct side {
    struct ns_sctp_assoc *assoc;
    int comm_up, comm_lost, shutdown_complete, writable;
    uint32_t next_seq; /* receiver: the sequence number expected next */
    uint32_t bad;      /* out of order, duplicated, corrupted or partial */
    uint64_t bytes;
};

struct outcome {
    uint32_t received, bad;
    uint64_t bytes, done_at;
    uint64_t lost, duplicated, reordered;
    uint64_t retransmissions, fast_retransmits, t3_timeouts, dup_tsn;
    uint64_t frag_creates, reasm_reqds, fallback;
    int comm_lost, shutdown_complete;
};

static uint32_t msg_len(uint32_t seq)
{
    /* Mostly small, every 50th larger than a packet. */
    return seq % 50 == 7 ? 1500 + seq % 1500 : 1 + (seq * 37) % 400;
}

static void msg_fill(uint8_t *b, uint32_t seq, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        b[i] = (uint8_t)(seq * 13 + i);
    if (len >= 4) {
        b[0] = (uint8_t)(seq >> 24);
        b[1] = (uint8_t)(seq >> 16);
        b[2] = (uint8_t)(seq >> 8);
        b[3] = (uint8_t)seq;
    }
}

static void on_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct side *sd = ctx;
    switch (ev->type) {
    case NS_SCTP_EV_COMM_UP:
        sd->comm_up++;
        sd->assoc = ev->assoc;
        break;
    case NS_SCTP_EV_COMM_LOST:
        sd->comm_lost++;
        break;
    case NS_SCTP_EV_SHUTDOWN_COMPLETE:
        sd->shutdown_complete++;
        break;
    case NS_SCTP_EV_WRITABLE:
        sd->writable++;
        break;
    case NS_SCTP_EV_DATA_READY: {
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_recv_take(ev->assoc, &q);
        struct ns_sctp_rmsg *m;
        static uint8_t want[4096], got[4096];
        while ((m = ns_sctp_rmsgq_pop(&q))) {
            uint32_t seq = sd->next_seq++;
            uint32_t len = msg_len(seq);
            sd->bytes += m->len;
            if (!(m->flags & NS_SCTP_RMSG_EOR) || m->len != len || m->sid != 0 || m->ppid != seq) {
                sd->bad++;
            } else {
                msg_fill(want, seq, len);
                ns_sctp_rmsg_copy(m, 0, got, len);
                sd->bad += memcmp(want, got, len) != 0;
            }
            ns_sctp_msg_free(ev->assoc, m, now);
        }
        break;
    }
    default:
        break;
    }
}

static void run(uint64_t seed, struct outcome *o)
{
    memset(o, 0, sizeof(*o));
    struct sim *sim = sim_new(seed);
    assert_non_null(sim);
    int a = sim_add_stack(sim, "a", IP_A, 24, NULL);
    int b = sim_add_stack(sim, "b", IP_B, 24, NULL);
    struct ns_stack *sa = sim_stack(sim, a), *sb = sim_stack(sim, b);
    struct side da = {0}, db = {0};
    ns_stack_set_sctp_event(sa, on_event, &da);
    ns_stack_set_sctp_event(sb, on_event, &db);
    struct ns_memlink_cfg cfg = {
        .loss_ppm = NS_MEMLINK_PPM(0.02),
        .dup_ppm = NS_MEMLINK_PPM(0.02),
        .reorder_ppm = NS_MEMLINK_PPM(0.03),
        .reorder_delay_us = 3000,
        .delay_us = 5000,
        .jitter_us = 200,
        .rate_bytes_per_s = 12500000, /* 100 Mbit/s */
    };
    int link = sim_link(sim, a, b, &cfg);
    assert_true(link >= 0);
    sim_run_for(sim, 10 * NS_MS);

    int err = 0;
    struct ns_sctp_ep *eb = ns_sctp_ep_new(&sb->sctp, PORT, NULL, 0, &err);
    assert_non_null(eb);
    ns_sctp_ep_listen(eb, true);
    struct ns_sctp_ep *ea = ns_sctp_ep_new(&sa->sctp, 0, NULL, 0, &err);
    assert_non_null(ea);
    da.assoc = ns_stack_sctp_connect(sa, ea, IP_B, PORT, sim_now(sim), &err);
    assert_non_null(da.assoc);
    for (int i = 0; i < 100 && !(da.comm_up && db.comm_up); i++)
        sim_run_for(sim, 100 * NS_MS);
    assert_int_equal(da.comm_up, 1);
    assert_int_equal(db.comm_up, 1);

    static uint8_t buf[4096];
    uint32_t sent = 0;
    uint64_t deadline = sim_now(sim) + 600 * NS_SEC;
    while (db.next_seq < N_MSGS && sim_now(sim) < deadline) {
        while (sent < N_MSGS) {
            uint32_t len = msg_len(sent);
            msg_fill(buf, sent, len);
            int r = ns_sctp_send(da.assoc, 0, sent, 0, buf, len, 0, sim_now(sim));
            if (r == -EAGAIN)
                break;
            assert_int_equal(r, 0);
            sent++;
        }
        sim_run_for(sim, 5 * NS_MS);
    }
    o->done_at = sim_now(sim);
    assert_int_equal(ns_sctp_shutdown(da.assoc, sim_now(sim)), 0);
    for (int i = 0; i < 100 && !(da.shutdown_complete && db.shutdown_complete); i++)
        sim_run_for(sim, 100 * NS_MS);

    o->received = db.next_seq;
    o->bad = db.bad;
    o->bytes = db.bytes;
    const struct ns_memlink_stats *ab = ns_memlink_stats(sim_memlink(sim, link), 0);
    const struct ns_memlink_stats *ba = ns_memlink_stats(sim_memlink(sim, link), 1);
    o->lost = ab->lost + ba->lost;
    o->duplicated = ab->duplicated + ba->duplicated;
    o->reordered = ab->reordered + ba->reordered;
    struct ns_sctp_assoc_info ia, ib;
    assert_int_equal(ns_sctp_assoc_info(da.assoc, &ia), 0);
    assert_int_equal(ns_sctp_assoc_info(db.assoc, &ib), 0);
    o->retransmissions = ia.stats.retransmissions;
    o->fast_retransmits = ia.stats.fast_retransmits;
    o->t3_timeouts = ia.stats.t3_timeouts;
    o->dup_tsn = ib.stats.drop_dup_tsn;
    o->frag_creates = sa->ip.stats.frag_creates + sb->ip.stats.frag_creates;
    o->reasm_reqds = sa->ip.stats.reasm_reqds + sb->ip.stats.reasm_reqds;
    o->fallback = sa->sctp_glue_stats.tx_frag_fallback + sb->sctp_glue_stats.tx_frag_fallback;
    o->comm_lost = da.comm_lost + db.comm_lost;
    o->shutdown_complete = da.shutdown_complete + db.shutdown_complete;
    ns_sctp_assoc_release(da.assoc, sim_now(sim));
    ns_sctp_assoc_release(db.assoc, sim_now(sim));
    sim_free(sim);
}

static void test_lossy_10k_in_order(void **st)
{
    (void)st;
    struct outcome o1, o2;
    run(0x5c79, &o1);
    printf("# delivered %u msgs (%llu bytes) by %.3f s; link lost %llu dup %llu reordered %llu; "
           "retx %llu (fast %llu, t3 %llu), dup TSNs at B %llu\n",
           o1.received, (unsigned long long)o1.bytes, (double)o1.done_at / 1e6,
           (unsigned long long)o1.lost, (unsigned long long)o1.duplicated,
           (unsigned long long)o1.reordered, (unsigned long long)o1.retransmissions,
           (unsigned long long)o1.fast_retransmits, (unsigned long long)o1.t3_timeouts,
           (unsigned long long)o1.dup_tsn);
    assert_int_equal(o1.received, N_MSGS);
    assert_int_equal(o1.bad, 0);
    assert_int_equal(o1.comm_lost, 0);
    assert_int_equal(o1.shutdown_complete, 2);
    /* The impairments really happened and SCTP repaired them. */
    assert_true(o1.lost > 40);
    assert_true(o1.duplicated > 40);
    assert_true(o1.reordered > 40);
    assert_true(o1.retransmissions > 0);
    assert_true(o1.dup_tsn > 0);
    assert_int_equal(o1.frag_creates, 0);
    assert_int_equal(o1.reasm_reqds, 0);
    assert_int_equal(o1.fallback, 0);
    /* Same seed, same run. */
    run(0x5c79, &o2);
    assert_memory_equal(&o1, &o2, sizeof(o1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lossy_10k_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
