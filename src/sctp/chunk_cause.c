/* ABORT (RFC 9260 section 3.3.7) and ERROR (3.3.10): chunks that are a
 * list of error causes, and the causes themselves (3.3.10.1-3.3.10.13):
 * decoding the ones with fields, validating a whole list, and writing each.
 *
 * ABORT (type 6, T bit: the tag is the sender's reflected one) and ERROR
 * (type 9, no flags):
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 6    |  Reserved   |T|            Length             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   zero or more Error Causes                   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * An error cause:
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Cause Code           |         Cause Length          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   Cause-Specific Information                  |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 *   1 Invalid Stream Identifier   stream id (16), reserved (16)
 *   2 Missing Mandatory Parameter count (32), parameter types (16 each)
 *   3 Stale Cookie                measure of staleness in us (32)
 *   4 Out of Resource             -
 *   5 Unresolvable Address        the address parameter, whole
 *   6 Unrecognized Chunk Type     the chunk, whole
 *   7 Invalid Mandatory Parameter -
 *   8 Unrecognized Parameters     the parameters, whole
 *   9 No User Data                TSN (32)
 *  10 Cookie Received While Shutting Down  -
 *  11 Restart With New Addresses  the new address parameters
 *  12 User-Initiated Abort        upper layer abort reason
 *  13 Protocol Violation          additional information
 */
#include <string.h>

#include "sctp/chunk_wr.h"

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
        c->sid = ns_rd16(t->value);
        break;
    case NS_SCTP_CAUSE_MISSING_PARAM:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->n_missing = ns_rd32(t->value);
        if (c->n_missing > (t->vlen - 4u) / 2u)
            return NS_SCTP_V_PARAM_INVALID;
        c->missing = t->value + 4;
        break;
    case NS_SCTP_CAUSE_STALE_COOKIE:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->staleness_us = ns_rd32(t->value);
        break;
    case NS_SCTP_CAUSE_NO_USER_DATA:
        if (t->vlen < 4)
            return NS_SCTP_V_PARAM_INVALID;
        c->tsn = ns_rd32(t->value);
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

/* ---- Writing ------------------------------------------------------------- */

enum ns_sctp_wr_res ns_sctp_wr_abort_begin(struct ns_sctp_writer *w, bool t_bit)
{
    return ns_sctp_wr_begin(w, NS_SCTP_CT_ABORT, t_bit ? NS_SCTP_FLAG_T : 0);
}

enum ns_sctp_wr_res ns_sctp_wr_error_begin(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_begin(w, NS_SCTP_CT_ERROR, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_cause(struct ns_sctp_writer *w, uint16_t code, const void *v,
                                     uint16_t vlen)
{
    if (wr_stuck(w))
        return w->err;
    if (vlen > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    return ns_sctp_wr_tlv(w, code, v, vlen);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_invalid_stream(struct ns_sctp_writer *w, uint16_t sid)
{
    uint8_t v[4] = {0};
    ns_wr16(v, sid);
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_INVALID_STREAM, v, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_missing_params(struct ns_sctp_writer *w, const uint16_t *types,
                                                    uint16_t n)
{
    if (wr_stuck(w))
        return w->err;
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_tlv_begin(w, NS_SCTP_CAUSE_MISSING_PARAM);
    ns_sctp_wr_u32(w, n);
    for (uint16_t i = 0; i < n; i++)
        ns_sctp_wr_u16(w, types[i]);
    ns_sctp_wr_tlv_end(w);
    return wr_txn_end(w, &t);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_stale_cookie(struct ns_sctp_writer *w, uint32_t staleness_us)
{
    uint8_t v[4];
    ns_wr32(v, staleness_us);
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
    if (wr_stuck(w))
        return w->err;
    struct ns_sctp_wr_opt t;
    uint8_t pad;
    wr_txn_begin(w, &t);
    ns_sctp_wr_tlv_begin(w, NS_SCTP_CAUSE_UNRECOGNIZED_PARAMS);
    for (uint8_t i = 0; i < p->n_unrec; i++) {
        /* Each reported parameter keeps its 4-byte alignment. */
        wr_align(w, &pad);
        ns_sctp_wr_bytes(w, p->unrec[i].raw, p->unrec[i].len);
    }
    wr_align(w, &pad); /* the last one's padding too (wr_tlv_wrap) */
    ns_sctp_wr_tlv_end(w);
    return wr_txn_end(w, &t);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_no_user_data(struct ns_sctp_writer *w, uint32_t tsn)
{
    uint8_t v[4];
    ns_wr32(v, tsn);
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_NO_USER_DATA, v, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_cookie_while_shutdown(struct ns_sctp_writer *w)
{
    return ns_sctp_wr_cause(w, NS_SCTP_CAUSE_COOKIE_WHILE_SHUTDOWN, NULL, 0);
}

enum ns_sctp_wr_res ns_sctp_wr_cause_restart_new_addrs(struct ns_sctp_writer *w,
                                                       const uint32_t *addrs_host_order, uint16_t n)
{
    if (wr_stuck(w))
        return w->err;
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_tlv_begin(w, NS_SCTP_CAUSE_RESTART_NEW_ADDRS);
    for (uint16_t i = 0; i < n; i++) {
        uint8_t a[8];
        ns_wr16(a, NS_SCTP_PT_IPV4);
        ns_wr16(a + 2, 8);
        ns_wr32(a + 4, addrs_host_order[i]);
        ns_sctp_wr_bytes(w, a, 8);
    }
    ns_sctp_wr_tlv_end(w);
    return wr_txn_end(w, &t);
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
