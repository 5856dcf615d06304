/* DATA (RFC 9260 section 3.3.1), I-DATA (RFC 8260 section 2.1: parsed
 * only, never negotiated) and FORWARD TSN (RFC 3758 section 3.2: parsed
 * and written, never negotiated): the chunks that carry user data or move
 * the TSN past it. Writing DATA is the packet writer's hot path: payloads
 * are copied or referenced as frags (chunk.h).
 *
 * DATA:
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 0    |  Res  |I|U|B|E|            Length             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              TSN                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |      Stream Identifier S      |   Stream Sequence Number n    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  Payload Protocol Identifier                  |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 User Data (seq n of Stream S)                 |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * I-DATA:
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 64   |  Res  |I|U|B|E|            Length             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              TSN                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |       Stream Identifier       |           Reserved            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      Message Identifier                       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    Payload Protocol Identifier / Fragment Sequence Number     |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           User Data                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * FORWARD TSN:
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 192  |  Flags = 0x00 |        Length = Variable      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      New Cumulative TSN                       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |         Stream-1              |       Stream Sequence-1       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              ...                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */
#include <string.h>

#include "sctp/chunk_wr.h"

enum ns_sctp_verdict ns_sctp_parse_data(const struct ns_sctp_chunk *c, struct ns_sctp_data_view *d)
{
    if (c->vlen < NS_SCTP_DATA_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *v = c->value;
    d->tsn = ns_rd32(v);
    d->sid = ns_rd16(v + 4);
    d->ssn = ns_rd16(v + 6);
    d->ppid = ns_rd32(v + 8);
    d->flags = c->flags;
    d->payload = v + 12;
    d->payload_len = c->vlen - 12u;
    d->payload_off = c->off + NS_SCTP_DATA_HLEN;
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_idata(const struct ns_sctp_chunk *c,
                                         struct ns_sctp_idata_view *d)
{
    if (c->vlen < NS_SCTP_IDATA_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *v = c->value;
    d->tsn = ns_rd32(v);
    d->sid = ns_rd16(v + 4);
    d->mid = ns_rd32(v + 8);
    d->ppid_fsn = ns_rd32(v + 12);
    d->flags = c->flags;
    d->payload = v + 16;
    d->payload_len = c->vlen - 16u;
    d->payload_off = c->off + NS_SCTP_IDATA_HLEN;
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_forward_tsn(const struct ns_sctp_chunk *c,
                                               struct ns_sctp_fwd_tsn_view *f)
{
    if (c->vlen < 4)
        return NS_SCTP_V_VALUE_SHORT;
    if ((c->vlen - 4u) % 4u)
        return NS_SCTP_V_COUNT;
    f->new_cum_tsn = ns_rd32(c->value);
    f->nstreams = (uint16_t)((c->vlen - 4u) / 4u);
    f->streams = c->value + 4;
    return NS_SCTP_V_OK;
}

/* ---- Writing ------------------------------------------------------------- */

static enum ns_sctp_wr_res wr_data(struct ns_sctp_writer *w, const struct ns_sctp_chunk_data *d,
                                   bool force_copy)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || w->chunk_off || !d->buf || d->len == 0 || d->off > d->buf->cap ||
        d->len > d->buf->cap - d->off)
        return wr_fail(w, NS_SCTP_WR_STATE);
    if (w->lone)
        return wr_fail(w, NS_SCTP_WR_BUNDLE);
    if (d->len > UINT16_MAX - NS_SCTP_DATA_HLEN || NS_SCTP_DATA_HLEN + d->len > wr_room(w))
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    bool copy = force_copy || d->len <= w->copy_max;
    if (!copy) {
        /* The payload, and one slot kept for whatever follows it; plus one
         * to close the side-buffer piece holding this chunk's header. */
        uint32_t need = w->pkt->nfrags == 0 ? 2 : 3;
        if (w->pkt->nfrags + need > NS_PKT_MAX_FRAGS)
            return wr_fail(w, NS_SCTP_WR_NOFRAG);
        if (!w->side) {
            w->side = ns_buf_alloc(w->budget);
            if (!w->side)
                return wr_fail(w, NS_SCTP_WR_NOMEM);
        }
    }
    uint8_t *h = wr_emit(w, NS_SCTP_DATA_HLEN);
    h[0] = NS_SCTP_CT_DATA;
    h[1] = d->flags;
    ns_wr16(h + 2, (uint16_t)(NS_SCTP_DATA_HLEN + d->len));
    ns_wr32(h + 4, d->tsn);
    ns_wr16(h + 8, d->sid);
    ns_wr16(h + 10, d->ssn);
    ns_wr32(h + 12, d->ppid);
    uint32_t pad = ns_sctp_pad4(d->len) - d->len;
    if (copy) {
        uint8_t *p = wr_emit(w, d->len + pad);
        memcpy(p, d->buf->data + d->off, d->len);
        memset(p + d->len, 0, pad);
    } else {
        wr_flush_side(w);
        ns_pkt_add_frag(w->pkt, d->buf, d->off, d->len);
        w->used += d->len;
        if (pad)
            memset(wr_emit(w, pad), 0, pad);
    }
    w->nchunks++;
    w->has_data = true;
    return NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_data(struct ns_sctp_writer *w, const struct ns_sctp_chunk_data *d)
{
    return wr_data(w, d, false);
}

enum ns_sctp_wr_res ns_sctp_wr_data_copy(struct ns_sctp_writer *w,
                                         const struct ns_sctp_chunk_data *d)
{
    return wr_data(w, d, true);
}

enum ns_sctp_wr_res ns_sctp_wr_forward_tsn(struct ns_sctp_writer *w, uint32_t new_cum_tsn,
                                           const uint16_t (*streams)[2], uint16_t n)
{
    if (wr_stuck(w))
        return w->err;
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_begin(w, NS_SCTP_CT_FORWARD_TSN, 0);
    ns_sctp_wr_u32(w, new_cum_tsn);
    for (uint16_t i = 0; i < n; i++) {
        uint8_t e[4];
        ns_wr16(e, streams[i][0]);
        ns_wr16(e + 2, streams[i][1]);
        ns_sctp_wr_bytes(w, e, 4);
    }
    ns_sctp_wr_end(w);
    return wr_txn_end(w, &t);
}
