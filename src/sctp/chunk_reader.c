/* Reading an SCTP packet: the common header (RFC 9260 section 3.1), the
 * chain of chunks (3.2: lengths, padding, what may follow the last chunk),
 * and the TLV format parameters (3.2.1) and error causes (3.3.10) share.
 * The rules are in chunk.h; the typed parsers are in the chunk family
 * files.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |      Source Port Number       |    Destination Port Number    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       Verification Tag                        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           Checksum                            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Chunk Type  |  Chunk Flags  |         Chunk Length          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   Chunk Value (and padding)                   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          more chunks                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * A TLV (parameter or error cause):
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Type / Code          |            Length             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    Value (and padding)                        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */
#include "sctp/chunk.h"

#include <assert.h>
#include <string.h>

/* ---- Common header ---------------------------------------------------- */

bool ns_sctp_common_parse(const uint8_t *b, size_t len, struct ns_sctp_common *h)
{
    if (len < NS_SCTP_COMMON_HLEN)
        return false;
    h->src_port = ns_rd16(b);
    h->dst_port = ns_rd16(b + 2);
    h->vtag = ns_rd32(b + 4);
    h->checksum = ns_rd32le(b + 8);
    return true;
}

void ns_sctp_common_build(uint8_t *b, uint16_t src_port, uint16_t dst_port, uint32_t vtag)
{
    ns_wr16(b, src_port);
    ns_wr16(b + 2, dst_port);
    ns_wr32(b + 4, vtag);
    memset(b + 8, 0, 4);
}

/* ---- Chunk chain ------------------------------------------------------- */

enum ns_sctp_verdict ns_sctp_reader_init(struct ns_sctp_reader *r, const uint8_t *pkt, uint32_t len)
{
    memset(r, 0, sizeof(*r));
    r->pkt = pkt;
    r->len = len;
    r->off = len; /* nothing to iterate until validated */
    if (!ns_sctp_common_parse(pkt, len, &r->hdr))
        return NS_SCTP_V_SHORT;
    if (len == NS_SCTP_COMMON_HLEN)
        return NS_SCTP_V_NO_CHUNKS;
    uint32_t off = NS_SCTP_COMMON_HLEN, n = 0;
    uint64_t types = 0;
    enum ns_sctp_verdict v = NS_SCTP_V_OK;
    for (;;) {
        if (len - off < NS_SCTP_CHUNK_HLEN) {
            v = NS_SCTP_V_CHUNK_SHORT;
            break;
        }
        uint16_t clen = ns_rd16(pkt + off + 2);
        if (clen < NS_SCTP_CHUNK_HLEN) {
            v = NS_SCTP_V_CHUNK_LEN;
            break;
        }
        if (clen > len - off) {
            v = NS_SCTP_V_CHUNK_OVERRUN;
            break;
        }
        if (pkt[off] < 64)
            types |= 1ull << pkt[off];
        n++;
        /* The last chunk's padding may be short or absent. */
        if (ns_sctp_pad4(clen) >= len - off)
            break;
        off += ns_sctp_pad4(clen);
    }
    if (v != NS_SCTP_V_OK) {
        r->bad_off = off;
        return v;
    }
    r->nchunks = n;
    r->types_lo = types;
    r->off = NS_SCTP_COMMON_HLEN;
    return NS_SCTP_V_OK;
}

bool ns_sctp_reader_next(struct ns_sctp_reader *r, struct ns_sctp_chunk *c)
{
    if (r->idx >= r->nchunks)
        return false;
    const uint8_t *p = r->pkt + r->off;
    c->type = p[0];
    c->flags = p[1];
    c->len = ns_rd16(p + 2);
    c->raw = p;
    c->value = p + NS_SCTP_CHUNK_HLEN;
    c->vlen = (uint16_t)(c->len - NS_SCTP_CHUNK_HLEN);
    c->off = r->off;
    r->off += ns_sctp_pad4(c->len);
    r->idx++;
    return true;
}

void ns_sctp_reader_rewind(struct ns_sctp_reader *r, const struct ns_sctp_chunk *c)
{
    /* The chain was validated: walking it from the first chunk meets c. */
    uint32_t off = NS_SCTP_COMMON_HLEN, idx = 0;
    while (off < c->off) {
        off += ns_sctp_pad4(ns_rd16(r->pkt + off + 2));
        idx++;
    }
    assert(off == c->off && idx < r->nchunks);
    r->off = c->off;
    r->idx = idx;
}

void ns_sctp_reader_one(const struct ns_sctp_reader *r, const struct ns_sctp_chunk *c,
                        struct ns_sctp_reader *out)
{
    assert(c->raw == r->pkt + c->off);
    *out = *r;
    out->off = c->off;
    out->idx = 0;
    out->nchunks = 1;
    out->types_lo = c->type < 64 ? 1ull << c->type : 0;
}

bool ns_sctp_reader_bundling_ok(const struct ns_sctp_reader *r)
{
    const uint64_t lone = 1ull << NS_SCTP_CT_INIT | 1ull << NS_SCTP_CT_INIT_ACK |
                          1ull << NS_SCTP_CT_SHUTDOWN_COMPLETE;
    return r->nchunks <= 1 || !(r->types_lo & lone);
}

/* ---- TLVs ------------------------------------------------------------- */

void ns_sctp_tlv_iter_init(struct ns_sctp_tlv_iter *it, const uint8_t *p, uint32_t len)
{
    it->p = p;
    it->len = len;
    it->off = 0;
    it->err = NS_SCTP_V_OK;
}

bool ns_sctp_tlv_next(struct ns_sctp_tlv_iter *it, struct ns_sctp_tlv *t)
{
    if (it->err != NS_SCTP_V_OK || it->off >= it->len)
        return false;
    uint32_t left = it->len - it->off;
    if (left < NS_SCTP_TLV_HLEN) {
        it->err = NS_SCTP_V_PARAM_SHORT;
        return false;
    }
    const uint8_t *p = it->p + it->off;
    uint16_t len = ns_rd16(p + 2);
    if (len < NS_SCTP_TLV_HLEN) {
        it->err = NS_SCTP_V_PARAM_LEN;
        return false;
    }
    if (len > left) {
        it->err = NS_SCTP_V_PARAM_OVERRUN;
        return false;
    }
    t->type = ns_rd16(p);
    t->len = len;
    t->raw = p;
    t->value = p + NS_SCTP_TLV_HLEN;
    t->vlen = (uint16_t)(len - NS_SCTP_TLV_HLEN);
    /* Past the end means this was the last one, its padding cut short. */
    uint32_t step = ns_sctp_pad4(len);
    it->off = step >= left ? it->len : it->off + step;
    return true;
}

enum ns_sctp_verdict ns_sctp_tlv_validate(const uint8_t *p, uint32_t len)
{
    struct ns_sctp_tlv_iter it;
    struct ns_sctp_tlv t;
    ns_sctp_tlv_iter_init(&it, p, len);
    while (ns_sctp_tlv_next(&it, &t))
        ;
    return it.err;
}
