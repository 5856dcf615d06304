/* INIT and INIT ACK (RFC 9260 sections 3.3.2, 3.3.3) and their
 * parameters (3.3.2.1, 3.3.3.1; unrecognized ones by their upper bits,
 * 3.2.1 and 3.2.2; Forward-TSN-Supported from RFC 3758 section 3.1,
 * Supported Extensions from RFC 5061 section 4.2.7): the fixed part,
 * processing the parameter list, and writing both.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  Type = 1 (2) |  Chunk Flags  |         Chunk Length          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         Initiate Tag                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Advertised Receiver Window Credit (a_rwnd)           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  Number of Outbound Streams   |   Number of Inbound Streams   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          Initial TSN                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |              Optional/Variable-Length Parameters              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * A parameter (padded to 4 bytes):
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |        Parameter Type         |       Parameter Length        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        Parameter Value                        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 *   5 IPv4 Address (4)        6 IPv6 Address (16)     7 State Cookie (ACK)
 *   8 Unrecognized Parameter  9 Cookie Preservative  11 Host Name Address
 *  12 Supported Address Types 0x8000 ECN Capable      0xC000 Forward-TSN-Supported
 *  0x8008 Supported Extensions
 */
#include <string.h>

#include "sctp/chunk_wr.h"

enum ns_sctp_verdict ns_sctp_parse_init(const struct ns_sctp_chunk *c, struct ns_sctp_init_view *v)
{
    if (c->vlen < NS_SCTP_INIT_HLEN - NS_SCTP_CHUNK_HLEN)
        return NS_SCTP_V_VALUE_SHORT;
    const uint8_t *p = c->value;
    v->initiate_tag = ns_rd32(p);
    v->a_rwnd = ns_rd32(p + 4);
    v->os = ns_rd16(p + 8);
    v->mis = ns_rd16(p + 10);
    v->initial_tsn = ns_rd32(p + 12);
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
                o->ipv4[o->n_ipv4++] = ns_rd32(t.value);
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
            o->cookie_preservative_ms = ns_rd32(t.value);
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
                uint16_t at = ns_rd16(t.value + i);
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

/* ---- Writing ------------------------------------------------------------- */

enum ns_sctp_wr_res ns_sctp_wr_init_begin(struct ns_sctp_writer *w, bool ack, uint32_t initiate_tag,
                                          uint32_t a_rwnd, uint16_t os, uint16_t mis,
                                          uint32_t initial_tsn)
{
    if (wr_stuck(w))
        return w->err;
    uint8_t f[16];
    ns_wr32(f, initiate_tag);
    ns_wr32(f + 4, a_rwnd);
    ns_wr16(f + 8, os);
    ns_wr16(f + 10, mis);
    ns_wr32(f + 12, initial_tsn);
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_begin(w, ack ? NS_SCTP_CT_INIT_ACK : NS_SCTP_CT_INIT, 0);
    ns_sctp_wr_bytes(w, f, sizeof(f));
    return wr_txn_end(w, &t);
}

enum ns_sctp_wr_res ns_sctp_wr_param_ipv4(struct ns_sctp_writer *w, uint32_t addr_host_order)
{
    uint8_t a[4];
    ns_wr32(a, addr_host_order);
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_IPV4, a, 4);
}

enum ns_sctp_wr_res ns_sctp_wr_param_cookie(struct ns_sctp_writer *w, const void *cookie,
                                            uint16_t len)
{
    if (wr_stuck(w))
        return w->err;
    if (len > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_STATE_COOKIE, cookie, len);
}

enum ns_sctp_wr_res ns_sctp_wr_param_cookie_preservative(struct ns_sctp_writer *w, uint32_t ms)
{
    uint8_t v[4];
    ns_wr32(v, ms);
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_COOKIE_PRESERVATIVE, v, 4);
}

/* A TLV whose value is a list of big-endian 16-bit numbers. */
static enum ns_sctp_wr_res wr_tlv_u16s(struct ns_sctp_writer *w, uint16_t type, const uint16_t *v,
                                       uint16_t n)
{
    if (wr_stuck(w))
        return w->err;
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_tlv_begin(w, type);
    for (uint16_t i = 0; i < n; i++)
        ns_sctp_wr_u16(w, v[i]);
    ns_sctp_wr_tlv_end(w);
    return wr_txn_end(w, &t);
}

enum ns_sctp_wr_res ns_sctp_wr_param_supported_addr_types(struct ns_sctp_writer *w,
                                                          const uint16_t *types, uint16_t n)
{
    return wr_tlv_u16s(w, NS_SCTP_PT_SUPPORTED_ADDR_TYPES, types, n);
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
    if (wr_stuck(w))
        return w->err;
    if (n > UINT16_MAX - NS_SCTP_TLV_HLEN)
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    return ns_sctp_wr_tlv(w, NS_SCTP_PT_SUPPORTED_EXT, types, n);
}
