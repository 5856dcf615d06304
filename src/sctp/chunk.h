/* SCTP wire format: common header, chunks, parameters and error causes
 * (RFC 9260 sections 3, 3.2, 3.2.1, 3.2.2, 3.3.1-3.3.13, 3.3.10.1-13; FORWARD
 * TSN from RFC 3758 section 3.2; I-DATA from RFC 8260 section 2.1; Supported
 * Extensions from RFC 5061 section 4.2.7).
 *
 * This is the one header of the codec; the code is split by job, as
 * dcsctp's packet/ is:
 *
 *   chunk_reader.c   common header (3.1), the chunk chain (3.2), TLV iteration
 *   chunk_writer.c   the packet writer: budget, bundling rules (6.10),
 *                    padding, chunks and TLVs built piece by piece, latching
 *   chunk_names.c    chunk type and verdict names
 *   chunk_init.c     INIT / INIT ACK and their parameters (3.3.2, 3.3.3)
 *   chunk_data.c     DATA (3.3.1), I-DATA, FORWARD TSN
 *   chunk_sack.c     SACK (3.3.4)
 *   chunk_cause.c    ABORT, ERROR and the error causes (3.3.7, 3.3.10)
 *   chunk_control.c  HEARTBEAT (ACK), SHUTDOWN (ACK, COMPLETE), COOKIE ECHO
 *                    / ACK (3.3.5, 3.3.6, 3.3.8, 3.3.9, 3.3.11-3.3.13)
 *   chunk_wr.h       writer internals shared by those files (private)
 *
 * Reading is done with bounds-checked views over a linear packet: the reader
 * validates the common header and the whole chain of chunk lengths once, then
 * hands out chunk views whose value bytes are guaranteed to be inside the
 * packet. Each typed parser checks a chunk's fixed part and counts once; the
 * accessors of a view that parsed OK cannot fail. Nothing is allocated and
 * every pointer in a view points into the caller's packet, so views live as
 * long as the packet bytes do. A received ns_pkt with frags must be
 * linearized (ns_pkt_linearize) before it is read.
 *
 * Padding (RFC 9260 section 3.2): a chunk followed by another must be padded
 * to 4 bytes (the next chunk starts at the padded offset). The last chunk's
 * padding may be missing or short: it carries no information and the RFC
 * tells the receiver to ignore padding, so we accept it (as do common
 * stacks). Padding bytes are never checked for being zero. 1 to 3 stray bytes
 * after a chunk's padding cannot hold a chunk header and make the packet
 * malformed (NS_SCTP_V_CHUNK_SHORT). The same rules apply to parameters and
 * error causes inside a chunk value.
 *
 * Writing builds an ns_pkt: the common header and control chunks go into the
 * linear head; DATA payloads larger than a threshold are referenced as frags
 * of the user's ns_buf, not copied (see the writer section).
 */
#ifndef NS_SCTP_CHUNK_H
#define NS_SCTP_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "core/pkt.h"
#include "sctp/types.h"

#define NS_SCTP_COMMON_HLEN 12
#define NS_SCTP_CHUNK_HLEN  4
#define NS_SCTP_TLV_HLEN    4  /* parameter and error cause header */
#define NS_SCTP_DATA_HLEN   16 /* DATA chunk header incl. the chunk header */
#define NS_SCTP_IDATA_HLEN  20
#define NS_SCTP_INIT_HLEN   20 /* INIT / INIT ACK fixed part incl. chunk header */
#define NS_SCTP_SACK_HLEN   16

static inline uint32_t ns_sctp_pad4(uint32_t n)
{
    return (n + 3u) & ~3u;
}

/* Chunk types (RFC 9260 section 3.2 and the IANA registry). */
enum {
    NS_SCTP_CT_DATA = 0,
    NS_SCTP_CT_INIT = 1,
    NS_SCTP_CT_INIT_ACK = 2,
    NS_SCTP_CT_SACK = 3,
    NS_SCTP_CT_HEARTBEAT = 4,
    NS_SCTP_CT_HEARTBEAT_ACK = 5,
    NS_SCTP_CT_ABORT = 6,
    NS_SCTP_CT_SHUTDOWN = 7,
    NS_SCTP_CT_SHUTDOWN_ACK = 8,
    NS_SCTP_CT_ERROR = 9,
    NS_SCTP_CT_COOKIE_ECHO = 10,
    NS_SCTP_CT_COOKIE_ACK = 11,
    NS_SCTP_CT_ECNE = 12,
    NS_SCTP_CT_CWR = 13,
    NS_SCTP_CT_SHUTDOWN_COMPLETE = 14,
    NS_SCTP_CT_AUTH = 15,
    NS_SCTP_CT_I_DATA = 64,
    NS_SCTP_CT_ASCONF_ACK = 128,
    NS_SCTP_CT_RE_CONFIG = 130,
    NS_SCTP_CT_PAD = 132,
    NS_SCTP_CT_FORWARD_TSN = 192,
    NS_SCTP_CT_ASCONF = 193,
    NS_SCTP_CT_I_FORWARD_TSN = 194,
};

/* T bit of ABORT and SHUTDOWN COMPLETE: the vtag is the sender's own
 * (reflected) one (RFC 9260 sections 3.3.7, 3.3.13). */
#define NS_SCTP_FLAG_T 0x01

/* Parameter types (RFC 9260 section 3.3.2.1, RFC 5061, RFC 3758). */
enum {
    NS_SCTP_PT_HEARTBEAT_INFO = 1,
    NS_SCTP_PT_IPV4 = 5,
    NS_SCTP_PT_IPV6 = 6,
    NS_SCTP_PT_STATE_COOKIE = 7,
    NS_SCTP_PT_UNRECOGNIZED = 8,
    NS_SCTP_PT_COOKIE_PRESERVATIVE = 9,
    NS_SCTP_PT_HOST_NAME = 11,
    NS_SCTP_PT_SUPPORTED_ADDR_TYPES = 12,
    NS_SCTP_PT_ECN_CAPABLE = 0x8000,
    NS_SCTP_PT_RANDOM = 0x8002,
    NS_SCTP_PT_CHUNK_LIST = 0x8003,
    NS_SCTP_PT_HMAC_ALGO = 0x8004,
    NS_SCTP_PT_PAD = 0x8005,
    NS_SCTP_PT_SUPPORTED_EXT = 0x8008,
    NS_SCTP_PT_FORWARD_TSN = 0xC000,
    NS_SCTP_PT_ADAPTATION = 0xC006,
};

/* Error cause codes (RFC 9260 section 3.3.10). */
enum {
    NS_SCTP_CAUSE_INVALID_STREAM = 1,
    NS_SCTP_CAUSE_MISSING_PARAM = 2,
    NS_SCTP_CAUSE_STALE_COOKIE = 3,
    NS_SCTP_CAUSE_OUT_OF_RESOURCE = 4,
    NS_SCTP_CAUSE_UNRESOLVABLE_ADDR = 5,
    NS_SCTP_CAUSE_UNRECOGNIZED_CHUNK = 6,
    NS_SCTP_CAUSE_INVALID_MANDATORY = 7,
    NS_SCTP_CAUSE_UNRECOGNIZED_PARAMS = 8,
    NS_SCTP_CAUSE_NO_USER_DATA = 9,
    NS_SCTP_CAUSE_COOKIE_WHILE_SHUTDOWN = 10,
    NS_SCTP_CAUSE_RESTART_NEW_ADDRS = 11,
    NS_SCTP_CAUSE_USER_ABORT = 12,
    NS_SCTP_CAUSE_PROTOCOL_VIOLATION = 13,
};

/* Address types in Supported Address Types (RFC 9260 section 3.3.2.1.5). */
#define NS_SCTP_ADDRTYPE_IPV4     5
#define NS_SCTP_ADDRTYPE_IPV6     6
#define NS_SCTP_ADDRTYPE_HOSTNAME 11

/* What a receiver does with a chunk or parameter type it does not recognize:
 * the type's two highest bits (RFC 9260 sections 3.2 and 3.2.1). For chunks
 * "stop" means discard the rest of the packet (and, with 00, the whole
 * packet); for parameters it means process no further parameters of the
 * chunk (the chunk itself is still processed with what came before). */
enum ns_sctp_unknown_action {
    NS_SCTP_UA_STOP = 0,        /* 00 */
    NS_SCTP_UA_STOP_REPORT = 1, /* 01 */
    NS_SCTP_UA_SKIP = 2,        /* 10 */
    NS_SCTP_UA_SKIP_REPORT = 3, /* 11 */
};
static inline enum ns_sctp_unknown_action ns_sctp_chunk_action(uint8_t type)
{
    return (enum ns_sctp_unknown_action)(type >> 6);
}
static inline enum ns_sctp_unknown_action ns_sctp_param_action(uint16_t type)
{
    return (enum ns_sctp_unknown_action)(type >> 14);
}
static inline bool ns_sctp_action_reports(enum ns_sctp_unknown_action a)
{
    return a == NS_SCTP_UA_STOP_REPORT || a == NS_SCTP_UA_SKIP_REPORT;
}
static inline bool ns_sctp_action_stops(enum ns_sctp_unknown_action a)
{
    return a == NS_SCTP_UA_STOP || a == NS_SCTP_UA_STOP_REPORT;
}
/* The chunk types of RFC 9260 itself that this codec parses (0-11, 14).
 * FORWARD TSN and I-DATA have parsers too but are extensions: a caller that
 * did not negotiate them treats them as unrecognized (ns_sctp_chunk_action). */
bool ns_sctp_chunk_type_base(uint8_t type);
const char *ns_sctp_chunk_type_name(uint8_t type); /* "UNKNOWN" for others */

/* Parse verdicts. The X-macro lets a module keep one drop counter per
 * verdict (`X(name)` gives NS_SCTP_V_name and the string "name"). */
#define NS_SCTP_VERDICTS(X)                                                                        \
    X(OK)            /* well formed */                                                             \
    X(SHORT)         /* packet shorter than the common header */                                   \
    X(NO_CHUNKS)     /* common header with no chunk */                                             \
    X(CHUNK_SHORT)   /* 1-3 bytes left where a chunk header should start */                        \
    X(CHUNK_LEN)     /* chunk length field < 4 */                                                  \
    X(CHUNK_OVERRUN) /* chunk length past the end of the packet */                                 \
    X(VALUE_SHORT)   /* chunk value shorter than its type's fixed part */                          \
    X(COUNT)         /* gap/dup/stream/address counts do not fit the length */                     \
    X(PARAM_SHORT)   /* 1-3 bytes left where a parameter/cause header should start */              \
    X(PARAM_LEN)     /* parameter/cause length field < 4 */                                        \
    X(PARAM_OVERRUN) /* parameter/cause length past the end of the chunk */                        \
    X(PARAM_INVALID) /* known parameter/cause with a wrong length or content */                    \
    X(HB_INFO)       /* HEARTBEAT (ACK) without a usable Heartbeat Info parameter */

#define NS_SCTP_V_ENUM(name) NS_SCTP_V_##name,
enum ns_sctp_verdict { NS_SCTP_VERDICTS(NS_SCTP_V_ENUM) NS_SCTP_V__COUNT };
#undef NS_SCTP_V_ENUM
const char *ns_sctp_verdict_str(enum ns_sctp_verdict v);

/* ---- Common header (RFC 9260 section 3.1) ---------------------------- */

struct ns_sctp_common {
    uint16_t src_port;
    uint16_t dst_port;
    uint32_t vtag;
    uint32_t checksum; /* as stored: the CRC read least significant byte first */
};

/* false if len < NS_SCTP_COMMON_HLEN. */
bool ns_sctp_common_parse(const uint8_t *b, size_t len, struct ns_sctp_common *h);
/* Writes 12 bytes; the checksum field is written as zero. */
void ns_sctp_common_build(uint8_t *b, uint16_t src_port, uint16_t dst_port, uint32_t vtag);

/* ---- Packet reader ---------------------------------------------------- */

/* A chunk inside a packet: value is len - 4 bytes, all inside the packet. */
struct ns_sctp_chunk {
    uint8_t type;
    uint8_t flags;
    uint16_t len;         /* the Chunk Length field (header + value, no padding) */
    const uint8_t *raw;   /* the chunk header */
    const uint8_t *value; /* len - 4 bytes */
    uint16_t vlen;
    uint32_t off; /* offset of the chunk header in the packet */
};

struct ns_sctp_reader {
    const uint8_t *pkt;
    uint32_t len;
    struct ns_sctp_common hdr;
    uint32_t nchunks;  /* chunks in the packet (valid after init returned OK) */
    uint32_t bad_off;  /* where the chain broke, for diagnostics */
    uint64_t types_lo; /* bit t set if a chunk of type t (< 64) is present */
    uint32_t off;      /* next chunk */
    uint32_t idx;
};

/* Validate the common header and every chunk header's length (not the
 * checksum: verify it separately, before or after). On anything but OK the
 * packet must be dropped whole and next() returns nothing. */
enum ns_sctp_verdict ns_sctp_reader_init(struct ns_sctp_reader *r, const uint8_t *pkt,
                                         uint32_t len);
/* The next chunk, or false at the end. Cannot fail on a validated packet. */
bool ns_sctp_reader_next(struct ns_sctp_reader *r, struct ns_sctp_chunk *c);
/* Go back so that next() returns c again, and then the chunks after it. c
 * must be a chunk that next() returned on this reader (one from
 * ns_sctp_reader_init); it costs a walk over the chunks before c, none for
 * the first. */
void ns_sctp_reader_rewind(struct ns_sctp_reader *r, const struct ns_sctp_chunk *c);
/* A reader over the same packet that returns c alone (one chunk, c's type
 * the only one in types_lo): to process exactly one chunk of a packet, as
 * 8.5.1 B/C requires for a reflected tag. c must be a chunk of r's packet. */
void ns_sctp_reader_one(const struct ns_sctp_reader *r, const struct ns_sctp_chunk *c,
                        struct ns_sctp_reader *out);
/* RFC 9260 section 6.10: INIT, INIT ACK and SHUTDOWN COMPLETE must travel
 * alone. False if one of them is bundled with anything. */
bool ns_sctp_reader_bundling_ok(const struct ns_sctp_reader *r);

/* ---- Generic TLV iterator (parameters and error causes share the format:
 * 16-bit type/code, 16-bit length incl. the 4-byte header, padded to 4). */

struct ns_sctp_tlv {
    uint16_t type;
    uint16_t len;         /* the Length field (header + value, no padding) */
    const uint8_t *raw;   /* the TLV header; raw..raw+len is the whole TLV */
    const uint8_t *value; /* len - 4 bytes */
    uint16_t vlen;
};

struct ns_sctp_tlv_iter {
    const uint8_t *p;
    uint32_t len;
    uint32_t off;
    enum ns_sctp_verdict err; /* why next() returned false, OK at a clean end */
};

void ns_sctp_tlv_iter_init(struct ns_sctp_tlv_iter *it, const uint8_t *p, uint32_t len);
/* false at the end (it->err == OK) or on a malformed TLV (it->err says which;
 * the iterator then stays stopped). */
bool ns_sctp_tlv_next(struct ns_sctp_tlv_iter *it, struct ns_sctp_tlv *t);
/* Walk every TLV once: OK or the first error. */
enum ns_sctp_verdict ns_sctp_tlv_validate(const uint8_t *p, uint32_t len);

/* ---- Typed chunk parsers. Each takes a chunk of the right type (not
 * checked) and returns OK or the reason it is malformed. ---------------- */

/* DATA (RFC 9260 section 3.3.1). payload_len 0 is well formed here but the
 * receiver must abort with a No User Data cause (section 6.2). */
struct ns_sctp_data_view {
    uint32_t tsn;
    uint16_t sid;
    uint16_t ssn;
    uint32_t ppid; /* host order (big-endian on the wire); opaque to SCTP */
    uint8_t flags; /* NS_SCTP_DATA_* */
    const uint8_t *payload;
    uint32_t payload_len;
    uint32_t payload_off; /* offset of the payload in the packet, for zero-copy refs */
};
enum ns_sctp_verdict ns_sctp_parse_data(const struct ns_sctp_chunk *c, struct ns_sctp_data_view *d);

/* I-DATA (RFC 8260 section 2.1): parsed for completeness; unsupported. */
struct ns_sctp_idata_view {
    uint32_t tsn;
    uint16_t sid;
    uint32_t mid;
    uint32_t ppid_fsn; /* PPID when the B bit is set, else the FSN */
    uint8_t flags;
    const uint8_t *payload;
    uint32_t payload_len;
    uint32_t payload_off;
};
enum ns_sctp_verdict ns_sctp_parse_idata(const struct ns_sctp_chunk *c,
                                         struct ns_sctp_idata_view *d);

/* INIT / INIT ACK fixed part (RFC 9260 sections 3.3.2, 3.3.3). Semantic
 * checks (tag, streams != 0) are separate: ns_sctp_init_mandatory_ok(). */
struct ns_sctp_init_view {
    uint32_t initiate_tag;
    uint32_t a_rwnd;
    uint16_t os;  /* number of outbound streams */
    uint16_t mis; /* number of inbound streams */
    uint32_t initial_tsn;
    const uint8_t *params; /* the parameter TLVs */
    uint32_t params_len;
};
enum ns_sctp_verdict ns_sctp_parse_init(const struct ns_sctp_chunk *c, struct ns_sctp_init_view *v);
/* Initiate Tag, OS and MIS must be non-zero (sections 3.3.2, 5.1); a_rwnd
 * is not checked (any value is legal). */
bool ns_sctp_init_mandatory_ok(const struct ns_sctp_init_view *v);

/* INIT / INIT ACK parameters, processed per RFC 9260 section 3.2.1. */
#define NS_SCTP_MAX_PEER_ADDRS   8 /* addresses kept; more are counted only */
#define NS_SCTP_MAX_UNRECOGNIZED 8 /* unrecognized parameters kept for reporting */

/* Extensions the caller implements; a parameter for one that is not set is
 * treated as unrecognized (by its upper bits). */
#define NS_SCTP_EXT_FORWARD_TSN 0x1 /* PR-SCTP, RFC 3758 (0xC000) */
#define NS_SCTP_EXT_ECN         0x2 /* ECN (0x8000) */

/* Supported Extensions (RFC 5061 section 4.2.7) chunk types seen, as bits. */
#define NS_SCTP_SUPEXT_FORWARD_TSN 0x1
#define NS_SCTP_SUPEXT_I_DATA      0x2
#define NS_SCTP_SUPEXT_RE_CONFIG   0x4
#define NS_SCTP_SUPEXT_ASCONF      0x8
#define NS_SCTP_SUPEXT_AUTH        0x10

/* Address types listed in Supported Address Types, as bits. */
#define NS_SCTP_SAT_IPV4     0x1
#define NS_SCTP_SAT_IPV6     0x2
#define NS_SCTP_SAT_HOSTNAME 0x4

struct ns_sctp_init_params {
    uint32_t ipv4[NS_SCTP_MAX_PEER_ADDRS]; /* host order */
    uint8_t n_ipv4;
    const uint8_t *ipv6[NS_SCTP_MAX_PEER_ADDRS]; /* 16 bytes each, in the packet */
    uint8_t n_ipv6;
    uint16_t n_addrs_total; /* IPv4 + IPv6 parameters seen, including those not kept */

    const uint8_t *cookie; /* State Cookie value (INIT ACK), NULL if absent */
    uint16_t cookie_len;

    bool has_cookie_preservative; /* INIT */
    uint32_t cookie_preservative_ms;

    /* Host Name Address (deprecated): the receiver must abort with an
     * Unresolvable Address cause carrying this parameter (section 3.3.2.1). */
    const uint8_t *hostname_param; /* whole TLV, NULL if absent */
    uint16_t hostname_param_len;

    bool has_supported_addr_types; /* INIT */
    uint8_t supported_addr_types;  /* NS_SCTP_SAT_* */

    bool ecn;              /* ECN Capable seen */
    bool forward_tsn;      /* Forward-TSN-Supported seen */
    uint8_t supported_ext; /* NS_SCTP_SUPEXT_* */

    /* Unrecognized parameters whose upper bits ask for a report (01, 11):
     * whole TLVs (raw..raw+len) to echo in Unrecognized Parameter
     * parameters of an INIT ACK (answering an INIT) or in an Unrecognized
     * Parameters cause of an ERROR (answering an INIT ACK), section 3.2.2. */
    struct {
        const uint8_t *raw;
        uint16_t len;
    } unrec[NS_SCTP_MAX_UNRECOGNIZED];
    uint8_t n_unrec;
    bool unrec_overflow; /* more were to be reported than kept */
    /* Processing stopped at an unrecognized parameter with upper bits 0x;
     * what came before it is valid. */
    bool stopped;
    uint16_t n_ignored; /* known parameters not meaningful in this chunk */
};

/* Process the parameters of an INIT (is_ack false) or INIT ACK. `ext` is the
 * set of NS_SCTP_EXT_* the caller supports. Returns OK, or a TLV framing
 * error, or PARAM_INVALID for a known parameter with a bad length (IPv4 not
 * 8, IPv6 not 20, Cookie Preservative not 8, Supported Address Types with an
 * odd value length, a zero-length State Cookie). */
enum ns_sctp_verdict ns_sctp_init_params_parse(const struct ns_sctp_init_view *v, bool is_ack,
                                               uint32_t ext, struct ns_sctp_init_params *out);

/* SACK (RFC 9260 section 3.3.4). Accessors are valid for i < the counts. */
struct ns_sctp_sack_view {
    uint32_t cum_tsn;
    uint32_t a_rwnd;
    uint16_t ngaps;
    uint16_t ndups;
    const uint8_t *gaps; /* ngaps * 4 bytes */
    const uint8_t *dups; /* ndups * 4 bytes */
};
/* COUNT if 12 + 4 * (ngaps + ndups) exceeds the value; bytes beyond that
 * are ignored. */
enum ns_sctp_verdict ns_sctp_parse_sack(const struct ns_sctp_chunk *c, struct ns_sctp_sack_view *s);
/* Gap block i: offsets from cum_tsn (start <= end is not enforced here; a
 * data path that sees start > end must ignore or reject the block). */
static inline void ns_sctp_sack_gap(const struct ns_sctp_sack_view *s, uint16_t i, uint16_t *start,
                                    uint16_t *end)
{
    const uint8_t *g = s->gaps + 4u * i;
    *start = ns_rd16(g);
    *end = ns_rd16(g + 2);
}
static inline uint32_t ns_sctp_sack_dup(const struct ns_sctp_sack_view *s, uint16_t i)
{
    return ns_rd32(s->dups + 4u * i);
}

/* HEARTBEAT / HEARTBEAT ACK (RFC 9260 sections 3.3.5, 3.3.6): the first
 * parameter must be Heartbeat Info (type 1). The ACK echoes the parameter
 * unchanged: write param_raw..param_raw+param_len back. */
struct ns_sctp_hb_view {
    const uint8_t *info; /* sender-specific info */
    uint16_t info_len;
    const uint8_t *param_raw; /* the whole Heartbeat Info TLV */
    uint16_t param_len;
};
enum ns_sctp_verdict ns_sctp_parse_heartbeat(const struct ns_sctp_chunk *c,
                                             struct ns_sctp_hb_view *h);

/* ABORT and ERROR (sections 3.3.7, 3.3.10): a list of error causes; ABORT
 * also has the T bit (c->flags & NS_SCTP_FLAG_T). The causes are validated
 * (framing and each known cause's length) so iterating them cannot fail. */
struct ns_sctp_causes_view {
    const uint8_t *causes;
    uint32_t len;
    uint16_t ncauses;
    bool t_bit;
};
enum ns_sctp_verdict ns_sctp_parse_causes(const struct ns_sctp_chunk *c,
                                          struct ns_sctp_causes_view *v);

/* SHUTDOWN (section 3.3.8). */
enum ns_sctp_verdict ns_sctp_parse_shutdown(const struct ns_sctp_chunk *c, uint32_t *cum_tsn);

/* COOKIE ECHO (section 3.3.11): the cookie is the whole value; an empty
 * value is VALUE_SHORT. */
enum ns_sctp_verdict ns_sctp_parse_cookie_echo(const struct ns_sctp_chunk *c,
                                               const uint8_t **cookie, uint16_t *cookie_len);

/* SHUTDOWN ACK, COOKIE ACK, SHUTDOWN COMPLETE have no value (a value is
 * ignored); their only field is the T bit of SHUTDOWN COMPLETE in c->flags. */

/* FORWARD TSN (RFC 3758 section 3.2). */
struct ns_sctp_fwd_tsn_view {
    uint32_t new_cum_tsn;
    uint16_t nstreams;
    const uint8_t *streams; /* nstreams * 4 bytes: stream, ssn */
};
enum ns_sctp_verdict ns_sctp_parse_forward_tsn(const struct ns_sctp_chunk *c,
                                               struct ns_sctp_fwd_tsn_view *f);
static inline void ns_sctp_fwd_tsn_stream(const struct ns_sctp_fwd_tsn_view *f, uint16_t i,
                                          uint16_t *sid, uint16_t *ssn)
{
    const uint8_t *e = f->streams + 4u * i;
    *sid = ns_rd16(e);
    *ssn = ns_rd16(e + 2);
}

/* ---- Error causes (section 3.3.10) ---------------------------------- */

struct ns_sctp_cause {
    uint16_t code;
    uint16_t len;         /* Cause Length field */
    const uint8_t *raw;   /* whole TLV */
    const uint8_t *value; /* the cause-specific information */
    uint16_t vlen;
    /* Decoded fields of the causes that have them. */
    uint16_t sid;          /* INVALID_STREAM */
    uint32_t staleness_us; /* STALE_COOKIE */
    uint32_t tsn;          /* NO_USER_DATA */
    uint32_t n_missing;    /* MISSING_PARAM: count of 16-bit types at missing */
    const uint8_t *missing;
    /* UNRESOLVABLE_ADDR, UNRECOGNIZED_CHUNK, UNRECOGNIZED_PARAMS,
     * RESTART_NEW_ADDRS, USER_ABORT, PROTOCOL_VIOLATION: see value/vlen
     * (for the TLV-carrying ones, iterate value with ns_sctp_tlv_iter). */
};
/* Decode one cause TLV; PARAM_INVALID if a known cause is too short or its
 * counts do not fit. Unknown codes are OK with only the generic fields. */
enum ns_sctp_verdict ns_sctp_cause_parse(const struct ns_sctp_tlv *t, struct ns_sctp_cause *c);
static inline uint16_t ns_sctp_cause_missing_type(const struct ns_sctp_cause *c, uint32_t i)
{
    return ns_rd16(c->missing + 2u * i);
}
/* Iterate the causes of a view that parsed OK; cannot fail. */
struct ns_sctp_cause_iter {
    struct ns_sctp_tlv_iter it;
};
void ns_sctp_cause_iter_init(struct ns_sctp_cause_iter *ci, const struct ns_sctp_causes_view *v);
bool ns_sctp_cause_next(struct ns_sctp_cause_iter *ci, struct ns_sctp_cause *c);

/* ---- Writer -------------------------------------------------------------
 *
 * Builds one SCTP packet in an ns_pkt within a byte budget (the path MTU
 * minus the IP and any UDP header). The common header and every control
 * chunk go into the linear head. A DATA payload of more than copy_max bytes
 * is referenced as a frag of the caller's ns_buf (taking a reference); the
 * bytes that follow it (its padding, later DATA headers and small copied
 * payloads) go into a side buffer that is itself referenced as frags. So
 * each referenced payload costs two of the NS_PKT_MAX_FRAGS slots and a
 * packet holds up to 4 referenced payloads; when no slot is left the writer
 * says NOFRAG and the caller closes the packet or copies the payload
 * (ns_sctp_wr_data_copy).
 *
 * Bundling (RFC 9260 section 6.10): control chunks must precede DATA (a
 * control chunk after DATA is ORDER), and INIT, INIT ACK and SHUTDOWN
 * COMPLETE must be alone (BUNDLE). Every chunk is padded to 4 bytes, and
 * the padding counts against the budget.
 *
 * A failed call leaves the packet as it was before the call, and the writer
 * remembers its first failure (ns_sctp_wr_error). What happens next depends
 * on the writer's mode:
 *
 *  - Latching (ns_sctp_wr_latch after start; ngtcp2's style): the first
 *    failure sticks. Every later call is a no-op returning it, and
 *    ns_sctp_wr_end and ns_sctp_wr_finish report it (finish returns NULL and
 *    changes nothing: discard). A caller writes a whole sequence and checks
 *    once, at the end. What the RFC lets a sender leave out (a report that
 *    does not fit) goes in an optional section, below.
 *  - Independent (the default): each call stands alone; after a failure the
 *    next call may still succeed, and end/finish do not look back. For
 *    callers that fill a packet with what fits (the output routine: owed
 *    control chunks, then DATA until the packet is full).
 *
 * Optional sections: the calls between ns_sctp_wr_opt_begin and
 * ns_sctp_wr_opt_end latch (whatever the mode) and, if one of them failed,
 * opt_end undoes everything written since opt_begin and returns that
 * failure; the writer then goes on as if the section had never been tried
 * (its mode and earlier error back as they were). On a latching writer that
 * has already failed, a section writes nothing and returns the latched
 * error. Sections nest.
 */

enum ns_sctp_wr_res {
    NS_SCTP_WR_OK = 0,
    NS_SCTP_WR_NOROOM, /* would exceed the budget */
    NS_SCTP_WR_NOFRAG, /* no frag slot left for a referenced payload */
    NS_SCTP_WR_ORDER,  /* control chunk after DATA */
    NS_SCTP_WR_BUNDLE, /* INIT / INIT ACK / SHUTDOWN COMPLETE with others */
    NS_SCTP_WR_NOMEM,
    NS_SCTP_WR_STATE, /* misuse: no packet, a chunk open or not open, ... */
};

/* Payloads up to this many bytes are copied into the packet by default:
 * below a few hundred bytes a memcpy is cheaper than a frag (an iovec entry
 * for the device, a refcount pair, a slot of 8). */
#define NS_SCTP_WR_COPY_MAX 256

struct ns_sctp_writer {
    struct ns_pkt *pkt;
    uint32_t budget;   /* max bytes of SCTP packet */
    uint32_t used;     /* bytes so far, padding included */
    uint32_t copy_max; /* see NS_SCTP_WR_COPY_MAX; settable after start */
    uint32_t nchunks;
    bool has_data;
    bool lone;               /* an INIT / INIT ACK / SHUTDOWN COMPLETE is in */
    bool latch;              /* latching mode (ns_sctp_wr_latch) */
    enum ns_sctp_wr_res err; /* the first failure, OK if none */
    /* Open control chunk and TLV (offsets in the head), 0 if none. */
    uint32_t chunk_off;
    uint32_t tlv_off;
    uint8_t tlv_pad; /* padding written after the last TLV of the open chunk */
    /* Side buffer for bytes after the first referenced payload. */
    struct ns_buf *side;
    uint32_t side_used;
    uint32_t side_flushed;
};

/* Start a packet (allocates it with NS_PKT_HEADROOM headroom) and write the
 * common header. The writer is reset first (independent mode, no error):
 * finish or discard a previous packet before. The budget is rounded down to
 * a multiple of 4; under 16 it is STATE. */
enum ns_sctp_wr_res ns_sctp_wr_start(struct ns_sctp_writer *w, uint32_t budget, uint16_t src_port,
                                     uint16_t dst_port, uint32_t vtag);
/* Latching mode from now on (see above). After a failed start the writer
 * then answers every call with start's failure. */
static inline void ns_sctp_wr_latch(struct ns_sctp_writer *w)
{
    w->latch = true;
}
/* The first failure since start (or since the opt_begin of the section
 * being written), OK if none. */
static inline enum ns_sctp_wr_res ns_sctp_wr_error(const struct ns_sctp_writer *w)
{
    return w->err;
}
/* Bytes still free in the budget. */
uint32_t ns_sctp_wr_room(const struct ns_sctp_writer *w);
/* The largest DATA payload that still fits (0 if none). */
uint32_t ns_sctp_wr_data_room(const struct ns_sctp_writer *w);
/* Pad, fill the checksum and hand over the packet (the writer is empty
 * afterwards). NULL if no chunk was written (the packet is freed), if no
 * packet was started, or if a chunk is still open (then nothing changes:
 * end or cancel it and finish again); for a latching writer also if a call
 * failed (nothing changes: ns_sctp_wr_error says why; discard). */
struct ns_pkt *ns_sctp_wr_finish(struct ns_sctp_writer *w);
/* Drop the packet being built. Safe on an empty writer. */
void ns_sctp_wr_discard(struct ns_sctp_writer *w);

/* An optional section (see above): opt_begin fills o, opt_end takes it
 * back and returns OK or the section's failure. A section spans calls on
 * one packet (between start and finish/discard). */
struct ns_sctp_wr_opt {
    uint32_t len, used, nchunks, chunk_off, tlv_off, side_used, side_flushed, frag_len;
    uint8_t nfrags, tlv_pad;
    bool has_data, lone, latch;
    enum ns_sctp_wr_res err;
};
void ns_sctp_wr_opt_begin(struct ns_sctp_writer *w, struct ns_sctp_wr_opt *o);
enum ns_sctp_wr_res ns_sctp_wr_opt_end(struct ns_sctp_writer *w, const struct ns_sctp_wr_opt *o);

/* A whole control chunk with an opaque value. */
enum ns_sctp_wr_res ns_sctp_wr_chunk(struct ns_sctp_writer *w, uint8_t type, uint8_t flags,
                                     const void *value, uint32_t vlen);

/* Chunks built piece by piece: begin, append, end (sets the length and
 * pads). Cancel drops the open chunk (a latched error stays: an optional
 * section is the way to take a failure back). */
enum ns_sctp_wr_res ns_sctp_wr_begin(struct ns_sctp_writer *w, uint8_t type, uint8_t flags);
enum ns_sctp_wr_res ns_sctp_wr_bytes(struct ns_sctp_writer *w, const void *b, uint32_t len);
enum ns_sctp_wr_res ns_sctp_wr_u16(struct ns_sctp_writer *w, uint16_t v);
enum ns_sctp_wr_res ns_sctp_wr_u32(struct ns_sctp_writer *w, uint32_t v);
/* A parameter or cause with its value, padded. */
enum ns_sctp_wr_res ns_sctp_wr_tlv(struct ns_sctp_writer *w, uint16_t type, const void *v,
                                   uint16_t vlen);
/* A TLV whose value is appended with wr_bytes/u16/u32 between begin and end
 * (TLVs do not nest). */
enum ns_sctp_wr_res ns_sctp_wr_tlv_begin(struct ns_sctp_writer *w, uint16_t type);
enum ns_sctp_wr_res ns_sctp_wr_tlv_end(struct ns_sctp_writer *w);
enum ns_sctp_wr_res ns_sctp_wr_end(struct ns_sctp_writer *w);
void ns_sctp_wr_cancel(struct ns_sctp_writer *w);

/* DATA (section 3.3.1) from d (buf, off, len, tsn, sid, ssn, ppid in host
 * order, flags). Copies payloads <= copy_max, references larger ones (NOFRAG
 * when no slot is left). An empty payload is STATE (the RFC forbids it). */
enum ns_sctp_wr_res ns_sctp_wr_data(struct ns_sctp_writer *w, const struct ns_sctp_chunk_data *d);
/* Same, always copying. */
enum ns_sctp_wr_res ns_sctp_wr_data_copy(struct ns_sctp_writer *w,
                                         const struct ns_sctp_chunk_data *d);

/* INIT / INIT ACK: opens the chunk with its fixed part; add parameters with
 * the wr_param_* helpers (or wr_tlv), then ns_sctp_wr_end(). */
enum ns_sctp_wr_res ns_sctp_wr_init_begin(struct ns_sctp_writer *w, bool ack, uint32_t initiate_tag,
                                          uint32_t a_rwnd, uint16_t os, uint16_t mis,
                                          uint32_t initial_tsn);
enum ns_sctp_wr_res ns_sctp_wr_param_ipv4(struct ns_sctp_writer *w, uint32_t addr_host_order);
enum ns_sctp_wr_res ns_sctp_wr_param_cookie(struct ns_sctp_writer *w, const void *cookie,
                                            uint16_t len);
enum ns_sctp_wr_res ns_sctp_wr_param_cookie_preservative(struct ns_sctp_writer *w, uint32_t ms);
enum ns_sctp_wr_res ns_sctp_wr_param_supported_addr_types(struct ns_sctp_writer *w,
                                                          const uint16_t *types, uint16_t n);
/* Unrecognized Parameter (INIT ACK): wraps a whole received TLV. */
enum ns_sctp_wr_res ns_sctp_wr_param_unrecognized(struct ns_sctp_writer *w, const uint8_t *raw,
                                                  uint16_t len);
enum ns_sctp_wr_res ns_sctp_wr_param_ecn(struct ns_sctp_writer *w);
enum ns_sctp_wr_res ns_sctp_wr_param_forward_tsn(struct ns_sctp_writer *w);
enum ns_sctp_wr_res ns_sctp_wr_param_supported_ext(struct ns_sctp_writer *w, const uint8_t *types,
                                                   uint16_t n);

/* SACK: writes as many gap blocks and dup TSNs as fit, dropping dup TSNs
 * first, then the last gap blocks (RFC 9260 section 6.2 lets a receiver
 * report fewer); *ngaps_written / *ndups_written (may be NULL) say how many.
 * gaps holds (start, end) pairs. NOROOM only if not even the fixed part
 * fits. */
enum ns_sctp_wr_res ns_sctp_wr_sack(struct ns_sctp_writer *w, uint32_t cum_tsn, uint32_t a_rwnd,
                                    const uint16_t (*gaps)[2], uint16_t ngaps, const uint32_t *dups,
                                    uint16_t ndups, uint16_t *ngaps_written,
                                    uint16_t *ndups_written);
/* HEARTBEAT with a Heartbeat Info parameter carrying info. */
enum ns_sctp_wr_res ns_sctp_wr_heartbeat(struct ns_sctp_writer *w, const void *info, uint16_t len);
/* HEARTBEAT ACK echoing the received Heartbeat Info parameter unchanged. */
enum ns_sctp_wr_res ns_sctp_wr_heartbeat_ack(struct ns_sctp_writer *w,
                                             const struct ns_sctp_hb_view *h);
/* ABORT / ERROR: open the chunk, add causes with wr_cause_*, then wr_end. */
enum ns_sctp_wr_res ns_sctp_wr_abort_begin(struct ns_sctp_writer *w, bool t_bit);
enum ns_sctp_wr_res ns_sctp_wr_error_begin(struct ns_sctp_writer *w);
enum ns_sctp_wr_res ns_sctp_wr_shutdown(struct ns_sctp_writer *w, uint32_t cum_tsn);
enum ns_sctp_wr_res ns_sctp_wr_shutdown_ack(struct ns_sctp_writer *w);
enum ns_sctp_wr_res ns_sctp_wr_cookie_echo(struct ns_sctp_writer *w, const void *cookie,
                                           uint16_t len);
enum ns_sctp_wr_res ns_sctp_wr_cookie_ack(struct ns_sctp_writer *w);
enum ns_sctp_wr_res ns_sctp_wr_shutdown_complete(struct ns_sctp_writer *w, bool t_bit);
/* FORWARD TSN with (sid, ssn) pairs. */
enum ns_sctp_wr_res ns_sctp_wr_forward_tsn(struct ns_sctp_writer *w, uint32_t new_cum_tsn,
                                           const uint16_t (*streams)[2], uint16_t n);

/* Error causes, appended to an open ABORT or ERROR chunk. */
enum ns_sctp_wr_res ns_sctp_wr_cause(struct ns_sctp_writer *w, uint16_t code, const void *v,
                                     uint16_t vlen);
enum ns_sctp_wr_res ns_sctp_wr_cause_invalid_stream(struct ns_sctp_writer *w, uint16_t sid);
enum ns_sctp_wr_res ns_sctp_wr_cause_missing_params(struct ns_sctp_writer *w, const uint16_t *types,
                                                    uint16_t n);
enum ns_sctp_wr_res ns_sctp_wr_cause_stale_cookie(struct ns_sctp_writer *w, uint32_t staleness_us);
enum ns_sctp_wr_res ns_sctp_wr_cause_out_of_resource(struct ns_sctp_writer *w);
/* The offending address parameter, whole TLV. */
enum ns_sctp_wr_res ns_sctp_wr_cause_unresolvable_addr(struct ns_sctp_writer *w,
                                                       const uint8_t *param, uint16_t len);
/* The unrecognized chunk (header and value, as received: c->raw, c->len).
 * NOROOM if it is too long to be wrapped in a chunk (over 65523 bytes) or
 * to fit the budget; the caller may then leave the cause out. */
enum ns_sctp_wr_res ns_sctp_wr_cause_unrecognized_chunk(struct ns_sctp_writer *w,
                                                        const struct ns_sctp_chunk *c);
enum ns_sctp_wr_res ns_sctp_wr_cause_invalid_mandatory(struct ns_sctp_writer *w);
/* The reported parameters of p (p->unrec), each padded. */
enum ns_sctp_wr_res ns_sctp_wr_cause_unrecognized_params(struct ns_sctp_writer *w,
                                                         const struct ns_sctp_init_params *p);
enum ns_sctp_wr_res ns_sctp_wr_cause_no_user_data(struct ns_sctp_writer *w, uint32_t tsn);
enum ns_sctp_wr_res ns_sctp_wr_cause_cookie_while_shutdown(struct ns_sctp_writer *w);
/* New addresses as IPv4 address parameters. */
enum ns_sctp_wr_res ns_sctp_wr_cause_restart_new_addrs(struct ns_sctp_writer *w,
                                                       const uint32_t *addrs_host_order,
                                                       uint16_t n);
enum ns_sctp_wr_res ns_sctp_wr_cause_user_abort(struct ns_sctp_writer *w, const void *reason,
                                                uint16_t len);
enum ns_sctp_wr_res ns_sctp_wr_cause_protocol_violation(struct ns_sctp_writer *w, const void *info,
                                                        uint16_t len);

#endif
