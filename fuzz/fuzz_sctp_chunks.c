/* The SCTP codec on arbitrary bytes: one SCTP packet (common header
 * onwards) read with every typed parser and parameter/cause iterator; every
 * chunk that parses is written again with the writer and read back, and the
 * two readings must agree; INITs and the reports answering them are
 * written a second time by a latching writer (one check at the end, the
 * reports as optional items), which must produce the same bytes. The
 * checksum's two CRC32c implementations must
 * agree too, and cookies built from fuzzed fields must verify. A mismatch
 * traps, so the fuzzer reports it like a crash.
 *
 * The seed corpus (fuzz/corpus/fuzz_sctp_chunks/) was made with scapy: the
 * packets of tests/unit/test_chunk.c plus hand-built unknown chunks, FORWARD
 * TSN, I-DATA, an INIT with unknown parameters and an ERROR with all 13
 * causes. */
#include <stdint.h>
#include <string.h>

#include "core/pkt.h"
#include "sctp/chunk.h"
#include "sctp/cookie.h"
#include "sctp/crc32c.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

/* Room for any chunk a packet of up to 64 KiB can hold. */
#define FZ_BUDGET 70000

/* Finish the writer and return the single chunk of the rebuilt packet
 * (valid while *out lives). */
static bool reread(struct ns_sctp_writer *w, struct ns_pkt **out, struct ns_sctp_chunk *c)
{
    struct ns_pkt *p = ns_sctp_wr_finish(w);
    CHECK(p);
    CHECK(ns_sctp_checksum_verify(p));
    CHECK(ns_pkt_linearize(p, 0));
    struct ns_sctp_reader r;
    CHECK(ns_sctp_reader_init(&r, p->data, p->len) == NS_SCTP_V_OK);
    CHECK(r.nchunks == 1);
    CHECK(ns_sctp_reader_next(&r, c));
    *out = p;
    return true;
}

static void start(struct ns_sctp_writer *w)
{
    CHECK(ns_sctp_wr_start(w, FZ_BUDGET, 1, 2, 3) == NS_SCTP_WR_OK);
}

/* The same packet, finished, from two writers: same bytes. */
static void same_packet(struct ns_pkt *a, struct ns_sctp_writer *w)
{
    struct ns_pkt *b = ns_sctp_wr_finish(w);
    CHECK(b);
    CHECK(ns_pkt_linearize(b, 0));
    CHECK(a->len == b->len && memcmp(a->data, b->data, a->len) == 0);
    ns_pkt_free(b);
}

static void fz_data(const struct ns_sctp_chunk *c)
{
    struct ns_sctp_data_view d;
    if (ns_sctp_parse_data(c, &d) != NS_SCTP_V_OK || d.payload_len == 0)
        return;
    struct ns_buf *b = ns_buf_alloc(d.payload_len + 3);
    if (!b)
        return;
    memcpy(b->data + 3, d.payload, d.payload_len);
    struct ns_sctp_chunk_data cd = {.tsn = d.tsn,
                                    .sid = d.sid,
                                    .ssn = d.ssn,
                                    .ppid = d.ppid,
                                    .flags = d.flags,
                                    .buf = b,
                                    .off = 3,
                                    .len = d.payload_len};
    struct ns_sctp_writer w;
    start(&w);
    /* Both the copying and the referencing path. */
    w.copy_max = (d.tsn & 1) ? 0 : NS_SCTP_WR_COPY_MAX;
    CHECK(ns_sctp_wr_data(&w, &cd) == NS_SCTP_WR_OK);
    ns_buf_put(b);
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    reread(&w, &p, &c2);
    struct ns_sctp_data_view d2;
    CHECK(ns_sctp_parse_data(&c2, &d2) == NS_SCTP_V_OK);
    CHECK(d2.tsn == d.tsn && d2.sid == d.sid && d2.ssn == d.ssn && d2.ppid == d.ppid &&
          d2.flags == d.flags && d2.payload_len == d.payload_len);
    CHECK(memcmp(d2.payload, d.payload, d.payload_len) == 0);
    ns_pkt_free(p);
}

static void same_params(const struct ns_sctp_init_params *a, const struct ns_sctp_init_params *b)
{
    CHECK(a->n_ipv4 == b->n_ipv4 && a->n_ipv6 == b->n_ipv6 && a->n_addrs_total == b->n_addrs_total);
    CHECK(memcmp(a->ipv4, b->ipv4, sizeof(a->ipv4[0]) * a->n_ipv4) == 0);
    CHECK(a->cookie_len == b->cookie_len && !a->cookie == !b->cookie);
    if (a->cookie)
        CHECK(memcmp(a->cookie, b->cookie, a->cookie_len) == 0);
    CHECK(a->has_cookie_preservative == b->has_cookie_preservative &&
          a->cookie_preservative_ms == b->cookie_preservative_ms);
    CHECK(!a->hostname_param == !b->hostname_param);
    CHECK(a->supported_addr_types == b->supported_addr_types && a->ecn == b->ecn &&
          a->forward_tsn == b->forward_tsn && a->supported_ext == b->supported_ext);
    CHECK(a->n_unrec == b->n_unrec && a->unrec_overflow == b->unrec_overflow &&
          a->stopped == b->stopped && a->n_ignored == b->n_ignored);
    for (int i = 0; i < a->n_unrec; i++)
        CHECK(a->unrec[i].len == b->unrec[i].len &&
              memcmp(a->unrec[i].raw, b->unrec[i].raw, a->unrec[i].len) == 0);
}

static void fz_init(const struct ns_sctp_chunk *c)
{
    struct ns_sctp_init_view v;
    if (ns_sctp_parse_init(c, &v) != NS_SCTP_V_OK)
        return;
    (void)ns_sctp_init_mandatory_ok(&v);
    bool ack = c->type == NS_SCTP_CT_INIT_ACK;
    struct ns_sctp_init_params ip, ip2;
    for (uint32_t ext = 0; ext < 4; ext++)
        (void)ns_sctp_init_params_parse(&v, !ack, ext, &ip);
    if (ns_sctp_init_params_parse(&v, ack, 0, &ip) != NS_SCTP_V_OK)
        return;

    /* Same fixed part and the same TLVs, re-emitted one by one. */
    struct ns_sctp_writer w;
    start(&w);
    CHECK(ns_sctp_wr_init_begin(&w, ack, v.initiate_tag, v.a_rwnd, v.os, v.mis, v.initial_tsn) ==
          NS_SCTP_WR_OK);
    struct ns_sctp_tlv_iter it;
    struct ns_sctp_tlv t;
    ns_sctp_tlv_iter_init(&it, v.params, v.params_len);
    while (ns_sctp_tlv_next(&it, &t))
        CHECK(ns_sctp_wr_tlv(&w, t.type, t.value, t.vlen) == NS_SCTP_WR_OK);
    CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    reread(&w, &p, &c2);
    /* A latching writer, checked once at the end, writes the same bytes. */
    start(&w);
    ns_sctp_wr_latch(&w);
    ns_sctp_wr_init_begin(&w, ack, v.initiate_tag, v.a_rwnd, v.os, v.mis, v.initial_tsn);
    ns_sctp_tlv_iter_init(&it, v.params, v.params_len);
    while (ns_sctp_tlv_next(&it, &t))
        ns_sctp_wr_tlv(&w, t.type, t.value, t.vlen);
    CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
    same_packet(p, &w);
    struct ns_sctp_init_view v2;
    CHECK(ns_sctp_parse_init(&c2, &v2) == NS_SCTP_V_OK);
    CHECK(v2.initiate_tag == v.initiate_tag && v2.a_rwnd == v.a_rwnd && v2.os == v.os &&
          v2.mis == v.mis && v2.initial_tsn == v.initial_tsn);
    /* A stop may leave a malformed tail unread: only compare when the
     * original was fully well formed. */
    if (it.err == NS_SCTP_V_OK) {
        CHECK(ns_sctp_init_params_parse(&v2, ack, 0, &ip2) == NS_SCTP_V_OK);
        same_params(&ip, &ip2);
    }
    ns_pkt_free(p);

    /* The reports the receiver would send. Wrapping adds headers, so a
     * report of a near-64 KiB chunk may not fit a chunk: NOROOM, never a
     * malformed chunk. */
    start(&w);
    CHECK(ns_sctp_wr_init_begin(&w, true, 1, 2, 3, 4, 5) == NS_SCTP_WR_OK);
    int added = 0;
    for (int i = 0; i < ip.n_unrec; i++) {
        enum ns_sctp_wr_res res =
            ns_sctp_wr_param_unrecognized(&w, ip.unrec[i].raw, ip.unrec[i].len);
        CHECK(res == NS_SCTP_WR_OK || res == NS_SCTP_WR_NOROOM);
        added += res == NS_SCTP_WR_OK;
    }
    CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
    reread(&w, &p, &c2);
    CHECK(ns_sctp_parse_init(&c2, &v2) == NS_SCTP_V_OK);
    CHECK(ns_sctp_init_params_parse(&v2, true, 0, &ip2) == NS_SCTP_V_OK);
    CHECK(ns_sctp_tlv_validate(v2.params, v2.params_len) == NS_SCTP_V_OK);
    /* The same reports as optional items of a latching writer (as the
     * listener writes them): the ones that fit, the same bytes. */
    start(&w);
    ns_sctp_wr_latch(&w);
    ns_sctp_wr_init_begin(&w, true, 1, 2, 3, 4, 5);
    int added2 = 0;
    for (int i = 0; i < ip.n_unrec; i++) {
        struct ns_sctp_wr_opt o;
        ns_sctp_wr_opt_begin(&w, &o);
        ns_sctp_wr_param_unrecognized(&w, ip.unrec[i].raw, ip.unrec[i].len);
        enum ns_sctp_wr_res res = ns_sctp_wr_opt_end(&w, &o);
        CHECK(res == NS_SCTP_WR_OK || res == NS_SCTP_WR_NOROOM);
        added2 += res == NS_SCTP_WR_OK;
    }
    CHECK(added2 == added);
    CHECK(ns_sctp_wr_error(&w) == NS_SCTP_WR_OK);
    CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
    same_packet(p, &w);
    ns_pkt_free(p);

    start(&w);
    CHECK(ns_sctp_wr_error_begin(&w) == NS_SCTP_WR_OK);
    int ncauses = 0;
    enum ns_sctp_wr_res res = ns_sctp_wr_cause_unrecognized_params(&w, &ip);
    CHECK(res == NS_SCTP_WR_OK || res == NS_SCTP_WR_NOROOM);
    ncauses += res == NS_SCTP_WR_OK;
    if (ip.hostname_param) {
        res = ns_sctp_wr_cause_unresolvable_addr(&w, ip.hostname_param, ip.hostname_param_len);
        CHECK(res == NS_SCTP_WR_OK || res == NS_SCTP_WR_NOROOM);
        ncauses += res == NS_SCTP_WR_OK;
    }
    CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
    reread(&w, &p, &c2);
    struct ns_sctp_causes_view cv;
    CHECK(ns_sctp_parse_causes(&c2, &cv) == NS_SCTP_V_OK);
    CHECK(cv.ncauses == ncauses);
    ns_pkt_free(p);
}

static void fz_sack(const struct ns_sctp_chunk *c)
{
    struct ns_sctp_sack_view s;
    if (ns_sctp_parse_sack(c, &s) != NS_SCTP_V_OK)
        return;
    uint16_t g[256][2];
    uint32_t d[256];
    uint16_t ng = s.ngaps < 256 ? s.ngaps : 256, nd = s.ndups < 256 ? s.ndups : 256;
    for (uint16_t i = 0; i < ng; i++)
        ns_sctp_sack_gap(&s, i, &g[i][0], &g[i][1]);
    for (uint16_t i = 0; i < nd; i++)
        d[i] = ns_sctp_sack_dup(&s, i);
    struct ns_sctp_writer w;
    start(&w);
    uint16_t wg = 0, wd = 0;
    CHECK(ns_sctp_wr_sack(&w, s.cum_tsn, s.a_rwnd, g, ng, d, nd, &wg, &wd) == NS_SCTP_WR_OK);
    CHECK(wg == ng && wd == nd);
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    reread(&w, &p, &c2);
    struct ns_sctp_sack_view s2;
    CHECK(ns_sctp_parse_sack(&c2, &s2) == NS_SCTP_V_OK);
    CHECK(s2.cum_tsn == s.cum_tsn && s2.a_rwnd == s.a_rwnd && s2.ngaps == ng && s2.ndups == nd);
    for (uint16_t i = 0; i < ng; i++) {
        uint16_t a, b;
        ns_sctp_sack_gap(&s2, i, &a, &b);
        CHECK(a == g[i][0] && b == g[i][1]);
    }
    for (uint16_t i = 0; i < nd; i++)
        CHECK(ns_sctp_sack_dup(&s2, i) == d[i]);
    ns_pkt_free(p);
}

static void fz_heartbeat(const struct ns_sctp_chunk *c)
{
    struct ns_sctp_hb_view h;
    if (ns_sctp_parse_heartbeat(c, &h) != NS_SCTP_V_OK)
        return;
    struct ns_sctp_writer w;
    start(&w);
    CHECK(ns_sctp_wr_heartbeat_ack(&w, &h) == NS_SCTP_WR_OK);
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    reread(&w, &p, &c2);
    struct ns_sctp_hb_view h2;
    CHECK(ns_sctp_parse_heartbeat(&c2, &h2) == NS_SCTP_V_OK);
    CHECK(h2.info_len == h.info_len && memcmp(h2.info, h.info, h.info_len) == 0);
    ns_pkt_free(p);

    start(&w);
    CHECK(ns_sctp_wr_heartbeat(&w, h.info, h.info_len) == NS_SCTP_WR_OK);
    reread(&w, &p, &c2);
    CHECK(ns_sctp_parse_heartbeat(&c2, &h2) == NS_SCTP_V_OK);
    CHECK(h2.info_len == h.info_len && memcmp(h2.info, h.info, h.info_len) == 0);
    ns_pkt_free(p);
}

static void fz_causes(const struct ns_sctp_chunk *c)
{
    struct ns_sctp_causes_view v;
    if (ns_sctp_parse_causes(c, &v) != NS_SCTP_V_OK)
        return;
    struct ns_sctp_writer w;
    start(&w);
    CHECK((c->type == NS_SCTP_CT_ABORT ? ns_sctp_wr_abort_begin(&w, v.t_bit)
                                       : ns_sctp_wr_error_begin(&w)) == NS_SCTP_WR_OK);
    struct ns_sctp_cause_iter ci;
    struct ns_sctp_cause k;
    uint16_t n = 0;
    ns_sctp_cause_iter_init(&ci, &v);
    while (ns_sctp_cause_next(&ci, &k)) {
        n++;
        CHECK(ns_sctp_wr_cause(&w, k.code, k.value, k.vlen) == NS_SCTP_WR_OK);
        for (uint32_t i = 0; i < k.n_missing; i++)
            (void)ns_sctp_cause_missing_type(&k, i);
        /* Causes that carry TLVs: walk them too. */
        if (k.code == NS_SCTP_CAUSE_UNRECOGNIZED_PARAMS ||
            k.code == NS_SCTP_CAUSE_RESTART_NEW_ADDRS || k.code == NS_SCTP_CAUSE_UNRESOLVABLE_ADDR)
            (void)ns_sctp_tlv_validate(k.value, k.vlen);
    }
    CHECK(n == v.ncauses);
    CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    reread(&w, &p, &c2);
    struct ns_sctp_causes_view v2;
    CHECK(ns_sctp_parse_causes(&c2, &v2) == NS_SCTP_V_OK);
    CHECK(v2.ncauses == v.ncauses && v2.t_bit == (c->type == NS_SCTP_CT_ABORT && v.t_bit));
    struct ns_sctp_cause_iter ci2;
    struct ns_sctp_cause k2;
    ns_sctp_cause_iter_init(&ci, &v);
    ns_sctp_cause_iter_init(&ci2, &v2);
    while (ns_sctp_cause_next(&ci, &k)) {
        CHECK(ns_sctp_cause_next(&ci2, &k2));
        CHECK(k.code == k2.code && k.vlen == k2.vlen && memcmp(k.value, k2.value, k.vlen) == 0);
        CHECK(k.sid == k2.sid && k.staleness_us == k2.staleness_us && k.tsn == k2.tsn &&
              k.n_missing == k2.n_missing);
    }
    ns_pkt_free(p);
}

static bool fixed_rand(void *ctx, uint8_t *out, size_t len)
{
    memset(out, *(const uint8_t *)ctx, len);
    return true;
}

static void fz_cookie(const struct ns_sctp_chunk *c)
{
    const uint8_t *ck;
    uint16_t cl;
    if (ns_sctp_parse_cookie_echo(c, &ck, &cl) != NS_SCTP_V_OK)
        return;
    uint8_t seed = 0x5a;
    struct ns_sctp_cookie_ctx cx;
    CHECK(ns_sctp_cookie_ctx_init(&cx, 60000, fixed_rand, &seed, 1000));
    struct ns_sctp_cookie_tcb t, t2;
    uint32_t st;
    (void)ns_sctp_cookie_verify(&cx, ck, cl, 2000, &t, &st);

    /* A cookie from fuzzed fields round-trips. */
    memset(&t, 0, sizeof(t));
    const uint8_t *v = c->value;
    uint16_t n = c->vlen;
    t.peer_tag = n >= 4 ? (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | v[2] << 8 | v[3] : 0;
    t.peer_os = n >= 6 ? (uint16_t)(v[4] << 8 | v[5]) : 0;
    t.n_addrs = n >= 7 ? v[6] % (NS_SCTP_COOKIE_MAX_ADDRS + 1) : 0;
    t.lifetime_ms = n >= 8 ? v[7] : 0;
    for (int i = 0; i < t.n_addrs; i++)
        t.addrs[i] = (struct ns_sctp_addr){NS_SCTP_AF_INET4, (uint16_t)i, (uint32_t)(n + i)};
    uint8_t out[NS_SCTP_COOKIE_MAX_LEN];
    size_t len = ns_sctp_cookie_build(&cx, &t, 1500, out, sizeof(out));
    CHECK(len == NS_SCTP_COOKIE_LEN(t.n_addrs));
    CHECK(ns_sctp_cookie_verify(&cx, out, len, 1500, &t2, &st) == NS_SCTP_COOKIE_OK);
    CHECK(t2.peer_tag == t.peer_tag && t2.peer_os == t.peer_os && t2.n_addrs == t.n_addrs);
    ns_sctp_cookie_ctx_free(&cx);

    struct ns_sctp_writer w;
    start(&w);
    CHECK(ns_sctp_wr_cookie_echo(&w, ck, cl) == NS_SCTP_WR_OK);
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    reread(&w, &p, &c2);
    const uint8_t *ck2;
    uint16_t cl2;
    CHECK(ns_sctp_parse_cookie_echo(&c2, &ck2, &cl2) == NS_SCTP_V_OK);
    CHECK(cl2 == cl && memcmp(ck2, ck, cl) == 0);
    ns_pkt_free(p);
}

static void fz_simple(const struct ns_sctp_chunk *c)
{
    struct ns_sctp_writer w;
    struct ns_pkt *p;
    struct ns_sctp_chunk c2;
    uint32_t cum, cum2;
    struct ns_sctp_fwd_tsn_view f, f2;
    struct ns_sctp_idata_view id;
    switch (c->type) {
    case NS_SCTP_CT_SHUTDOWN:
        if (ns_sctp_parse_shutdown(c, &cum) != NS_SCTP_V_OK)
            return;
        start(&w);
        CHECK(ns_sctp_wr_shutdown(&w, cum) == NS_SCTP_WR_OK);
        reread(&w, &p, &c2);
        CHECK(ns_sctp_parse_shutdown(&c2, &cum2) == NS_SCTP_V_OK && cum2 == cum);
        ns_pkt_free(p);
        return;
    case NS_SCTP_CT_FORWARD_TSN: {
        if (ns_sctp_parse_forward_tsn(c, &f) != NS_SCTP_V_OK)
            return;
        uint16_t s[64][2];
        uint16_t n = f.nstreams < 64 ? f.nstreams : 64;
        for (uint16_t i = 0; i < n; i++)
            ns_sctp_fwd_tsn_stream(&f, i, &s[i][0], &s[i][1]);
        start(&w);
        CHECK(ns_sctp_wr_forward_tsn(&w, f.new_cum_tsn, s, n) == NS_SCTP_WR_OK);
        reread(&w, &p, &c2);
        CHECK(ns_sctp_parse_forward_tsn(&c2, &f2) == NS_SCTP_V_OK);
        CHECK(f2.new_cum_tsn == f.new_cum_tsn && f2.nstreams == n);
        ns_pkt_free(p);
        return;
    }
    case NS_SCTP_CT_I_DATA:
        (void)ns_sctp_parse_idata(c, &id);
        return;
    case NS_SCTP_CT_SHUTDOWN_ACK:
    case NS_SCTP_CT_COOKIE_ACK:
    case NS_SCTP_CT_SHUTDOWN_COMPLETE:
        start(&w);
        CHECK(ns_sctp_wr_chunk(&w, c->type, c->flags, NULL, 0) == NS_SCTP_WR_OK);
        reread(&w, &p, &c2);
        CHECK(c2.type == c->type && c2.flags == c->flags && c2.len == 4);
        ns_pkt_free(p);
        return;
    default:
        break;
    }
    /* Anything else is opaque: it round-trips as raw bytes, and if its type
     * asks for a report, the report holds it. */
    start(&w);
    if (c->type != NS_SCTP_CT_DATA && c->type != NS_SCTP_CT_I_DATA) {
        CHECK(ns_sctp_wr_chunk(&w, c->type, c->flags, c->value, c->vlen) == NS_SCTP_WR_OK);
        reread(&w, &p, &c2);
        CHECK(c2.type == c->type && c2.flags == c->flags && c2.len == c->len &&
              memcmp(c2.value, c->value, c->vlen) == 0);
        ns_pkt_free(p);
        start(&w);
    }
    if (ns_sctp_action_reports(ns_sctp_chunk_action(c->type))) {
        CHECK(ns_sctp_wr_error_begin(&w) == NS_SCTP_WR_OK);
        enum ns_sctp_wr_res res = ns_sctp_wr_cause_unrecognized_chunk(&w, c);
        CHECK(res == NS_SCTP_WR_OK || (res == NS_SCTP_WR_NOROOM && c->len > UINT16_MAX - 12));
        CHECK(ns_sctp_wr_end(&w) == NS_SCTP_WR_OK);
        reread(&w, &p, &c2);
        struct ns_sctp_causes_view cv;
        CHECK(ns_sctp_parse_causes(&c2, &cv) == NS_SCTP_V_OK);
        CHECK(cv.ncauses == (res == NS_SCTP_WR_OK));
        ns_pkt_free(p);
    } else {
        ns_sctp_wr_discard(&w);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > UINT16_MAX)
        return 0;
    CHECK(ns_crc32c_sw(0, data, size) == ns_crc32c_hw(0, data, size));
    (void)ns_sctp_checksum_verify_buf(data, size);

    struct ns_sctp_reader r;
    if (ns_sctp_reader_init(&r, data, (uint32_t)size) != NS_SCTP_V_OK)
        return 0;
    (void)ns_sctp_reader_bundling_ok(&r);
    struct ns_sctp_chunk c;
    uint32_t n = 0;
    while (ns_sctp_reader_next(&r, &c)) {
        n++;
        CHECK(c.raw >= data && c.value + c.vlen <= data + size);
        (void)ns_sctp_chunk_type_name(c.type);
        (void)ns_sctp_tlv_validate(c.value, c.vlen);
        switch (c.type) {
        case NS_SCTP_CT_DATA:
            fz_data(&c);
            break;
        case NS_SCTP_CT_INIT:
        case NS_SCTP_CT_INIT_ACK:
            fz_init(&c);
            break;
        case NS_SCTP_CT_SACK:
            fz_sack(&c);
            break;
        case NS_SCTP_CT_HEARTBEAT:
        case NS_SCTP_CT_HEARTBEAT_ACK:
            fz_heartbeat(&c);
            break;
        case NS_SCTP_CT_ABORT:
        case NS_SCTP_CT_ERROR:
            fz_causes(&c);
            break;
        case NS_SCTP_CT_COOKIE_ECHO:
            fz_cookie(&c);
            break;
        default:
            fz_simple(&c);
            break;
        }
    }
    CHECK(n == r.nchunks);
    return 0;
}
