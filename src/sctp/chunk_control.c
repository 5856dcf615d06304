/* The control chunks without parameters of their own, or with just one:
 * HEARTBEAT and HEARTBEAT ACK (RFC 9260 sections 3.3.5, 3.3.6), SHUTDOWN
 * (3.3.8), SHUTDOWN ACK (3.3.9), COOKIE ECHO (3.3.11), COOKIE ACK
 * (3.3.12), SHUTDOWN COMPLETE (3.3.13).
 *
 * HEARTBEAT (type 4) and HEARTBEAT ACK (type 5, echoing the parameter):
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 4    |  Chunk Flags  |       Heartbeat Length        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    Heartbeat Info Type = 1    |         HB Info Length        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  Sender-Specific Heartbeat Info               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * SHUTDOWN:
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 7    |  Chunk Flags  |          Length = 8           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      Cumulative TSN Ack                       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * COOKIE ECHO:
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type = 10   |  Chunk Flags  |            Length             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            Cookie                             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * SHUTDOWN ACK (8), COOKIE ACK (11), SHUTDOWN COMPLETE (14, with T):
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Type        |  Reserved   |T|          Length = 4           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */
#include "sctp/chunk_wr.h"

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

enum ns_sctp_verdict ns_sctp_parse_shutdown(const struct ns_sctp_chunk *c, uint32_t *cum_tsn)
{
    if (c->vlen < 4)
        return NS_SCTP_V_VALUE_SHORT;
    *cum_tsn = ns_rd32(c->value);
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

/* ---- Writing ------------------------------------------------------------- */

enum ns_sctp_wr_res ns_sctp_wr_heartbeat(struct ns_sctp_writer *w, const void *info, uint16_t len)
{
    if (wr_stuck(w))
        return w->err;
    if (len > UINT16_MAX - NS_SCTP_TLV_HLEN - NS_SCTP_CHUNK_HLEN)
        return wr_fail(w, NS_SCTP_WR_NOROOM);
    struct ns_sctp_wr_opt t;
    wr_txn_begin(w, &t);
    ns_sctp_wr_begin(w, NS_SCTP_CT_HEARTBEAT, 0);
    ns_sctp_wr_tlv(w, NS_SCTP_PT_HEARTBEAT_INFO, info, len);
    ns_sctp_wr_end(w);
    return wr_txn_end(w, &t);
}

enum ns_sctp_wr_res ns_sctp_wr_heartbeat_ack(struct ns_sctp_writer *w,
                                             const struct ns_sctp_hb_view *h)
{
    return ns_sctp_wr_chunk(w, NS_SCTP_CT_HEARTBEAT_ACK, 0, h->param_raw, h->param_len);
}

enum ns_sctp_wr_res ns_sctp_wr_shutdown(struct ns_sctp_writer *w, uint32_t cum_tsn)
{
    uint8_t v[4];
    ns_wr32(v, cum_tsn);
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
