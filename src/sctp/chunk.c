/* SCTP wire format (RFC 9260 sections 3-3.3.13; RFC 3758 section 3.2 for
 * FORWARD TSN; RFC 8260 section 2.1 for I-DATA; RFC 5061 section 4.2.7 for
 * Supported Extensions). See chunk.h for the reading and writing rules. */
#include "sctp/chunk.h"

#include <string.h>

#include "sctp/crc32c.h"

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

#define NS_SCTP_V_STR(name) #name,
static const char *const verdict_names[] = {NS_SCTP_VERDICTS(NS_SCTP_V_STR)};
#undef NS_SCTP_V_STR

const char *ns_sctp_verdict_str(enum ns_sctp_verdict v)
{
    if ((unsigned)v >= NS_SCTP_V__COUNT)
        return "?";
    return verdict_names[v];
}

bool ns_sctp_chunk_type_base(uint8_t type)
{
    return type <= NS_SCTP_CT_COOKIE_ACK || type == NS_SCTP_CT_SHUTDOWN_COMPLETE;
}

const char *ns_sctp_chunk_type_name(uint8_t type)
{
    switch (type) {
    case NS_SCTP_CT_DATA:
        return "DATA";
    case NS_SCTP_CT_INIT:
        return "INIT";
    case NS_SCTP_CT_INIT_ACK:
        return "INIT_ACK";
    case NS_SCTP_CT_SACK:
        return "SACK";
    case NS_SCTP_CT_HEARTBEAT:
        return "HEARTBEAT";
    case NS_SCTP_CT_HEARTBEAT_ACK:
        return "HEARTBEAT_ACK";
    case NS_SCTP_CT_ABORT:
        return "ABORT";
    case NS_SCTP_CT_SHUTDOWN:
        return "SHUTDOWN";
    case NS_SCTP_CT_SHUTDOWN_ACK:
        return "SHUTDOWN_ACK";
    case NS_SCTP_CT_ERROR:
        return "ERROR";
    case NS_SCTP_CT_COOKIE_ECHO:
        return "COOKIE_ECHO";
    case NS_SCTP_CT_COOKIE_ACK:
        return "COOKIE_ACK";
    case NS_SCTP_CT_ECNE:
        return "ECNE";
    case NS_SCTP_CT_CWR:
        return "CWR";
    case NS_SCTP_CT_SHUTDOWN_COMPLETE:
        return "SHUTDOWN_COMPLETE";
    case NS_SCTP_CT_AUTH:
        return "AUTH";
    case NS_SCTP_CT_I_DATA:
        return "I_DATA";
    case NS_SCTP_CT_ASCONF_ACK:
        return "ASCONF_ACK";
    case NS_SCTP_CT_RE_CONFIG:
        return "RE_CONFIG";
    case NS_SCTP_CT_PAD:
        return "PAD";
    case NS_SCTP_CT_FORWARD_TSN:
        return "FORWARD_TSN";
    case NS_SCTP_CT_ASCONF:
        return "ASCONF";
    case NS_SCTP_CT_I_FORWARD_TSN:
        return "I_FORWARD_TSN";
    default:
        return "UNKNOWN";
    }
}

/* ---- Common header ---------------------------------------------------- */

bool ns_sctp_common_parse(const uint8_t *b, size_t len, struct ns_sctp_common *h)
{
    if (len < NS_SCTP_COMMON_HLEN)
        return false;
    h->src_port = rd16(b);
    h->dst_port = rd16(b + 2);
    h->vtag = rd32(b + 4);
    h->checksum =
        (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    return true;
}

void ns_sctp_common_build(uint8_t *b, uint16_t src_port, uint16_t dst_port, uint32_t vtag)
{
    wr16(b, src_port);
    wr16(b + 2, dst_port);
    wr32(b + 4, vtag);
    memset(b + 8, 0, 4);
}

/* ---- Reader ----------------------------------------------------------- */

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
        uint16_t clen = rd16(pkt + off + 2);
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
    c->len = rd16(p + 2);
    c->raw = p;
    c->value = p + NS_SCTP_CHUNK_HLEN;
    c->vlen = (uint16_t)(c->len - NS_SCTP_CHUNK_HLEN);
    c->off = r->off;
    r->off += ns_sctp_pad4(c->len);
    r->idx++;
    return true;
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
    uint16_t len = rd16(p + 2);
    if (len < NS_SCTP_TLV_HLEN) {
        it->err = NS_SCTP_V_PARAM_LEN;
        return false;
    }
    if (len > left) {
        it->err = NS_SCTP_V_PARAM_OVERRUN;
        return false;
    }
    t->type = rd16(p);
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

/* ---- Typed chunk parsers ------------------------------------------------ */

enum ns_sctp_verdict ns_sctp_parse_data(const struct ns_sctp_chunk *c, struct ns_sctp_data_view *d)
{
    if (c->vlen < NS_SCTP_DATA_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *v = c->value;
    d->tsn = rd32(v);
    d->sid = rd16(v + 4);
    d->ssn = rd16(v + 6);
    d->ppid = rd32(v + 8);
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
    d->tsn = rd32(v);
    d->sid = rd16(v + 4);
    d->mid = rd32(v + 8);
    d->ppid_fsn = rd32(v + 12);
    d->flags = c->flags;
    d->payload = v + 16;
    d->payload_len = c->vlen - 16u;
    d->payload_off = c->off + NS_SCTP_IDATA_HLEN;
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_init(const struct ns_sctp_chunk *c, struct ns_sctp_init_view *v)
{
    if (c->vlen < NS_SCTP_INIT_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *p = c->value;
    v->initiate_tag = rd32(p);
    v->a_rwnd = rd32(p + 4);
    v->os = rd16(p + 8);
    v->mis = rd16(p + 10);
    v->initial_tsn = rd32(p + 12);
    v->params = p + 16;
    v->params_len = c->vlen - 16u;
    return NS_SCTP_V_OK;
}

bool ns_sctp_init_mandatory_ok(const struct ns_sctp_init_view *v)
{
    return v->initiate_tag != 0 && v->os != 0 && v->mis != 0;
}

static void note_unrecognized(struct ns_sctp_init_params *o, const struct ns_sctp_tlv *t)
{
    if (o->n_unrec < NS_SCTP_MAX_UNRECOGNIZED) {
        o->unrec[o->n_unrec].raw = t->raw;
        o->unrec[o->n_unrec].len = t->len;
        o->n_unrec++;
    } else {
        o->unrec_overflow = true;
    }
}

enum ns_sctp_verdict ns_sctp_init_params_parse(const struct ns_sctp_init_view *v, bool is_ack,
                                               uint32_t ext, struct ns_sctp_init_params *o)
{
    memset(o, 0, sizeof(*o));
    struct ns_sctp_tlv_iter it;
    struct ns_sctp_tlv t;
    ns_sctp_tlv_iter_init(&it, v->params, v->params_len);
    while (ns_sctp_tlv_next(&it, &t)) {
        bool known = true;
        switch (t.type) {
        case NS_SCTP_PT_IPV4:
            if (t.vlen != 4)
                return NS_SCTP_V_PARAM_INVALID;
            if (o->n_ipv4 < NS_SCTP_MAX_PEER_ADDRS)
                o->ipv4[o->n_ipv4++] = rd32(t.value);
            o->n_addrs_total++;
            break;
        case NS_SCTP_PT_IPV6:
            if (t.vlen != 16)
                return NS_SCTP_V_PARAM_INVALID;
            if (o->n_ipv6 < NS_SCTP_MAX_PEER_ADDRS)
                o->ipv6[o->n_ipv6++] = t.value;
            o->n_addrs_total++;
            break;
        case NS_SCTP_PT_STATE_COOKIE:
            if (!is_ack || o->cookie) {
                o->n_ignored++;
                break;
            }
            if (t.vlen == 0)
                return NS_SCTP_V_PARAM_INVALID;
            o->cookie = t.value;
            o->cookie_len = t.vlen;
            break;
        case NS_SCTP_PT_UNRECOGNIZED:
            /* In an INIT ACK it tells us the peer skipped one of ours: only
             * informational. It has no meaning in an INIT. */
            if (!is_ack)
                o->n_ignored++;
            break;
        case NS_SCTP_PT_COOKIE_PRESERVATIVE:
            if (is_ack) {
                o->n_ignored++;
                break;
            }
            if (t.vlen != 4)
                return NS_SCTP_V_PARAM_INVALID;
            o->has_cookie_preservative = true;
            o->cookie_preservative_ms = rd32(t.value);
            break;
        case NS_SCTP_PT_HOST_NAME:
            if (!o->hostname_param) {
                o->hostname_param = t.raw;
                o->hostname_param_len = t.len;
            }
            break;
        case NS_SCTP_PT_SUPPORTED_ADDR_TYPES:
            if (is_ack) {
                o->n_ignored++;
                break;
            }
            if (t.vlen & 1)
                return NS_SCTP_V_PARAM_INVALID;
            o->has_supported_addr_types = true;
            for (uint16_t i = 0; i < t.vlen; i += 2) {
                uint16_t at = rd16(t.value + i);
                if (at == NS_SCTP_ADDRTYPE_IPV4)
                    o->supported_addr_types |= NS_SCTP_SAT_IPV4;
                else if (at == NS_SCTP_ADDRTYPE_IPV6)
                    o->supported_addr_types |= NS_SCTP_SAT_IPV6;
                else if (at == NS_SCTP_ADDRTYPE_HOSTNAME)
                    o->supported_addr_types |= NS_SCTP_SAT_HOSTNAME;
            }
            break;
        case NS_SCTP_PT_ECN_CAPABLE:
            o->ecn = true;
            known = (ext & NS_SCTP_EXT_ECN) != 0;
            break;
        case NS_SCTP_PT_FORWARD_TSN:
            o->forward_tsn = true;
            known = (ext & NS_SCTP_EXT_FORWARD_TSN) != 0;
            break;
        case NS_SCTP_PT_SUPPORTED_EXT:
            for (uint16_t i = 0; i < t.vlen; i++) {
                switch (t.value[i]) {
                case NS_SCTP_CT_FORWARD_TSN:
                    o->supported_ext |= NS_SCTP_SUPEXT_FORWARD_TSN;
                    break;
                case NS_SCTP_CT_I_DATA:
                    o->supported_ext |= NS_SCTP_SUPEXT_I_DATA;
                    break;
                case NS_SCTP_CT_RE_CONFIG:
                    o->supported_ext |= NS_SCTP_SUPEXT_RE_CONFIG;
                    break;
                case NS_SCTP_CT_ASCONF:
                    o->supported_ext |= NS_SCTP_SUPEXT_ASCONF;
                    break;
                case NS_SCTP_CT_AUTH:
                    o->supported_ext |= NS_SCTP_SUPEXT_AUTH;
                    break;
                default:
                    break;
                }
            }
            break;
        default:
            known = false;
            break;
        }
        if (known)
            continue;
        enum ns_sctp_unknown_action a = ns_sctp_param_action(t.type);
        if (ns_sctp_action_reports(a))
            note_unrecognized(o, &t);
        if (ns_sctp_action_stops(a)) {
            /* Later parameters are not even looked at (section 3.2.1). */
            o->stopped = true;
            return NS_SCTP_V_OK;
        }
    }
    return it.err;
}

enum ns_sctp_verdict ns_sctp_parse_sack(const struct ns_sctp_chunk *c, struct ns_sctp_sack_view *s)
{
    if (c->vlen < NS_SCTP_SACK_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *v = c->value;
    s->cum_tsn = rd32(v);
    s->a_rwnd = rd32(v + 4);
    s->ngaps = rd16(v + 8);
    s->ndups = rd16(v + 10);
    if (12u + 4u * ((uint32_t)s->ngaps + s->ndups) > c->vlen)
        return NS_SCTP_V_COUNT;
    s->gaps = v + 12;
    s->dups = v + 12 + 4u * s->ngaps;
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_heartbeat(const struct ns_sctp_chunk *c,
                                             struct ns_sctp_hb_view *h)
{
    struct ns_sctp_tlv_iter it;
    struct ns_sctp_tlv t;
    ns_sctp_tlv_iter_init(&it, c->value, c->vlen);
    if (!ns_sctp_tlv_next(&it, &t))
        return it.err != NS_SCTP_V_OK ? it.err : NS_SCTP_V_HB_INFO;
    if (t.type != NS_SCTP_PT_HEARTBEAT_INFO)
        return NS_SCTP_V_HB_INFO;
    h->info = t.value;
    h->info_len = t.vlen;
    h->param_raw = t.raw;
    h->param_len = t.len;
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_cause_parse(const struct ns_sctp_tlv *t, struct ns_sctp_cause *c)
{
    memset(c, 0, sizeof(*c));
    c->code = t->type;
    c->len = t->len;
    c->raw = t->raw;
    c->value = t->value;
    c->vlen = t->vlen;
    switch (t->type) {
    case NS_SCTP_CAUSE_INVALID_STREAM:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->sid = rd16(t->value);
        break;
    case NS_SCTP_CAUSE_MISSING_PARAM:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->n_missing = rd32(t->value);
        if (c->n_missing > (t->vlen - 4u) / 2u)
            return NS_SCTP_V_PARAM_INVALID;
        c->missing = t->value + 4;
        break;
    case NS_SCTP_CAUSE_STALE_COOKIE:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->staleness_us = rd32(t->value);
        break;
    case NS_SCTP_CAUSE_NO_USER_DATA:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->tsn = rd32(t->value);
        break;
    case NS_SCTP_CAUSE_UNRECOGNIZED_CHUNK:
        if (t->vlen < NS_SCTP_CHUNK_HLEN)
            return NS_SCTP_V_PARAM_INVALID;
        break;
    default:
        /* The others carry opaque or TLV data, or nothing; extra bytes in
         * the fixed-size ones are ignored like everywhere else. */
        break;
    }
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_causes(const struct ns_sctp_chunk *c,
                                          struct ns_sctp_causes_view *v)
{
    struct ns_sctp_tlv_iter it;
    struct ns_sctp_tlv t;
    struct ns_sctp_cause cause;
    uint16_t n = 0;
    ns_sctp_tlv_iter_init(&it, c->value, c->vlen);
    while (ns_sctp_tlv_next(&it, &t)) {
        enum ns_sctp_verdict r = ns_sctp_cause_parse(&t, &cause);
        if (r != NS_SCTP_V_OK)
            return r;
        n++;
    }
    if (it.err != NS_SCTP_V_OK)
        return it.err;
    v->causes = c->value;
    v->len = c->vlen;
    v->ncauses = n;
    v->t_bit = (c->flags & NS_SCTP_FLAG_T) != 0;
    return NS_SCTP_V_OK;
}

void ns_sctp_cause_iter_init(struct ns_sctp_cause_iter *ci, const struct ns_sctp_causes_view *v)
{
    ns_sctp_tlv_iter_init(&ci->it, v->causes, v->len);
}

bool ns_sctp_cause_next(struct ns_sctp_cause_iter *ci, struct ns_sctp_cause *c)
{
    struct ns_sctp_tlv t;
    if (!ns_sctp_tlv_next(&ci->it, &t))
        return false;
    ns_sctp_cause_parse(&t, c);
    return true;
}

enum ns_sctp_verdict ns_sctp_parse_shutdown(const struct ns_sctp_chunk *c, uint32_t *cum_tsn)
{
    if (c->vlen < 4)
        return NS_SCTP_V_VALUE_SHORT;
    *cum_tsn = rd32(c->value);
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_cookie_echo(const struct ns_sctp_chunk *c,
                                               const uint8_t **cookie, uint16_t *cookie_len)
{
    if (c->vlen == 0)
        return NS_SCTP_V_VALUE_SHORT;
    *cookie = c->value;
    *cookie_len = c->vlen;
    return NS_SCTP_V_OK;
}

enum ns_sctp_verdict ns_sctp_parse_forward_tsn(const struct ns_sctp_chunk *c,
                                               struct ns_sctp_fwd_tsn_view *f)
{
    if (c->vlen < 4)
        return NS_SCTP_V_VALUE_SHORT;
    if ((c->vlen - 4u) % 4u)
        return NS_SCTP_V_COUNT;
    f->new_cum_tsn = rd32(c->value);
    f->nstreams = (uint16_t)((c->vlen - 4u) / 4u);
    f->streams = c->value + 4;
    return NS_SCTP_V_OK;
}

/* ---- Writer ----------------------------------------------------------- */

static uint32_t wr_room(const struct ns_sctp_writer *w)
{
    return w->budget - w->used;
}

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
        return NS_SCTP_WR_STATE;
    w->pkt = ns_pkt_alloc(NS_PKT_HEADROOM, budget);
    if (!w->pkt)
        return NS_SCTP_WR_NOMEM;
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

/* Append n bytes at the end of the packet: in the head until the first frag,
 * in the side buffer after. The caller has checked the budget. */
static uint8_t *wr_emit(struct ns_sctp_writer *w, uint32_t n)
{
    uint8_t *d;
    if (w->pkt->nfrags == 0) {
        d = ns_pkt_put(w->pkt, n);
    } else {
        d = w->side->data + w->side_used;
        w->side_used += n;
    }
    w->used += n;
    return d;
}

static void wr_flush_side(struct ns_sctp_writer *w)
{
    if (w->side && w->side_used > w->side_flushed) {
        /* A slot was reserved for this when the last payload was added. */
        ns_pkt_add_frag(w->pkt, w->side, w->side_flushed, w->side_used - w->side_flushed);
        w->side_flushed = w->side_used;
    }
}

struct ns_pkt *ns_sctp_wr_finish(struct ns_sctp_writer *w)
{
    if (!w->pkt || w->chunk_off)
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

static bool lone_type(uint8_t type)
{
    return type == NS_SCTP_CT_INIT || type == NS_SCTP_CT_INIT_ACK ||
           type == NS_SCTP_CT_SHUTDOWN_COMPLETE;
}

enum ns_sctp_wr_res ns_sctp_wr_begin(struct ns_sctp_writer *w, uint8_t type, uint8_t flags)
{
    if (!w->pkt || w->chunk_off || type == NS_SCTP_CT_DATA || type == NS_SCTP_CT_I_DATA)
        return NS_SCTP_WR_STATE;
    if (w->lone || (lone_type(type) && w->nchunks > 0))
        return NS_SCTP_WR_BUNDLE;
    if (w->has_data)
        return NS_SCTP_WR_ORDER;
    if (wr_room(w) < NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_WR_NOROOM;
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

/* Undo point inside an open chunk, for helpers that write several pieces. */
struct wr_save {
    uint32_t len, tlv_off;
    uint8_t tlv_pad;
};
static struct wr_save wr_save(const struct ns_sctp_writer *w)
{
    return (struct wr_save){w->pkt ? w->pkt->len : 0, w->tlv_off, w->tlv_pad};
}
static enum ns_sctp_wr_res wr_restore(struct ns_sctp_writer *w, struct wr_save s,
                                      enum ns_sctp_wr_res r)
{
    if (r != NS_SCTP_WR_OK && w->pkt && w->chunk_off) {
        w->pkt->len = s.len;
        w->used = s.len;
        w->tlv_off = s.tlv_off;
        w->tlv_pad = s.tlv_pad;
    }
    return r;
}

enum ns_sctp_wr_res ns_sctp_wr_bytes(struct ns_sctp_writer *w, const void *b, uint32_t len)
{
    if (!w->pkt || !w->chunk_off)
        return NS_SCTP_WR_STATE;
    if (len > wr_room(w) || w->pkt->len + len - w->chunk_off > UINT16_MAX ||
        (w->tlv_off && w->pkt->len + len - w->tlv_off > UINT16_MAX))
        return NS_SCTP_WR_NOROOM;
    if (len)
        memcpy(wr_emit(w, len), b, len);
    /* Bytes after a TLV's padding make that padding part of the value. */
    w->tlv_pad = 0;
    return NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_u16(struct ns_sctp_writer *w, uint16_t v)
{
    uint8_t b[2];
    wr16(b, v);
    return ns_sctp_wr_bytes(w, b, 2);
}

enum ns_sctp_wr_res ns_sctp_wr_u32(struct ns_sctp_writer *w, uint32_t v)
{
    uint8_t b[4];
    wr32(b, v);
    return ns_sctp_wr_bytes(w, b, 4);
}

static const uint8_t zeros[4];

/* Zero bytes up to the next 4-byte boundary of the chunk (chunk starts are
 * aligned, so the packet offset is what matters). */
static enum ns_sctp_wr_res wr_align(struct ns_sctp_writer *w, uint8_t *written)
{
    uint32_t pad = ns_sctp_pad4(w->pkt->len) - w->pkt->len;
    *written = (uint8_t)pad;
    return pad ? ns_sctp_wr_bytes(w, zeros, pad) : NS_SCTP_WR_OK;
}

enum ns_sctp_wr_res ns_sctp_wr_tlv_begin(struct ns_sctp_writer *w, uint16_t type)
{
    if (!w->pkt || !w->chunk_off || w->tlv_off)
        return NS_SCTP_WR_STATE;
    struct wr_save s = wr_save(w);
    uint8_t pad;
    enum ns_sctp_wr_res r = wr_align(w, &pad);
    if (r == NS_SCTP_WR_OK) {
        uint8_t h[4];
        wr16(h, type);
        wr16(h + 2, 0);
        uint32_t off = w->pkt->len;
        r = ns_sctp_wr_bytes(w, h, 4);
        if (r == NS_SCTP_WR_OK)
            w->tlv_off = off;
    }
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_tlv_end(struct ns_sctp_writer *w)
{
    if (!w->pkt || !w->chunk_off || !w->tlv_off)
        return NS_SCTP_WR_STATE;
    uint32_t len = w->pkt->len - w->tlv_off;
    wr16(w->pkt->data + w->tlv_off + 2, (uint16_t)len);
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
    struct wr_save s = wr_save(w);
    enum ns_sctp_wr_res r = ns_sctp_wr_tlv_begin(w, type);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_bytes(w, v, vlen);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_tlv_end(w);
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_end(struct ns_sctp_writer *w)
{
    if (!w->pkt || !w->chunk_off || w->tlv_off)
        return NS_SCTP_WR_STATE;
    uint8_t *h = w->pkt->data + w->chunk_off;
    uint32_t len = w->pkt->len - w->chunk_off - w->tlv_pad;
    wr16(h + 2, (uint16_t)len);
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

static enum ns_sctp_wr_res wr_data(struct ns_sctp_writer *w, const struct ns_sctp_chunk_data *d,
                                   bool force_copy)
{
    if (!w->pkt || w->chunk_off || !d->buf || d->len == 0 || d->off > d->buf->cap ||
        d->len > d->buf->cap - d->off)
        return NS_SCTP_WR_STATE;
    if (w->lone)
        return NS_SCTP_WR_BUNDLE;
    if (d->len > UINT16_MAX - NS_SCTP_DATA_HLEN || NS_SCTP_DATA_HLEN + d->len > wr_room(w))
        return NS_SCTP_WR_NOROOM;
    bool copy = force_copy || d->len <= w->copy_max;
    if (!copy) {
        /* The payload, and one slot kept for whatever follows it; plus one
         * to close the side-buffer piece holding this chunk's header. */
        uint32_t need = w->pkt->nfrags == 0 ? 2 : 3;
        if (w->pkt->nfrags + need > NS_PKT_MAX_FRAGS)
            return NS_SCTP_WR_NOFRAG;
        if (!w->side) {
            w->side = ns_buf_alloc(w->budget);
            if (!w->side)
                return NS_SCTP_WR_NOMEM;
        }
    }
    uint8_t *h = wr_emit(w, NS_SCTP_DATA_HLEN);
    h[0] = NS_SCTP_CT_DATA;
    h[1] = d->flags;
    wr16(h + 2, (uint16_t)(NS_SCTP_DATA_HLEN + d->len));
    wr32(h + 4, d->tsn);
    wr16(h + 8, d->sid);
    wr16(h + 10, d->ssn);
    wr32(h + 12, d->ppid);
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

enum ns_sctp_wr_res ns_sctp_wr_init_begin(struct ns_sctp_writer *w, bool ack, uint32_t initiate_tag,
                                          uint32_t a_rwnd, uint16_t os, uint16_t mis,
                                          uint32_t initial_tsn)
{
    enum ns_sctp_wr_res r = ns_sctp_wr_begin(w, ack ? NS_SCTP_CT_INIT_ACK : NS_SCTP_CT_INIT, 0);
    if (r != NS_SCTP_WR_OK)
        return r;
    uint8_t f[16];
    wr32(f, initiate_tag);
    wr32(f + 4, a_rwnd);
    wr16(f + 8, os);
    wr16(f + 10, mis);
    wr32(f + 12, initial_tsn);
    r = ns_sctp_wr_bytes(w, f, sizeof(f));
    if (r != NS_SCTP_WR_OK)
        ns_sctp_wr_cancel(w);
    return r;
}

enum ns_sctp_wr_res ns_sctp_wr_param_ipv4(struct ns_sctp_writer *w, uint32_t addr_host_order)
{
    uint8_t a[4];
    wr32(a, addr_host_order);
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_IPV4, a, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_param_cookie(struct ns_sctp_writer *w, const void *cookie,
                                            uint16_t len)
{
    if (len > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return NS_SCTP_WR_NOROOM;
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_STATE_COOKIE, cookie, len);
}

enum ns_sctp_wr_res ns_sctp_wr_param_cookie_preservative(struct ns_sctp_writer *w, uint32_t ms)
{
    uint8_t v[4];
    wr32(v, ms);
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_COOKIE_PRESERVATIVE, v, 4);
}

/* A TLV whose value is a list of big-endian 16-bit numbers. */
static enum ns_sctp_wr_res wr_tlv_u16s(struct ns_sctp_writer *w, uint16_t type, const uint16_t *v,
                                       uint16_t n)
{
    struct wr_save s = wr_save(w);
    enum ns_sctp_wr_res r = ns_sctp_wr_tlv_begin(w, type);
    for (uint16_t i = 0; i < n && r == NS_SCTP_WR_OK; i++)
        r = ns_sctp_wr_u16(w, v[i]);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_tlv_end(w);
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_param_supported_addr_types(struct ns_sctp_writer *w,
                                                          const uint16_t *types, uint16_t n)
{
    return wr_tlv_u16s(w, NS_SCTP_PT_SUPPORTED_ADDR_TYPES, types, n);
}

/* A TLV wrapping a received parameter or chunk whole. The copy is a
 * parameter (chunk) in its own right, whose total length must be a multiple
 * of 4 (3.2, 3.2.1): its padding goes inside the wrapper's length (which
 * Wireshark checks and Linux does), not after it. */
static enum ns_sctp_wr_res wr_tlv_wrap(struct ns_sctp_writer *w, uint16_t type, const uint8_t *raw,
                                       uint16_t len)
{
    if (ns_sctp_pad4(len) > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return NS_SCTP_WR_NOROOM;
    struct wr_save s = wr_save(w);
    uint8_t pad;
    enum ns_sctp_wr_res r = ns_sctp_wr_tlv_begin(w, type);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_bytes(w, raw, len);
    if (r == NS_SCTP_WR_OK)
        r = wr_align(w, &pad);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_tlv_end(w);
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_param_unrecognized(struct ns_sctp_writer *w, const uint8_t *raw,
                                                  uint16_t len)
{
    return wr_tlv_wrap(w, NS_SCTP_PT_UNRECOGNIZED, raw, len);
}

enum ns_sctp_wr_res ns_sctp_wr_param_ecn(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_ECN_CAPABLE, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_param_forward_tsn(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_FORWARD_TSN, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_param_supported_ext(struct ns_sctp_writer *w, const uint8_t *types,
                                                   uint16_t n)
{
    if (n > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return NS_SCTP_WR_NOROOM;
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_SUPPORTED_EXT, types, n);
}

enum ns_sctp_wr_res ns_sctp_wr_sack(struct ns_sctp_writer *w, uint32_t cum_tsn, uint32_t a_rwnd,
                                    const uint16_t (*gaps)[2], uint16_t ngaps, const uint32_t *dups,
                                    uint16_t ndups, uint16_t *ngaps_written,
                                    uint16_t *ndups_written)
{
    if (!w->pkt)
        return NS_SCTP_WR_STATE;
    uint32_t room = wr_room(w);
    if (room < NS_SCTP_SACK_HLEN) {
        /* Let begin() report ordering or bundling errors first. */
        return w->chunk_off  ? NS_SCTP_WR_STATE
               : w->lone     ? NS_SCTP_WR_BUNDLE
               : w->has_data ? NS_SCTP_WR_ORDER
                             : NS_SCTP_WR_NOROOM;
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
    uint8_t f[12];
    wr32(f, cum_tsn);
    wr32(f + 4, a_rwnd);
    wr16(f + 8, ng);
    wr16(f + 10, nd);
    r = ns_sctp_wr_bytes(w, f, 12);
    for (uint16_t i = 0; i < ng && r == NS_SCTP_WR_OK; i++) {
        uint8_t g[4];
        wr16(g, gaps[i][0]);
        wr16(g + 2, gaps[i][1]);
        r = ns_sctp_wr_bytes(w, g, 4);
    }
    for (uint16_t i = 0; i < nd && r == NS_SCTP_WR_OK; i++)
        r = ns_sctp_wr_u32(w, dups[i]);
    if (r == NS_SCTP_WR_OK)
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

enum ns_sctp_wr_res ns_sctp_wr_heartbeat(struct ns_sctp_writer *w, const void *info, uint16_t len)
{
    if (len > UINT16_MAX - NS_SCTP_TLV_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_WR_NOROOM;
    enum ns_sctp_wr_res r = ns_sctp_wr_begin(w, NS_SCTP_CT_HEARTBEAT, 0);
    if (r != NS_SCTP_WR_OK)
        return r;
    r = ns_sctp_wr_tlv(w, NS_SCTP_PT_HEARTBEAT_INFO, info, len);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_end(w);
    if (r != NS_SCTP_WR_OK)
        ns_sctp_wr_cancel(w);
    return r;
}

enum ns_sctp_wr_res ns_sctp_wr_heartbeat_ack(struct ns_sctp_writer *w,
                                             const struct ns_sctp_hb_view *h)
{
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_HEARTBEAT_ACK, 0, h->param_raw, h->param_len);
}

enum ns_sctp_wr_res ns_sctp_wr_abort_begin(struct ns_sctp_writer *w, bool t_bit)
{
    return ns_sctp_wr_begin(w, NS_SCTP_CT_ABORT, t_bit ? NS_SCTP_FLAG_T : 0);
}

enum ns_sctp_wr_res ns_sctp_wr_error_begin(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_begin(w, NS_SCTP_CT_ERROR, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_shutdown(struct ns_sctp_writer *w, uint32_t cum_tsn)
{
    uint8_t v[4];
    wr32(v, cum_tsn);
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_SHUTDOWN, 0, v, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_shutdown_ack(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_SHUTDOWN_ACK, 0, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_cookie_echo(struct ns_sctp_writer *w, const void *cookie,
                                           uint16_t len)
{
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_COOKIE_ECHO, 0, cookie, len);
}

enum ns_sctp_wr_res ns_sctp_wr_cookie_ack(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_COOKIE_ACK, 0, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_shutdown_complete(struct ns_sctp_writer *w, bool t_bit)
{
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_SHUTDOWN_COMPLETE, t_bit ? NS_SCTP_FLAG_T : 0, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_forward_tsn(struct ns_sctp_writer *w, uint32_t new_cum_tsn,
                                           const uint16_t (*streams)[2], uint16_t n)
{
    enum ns_sctp_wr_res r = ns_sctp_wr_begin(w, NS_SCTP_CT_FORWARD_TSN, 0);
    if (r != NS_SCTP_WR_OK)
        return r;
    r = ns_sctp_wr_u32(w, new_cum_tsn);
    for (uint16_t i = 0; i < n && r == NS_SCTP_WR_OK; i++) {
        uint8_t e[4];
        wr16(e, streams[i][0]);
        wr16(e + 2, streams[i][1]);
        r = ns_sctp_wr_bytes(w, e, 4);
    }
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_end(w);
    if (r != NS_SCTP_WR_OK)
        ns_sctp_wr_cancel(w);
    return r;
}

/* ---- Error cause builders ---------------------------------------------- */

enum ns_sctp_wr_res ns_sctp_wr_cause(struct ns_sctp_writer *w, uint16_t code, const void *v,
                                     uint16_t vlen)
{
    if (vlen > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return NS_SCTP_WR_NOROOM;
    return ns_sctp_wr_tlv(w, code, v, vlen);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_invalid_stream(struct ns_sctp_writer *w, uint16_t sid)
{
    uint8_t v[4] = {0};
    wr16(v, sid);
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_INVALID_STREAM, v, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_missing_params(struct ns_sctp_writer *w, const uint16_t *types,
                                                    uint16_t n)
{
    struct wr_save s = wr_save(w);
    enum ns_sctp_wr_res r = ns_sctp_wr_tlv_begin(w, NS_SCTP_CAUSE_MISSING_PARAM);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_u32(w, n);
    for (uint16_t i = 0; i < n && r == NS_SCTP_WR_OK; i++)
        r = ns_sctp_wr_u16(w, types[i]);
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_tlv_end(w);
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_stale_cookie(struct ns_sctp_writer *w, uint32_t staleness_us)
{
    uint8_t v[4];
    wr32(v, staleness_us);
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_STALE_COOKIE, v, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_out_of_resource(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_OUT_OF_RESOURCE, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_unresolvable_addr(struct ns_sctp_writer *w,
                                                       const uint8_t *param, uint16_t len)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_UNRESOLVABLE_ADDR, param, len);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_unrecognized_chunk(struct ns_sctp_writer *w,
                                                        const struct ns_sctp_chunk *c)
{
    return wr_tlv_wrap(w, NS_SCTP_CAUSE_UNRECOGNIZED_CHUNK, c->raw, c->len);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_invalid_mandatory(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_INVALID_MANDATORY, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_unrecognized_params(struct ns_sctp_writer *w,
                                                         const struct ns_sctp_init_params *p)
{
    struct wr_save s = wr_save(w);
    enum ns_sctp_wr_res r = ns_sctp_wr_tlv_begin(w, NS_SCTP_CAUSE_UNRECOGNIZED_PARAMS);
    for (uint8_t i = 0; i < p->n_unrec && r == NS_SCTP_WR_OK; i++) {
        uint8_t pad;
        /* Each reported parameter keeps its 4-byte alignment. */
        r = wr_align(w, &pad);
        if (r == NS_SCTP_WR_OK)
            r = ns_sctp_wr_bytes(w, p->unrec[i].raw, p->unrec[i].len);
    }
    uint8_t pad;
    if (r == NS_SCTP_WR_OK)
        r = wr_align(w, &pad); /* the last one's padding too (wr_tlv_wrap) */
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_tlv_end(w);
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_no_user_data(struct ns_sctp_writer *w, uint32_t tsn)
{
    uint8_t v[4];
    wr32(v, tsn);
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_NO_USER_DATA, v, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_cookie_while_shutdown(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_COOKIE_WHILE_SHUTDOWN, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_restart_new_addrs(struct ns_sctp_writer *w,
                                                       const uint32_t *addrs_host_order, uint16_t n)
{
    struct wr_save s = wr_save(w);
    enum ns_sctp_wr_res r = ns_sctp_wr_tlv_begin(w, NS_SCTP_CAUSE_RESTART_NEW_ADDRS);
    for (uint16_t i = 0; i < n && r == NS_SCTP_WR_OK; i++) {
        uint8_t a[8];
        wr16(a, NS_SCTP_PT_IPV4);
        wr16(a + 2, 8);
        wr32(a + 4, addrs_host_order[i]);
        r = ns_sctp_wr_bytes(w, a, 8);
    }
    if (r == NS_SCTP_WR_OK)
        r = ns_sctp_wr_tlv_end(w);
    return wr_restore(w, s, r);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_user_abort(struct ns_sctp_writer *w, const void *reason,
                                                uint16_t len)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_USER_ABORT, reason, len);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_protocol_violation(struct ns_sctp_writer *w, const void *info,
                                                        uint16_t len)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_PROTOCOL_VIOLATION, info, len);
}
