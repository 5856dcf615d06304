/* Fuzz the SCTP association engine (src/sctp) in every state it can reach
 * from ESTABLISHED. Two engines, A and B, complete a handshake in the
 * set-up and exchange some data; then the input drives them.
 *
 * Input: records of [gap:u16][len:u16][packet:len], big-endian.
 *   gap bits 0-13: milliseconds to advance first (timers fire on the way,
 *                  and packets the engines send each other are delivered)
 *   gap bit 14:    the packet goes to A (from B) instead of to B (from A)
 *   gap bit 15:    before the packet, the destination's user acts, chosen
 *                  by the packet's first byte: send a message, shut down,
 *                  abort, release, read everything, set the PMTU
 *   len bit 15:    keep the checksum as given (otherwise it is fixed)
 *   len bits 0-14: packet length
 * In every even-numbered record the ports and the verification tag are
 * overwritten with the ones the destination association expects, so the
 * fuzzer gets past the tag check half of the time and reaches deep states;
 * odd records stay as given (out of the blue, INIT with tag 0, T bits...).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/pkt.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sctp/crc32c.h"
#include "sctp/sctp.h"

#define IP_A   0xc6120001u /* 198.18.0.1 */
#define IP_B   0xc6120101u /* 198.18.1.1 */
#define PORT_A 4000
#define PORT_B 5000

struct fz_pkt {
    struct ns_pkt *p;
    struct ns_sctp_addr src, dst;
    int to; /* engine index */
};

struct fz_side {
    struct ns_sctp sctp;
    struct ns_timers timers;
    struct ns_rng rng;
    struct ns_sctp_ep *ep;
    struct ns_sctp_assoc *as;
    struct ns_sctp_addr addr;
    bool released;
};

struct fz {
    struct fz_side s[2];
    uint64_t now;
    struct fz_pkt *q;
    size_t qn, qcap, qhead;
    bool overflow;
};

/* Packets between the engines queue here; ctx is the fz. */
static void fz_out(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst, uint64_t now)
{
    (void)now;
    struct fz *f = ctx;
    int to = dst->addr == IP_A ? 0 : dst->addr == IP_B ? 1 : -1;
    if (to < 0 || f->qn - f->qhead > 4096) {
        f->overflow = f->overflow || to >= 0;
        ns_pkt_free(p);
        return;
    }
    if (f->qn == f->qcap) {
        if (f->qhead) {
            memmove(f->q, f->q + f->qhead, (f->qn - f->qhead) * sizeof(*f->q));
            f->qn -= f->qhead;
            f->qhead = 0;
        }
        if (f->qn == f->qcap) {
            f->qcap = f->qcap ? 2 * f->qcap : 64;
            f->q = realloc(f->q, f->qcap * sizeof(*f->q));
        }
    }
    struct ns_sctp_addr s = *src;
    if (s.addr == 0)
        s = f->s[1 - to].addr;
    f->q[f->qn++] = (struct fz_pkt){p, s, *dst, to};
}

static void fz_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct fz *f = ctx;
    if (ev->type == NS_SCTP_EV_COMM_UP && ev->assoc != f->s[0].as)
        f->s[1].as = ev->assoc;
    if (ev->type == NS_SCTP_EV_DATA_READY) {
        /* Read and free everything, as a socket layer would. */
        struct ns_sctp_rmsgq q;
        ns_sctp_rmsgq_init(&q);
        ns_sctp_recv_take(ev->assoc, &q);
        struct ns_sctp_rmsg *m;
        while ((m = ns_sctp_rmsgq_pop(&q)))
            ns_sctp_msg_free(ev->assoc, m, now);
    }
}

/* Deliver queued packets until the engines are quiet. */
static void fz_settle(struct fz *f)
{
    size_t n = 0;
    while (f->qhead < f->qn) {
        struct fz_pkt k = f->q[f->qhead++];
        ns_sctp_input(&f->s[k.to].sctp, k.p, &k.src, &k.dst, f->now);
        if (++n > 200000)
            __builtin_trap(); /* two engines talking forever: a bug */
    }
    f->qn = f->qhead = 0;
}

static void fz_advance(struct fz *f, uint64_t until)
{
    for (;;) {
        fz_settle(f);
        uint64_t t0 = ns_timers_next(&f->s[0].timers), t1 = ns_timers_next(&f->s[1].timers);
        uint64_t next = t0 < t1 ? t0 : t1;
        if (next > until)
            break;
        if (next > f->now)
            f->now = next;
        ns_timers_run(&f->s[0].timers, f->now);
        ns_timers_run(&f->s[1].timers, f->now);
    }
    if (until > f->now)
        f->now = until;
    fz_settle(f);
}

static bool fz_setup(struct fz *f)
{
    memset(f, 0, sizeof(*f));
    f->now = 1000000;
    struct ns_sctp_params p;
    ns_sctp_params_default(&p);
    p.rcvbuf_bytes = 65536;
    p.sndbuf_bytes = 65536;
    p.max_message_bytes = 65536;
    for (int i = 0; i < 2; i++) {
        struct fz_side *s = &f->s[i];
        ns_timers_init(&s->timers);
        ns_rng_seed(&s->rng, 1000 + (uint64_t)i);
        s->addr = (struct ns_sctp_addr){NS_SCTP_AF_INET4, 0, i ? IP_B : IP_A};
        struct ns_sctp_config cfg = {
            .params = &p,
            .timers = &s->timers,
            .rng = &s->rng,
            .cookie_secret_from_rng = true,
            .ops = {.output = fz_out, .event = fz_event, .ctx = f},
        };
        if (ns_sctp_init(&s->sctp, &cfg, f->now) != 0)
            return false;
        s->ep = ns_sctp_ep_new(&s->sctp, i ? PORT_B : PORT_A, &s->addr, 1, NULL);
        if (!s->ep)
            return false;
    }
    ns_sctp_ep_listen(f->s[1].ep, true);
    f->s[0].as = ns_sctp_connect(f->s[0].ep, &f->s[1].addr, 1, PORT_B, f->now, NULL);
    if (!f->s[0].as)
        return false;
    fz_advance(f, f->now + 100 * NS_MS);
    if (!f->s[1].as || ns_sctp_assoc_state(f->s[0].as) != NS_SCTP_ESTABLISHED)
        return false;
    /* Some history: data both ways, acknowledged. */
    static const char msg[] = "0123456789abcdef0123456789abcdef";
    for (int i = 0; i < 8; i++) {
        ns_sctp_send(f->s[0].as, (uint16_t)i, (uint32_t)i, 0, msg, sizeof(msg), 0, f->now);
        ns_sctp_send(f->s[1].as, (uint16_t)i, (uint32_t)i, 0, msg, sizeof(msg), 0, f->now);
    }
    fz_advance(f, f->now + 500 * NS_MS);
    return true;
}

static void fz_free(struct fz *f)
{
    for (size_t i = f->qhead; i < f->qn; i++)
        ns_pkt_free(f->q[i].p);
    free(f->q);
    for (int i = 0; i < 2; i++) {
        ns_sctp_free(&f->s[i].sctp);
        ns_timers_free(&f->s[i].timers);
    }
}

static void fz_user(struct fz *f, int to, const uint8_t *arg, uint32_t len)
{
    struct fz_side *s = &f->s[to];
    if (!s->as || s->released || len == 0)
        return;
    static uint8_t blob[65536];
    switch (arg[0] % 8) {
    case 0:
    case 1: {
        uint32_t n = len > 1 ? (uint32_t)arg[1] << 8 : 1;
        n = n ? n : 1;
        ns_sctp_send(s->as, (uint16_t)(arg[0] >> 3), 7, arg[0] & 0x80 ? NS_SCTP_SEND_UNORDERED : 0,
                     blob, n, 0, f->now);
        break;
    }
    case 2:
        ns_sctp_shutdown(s->as, f->now);
        break;
    case 3:
        ns_sctp_abort(s->as, arg, (uint16_t)(len < 40 ? len : 40), f->now);
        break;
    case 4:
        ns_sctp_assoc_release(s->as, f->now);
        s->released = true;
        break;
    case 5: {
        struct ns_sctp_assoc_info info;
        ns_sctp_assoc_info(s->as, &info);
        struct ns_ctr_group g[8];
        ns_sctp_assoc_counters(s->as, g, 8);
        ns_sctp_flush(s->as, f->now);
        break;
    }
    case 6: {
        struct ns_sctp_addr peer = f->s[1 - to].addr;
        ns_sctp_set_pmtu(s->as, &peer, 512 + (uint32_t)(len > 1 ? arg[1] : 0) * 4);
        break;
    }
    default: {
        char many[3000];
        memset(many, arg[0], sizeof(many));
        for (int i = 0; i < 20; i++)
            ns_sctp_send(s->as, (uint16_t)i, 9, NS_SCTP_SEND_MORE, many, sizeof(many), 0, f->now);
        ns_sctp_flush(s->as, f->now);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f;
    if (!fz_setup(&f)) {
        fz_free(&f);
        __builtin_trap(); /* the set-up itself must always work */
    }
    size_t off = 0;
    unsigned rec = 0;
    uint8_t buf[65536];
    while (off + 4 <= size) {
        uint16_t gap = (uint16_t)(data[off] << 8 | data[off + 1]);
        uint16_t lenf = (uint16_t)(data[off + 2] << 8 | data[off + 3]);
        off += 4;
        uint32_t len = lenf & 0x7fff;
        if (len > size - off)
            len = (uint32_t)(size - off);
        memcpy(buf, data + off, len);
        off += len;
        fz_advance(&f, f.now + (uint64_t)(gap & 0x3fff) * NS_MS);
        int to = gap & 0x4000 ? 0 : 1;
        if (gap & 0x8000) {
            fz_user(&f, to, buf, len);
            fz_settle(&f);
        }
        struct fz_side *dst = &f.s[to], *src = &f.s[1 - to];
        if ((rec++ & 1) == 0 && len >= 12 && dst->as && !dst->released) {
            struct ns_sctp_assoc_info info;
            ns_sctp_assoc_info(dst->as, &info);
            uint16_t sp = to ? PORT_A : PORT_B, dp = to ? PORT_B : PORT_A;
            buf[0] = (uint8_t)(sp >> 8);
            buf[1] = (uint8_t)sp;
            buf[2] = (uint8_t)(dp >> 8);
            buf[3] = (uint8_t)dp;
            for (int i = 0; i < 4; i++)
                buf[4 + i] = (uint8_t)(info.local_vtag >> (24 - 8 * i));
        }
        if (!(lenf & 0x8000) && len >= 12) {
            memset(buf + 8, 0, 4);
            uint32_t c = ns_sctp_checksum(buf, len);
            buf[8] = (uint8_t)c;
            buf[9] = (uint8_t)(c >> 8);
            buf[10] = (uint8_t)(c >> 16);
            buf[11] = (uint8_t)(c >> 24);
        }
        struct ns_pkt *p = ns_pkt_from(buf, len);
        if (p)
            ns_sctp_input(&dst->sctp, p, &src->addr, &dst->addr, f.now);
        fz_settle(&f);
    }
    /* Let everything run out: retransmissions, shutdowns, heartbeats. */
    fz_advance(&f, f.now + 30 * NS_SEC);
    fz_free(&f);
    return 0;
}
