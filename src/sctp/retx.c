/* Outstanding data and SACK processing: RFC 9260 sections 6.1 (rules A and
 * B, Max.Burst in D), 6.2.1 (processing a received SACK, peer rwnd,
 * reneging), 6.3.1 C4/C5 (one RTT measurement per round trip, Karn's
 * rule), 6.3.2 (T3 timer rules, reported to the caller), 6.3.3 (T3 expiry
 * marking) and 7.2.4 (miss indications with HTNA, fast retransmit). */
#include "sctp/retx.h"

#include <string.h>

/* Scratch flag for the length of one SACK: reneged by it. */
#define TXC_RENEGED 0x80

static inline struct ns_sctp_cc *pcc(const struct ns_sctp_retx *rx, uint8_t path)
{
    return path < NS_SCTP_MAX_PATHS ? rx->paths[path] : NULL;
}

static inline uint8_t clamp_path(uint8_t path)
{
    return path < NS_SCTP_MAX_PATHS ? path : 0;
}

void ns_sctp_retx_init(struct ns_sctp_retx *rx, const struct ns_sctp_params *p,
                       struct ns_sctp_sendq *sq, uint32_t initial_tsn, uint32_t peer_rwnd)
{
    memset(rx, 0, sizeof(*rx));
    rx->sq = sq;
    rx->max_burst = p->max_burst;
    rx->next_tsn = initial_tsn;
    rx->cum_ack = initial_tsn - 1;
    rx->peer_rwnd = peer_rwnd;
}

void ns_sctp_retx_free(struct ns_sctp_retx *rx)
{
    struct ns_sctp_txchunk *c = rx->head, *n;
    for (; c; c = n) {
        n = c->next;
        ns_sctp_sendq_chunk_done(rx->sq, c);
    }
    rx->head = rx->tail = NULL;
    rx->n_chunks = rx->n_rtx = rx->n_gap_acked = 0;
    rx->flight = rx->outstanding_bytes = 0;
    rx->rtx_cursor = NULL;
    memset(rx->path_outstanding, 0, sizeof(rx->path_outstanding));
    memset(rx->timed, 0, sizeof(rx->timed));
}

void ns_sctp_retx_set_path(struct ns_sctp_retx *rx, uint8_t idx, struct ns_sctp_cc *cc)
{
    if (idx < NS_SCTP_MAX_PATHS)
        rx->paths[idx] = cc;
}

bool ns_sctp_retx_cwnd_allows(const struct ns_sctp_retx *rx, uint8_t path,
                              uint32_t packets_this_pass)
{
    if (rx->max_burst && packets_this_pass >= rx->max_burst)
        return false;
    const struct ns_sctp_cc *cc = pcc(rx, path);
    return !cc || cc->flight < cc->cwnd;
}

bool ns_sctp_retx_rwnd_allows(struct ns_sctp_retx *rx, uint32_t len)
{
    if (len <= rx->peer_rwnd)
        return true;
    if (rx->flight == 0) {
        /* One chunk may always be in flight, so a lost window update
         * cannot stall the association (6.1 A). */
        rx->stats.zwp++;
        return true;
    }
    return false;
}

static void charge_send(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c, uint8_t path,
                        uint64_t now)
{
    uint32_t len = c->d.len;
    c->path = path;
    c->sent_at = now;
    c->sends++;
    rx->flight += len;
    rx->peer_rwnd = rx->peer_rwnd > len ? rx->peer_rwnd - len : 0;
    struct ns_sctp_cc *cc = pcc(rx, path);
    if (cc)
        ns_sctp_cc_on_send(cc, len, now);
}

uint32_t ns_sctp_retx_send_new(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c, uint8_t path,
                               uint64_t now)
{
    path = clamp_path(path);
    c->d.tsn = rx->next_tsn++;
    c->next = NULL;
    c->state = 0;
    c->misses = 0;
    c->sends = 0;
    if (rx->tail)
        rx->tail->next = c;
    else
        rx->head = c;
    rx->tail = c;
    rx->n_chunks++;
    rx->outstanding_bytes += c->d.len;
    rx->path_outstanding[path]++;
    charge_send(rx, c, path, now);
    if (!rx->timed[path] && pcc(rx, path)) {
        rx->timed[path] = c;
        c->state |= NS_SCTP_TXC_TIMED;
    }
    rx->stats.chunks_sent++;
    return c->d.tsn;
}

static void untime(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c)
{
    if (c->state & NS_SCTP_TXC_TIMED) {
        c->state &= (uint8_t)~NS_SCTP_TXC_TIMED;
        if (rx->timed[c->path] == c)
            rx->timed[c->path] = NULL;
    }
}

/* c is in flight (neither acked nor marked): take it out of the flight and
 * queue it for retransmission. */
static void mark_rtx(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c)
{
    c->state |= NS_SCTP_TXC_RTX;
    rx->n_rtx++;
    rx->flight -= c->d.len;
    struct ns_sctp_cc *cc = pcc(rx, c->path);
    if (cc)
        cc->flight -= c->d.len;
    /* Karn: its acknowledgement could belong to either transmission. */
    untime(rx, c);
    if (rx->rtx_cursor && ns_tsn_lt(c->d.tsn, rx->rtx_cursor->d.tsn))
        rx->rtx_cursor = c;
}

struct ns_sctp_txchunk *ns_sctp_retx_next_rtx(struct ns_sctp_retx *rx, uint32_t room)
{
    if (rx->n_rtx == 0)
        return NULL;
    struct ns_sctp_txchunk *c = rx->rtx_cursor ? rx->rtx_cursor : rx->head;
    while (c && !(c->state & NS_SCTP_TXC_RTX))
        c = c->next;
    rx->rtx_cursor = c;
    if (!c || ns_sctp_data_wire_len(c->d.len) > room)
        return NULL;
    return c;
}

void ns_sctp_retx_resent(struct ns_sctp_retx *rx, struct ns_sctp_txchunk *c, uint8_t path,
                         uint64_t now)
{
    if (!(c->state & NS_SCTP_TXC_RTX))
        return;
    path = clamp_path(path);
    c->state = (uint8_t)((c->state & ~NS_SCTP_TXC_RTX) | NS_SCTP_TXC_RESENT);
    rx->n_rtx--;
    rx->path_outstanding[c->path]--;
    rx->path_outstanding[path]++;
    charge_send(rx, c, path, now);
    rx->stats.chunks_resent++;
}

/* Per-SACK bookkeeping shared by the cumulative and gap passes. */
struct sack_ctx {
    uint32_t acked[NS_SCTP_MAX_PATHS];
    uint8_t seen;    /* paths whose earliest outstanding chunk was visited */
    uint8_t restart; /* ... and found newly acknowledged */
    bool have_htna;
    uint32_t htna; /* highest TSN newly acknowledged */
    uint64_t now;
};

/* c was outstanding (not gap-acked) and this SACK acknowledges it. */
static void newly_acked(struct ns_sctp_retx *rx, struct sack_ctx *k, struct ns_sctp_txchunk *c,
                        struct ns_sctp_sack_result *r)
{
    uint8_t p = c->path;
    uint32_t len = c->d.len;
    struct ns_sctp_cc *cc = pcc(rx, p);
    if (c->state & NS_SCTP_TXC_RTX) {
        c->state &= (uint8_t)~NS_SCTP_TXC_RTX;
        rx->n_rtx--;
    } else {
        rx->flight -= len;
        if (cc)
            cc->flight -= len;
    }
    if (c->state & NS_SCTP_TXC_TIMED) {
        if (cc && !(c->state & NS_SCTP_TXC_RESENT) && k->now >= c->sent_at) {
            ns_sctp_cc_rtt_sample(cc, k->now - c->sent_at);
            rx->stats.rtt_samples++;
        }
        untime(rx, c);
    }
    rx->outstanding_bytes -= len;
    rx->path_outstanding[p]--;
    k->acked[p] += len;
    r->bytes_acked += len;
    if (!(k->seen & (1u << p))) {
        k->seen |= (uint8_t)(1u << p);
        k->restart |= (uint8_t)(1u << p);
    }
    k->have_htna = true;
    k->htna = c->d.tsn;
}

/* Not covered by any gap block of this SACK. */
static void uncovered(struct ns_sctp_retx *rx, struct sack_ctx *k, struct ns_sctp_txchunk *c,
                      struct ns_sctp_sack_result *r)
{
    k->seen |= (uint8_t)(1u << c->path);
    if (!(c->state & NS_SCTP_TXC_GAP_ACKED))
        return;
    /* The peer dropped data it had reported (6.2.1): outstanding again. */
    c->state = (uint8_t)((c->state & ~NS_SCTP_TXC_GAP_ACKED) | TXC_RENEGED);
    rx->n_gap_acked--;
    rx->flight += c->d.len;
    struct ns_sctp_cc *cc = pcc(rx, c->path);
    if (cc)
        cc->flight += c->d.len;
    rx->outstanding_bytes += c->d.len;
    rx->path_outstanding[c->path]++;
    r->reneged++;
    r->t3_start |= (uint8_t)(1u << c->path);
    rx->stats.reneged++;
}

enum ns_sctp_sack_verdict ns_sctp_retx_sack(struct ns_sctp_retx *rx, uint32_t cum_tsn,
                                            uint32_t a_rwnd, const uint16_t (*gaps)[2],
                                            uint16_t ngaps, uint64_t now,
                                            struct ns_sctp_sack_result *res)
{
    struct ns_sctp_sack_result r = {0};
    if (ns_tsn_lt(cum_tsn, rx->cum_ack)) {
        rx->stats.sack_stale++;
        if (res)
            *res = r;
        return NS_SCTP_SACK_STALE;
    }
    if (!ns_tsn_lt(cum_tsn, rx->next_tsn)) {
        rx->stats.sack_invalid++;
        if (res)
            *res = r;
        return NS_SCTP_SACK_INVALID;
    }
    rx->stats.sacks++;

    struct sack_ctx k = {.now = now};
    uint32_t flight_before[NS_SCTP_MAX_PATHS];
    for (int i = 0; i < NS_SCTP_MAX_PATHS; i++)
        flight_before[i] = rx->paths[i] ? rx->paths[i]->flight : 0;

    /* Cumulative ack: everything at or below cum_tsn leaves for good. */
    while (rx->head && ns_tsn_le(rx->head->d.tsn, cum_tsn)) {
        struct ns_sctp_txchunk *c = rx->head;
        rx->head = c->next;
        if (!rx->head)
            rx->tail = NULL;
        if (c->state & NS_SCTP_TXC_GAP_ACKED)
            rx->n_gap_acked--;
        else
            newly_acked(rx, &k, c, &r);
        if (rx->rtx_cursor == c)
            rx->rtx_cursor = NULL;
        rx->n_chunks--;
        r.chunks_freed++;
        ns_sctp_sendq_chunk_done(rx->sq, c);
    }
    if (ns_tsn_lt(rx->cum_ack, cum_tsn)) {
        r.cum_advanced = true;
        rx->cum_ack = cum_tsn;
    }

    /* Gap blocks, in one walk over the outstanding list. Blocks must come
     * in ascending, non-overlapping order as receivers build them; others
     * are ignored rather than sorted, which keeps this O(chunks + blocks). */
    uint32_t last_end = cum_tsn; /* highest TSN any valid block reported */
    uint32_t walk_end = cum_tsn; /* highest TSN pass 2 must look at */
    bool any_renege = false;
    if (ngaps || rx->n_gap_acked) {
        uint32_t prev_gap = rx->n_gap_acked, seen_gap = 0;
        struct ns_sctp_txchunk *c = rx->head;
        for (uint16_t i = 0; i < ngaps; i++) {
            uint16_t s = gaps[i][0], e = gaps[i][1];
            uint32_t bs = cum_tsn + s, be = cum_tsn + e;
            if (s == 0 || s > e || !ns_tsn_lt(be, rx->next_tsn) || !ns_tsn_lt(last_end, bs)) {
                rx->stats.gap_bad++;
                continue;
            }
            for (; c && ns_tsn_lt(c->d.tsn, bs); c = c->next) {
                if (c->state & NS_SCTP_TXC_GAP_ACKED)
                    seen_gap++;
                uncovered(rx, &k, c, &r);
            }
            for (; c && ns_tsn_le(c->d.tsn, be); c = c->next) {
                if (c->state & NS_SCTP_TXC_GAP_ACKED) {
                    seen_gap++;
                    continue;
                }
                newly_acked(rx, &k, c, &r);
                c->state |= NS_SCTP_TXC_GAP_ACKED;
                rx->n_gap_acked++;
            }
            last_end = be;
        }
        walk_end = last_end;
        /* Gap-acked chunks above the last block are reneged as well. */
        for (; c && seen_gap < prev_gap; c = c->next) {
            if (c->state & NS_SCTP_TXC_GAP_ACKED) {
                seen_gap++;
                walk_end = c->d.tsn;
            }
            uncovered(rx, &k, c, &r);
        }
        any_renege = r.reneged != 0;
    }

    /* Congestion control sees the acknowledgements before the losses, as
     * the window growth of 7.2.1/7.2.2 is based on the flight before this
     * SACK. */
    for (uint8_t i = 0; i < NS_SCTP_MAX_PATHS; i++) {
        if (rx->paths[i])
            ns_sctp_cc_on_sack(rx->paths[i], k.acked[i], r.cum_advanced, flight_before[i], cum_tsn);
    }

    /* Miss indications (7.2.4): HTNA counts only TSNs below the highest
     * newly acknowledged one, except in fast recovery when the cum ack
     * advanced; a reneged chunk gets one indication of its own. */
    uint8_t fast_paths = 0;
    if (ns_tsn_lt(cum_tsn, walk_end) && (k.have_htna || any_renege || r.cum_advanced)) {
        for (struct ns_sctp_txchunk *c = rx->head; c && ns_tsn_le(c->d.tsn, walk_end);
             c = c->next) {
            bool reneged = (c->state & TXC_RENEGED) != 0;
            c->state &= (uint8_t)~TXC_RENEGED;
            if (c->state & (NS_SCTP_TXC_GAP_ACKED | NS_SCTP_TXC_RTX | NS_SCTP_TXC_FAST_DONE))
                continue;
            struct ns_sctp_cc *cc = pcc(rx, c->path);
            bool count =
                reneged || (k.have_htna && ns_tsn_lt(c->d.tsn, k.htna)) ||
                (r.cum_advanced && cc && cc->in_fast_recovery && ns_tsn_lt(c->d.tsn, last_end));
            if (!count)
                continue;
            if (c->misses < UINT8_MAX)
                c->misses++;
            if (c->misses >= 3) {
                /* Each chunk is fast-retransmitted at most once (7.2.4 5). */
                c->state |= NS_SCTP_TXC_FAST_DONE;
                mark_rtx(rx, c);
                fast_paths |= (uint8_t)(1u << c->path);
                rx->stats.fast_rtx_marked++;
                r.fast_rtx = true;
            }
        }
    }
    for (uint8_t i = 0; i < NS_SCTP_MAX_PATHS; i++) {
        if ((fast_paths & (1u << i)) && rx->paths[i])
            ns_sctp_cc_fast_rtx(rx->paths[i], rx->next_tsn - 1);
    }

    /* 6.2.1 D ii: what the peer can still take once what is in flight
     * lands. Chunks awaiting retransmission are charged again when resent. */
    rx->peer_rwnd = a_rwnd > rx->flight ? a_rwnd - rx->flight : 0;

    for (uint8_t i = 0; i < NS_SCTP_MAX_PATHS; i++) {
        uint8_t bit = (uint8_t)(1u << i);
        if (rx->path_outstanding[i] == 0) {
            r.t3_stop |= bit;
            r.t3_start &= (uint8_t)~bit;
        } else if (k.restart & bit) {
            r.t3_restart |= bit;
        }
    }
    r.all_acked = rx->n_chunks == 0;
    if (res)
        *res = r;
    return NS_SCTP_SACK_OK;
}

uint32_t ns_sctp_retx_t3_expired(struct ns_sctp_retx *rx, uint8_t path, uint64_t now)
{
    uint32_t n = 0;
    rx->stats.t3_expiries++;
    for (struct ns_sctp_txchunk *c = rx->head; c; c = c->next) {
        if (c->path != path || (c->state & (NS_SCTP_TXC_GAP_ACKED | NS_SCTP_TXC_RTX)))
            continue;
        mark_rtx(rx, c);
        n++;
    }
    rx->stats.t3_marked += n;
    struct ns_sctp_cc *cc = pcc(rx, path);
    if (cc)
        ns_sctp_cc_t3_expired(cc);
    return n;
}
