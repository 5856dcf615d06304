/* Receive-side TSN map and SACK timing: RFC 9260 section 6.2 (acknowledging
 * DATA, delayed SACK, duplicate reporting), 6.7 (gap reporting and the
 * immediate SACK on out-of-order data), RFC 7053 (the I bit). */
#include "sctp/tsnmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/timer.h"

static inline bool bit_get(const struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    uint32_t i = tsn & (m->span - 1);
    return (m->bits[i >> 6] >> (i & 63)) & 1;
}
static inline void bit_set(struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    uint32_t i = tsn & (m->span - 1);
    m->bits[i >> 6] |= 1ULL << (i & 63);
}
static inline void bit_clear(struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    uint32_t i = tsn & (m->span - 1);
    m->bits[i >> 6] &= ~(1ULL << (i & 63));
}

/* The state a fresh map starts in, past the bitmap (zeroed by the caller). */
static void map_start(struct ns_sctp_tsnmap *m, uint32_t initial_tsn,
                      const struct ns_sctp_params *p)
{
    m->cum_tsn = initial_tsn - 1;
    m->max_tsn = m->cum_tsn;
    m->sack_freq = p->sack_freq;
    m->sack_timeout_us = (uint64_t)p->sack_timeout_ms * NS_MS;
    m->sack_deadline = NS_TIME_NEVER;
}

int ns_sctp_tsnmap_init(struct ns_sctp_tsnmap *m, uint32_t initial_tsn, uint32_t span,
                        const struct ns_sctp_params *p)
{
    memset(m, 0, sizeof(*m));
    if (span == 0)
        span = NS_SCTP_TSNMAP_DEFAULT_SPAN;
    uint32_t s = 64;
    while (s < span && s < (1u << 30))
        s <<= 1;
    m->span = s;
    m->bits = ns_alloc_should_fail() ? NULL : calloc(s / 64, sizeof(uint64_t));
    if (!m->bits)
        return -ENOMEM;
    map_start(m, initial_tsn, p);
    return 0;
}

void ns_sctp_tsnmap_reset(struct ns_sctp_tsnmap *m, uint32_t initial_tsn,
                          const struct ns_sctp_params *p)
{
    uint64_t *bits = m->bits;
    uint32_t span = m->span;
    struct ns_sctp_tsnmap_stats st = m->stats;
    memset(m, 0, sizeof(*m));
    memset(bits, 0, span / 64 * sizeof(uint64_t));
    m->bits = bits;
    m->span = span;
    m->stats = st;
    map_start(m, initial_tsn, p);
}

void ns_sctp_tsnmap_free(struct ns_sctp_tsnmap *m)
{
    free(m->bits);
    m->bits = NULL;
}

/* The first packet event after packet_done opens a new packet: remember
 * what the map looked like before it, to tell later whether it closed a gap. */
static void packet_open(struct ns_sctp_tsnmap *m)
{
    if (m->pkt_had_data)
        return;
    m->pkt_had_data = true;
    m->pkt_why = 0;
    m->had_gap_before = ns_sctp_tsnmap_has_gaps(m);
    m->cum_before = m->cum_tsn;
}

static void record_dup(struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    m->stats.rx_dup++;
    m->pkt_why |= NS_SCTP_SACKWHY_DUP;
    if (m->n_dups < NS_SCTP_SACK_MAX_DUPS)
        m->dups[m->n_dups++] = tsn;
    else
        m->stats.dup_overflow++;
}

enum ns_sctp_tsn_verdict ns_sctp_tsnmap_check(struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    packet_open(m);
    if (ns_tsn_le(tsn, m->cum_tsn)) {
        record_dup(m, tsn);
        return NS_SCTP_TSN_DUP;
    }
    if (tsn - m->cum_tsn > m->span) {
        m->stats.rx_out_window++;
        m->pkt_why |= NS_SCTP_SACKWHY_DROP;
        return NS_SCTP_TSN_OUT_OF_WINDOW;
    }
    if (bit_get(m, tsn)) {
        record_dup(m, tsn);
        return NS_SCTP_TSN_DUP;
    }
    return NS_SCTP_TSN_NEW;
}

void ns_sctp_tsnmap_dropped(struct ns_sctp_tsnmap *m)
{
    packet_open(m);
    m->pkt_why |= NS_SCTP_SACKWHY_DROP;
}

void ns_sctp_tsnmap_mark(struct ns_sctp_tsnmap *m, uint32_t tsn, bool i_bit)
{
    packet_open(m);
    if (i_bit)
        m->pkt_why |= NS_SCTP_SACKWHY_IBIT;
    if (ns_tsn_le(tsn, m->cum_tsn) || tsn - m->cum_tsn > m->span || bit_get(m, tsn))
        return; /* caller skipped check(); nothing sensible to record */
    m->stats.rx_new++;
    if (ns_tsn_lt(m->max_tsn, tsn))
        m->max_tsn = tsn;
    if (tsn != m->cum_tsn + 1) {
        bit_set(m, tsn);
        m->held++;
        return;
    }
    /* In-order arrival never touches the bitmap unless it closes a gap. */
    m->cum_tsn = tsn;
    while (m->held && bit_get(m, m->cum_tsn + 1)) {
        m->cum_tsn++;
        bit_clear(m, m->cum_tsn);
        m->held--;
    }
}

bool ns_sctp_tsnmap_is_received(const struct ns_sctp_tsnmap *m, uint32_t tsn)
{
    if (ns_tsn_le(tsn, m->cum_tsn))
        return true;
    if (tsn - m->cum_tsn > m->span)
        return false;
    return bit_get(m, tsn);
}

bool ns_sctp_tsnmap_packet_done(struct ns_sctp_tsnmap *m, uint64_t now, uint8_t *why)
{
    if (why)
        *why = 0;
    if (!m->pkt_had_data)
        return false;
    m->pkt_had_data = false;
    uint8_t w = m->pkt_why;
    if (ns_sctp_tsnmap_has_gaps(m))
        w |= NS_SCTP_SACKWHY_GAP;
    if (m->had_gap_before && m->cum_tsn != m->cum_before)
        w |= NS_SCTP_SACKWHY_FILL;
    m->pkts_unacked++;
    if (m->pkts_unacked >= m->sack_freq)
        w |= NS_SCTP_SACKWHY_FREQ;
    if (why)
        *why = w;
    if (w) {
        /* Due now: if the caller cannot send at once its timer fires at
         * the next poll. */
        m->sack_deadline = now;
        m->stats.sack_immediate++;
        return true;
    }
    if (m->sack_deadline == NS_TIME_NEVER)
        m->sack_deadline = now + m->sack_timeout_us;
    m->stats.sack_delayed++;
    return false;
}

/* Offsets are from cum_tsn. Returns the first offset in [from, to] whose
 * bit equals want, or to + 1. Whole words are skipped at a time; the ring
 * wraps on a word boundary since span is a multiple of 64. */
static uint32_t scan(const struct ns_sctp_tsnmap *m, uint32_t from, uint32_t to, bool want)
{
    uint32_t off = from;
    while (off <= to) {
        uint32_t i = (m->cum_tsn + off) & (m->span - 1);
        uint64_t w = m->bits[i >> 6];
        if (!want)
            w = ~w;
        w >>= (i & 63);
        if (w) {
            uint32_t hit = off + (uint32_t)__builtin_ctzll(w);
            return hit <= to ? hit : to + 1;
        }
        off += 64 - (i & 63);
    }
    return to + 1;
}

void ns_sctp_tsnmap_build_sack(struct ns_sctp_tsnmap *m, struct ns_sctp_sack_info *s,
                               uint16_t max_gaps, uint16_t max_dups)
{
    if (max_gaps > NS_SCTP_SACK_MAX_GAPS)
        max_gaps = NS_SCTP_SACK_MAX_GAPS;
    if (max_dups > NS_SCTP_SACK_MAX_DUPS)
        max_dups = NS_SCTP_SACK_MAX_DUPS;
    s->cum_tsn = m->cum_tsn;
    s->a_rwnd = 0;
    s->n_gaps = 0;
    if (m->held) {
        uint32_t last = m->max_tsn - m->cum_tsn;
        /* Gap block offsets are 16 bits wide. */
        if (last > 65535)
            last = 65535;
        uint32_t off = 2; /* offset 1 is never received, or cum would cover it */
        while (off <= last) {
            uint32_t start = scan(m, off, last, true);
            if (start > last)
                break;
            uint32_t end = scan(m, start, last, false) - 1;
            if (s->n_gaps == max_gaps) {
                m->stats.gaps_truncated++;
                break;
            }
            s->gaps[s->n_gaps][0] = (uint16_t)start;
            s->gaps[s->n_gaps][1] = (uint16_t)end;
            s->n_gaps++;
            off = end + 2;
        }
    }
    uint16_t nd = m->n_dups < max_dups ? m->n_dups : max_dups;
    memcpy(s->dups, m->dups, nd * sizeof(uint32_t));
    s->n_dups = nd;
    m->n_dups = 0;
    m->pkts_unacked = 0;
    m->sack_deadline = NS_TIME_NEVER;
    m->stats.sacks_built++;
}
