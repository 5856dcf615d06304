/* SACK (RFC 9260 section 3.3.4): parsing, and writing as many gap blocks
 * and duplicate TSNs as fit (6.2 lets a receiver report fewer: the dups go
 * first, then the last gap blocks).
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 3    |  Chunk Flags  |         Chunk Length          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      Cumulative TSN Ack                       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Advertised Receiver Window Credit (a_rwnd)           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * | Number of Gap Ack Blocks = N  |  Number of Duplicate TSNs = M |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    Gap Ack Block #1 Start     |     Gap Ack Block #1 End      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              ...                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    Gap Ack Block #N Start     |     Gap Ack Block #N End      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Duplicate TSN 1                        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              ...                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Duplicate TSN M                        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */
#include "sctp/chunk_wr.h"

enum ns_sctp_verdict ns_sctp_parse_sack(const struct ns_sctp_chunk *c, struct ns_sctp_sack_view *s)
{
    if (c->vlen < NS_SCTP_SACK_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *v = c->value;
    s->cum_tsn = ns_rd32(v);
    s->a_rwnd = ns_rd32(v + 4);
    s->ngaps = ns_rd16(v + 8);
    s->ndups = ns_rd16(v + 10);
    if (12u + 4u * ((uint32_t)s->ngaps + s->ndups) > c->vlen)
        return NS_SCTP_V_COUNT;
    s->gaps = v + 12;
    s->dups = v + 12 + 4u * s->ngaps;
    return NS_SCTP_V_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_sack(struct ns_sctp_writer *w, uint32_t cum_tsn, uint32_t a_rwnd,
                                    const uint16_t (*gaps)[2], uint16_t ngaps, const uint32_t *dups,
                                    uint16_t ndups, uint16_t *ngaps_written,
                                    uint16_t *ndups_written)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt)
        return wr_fail(w, NS_SCTP_WR_STATE);
    uint32_t room = wr_room(w);
    if (room < NS_SCTP_SACK_HLEN) {
        /* Let begin() report ordering or bundling errors first. */
        return wr_fail(w, w->chunk_off  ? NS_SCTP_WR_STATE
                          : w->lone     ? NS_SCTP_WR_BUNDLE
                          : w->has_data ? NS_SCTP_WR_ORDER
                                        : NS_SCTP_WR_NOROOM);
    }
    uint32_t slots = (room - NS_SCTP_SACK_HLEN) / 4;
    uint32_t max_slots = (UINT16_MAX - NS_SCTP_SACK_HLEN) / 4;
    if (slots > max_slots)
        slots = max_slots;
    uint16_t ng = ngaps < slots ? ngaps : (uint16_t)slots;
    uint16_t nd = ndups < slots - ng ? ndups : (uint16_t)(slots - ng);
    enum ns_sctp_wr_res r = ns_sctp_wr_begin(w, NS_SCTP_CT_SACK, 0);
    if (r != NS_SCTP_WR_OK)
        return r;
    /* The value fits the room and a chunk by the slot count above: written
     * in one go. */
    uint8_t *v = wr_emit(w, 12u + 4u * ((uint32_t)ng + nd));
    ns_wr32(v, cum_tsn);
    ns_wr32(v + 4, a_rwnd);
    ns_wr16(v + 8, ng);
    ns_wr16(v + 10, nd);
    v += 12;
    for (uint16_t i = 0; i < ng; i++, v += 4) {
        ns_wr16(v, gaps[i][0]);
        ns_wr16(v + 2, gaps[i][1]);
    }
    for (uint16_t i = 0; i < nd; i++, v += 4)
        ns_wr32(v, dups[i]);
    r = ns_sctp_wr_end(w);
    if (r != NS_SCTP_WR_OK) {
        ns_sctp_wr_cancel(w);
        return r;
    }
    if (ngaps_written)
        *ngaps_written = ng;
    if (ndups_written)
        *ndups_written = nd;
    return NS_SCTP_WR_OK;
}
