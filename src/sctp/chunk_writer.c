/* The SCTP packet writer: RFC 9260 section 3 (the packet: common header,
 * then chunks), 3.2 (chunks and their TLVs padded to 4 bytes, the padding
 * not counted in a chunk's length), 6.10 (bundling: control chunks before
 * DATA; INIT, INIT ACK and SHUTDOWN COMPLETE alone). The typed chunk
 * writers are in the chunk family files; the rules and the latching are in
 * chunk.h, the shared internals in chunk_wr.h.
 *
 *   +---------------+-----------+-----------+-----+-----------+
 *   | Common Header |  Chunk 1  |  Chunk 2  | ... |  Chunk N  |
 *   +---------------+-----------+-----------+-----+-----------+
 *      12 bytes       each padded to a multiple of 4 bytes
 *
 *   Chunk:  | Type | Flags | Length | Value ... | padding |
 *   TLV:    | Type (16)    | Length (16)  | Value ... | padding |
 */
#include <string.h>

#include "sctp/chunk_wr.h"
#include "sctp/crc32c.h"

static const uint8_t zeros[4];

uint32_t ns_sctp_wr_room(const struct ns_sctp_writer *w)
{
    return w->pkt ? wr_room(w) : 0;
}

uint32_t ns_sctp_wr_data_room(const struct ns_sctp_writer *w)
{
    uint32_t r = ns_sctp_wr_room(w);
    return r > NS_SCTP_DATA_HLEN ? r - NS_SCTP_DATA_HLEN : 0;
}

enum ns_sctp_wr_res ns_sctp_wr_start(struct ns_sctp_writer *w, uint32_t budget, uint16_t src_port,
                                     uint16_t dst_port, uint32_t vtag)
{
    memset(w, 0, sizeof(*w));
    /* A budget rounded down to 4 means anything that fits unpadded also
     * fits padded: every chunk starts aligned. */
    budget &= ~3u;
    if (budget < NS_SCTP_COMMON_HLEN + NS_SCTP_CHUNK_HLEN)
        return wr_fail(w, NS_SCTP_WR_STATE);
    w->pkt = ns_pkt_alloc(NS_PKT_HEADROOM, budget);
    if (!w->pkt)
        return wr_fail(w, NS_SCTP_WR_NOMEM);
    w->budget = budget;
    w->copy_max = NS_SCTP_WR_COPY_MAX;
    ns_sctp_common_build(ns_pkt_put(w->pkt, NS_SCTP_COMMON_HLEN), src_port, dst_port, vtag);
    w->used = NS_SCTP_COMMON_HLEN;
    return NS_SCTP_WR_OK;
}

void ns_sctp_wr_discard(struct ns_sctp_writer *w)
{
    ns_pkt_free(w->pkt);
    ns_buf_put(w->side);
    memset(w, 0, sizeof(*w));
}

void wr_flush_side(struct ns_sctp_writer *w)
{
    if (w->side && w->side_used > w->side_flushed) {
        /* A slot was reserved for this when the last payload was added. */
        ns_pkt_add_frag(w->pkt, w->side, w->side_flushed, w->side_used - w->side_flushed);
        w->side_flushed = w->side_used;
    }
}

struct ns_pkt *ns_sctp_wr_finish(struct ns_sctp_writer *w)
{
    if (!w->pkt || w->chunk_off || wr_stuck(w))
        return NULL;
    if (w->nchunks == 0) {
        ns_sctp_wr_discard(w);
        return NULL;
    }
    wr_flush_side(w);
    ns_sctp_checksum_fill(w->pkt);
    struct ns_pkt *p = w->pkt;
    w->pkt = NULL;
    ns_sctp_wr_discard(w);
    return p;
}

/* ---- Optional sections and helper transactions -------------------------- */

void ns_sctp_wr_opt_begin(struct ns_sctp_writer *w, struct ns_sctp_wr_opt *o)
{
    const struct ns_pkt *p = w->pkt;
    *o = (struct ns_sctp_wr_opt){
        .len = p ? p->len : 0,
        .used = w->used,
        .nchunks = w->nchunks,
        .chunk_off = w->chunk_off,
        .tlv_off = w->tlv_off,
        .side_used = w->side_used,
        .side_flushed = w->side_flushed,
        .frag_len = p ? p->frag_len : 0,
        .nfrags = p ? p->nfrags : 0,
        .tlv_pad = w->tlv_pad,
        .has_data = w->has_data,
        .lone = w->lone,
        .latch = w->latch,
        .err = w->err,
    };
    /* A latching writer that has failed stays failed: the section is all
     * no-ops. Otherwise the section's own failures are what counts. */
    if (!wr_stuck(w))
        w->err = NS_SCTP_WR_OK;
    w->latch = true;
}

/* Put the packet back as it was at o (frags taken since are released). */
static void wr_undo(struct ns_sctp_writer *w, const struct ns_sctp_wr_opt *o)
{
    struct ns_pkt *p = w->pkt;
    if (p) {
        while (p->nfrags > o->nfrags) {
            struct ns_frag *f = &p->frags[--p->nfrags];
            ns_buf_put(f->buf);
            f->buf = NULL;
        }
        p->frag_len = o->frag_len;
        p->len = o->len;
    }
    w->used = o->used;
    w->nchunks = o->nchunks;
    w->chunk_off = o->chunk_off;
    w->tlv_off = o->tlv_off;
    w->tlv_pad = o->tlv_pad;
    w->side_used = o->side_used;
    w->side_flushed = o->side_flushed;
    w->has_data = o->has_data;
    w->lone = o->lone;
}

static bool opt_was_stuck(const struct ns_sctp_wr_opt *o)
{
    return o->latch && o->err != NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_opt_end(struct ns_sctp_writer *w, const struct ns_sctp_wr_opt *o)
{
    enum ns_sctp_wr_res r = w->err;
    if (!opt_was_stuck(o)) {
        if (r != NS_SCTP_WR_OK)
            wr_undo(w, o);
        w->err = o->err;
    }
    w->latch = o->latch;
    return r;
}

enum ns_sctp_wr_res wr_txn_end(struct ns_sctp_writer *w, const struct ns_sctp_wr_opt *t)
{
    enum ns_sctp_wr_res r = w->err;
    if (!opt_was_stuck(t)) {
        if (r != NS_SCTP_WR_OK)
            wr_undo(w, t);
        /* Unlike an optional section, the failure stays the writer's. */
        w->err = t->err != NS_SCTP_WR_OK ? t->err : r;
    }
    w->latch = t->latch;
    return r;
}

/* ---- Chunks ------------------------------------------------------------- */

static bool lone_type(uint8_t type)
{
    return type == NS_SCTP_CT_INIT || type == NS_SCTP_CT_INIT_ACK ||
           type == NS_SCTP_CT_SHUTDOWN_COMPLETE;
}

enum ns_sctp_wr_res ns_sctp_wr_begin(struct ns_sctp_writer *w, uint8_t type, uint8_t flags)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || w->chunk_off || type == NS_SCTP_CT_DATA || type == NS_SCTP_CT_I_DATA)
        return wr_fail(w, NS_SCTP_WR_STATE);
    if (w->lone || (lone_type(type) && w->nchunks > 0))
        return wr_fail(w, NS_SCTP_WR_BUNDLE);
    if (w->has_data)
        return wr_fail(w, NS_SCTP_WR_ORDER);
    if (wr_room(w) < NS_SCTP_CHUNK_HLEN)
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    w->chunk_off = w->pkt->len;
    uint8_t *h = wr_emit(w, NS_SCTP_CHUNK_HLEN);
    h[0] = type;
    h[1] = flags;
    h[2] = h[3] = 0;
    w->tlv_off = 0;
    w->tlv_pad = 0;
    return NS_SCTP_WR_OK;
}

void ns_sctp_wr_cancel(struct ns_sctp_writer *w)
{
    if (!w->pkt || !w->chunk_off)
        return;
    w->pkt->len = w->chunk_off;
    w->used = w->chunk_off;
    w->chunk_off = w->tlv_off = 0;
    w->tlv_pad = 0;
}

enum ns_sctp_wr_res ns_sctp_wr_bytes(struct ns_sctp_writer *w, const void *b, uint32_t len)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || !w->chunk_off)
        return wr_fail(w, NS_SCTP_WR_STATE);
    if (len > wr_room(w) || w->pkt->len + len - w->chunk_off > UINT16_MAX ||
        (w->tlv_off && w->pkt->len + len - w->tlv_off > UINT16_MAX))
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    if (len)
        memcpy(wr_emit(w, len), b, len);
    /* Bytes after a TLV's padding make that padding part of the value. */
    w->tlv_pad = 0;
    return NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_u16(struct ns_sctp_writer *w, uint16_t v)
{
    uint8_t b[2];
    ns_wr16(b, v);
    return ns_sctp_wr_bytes(w, b, 2);
}

enum ns_sctp_wr_res ns_sctp_wr_u32(struct ns_sctp_writer *w, uint32_t v)
{
    uint8_t b[4];
    ns_wr32(b, v);
    return ns_sctp_wr_bytes(w, b, 4);
}

enum ns_sctp_wr_res wr_align(struct ns_sctp_writer *w, uint8_t *written)
{
    *written = 0;
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || !w->chunk_off)
        return wr_fail(w, NS_SCTP_WR_STATE);
    uint32_t pad = ns_sctp_pad4(w->pkt->len) - w->pkt->len;
    *written = (uint8_t)pad;
    return pad ? ns_sctp_wr_bytes(w, zeros, pad) : NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_end(struct ns_sctp_writer *w)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || !w->chunk_off || w->tlv_off)
        return wr_fail(w, NS_SCTP_WR_STATE);
    uint8_t *h = w->pkt->data + w->chunk_off;
    uint32_t len = w->pkt->len - w->chunk_off - w->tlv_pad;
    ns_wr16(h + 2, (uint16_t)len);
    uint8_t type = h[0];
    w->chunk_off = 0;
    w->tlv_pad = 0;
    uint32_t pad = ns_sctp_pad4(w->pkt->len) - w->pkt->len;
    if (pad)
        memset(wr_emit(w, pad), 0, pad);
    w->nchunks++;
    if (lone_type(type))
        w->lone = true;
    return NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_chunk(struct ns_sctp_writer *w, uint8_t type, uint8_t flags,
                                     const void *value, uint32_t vlen)
{
    enum ns_sctp_wr_res r = ns_sctp_wr_begin(w, type, flags);
    if (r != NS_SCTP_WR_OK)
        return r;
    r = ns_sctp_wr_bytes(w, value, vlen);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_end(w);
    if (r != NS_SCTP_WR_OK)
        ns_sctp_wr_cancel(w);
    return r;
}

/* ---- TLVs (parameters and error causes) --------------------------------- */

enum ns_sctp_wr_res ns_sctp_wr_tlv_begin(struct ns_sctp_writer *w, uint16_t type)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || !w->chunk_off || w->tlv_off)
        return wr_fail(w, NS_SCTP_WR_STATE);
    struct ns_sctp_wr_opt t;
    uint8_t pad, h[4];
    wr_txn_begin(w, &t);
    wr_align(w, &pad);
    ns_wr16(h, type);
    ns_wr16(h + 2, 0);
    uint32_t off = w->pkt->len;
    if (ns_sctp_wr_bytes(w, h, 4) == NS_SCTP_WR_OK)
        w->tlv_off = off;
    return wr_txn_end(w, &t);
}

enum ns_sctp_wr_res ns_sctp_wr_tlv_end(struct ns_sctp_writer *w)
{
    if (wr_stuck(w))
        return w->err;
    if (!w->pkt || !w->chunk_off || !w->tlv_off)
        return wr_fail(w, NS_SCTP_WR_STATE);
    uint32_t len = w->pkt->len - w->tlv_off;
    ns_wr16(w->pkt->data + w->tlv_off + 2, (uint16_t)len);
    w->tlv_off = 0;
    /* The padding always fits: the budget is a multiple of 4. It is only
     * counted in the chunk length if something follows. */
    uint8_t pad = 0;
    enum ns_sctp_wr_res r = wr_align(w, &pad);
    w->tlv_pad = pad;
    return r;
}

enum ns_sctp_wr_res ns_sctp_wr_tlv(struct ns_sctp_writer *w, uint16_t type, const void *v,
                                   uint16_t vlen)
{
    if (wr_stuck(w))
        return w->err;
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_tlv_begin(w, type);
    ns_sctp_wr_bytes(w, v, vlen);
    ns_sctp_wr_tlv_end(w);
    return wr_txn_end(w, &t);
}

/* The copy is a parameter (chunk) in its own right, whose total length must
 * be a multiple of 4 (3.2, 3.2.1): its padding goes inside the wrapper's
 * length (which Wireshark checks and Linux does), not after it. */
enum ns_sctp_wr_res wr_tlv_wrap(struct ns_sctp_writer *w, uint16_t type, const uint8_t *raw,
                                uint16_t len)
{
    if (wr_stuck(w))
        return w->err;
    if (ns_sctp_pad4(len) > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    struct ns_sctp_wr_opt t;
    uint8_t pad;
    wr_txn_begin(w, &t);
    ns_sctp_wr_tlv_begin(w, type);
    ns_sctp_wr_bytes(w, raw, len);
    wr_align(w, &pad);
    ns_sctp_wr_tlv_end(w);
    return wr_txn_end(w, &t);
}
