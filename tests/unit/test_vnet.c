/* TAP segmentation offload (dev/vnet.c, virtio 1.x 5.1.6): plain frames
 * and their partial checksums on receive, USO frames split into datagrams
 * (lengths, IDs, header checksums, payload order, options, bad headers,
 * segment limits, padding), runs of equal datagrams planned into one USO
 * frame on transmit (exact header fields, where a run must stop, the
 * iovec), and a transmit -> receive round trip. Checksums are checked
 * against a reference sum written here, not against core/checksum.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/pkt.h"
#include "dev/vnet.h"
#include "wire.h"

#define SRC_IP   0xc6120001u /* 198.18.0.1 */
#define DST_IP   0xc6120002u /* 198.18.0.2 */
#define SPORT    5000
#define DPORT    9899
#define TTL      64
#define MAXFRAME (65536 + 64)

static const uint8_t mac_dst[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t mac_src[6] = {0x02, 0, 0, 0, 0, 0x01};

static uint16_t g16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static void p16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void p32(uint8_t *p, uint32_t v)
{
    p16(p, (uint16_t)(v >> 16));
    p16(p + 2, (uint16_t)v);
}

static uint16_t ref_pseudo(const uint8_t *ip, uint16_t ulen)
{
    uint8_t ph[12];
    memcpy(ph, ip + 12, 8);
    ph[8] = 0;
    ph[9] = 17;
    p16(ph + 10, ulen);
    return wire_ref_sum(ph, sizeof(ph), 0);
}

/* Does the UDP datagram at udp (ulen bytes) carry a checksum that verifies? */
static int udp_verifies(const uint8_t *ip, const uint8_t *udp, uint16_t ulen)
{
    return wire_ref_sum(udp, ulen, ref_pseudo(ip, ulen)) == 0xffff;
}

static uint8_t pat(uint32_t i)
{
    /* Differs between the 1000-byte segments used below and inside them. */
    return (uint8_t)(i % 251 + (i / 1000) * 37);
}

struct hdr_opt {
    uint32_t ihl; /* 20 or more */
    uint16_t id;
    uint16_t frag; /* flags + offset */
    uint16_t dport;
    uint8_t ttl;
    uint8_t proto;
    uint8_t dmac_last; /* last byte of the destination MAC */
};

static const struct hdr_opt defo = {20, 0x1234, 0x4000, DPORT, TTL, 17, 0x02};

/* Ethernet + IPv4 (with options when ihl > 20) + UDP for plen bytes of
 * payload; IP checksum right, UDP checksum 0. Returns the header length. */
static uint32_t write_hdrs(uint8_t *f, const struct hdr_opt *o, uint32_t plen)
{
    memcpy(f, mac_dst, 6);
    f[5] = o->dmac_last;
    memcpy(f + 6, mac_src, 6);
    p16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    memset(ip, 0, o->ihl);
    ip[0] = (uint8_t)(0x40 | o->ihl / 4);
    ip[1] = 0x10;
    p16(ip + 2, (uint16_t)(o->ihl + 8 + plen));
    p16(ip + 4, o->id);
    p16(ip + 6, o->frag);
    ip[8] = o->ttl;
    ip[9] = o->proto;
    p32(ip + 12, SRC_IP);
    p32(ip + 16, DST_IP);
    for (uint32_t i = 20; i < o->ihl; i += 4) {
        ip[i] = 0x94; /* router alert, 4 bytes */
        ip[i + 1] = 4;
    }
    p16(ip + 10, (uint16_t)~wire_ref_sum(ip, o->ihl, 0));
    uint8_t *udp = ip + o->ihl;
    p16(udp, SPORT);
    p16(udp + 2, o->dport);
    p16(udp + 4, (uint16_t)(8 + plen));
    p16(udp + 6, 0);
    return 14 + o->ihl + 8;
}

/* A USO frame: headers, then plen bytes of pat(); the UDP checksum field
 * holds the pseudo-header sum over the whole length, as Linux sends it. */
static uint32_t uso_frame(uint8_t *f, const struct hdr_opt *o, uint32_t plen)
{
    uint32_t hl = write_hdrs(f, o, plen);
    for (uint32_t i = 0; i < plen; i++)
        f[hl + i] = pat(i);
    p16(f + hl - 2, ref_pseudo(f + 14, (uint16_t)(8 + plen)));
    return hl + plen;
}

static struct ns_vnet_hdr uso_hdr(uint16_t gso_size, uint32_t ihl)
{
    return (struct ns_vnet_hdr){.flags = NS_VNET_F_NEEDS_CSUM,
                                .gso_type = NS_VNET_GSO_UDP_L4,
                                .hdr_len = (uint16_t)(14 + ihl + 8),
                                .gso_size = gso_size,
                                .csum_start = (uint16_t)(14 + ihl),
                                .csum_offset = 6};
}

static void free_all(struct ns_pkt **p, int n)
{
    for (int i = 0; i < n; i++)
        ns_pkt_free(p[i]);
}

static void test_hdr_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct ns_vnet_hdr), NS_VNET_HLEN);
    assert_int_equal(offsetof(struct ns_vnet_hdr, gso_size), 4);
    assert_int_equal(offsetof(struct ns_vnet_hdr, csum_offset), 8);
}

/* ---- receive: plain frames ---- */

static void test_rx_plain(void **state)
{
    (void)state;
    uint8_t f[77];
    for (size_t i = 0; i < sizeof(f); i++)
        f[i] = (uint8_t)(i * 13 + 5);
    struct ns_vnet_hdr h = {0};
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[4] = {0};
    assert_int_equal(ns_vnet_rx(&h, f, sizeof(f), out, 4, &st), 1);
    assert_non_null(out[0]);
    assert_null(out[1]);
    assert_int_equal(out[0]->len, sizeof(f));
    assert_int_equal(out[0]->nfrags, 0);
    assert_true(ns_pkt_headroom(out[0]) >= NS_PKT_HEADROOM);
    assert_memory_equal(out[0]->data, f, sizeof(f));
    assert_int_equal(st.bad + st.nomem + st.csum_done + st.gso_frames + st.gso_segs, 0);
    ns_pkt_free(out[0]);

    /* DATA_VALID alone changes nothing. */
    h.flags = NS_VNET_F_DATA_VALID;
    assert_int_equal(ns_vnet_rx(&h, f, sizeof(f), out, 1, &st), 1);
    assert_memory_equal(out[0]->data, f, sizeof(f));
    assert_int_equal(st.csum_done, 0);
    ns_pkt_free(out[0]);

    /* No room for even one packet. */
    out[0] = NULL;
    assert_int_equal(ns_vnet_rx(&h, f, sizeof(f), out, 0, &st), 0);
    assert_null(out[0]);
}

/* A UDP frame with a partial checksum: the field holds the folded
 * pseudo-header sum (not complemented) and rx must finish it. */
static void check_partial(uint32_t plen, const uint8_t *payload, uint16_t want)
{
    uint8_t f[2048];
    uint32_t hl = write_hdrs(f, &defo, plen);
    memcpy(f + hl, payload, plen);
    uint32_t len = hl + plen;
    uint16_t ulen = (uint16_t)(8 + plen);
    /* The value a full software checksum gives, worked out independently. */
    uint16_t expect = (uint16_t)~wire_ref_sum(f + 34, ulen, ref_pseudo(f + 14, ulen));
    if (expect == 0)
        expect = 0xffff;
    if (want)
        assert_int_equal(expect, want);
    p16(f + 40, ref_pseudo(f + 14, ulen));

    struct ns_vnet_hdr h = {.flags = NS_VNET_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 6};
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[1];
    assert_int_equal(ns_vnet_rx(&h, f, len, out, 1, &st), 1);
    assert_int_equal(st.csum_done, 1);
    assert_int_equal(st.bad, 0);
    const uint8_t *d = out[0]->data;
    assert_int_equal(out[0]->len, len);
    assert_int_equal(g16(d + 40), expect);
    assert_true(udp_verifies(d + 14, d + 34, ulen));
    /* Nothing but the checksum field changed. */
    assert_memory_equal(d, f, 40);
    if (len > 42)
        assert_memory_equal(d + 42, f + 42, len - 42);
    ns_pkt_free(out[0]);
}

static void test_rx_plain_needs_csum(void **state)
{
    (void)state;
    uint8_t pl[1400];
    for (size_t i = 0; i < sizeof(pl); i++)
        pl[i] = (uint8_t)(i * 7 + 3);
    check_partial(101, pl, 0); /* odd length */
    check_partial(1400, pl, 0);
    check_partial(0, pl, 0);

    /* Two payload bytes chosen so that the sum is 0xffff: the checksum
     * comes out 0 and must be sent as 0xffff (RFC 768). */
    uint8_t f[64];
    write_hdrs(f, &defo, 2);
    f[42] = f[43] = 0;
    uint16_t s = wire_ref_sum(f + 34, 10, ref_pseudo(f + 14, 10));
    uint8_t two[2];
    p16(two, (uint16_t)~s);
    check_partial(2, two, 0xffff);
}

static void test_rx_plain_csum_out_of_range(void **state)
{
    (void)state;
    uint8_t f[100];
    for (size_t i = 0; i < sizeof(f); i++)
        f[i] = (uint8_t)(0xa0 + i);
    const struct {
        uint16_t start, off;
    } cases[] = {
        {100, 0},     /* start at the end */
        {0xffff, 6},  /* far past */
        {34, 0xffff}, /* field past the end */
        {34, 65},     /* field's second byte past the end */
        {97, 2},      /* field straddles the end */
        {35, 6},      /* odd start */
        {0xffff, 0xffff},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct ns_vnet_hdr h = {.flags = NS_VNET_F_NEEDS_CSUM,
                                .csum_start = cases[c].start,
                                .csum_offset = cases[c].off};
        struct ns_vnet_rx_stats st = {0};
        struct ns_pkt *out[1];
        assert_int_equal(ns_vnet_rx(&h, f, sizeof(f), out, 1, &st), 1);
        assert_int_equal(out[0]->len, sizeof(f));
        assert_memory_equal(out[0]->data, f, sizeof(f));
        assert_int_equal(st.csum_done, 0);
        assert_int_equal(st.bad, 0);
        ns_pkt_free(out[0]);
    }
    /* An empty frame. */
    struct ns_vnet_hdr h = {.flags = NS_VNET_F_NEEDS_CSUM};
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[1];
    assert_int_equal(ns_vnet_rx(&h, f, 0, out, 1, &st), 1);
    assert_int_equal(ns_pkt_len(out[0]), 0);
    assert_int_equal(st.csum_done, 0);
    ns_pkt_free(out[0]);
}

/* ---- receive: USO frames ---- */

/* Checks the n datagrams split from a frame made by uso_frame(o, plen)
 * with gso_size seg (frame = the frame's bytes). */
static void check_split(struct ns_pkt **out, int n, const uint8_t *frame, const struct hdr_opt *o,
                        uint32_t plen, uint32_t seg)
{
    uint32_t hl = 14 + o->ihl + 8;
    assert_int_equal(n, (int)((plen + seg - 1) / seg));
    for (int i = 0; i < n; i++) {
        const struct ns_pkt *p = out[i];
        uint32_t sl = plen - (uint32_t)i * seg < seg ? plen - (uint32_t)i * seg : seg;
        assert_int_equal(p->nfrags, 0);
        assert_true(ns_pkt_headroom(p) >= NS_PKT_HEADROOM);
        assert_int_equal(p->len, hl + sl);
        const uint8_t *d = p->data, *ip = d + 14, *udp = ip + o->ihl;
        assert_memory_equal(d, frame, 14);
        assert_int_equal(ip[0], 0x40 | o->ihl / 4);
        assert_int_equal(ip[1], frame[15]);
        assert_int_equal(g16(ip + 2), o->ihl + 8 + sl);
        assert_int_equal(g16(ip + 4), (uint16_t)(o->id + i));
        assert_memory_equal(ip + 6, frame + 14 + 6, 4);             /* flags, TTL, protocol */
        assert_memory_equal(ip + 12, frame + 14 + 12, o->ihl - 12); /* addresses, options */
        assert_int_equal(wire_ref_sum(ip, o->ihl, 0), 0xffff);
        assert_memory_equal(udp, frame + 14 + o->ihl, 4);
        assert_int_equal(g16(udp + 4), 8 + sl);
        assert_int_equal(g16(udp + 6), 0);
        assert_memory_equal(udp + 8, frame + hl + (uint32_t)i * seg, sl);
        for (uint32_t k = 0; k < sl; k++)
            if (udp[8 + k] != pat((uint32_t)i * seg + k))
                fail_msg("segment %d byte %u", i, k);
    }
}

static uint8_t *fbuf(void)
{
    uint8_t *f = malloc(MAXFRAME + 64);
    assert_non_null(f);
    return f;
}

static void test_rx_uso(void **state)
{
    (void)state;
    uint8_t *f = fbuf();
    uint32_t len = uso_frame(f, &defo, 3300);
    struct ns_vnet_hdr h = uso_hdr(1000, 20);
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[8] = {0};
    int n = ns_vnet_rx(&h, f, len, out, 8, &st);
    assert_int_equal(n, 4);
    assert_null(out[4]);
    check_split(out, n, f, &defo, 3300, 1000);
    assert_int_equal(st.gso_frames, 1);
    assert_int_equal(st.gso_segs, 4);
    assert_int_equal(st.bad + st.nomem + st.csum_done, 0);
    free_all(out, n);

    /* Exactly max packets is enough; the payload a multiple of gso_size. */
    n = ns_vnet_rx(&h, f, len, out, 4, &st);
    assert_int_equal(n, 4);
    free_all(out, n);
    len = uso_frame(f, &defo, 3000);
    n = ns_vnet_rx(&h, f, len, out, 8, &st);
    check_split(out, n, f, &defo, 3000, 1000);
    assert_int_equal(n, 3);
    free_all(out, n);
    /* One segment only, shorter than gso_size. */
    len = uso_frame(f, &defo, 999);
    n = ns_vnet_rx(&h, f, len, out, 1, &st);
    assert_int_equal(n, 1);
    check_split(out, n, f, &defo, 999, 1000);
    free_all(out, n);
    assert_int_equal(st.gso_frames, 4);
    assert_int_equal(st.gso_segs, 12);
    assert_int_equal(st.bad, 0);

    /* The IP ID wraps; gso_type with the flags of the header otherwise
     * zero is taken the same. */
    struct hdr_opt o = defo;
    o.id = 0xfffe;
    len = uso_frame(f, &o, 3300);
    h.flags = 0;
    h.csum_start = h.csum_offset = h.hdr_len = 0;
    n = ns_vnet_rx(&h, f, len, out, 8, &st);
    check_split(out, n, f, &o, 3300, 1000);
    assert_int_equal(g16(out[2]->data + 18), 0);
    free_all(out, n);
    free(f);
}

static void test_rx_uso_ip_options(void **state)
{
    (void)state;
    uint8_t *f = fbuf();
    for (uint32_t ihl = 24; ihl <= 60; ihl += 36) {
        struct hdr_opt o = defo;
        o.ihl = ihl;
        uint32_t len = uso_frame(f, &o, 2500);
        struct ns_vnet_hdr h = uso_hdr(1000, ihl);
        struct ns_vnet_rx_stats st = {0};
        struct ns_pkt *out[4];
        int n = ns_vnet_rx(&h, f, len, out, 4, &st);
        assert_int_equal(n, 3);
        check_split(out, n, f, &o, 2500, 1000);
        assert_int_equal(out[0]->data[14 + 20], 0x94);
        free_all(out, n);
    }
    free(f);
}

static void expect_bad(const struct ns_vnet_hdr *h, const uint8_t *f, uint32_t len, int max)
{
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[200];
    for (int i = 0; i < 200; i++)
        out[i] = NULL;
    assert_int_equal(ns_vnet_rx(h, f, len, out, max, &st), 0);
    assert_int_equal(st.bad, 1);
    assert_int_equal(st.nomem + st.gso_frames + st.gso_segs + st.csum_done, 0);
    for (int i = 0; i < 200; i++)
        assert_null(out[i]);
}

static void test_rx_uso_bad(void **state)
{
    (void)state;
    uint8_t *f = fbuf();
    struct hdr_opt o = defo;
    uint32_t len = uso_frame(f, &o, 3300);
    struct ns_vnet_hdr h = uso_hdr(1000, 20);

    struct ns_vnet_hdr z = h;
    z.gso_size = 0;
    expect_bad(&z, f, len, 8);
    z = h;
    z.gso_type = 1; /* TCPv4: never asked for */
    expect_bad(&z, f, len, 8);
    z.gso_type = 3; /* UDP fragmentation offload */
    expect_bad(&z, f, len, 8);
    z.gso_type = NS_VNET_GSO_UDP_L4 | 0x80; /* with ECN */
    expect_bad(&z, f, len, 8);

    /* Ethertype: IPv6, ARP, VLAN. */
    static const uint16_t types[] = {0x86dd, 0x0806, 0x8100};
    for (size_t i = 0; i < 3; i++) {
        uso_frame(f, &o, 3300);
        p16(f + 12, types[i]);
        expect_bad(&h, f, len, 8);
    }
    /* IP version 6 in an IPv4 ethertype; IHL below 5. */
    uso_frame(f, &o, 3300);
    f[14] = 0x65;
    expect_bad(&h, f, len, 8);
    f[14] = 0x44;
    expect_bad(&h, f, len, 8);
    f[14] = 0x40;
    expect_bad(&h, f, len, 8);
    /* Not UDP. */
    o.proto = 6;
    len = uso_frame(f, &o, 3300);
    expect_bad(&h, f, len, 8);
    o.proto = 1;
    len = uso_frame(f, &o, 3300);
    expect_bad(&h, f, len, 8);
    o = defo;
    /* Fragments: MF, an offset, both. DF alone is fine (used above). */
    static const uint16_t frags[] = {0x2000, 0x0001, 0x1fff, 0x2000 | 0x00b9, 0x6000};
    for (size_t i = 0; i < sizeof(frags) / sizeof(frags[0]); i++) {
        o.frag = frags[i];
        len = uso_frame(f, &o, 3300);
        expect_bad(&h, f, len, 8);
    }
    o = defo;

    /* Truncated headers: shorter than Ethernet, Ethernet + part of IPv4,
     * no room for UDP, and the options cutting into UDP. */
    len = uso_frame(f, &o, 3300);
    static const uint32_t cut[] = {0, 1, 13, 14, 33, 34, 41};
    for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
        expect_bad(&h, f, cut[i], 8);
    o.ihl = 60;
    uso_frame(f, &o, 3300);
    expect_bad(&h, f, 14 + 60 + 7, 8);
    expect_bad(&h, f, 14 + 60, 8);
    expect_bad(&h, f, 14 + 44, 8);
    o = defo;
    /* Headers and no payload at all (the IP length agreeing). */
    len = uso_frame(f, &o, 0);
    expect_bad(&h, f, len, 8);
    /* ...and payload past an IP length that says there is none. */
    len = uso_frame(f, &o, 3300);
    p16(f + 16, 28);
    expect_bad(&h, f, len, 8);

    /* More datagrams than the caller has room for. */
    len = uso_frame(f, &o, 3300);
    expect_bad(&h, f, len, 3);
    expect_bad(&h, f, len, 1);
    /* More than 128 segments, even with room. */
    len = uso_frame(f, &o, 129 * 10);
    z = uso_hdr(10, 20);
    expect_bad(&z, f, len, 200);
    len = uso_frame(f, &o, 128 * 10 + 1);
    expect_bad(&z, f, len, 200);
    /* Exactly 128 is accepted. */
    len = uso_frame(f, &o, 128 * 10);
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[200];
    int n = ns_vnet_rx(&z, f, len, out, 200, &st);
    assert_int_equal(n, 128);
    check_split(out, n, f, &o, 1280, 10);
    free_all(out, n);
    free(f);
}

/* A datagram cut from a frame must fit its own 16-bit IP and UDP length
 * fields; a frame larger than 64 KiB (a TAP read takes up to 65600 bytes)
 * with a gso_size near 65535 would otherwise give datagrams whose lengths
 * wrapped around. */
static void test_rx_uso_segment_too_long(void **state)
{
    (void)state;
    uint8_t *f = fbuf();
    uint32_t len = uso_frame(f, &defo, 65535 + 1);
    p16(f + 16, 0); /* no IP length can say this; 0 is not believed */
    struct ns_vnet_hdr h = uso_hdr(65535, 20);
    expect_bad(&h, f, len, 8);
    /* The largest that fits: 65535 - 20 - 8 bytes of UDP payload. */
    h.gso_size = 65507;
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[4];
    int n = ns_vnet_rx(&h, f, len, out, 4, &st);
    assert_int_equal(n, 2);
    assert_int_equal(g16(out[0]->data + 16), 65535);
    assert_int_equal(g16(out[1]->data + 16), 28 + 29);
    free_all(out, n);
    free(f);
}

static void test_rx_uso_ip_length(void **state)
{
    (void)state;
    uint8_t *f = fbuf();
    struct ns_vnet_hdr h = uso_hdr(1000, 20);
    struct ns_pkt *out[8];
    struct ns_vnet_rx_stats st = {0};

    /* IP length larger than the frame: the frame's length is used. */
    uint32_t len = uso_frame(f, &defo, 3300);
    p16(f + 16, 28 + 3300 + 500);
    int n = ns_vnet_rx(&h, f, len, out, 8, &st);
    p16(f + 16, 28 + 3300);
    check_split(out, n, f, &defo, 3300, 1000);
    free_all(out, n);

    /* Trailing link padding past the IP length is dropped. */
    len = uso_frame(f, &defo, 3300);
    memset(f + len, 0xee, 20);
    n = ns_vnet_rx(&h, f, len + 20, out, 8, &st);
    check_split(out, n, f, &defo, 3300, 1000);
    free_all(out, n);
    /* ...even when it would have made one more datagram. */
    len = uso_frame(f, &defo, 3000);
    memset(f + len, 0xee, 700);
    n = ns_vnet_rx(&h, f, len + 700, out, 8, &st);
    check_split(out, n, f, &defo, 3000, 1000);
    free_all(out, n);

    /* An IP length too small to hold the headers is not believed. */
    len = uso_frame(f, &defo, 3300);
    p16(f + 16, 0);
    n = ns_vnet_rx(&h, f, len, out, 8, &st);
    p16(f + 16, 28 + 3300);
    check_split(out, n, f, &defo, 3300, 1000);
    free_all(out, n);
    assert_int_equal(st.bad, 0);
    assert_int_equal(st.gso_frames, 4);
    free(f);
}

/* Every allocation of a split failing in turn: nothing delivered, the
 * frame counted once as nomem, and (ASan) nothing leaked. */
static void test_rx_nomem(void **state)
{
    (void)state;
    uint8_t *f = fbuf();
    uint32_t len = uso_frame(f, &defo, 3300);
    struct ns_vnet_hdr h = uso_hdr(1000, 20);
    struct ns_pkt *out[8];
    struct ns_vnet_rx_stats st = {0};
    ns_alloc_fail_set(UINT64_MAX, 0);
    uint64_t c0 = ns_alloc_calls();
    int n = ns_vnet_rx(&h, f, len, out, 8, &st);
    uint64_t calls = ns_alloc_calls() - c0;
    ns_alloc_fail_set(0, 0);
    assert_int_equal(n, 4);
    free_all(out, n);
    assert_true(calls >= 4);
    for (uint64_t k = 1; k <= calls; k++) {
        memset(&st, 0, sizeof(st));
        ns_alloc_fail_set(k, 0);
        n = ns_vnet_rx(&h, f, len, out, 8, &st);
        ns_alloc_fail_set(0, 0);
        assert_int_equal(n, 0);
        assert_int_equal(st.nomem, 1);
        assert_int_equal(st.bad + st.gso_frames + st.gso_segs, 0);
    }
    /* A plain frame too. */
    struct ns_vnet_hdr plain = {0};
    memset(&st, 0, sizeof(st));
    ns_alloc_fail_set(1, 0);
    n = ns_vnet_rx(&plain, f, 60, out, 8, &st);
    ns_alloc_fail_set(0, 0);
    assert_int_equal(n, 0);
    assert_int_equal(st.nomem, 1);
    free(f);
}

/* ---- transmit ---- */

struct mk {
    struct hdr_opt o;
    uint32_t plen;
    int in_frags; /* payload referenced as 2 fragments, not in the head */
    uint32_t seed;
};

/* A packet the way the stack builds one: payload first (in the head or as
 * fragments of another buffer), then UDP, IPv4 and Ethernet pushed in front.
 * The UDP checksum is some full value the plan must replace. */
static struct ns_pkt *mkpkt(const struct mk *m)
{
    uint32_t hl = 14 + m->o.ihl + 8;
    struct ns_pkt *p;
    if (m->in_frags) {
        p = ns_pkt_alloc(NS_PKT_HEADROOM, 0);
        assert_non_null(p);
        struct ns_buf *b = ns_buf_alloc(m->plen + 16);
        assert_non_null(b);
        for (uint32_t i = 0; i < m->plen; i++)
            b->data[16 + i] = (uint8_t)(m->seed * 31 + i * 3);
        uint32_t a = m->plen / 3;
        if (a)
            assert_true(ns_pkt_add_frag(p, b, 16, a));
        assert_true(ns_pkt_add_frag(p, b, 16 + a, m->plen - a));
        ns_buf_put(b);
    } else {
        p = ns_pkt_alloc(NS_PKT_HEADROOM, m->plen);
        assert_non_null(p);
        uint8_t *d = ns_pkt_put(p, m->plen);
        for (uint32_t i = 0; i < m->plen; i++)
            d[i] = (uint8_t)(m->seed * 31 + i * 3);
    }
    uint8_t hdr[100];
    write_hdrs(hdr, &m->o, m->plen);
    p16(hdr + hl - 2, 0xabcd);
    memcpy(ns_pkt_push(p, 8), hdr + hl - 8, 8);
    memcpy(ns_pkt_push(p, m->o.ihl), hdr + 14, m->o.ihl);
    memcpy(ns_pkt_push(p, 14), hdr, 14);
    return p;
}

static struct ns_pkt *mkrun(uint32_t plen, uint16_t id, int in_frags, uint32_t seed)
{
    struct mk m = {defo, plen, in_frags, seed};
    m.o.id = id;
    return mkpkt(&m);
}

static uint8_t *pkt_bytes(const struct ns_pkt *p)
{
    uint8_t *b = malloc(ns_pkt_len(p) + 1);
    assert_non_null(b);
    assert_true(ns_pkt_copy_out(p, 0, b, ns_pkt_len(p)));
    return b;
}

/* Concatenates the iovec; returns the length. */
static uint32_t flatten(const struct iovec *iov, int n, uint8_t *out)
{
    uint32_t l = 0;
    for (int i = 0; i < n; i++) {
        memcpy(out + l, iov[i].iov_base, iov[i].iov_len);
        l += (uint32_t)iov[i].iov_len;
    }
    return l;
}

static int is_zero_hdr(const struct ns_vnet_hdr *h)
{
    static const struct ns_vnet_hdr z;
    return memcmp(h, &z, sizeof(z)) == 0;
}

/* The plan for pkts[0..n) covers exactly `want` packets; checks the header
 * fields and the iovec against the packets. */
static void check_plan(struct ns_pkt **pkts, int n, int want)
{
    struct ns_vnet_tx_plan plan;
    memset(&plan, 0x5a, sizeof(plan));
    ns_vnet_tx_plan(pkts, n, &plan);
    assert_int_equal(plan.count, want);
    static struct iovec iov[2 + NS_VNET_MAX_SEGS * (NS_PKT_MAX_FRAGS + 1)];
    int niov = ns_vnet_tx_iov(&plan, pkts, iov, (int)(sizeof(iov) / sizeof(iov[0])));
    assert_true(niov >= 2);
    assert_ptr_equal(iov[0].iov_base, &plan.h);
    assert_int_equal(iov[0].iov_len, NS_VNET_HLEN);
    uint8_t *got = malloc(MAXFRAME + 16);
    assert_non_null(got);
    uint32_t glen = flatten(iov, niov, got);

    if (want == 1) {
        assert_true(is_zero_hdr(&plan.h));
        assert_int_equal(plan.hlen, 0);
        uint8_t *b = pkt_bytes(pkts[0]);
        assert_int_equal(glen, NS_VNET_HLEN + ns_pkt_len(pkts[0]));
        assert_memory_equal(got + NS_VNET_HLEN, b, ns_pkt_len(pkts[0]));
        assert_int_equal(niov, 1 + (pkts[0]->len ? 1 : 0) + pkts[0]->nfrags);
        free(b);
        free(got);
        return;
    }

    uint32_t seg = ns_pkt_len(pkts[0]) - 42, total = 0;
    int pieces = 0;
    for (int i = 0; i < want; i++) {
        total += ns_pkt_len(pkts[i]) - 42;
        pieces += (pkts[i]->len > 42) + pkts[i]->nfrags;
    }
    assert_int_equal(niov, 2 + pieces);
    assert_int_equal(plan.h.flags, NS_VNET_F_NEEDS_CSUM);
    assert_int_equal(plan.h.gso_type, NS_VNET_GSO_UDP_L4);
    assert_int_equal(plan.h.hdr_len, 42);
    assert_int_equal(plan.h.gso_size, seg);
    assert_int_equal(plan.h.csum_start, 34);
    assert_int_equal(plan.h.csum_offset, 6);
    assert_int_equal(plan.hlen, NS_VNET_RUN_HLEN);

    const uint8_t *f0 = pkts[0]->data, *hd = plan.hdr, *ip = hd + 14, *udp = ip + 20;
    assert_memory_equal(hd, f0, 16);           /* Ethernet, version/IHL, TOS */
    assert_int_equal(g16(ip + 2), 28 + total); /* the whole run */
    assert_memory_equal(ip + 4, f0 + 18, 6);   /* ID of the first, flags, TTL, protocol */
    assert_memory_equal(ip + 12, f0 + 26, 12); /* addresses, ports */
    assert_int_equal(wire_ref_sum(ip, 20, 0), 0xffff);
    assert_int_equal(g16(udp + 4), 8 + total);
    /* Folded pseudo-header sum over the run's length, not complemented. */
    assert_int_equal(g16(udp + 6), ref_pseudo(ip, (uint16_t)(8 + total)));

    assert_int_equal(glen, NS_VNET_HLEN + 42 + total);
    assert_memory_equal(got + NS_VNET_HLEN, plan.hdr, 42);
    uint32_t at = NS_VNET_HLEN + 42;
    for (int i = 0; i < want; i++) {
        uint8_t *b = pkt_bytes(pkts[i]);
        uint32_t pl = ns_pkt_len(pkts[i]) - 42;
        assert_memory_equal(got + at, b + 42, pl);
        at += pl;
        free(b);
    }
    free(got);
}

static void test_tx_run(void **state)
{
    (void)state;
    struct ns_pkt *p[8];
    for (int i = 0; i < 5; i++)
        p[i] = mkrun(1200, (uint16_t)(100 + i), i & 1, (uint32_t)i);
    check_plan(p, 5, 5);
    /* The plan of a leading part. */
    check_plan(p, 2, 2);
    check_plan(p + 3, 2, 2);
    free_all(p, 5);

    /* All in the head / all in fragments; odd sizes. */
    for (int i = 0; i < 6; i++)
        p[i] = mkrun(1001, (uint16_t)(7 + i), 0, (uint32_t)i);
    check_plan(p, 6, 6);
    free_all(p, 6);
    for (int i = 0; i < 6; i++)
        p[i] = mkrun(1, (uint16_t)(7 + i), 1, (uint32_t)i);
    check_plan(p, 6, 6);
    free_all(p, 6);
}

static void test_tx_run_stops(void **state)
{
    (void)state;
    struct ns_pkt *p[140];
    const int N = 6;
    struct mk base = {defo, 1000, 0, 0};

    /* Each variation placed at index 2: the run is [0, 2). At index 0 or
     * 1 (count 1) is covered by the last loop. */
    for (int v = 0; v < 12; v++) {
        for (int at = 0; at < 3; at++) {
            for (int i = 0; i < N; i++) {
                struct mk m = base;
                m.o.id = (uint16_t)(40 + i);
                m.seed = (uint32_t)i;
                m.in_frags = i & 1;
                if (i == at) {
                    switch (v) {
                    case 0:
                        m.o.dport = DPORT + 1;
                        break;
                    case 1:
                        m.o.dmac_last = 0x03;
                        break;
                    case 2:
                        m.o.ttl = TTL - 1;
                        break;
                    case 3:
                        m.plen = 1001;
                        break;
                    case 4:
                        m.o.frag = 0x2000;
                        break;
                    case 5:
                        m.o.frag = 0x0010;
                        break;
                    case 6:
                        m.o.ihl = 24;
                        break;
                    case 7:
                        m.o.proto = 6;
                        break;
                    case 8:
                        m.o.frag = 0x0000;
                        break; /* DF differs */
                    case 9:
                        m.plen = 0;
                        break; /* UDP with no payload */
                    default:
                        m.o.id = (uint16_t)(40 + i);
                        break;
                    }
                }
                p[i] = mkpkt(&m);
                if (i == at && v == 10) {
                    /* Source address differs. */
                    p[i]->data[14 + 15] ^= 1;
                }
                if (i == at && v == 11) {
                    /* Source port differs. */
                    p[i]->data[35] ^= 1;
                }
            }
            int want = at < 2 ? 1 : at;
            if (v == 3 && at == 0)
                want = 2; /* the others are shorter: the second ends the run */
            check_plan(p, N, want);
            free_all(p, N);
        }
    }

    /* An ARP frame (and a frame too short for the headers) ends a run. */
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < 3; i++)
            p[i] = mkrun(1000, (uint16_t)i, 0, 0);
        uint8_t arp[60] = {0};
        memcpy(arp, mac_dst, 6);
        p16(arp + 12, 0x0806);
        p[3] = ns_pkt_from(arp, kind ? 60 : 41);
        p[4] = mkrun(1000, 4, 0, 0);
        check_plan(p, 5, 3);
        check_plan(p + 3, 2, 1);
        free_all(p, 5);
    }

    /* A shorter packet joins as the last; the equal one after it does not. */
    for (int i = 0; i < N; i++)
        p[i] = mkrun(i == 3 ? 400 : 1000, (uint16_t)i, i & 1, 0);
    check_plan(p, N, 4);
    check_plan(p + 3, 3, 1);
    check_plan(p + 4, 2, 2);
    free_all(p, N);
    /* Short in second place. */
    for (int i = 0; i < 3; i++)
        p[i] = mkrun(i == 1 ? 1 : 1000, (uint16_t)i, 0, 0);
    check_plan(p, 3, 2);
    free_all(p, 3);

    /* A packet whose IP length disagrees with its size (Ethernet padding,
     * a trimmed packet) cannot join. */
    for (int i = 0; i < 3; i++)
        p[i] = mkrun(1000, (uint16_t)i, 0, 0);
    ns_pkt_trim(p[2], ns_pkt_len(p[2]) - 1);
    check_plan(p, 3, 2);
    free_all(p, 3);
    for (int i = 0; i < 3; i++)
        p[i] = mkrun(1000, (uint16_t)i, 0, 0);
    p16(p[1]->data + 38, 1007); /* UDP length one short */
    check_plan(p, 3, 1);
    free_all(p, 3);

    /* Headers not linear in the head: the UDP header in a fragment. */
    {
        struct ns_pkt *a = mkrun(1000, 1, 0, 0), *b = mkrun(1000, 2, 0, 0);
        uint8_t *bb = pkt_bytes(b);
        struct ns_pkt *c = ns_pkt_alloc(NS_PKT_HEADROOM, 34);
        memcpy(ns_pkt_put(c, 34), bb, 34);
        struct ns_buf *buf = ns_buf_alloc(1008);
        memcpy(buf->data, bb + 34, 1008);
        assert_true(ns_pkt_add_frag(c, buf, 0, 1008));
        ns_buf_put(buf);
        p[0] = a;
        p[1] = c;
        p[2] = b;
        check_plan(p, 3, 1);
        check_plan(p + 1, 2, 1);
        free_all(p, 3);
        free(bb);
    }

    /* At most 128 packets. */
    for (int i = 0; i < 130; i++)
        p[i] = mkrun(100, (uint16_t)i, i % 3 == 0, (uint32_t)i);
    check_plan(p, 130, 128);
    check_plan(p, 128, 128);
    check_plan(p, 127, 127);
    check_plan(p + 128, 2, 2);
    free_all(p, 130);

    /* The run's IP datagram must fit 65535 bytes: 13 x 5039 = 65507 is the
     * most UDP payload it holds. */
    for (int i = 0; i < 14; i++)
        p[i] = mkrun(5039, (uint16_t)i, i & 1, (uint32_t)i);
    check_plan(p, 14, 13);
    free_all(p, 14);
    for (int i = 0; i < 14; i++)
        p[i] = mkrun(5040, (uint16_t)i, 0, (uint32_t)i);
    check_plan(p, 14, 12);
    free_all(p, 14);
    /* ...even when the last would be short: 12 x 5040 + 5028 = 65508 does
     * not fit, 12 x 5040 + 5027 = 65507 does. */
    for (int i = 0; i < 13; i++)
        p[i] = mkrun(i == 12 ? 5028 : 5040, (uint16_t)i, 0, 0);
    check_plan(p, 13, 12);
    free_all(p, 13);
    for (int i = 0; i < 13; i++)
        p[i] = mkrun(i == 12 ? 5027 : 5040, (uint16_t)i, 0, 0);
    check_plan(p, 13, 13);
    free_all(p, 13);

    /* One packet, or n == 1 with a run behind it. */
    for (int i = 0; i < 3; i++)
        p[i] = mkrun(1000, (uint16_t)i, i & 1, 0);
    check_plan(p, 1, 1);
    check_plan(p + 1, 1, 1);
    free_all(p, 3);
}

static void test_tx_iov_small(void **state)
{
    (void)state;
    struct ns_pkt *p[3];
    for (int i = 0; i < 3; i++)
        p[i] = mkrun(1000, (uint16_t)i, 1, 0);
    struct ns_vnet_tx_plan plan;
    struct iovec iov[64];
    ns_vnet_tx_plan(p, 3, &plan);
    assert_int_equal(plan.count, 3);
    assert_int_equal(ns_vnet_tx_iov(&plan, p, iov, 0), -1);
    assert_int_equal(ns_vnet_tx_iov(&plan, p, iov, 1), -1);
    assert_int_equal(ns_vnet_tx_iov(&plan, p, iov, 5), -1);
    assert_int_equal(ns_vnet_tx_iov(&plan, p, iov, 64), 2 + 3 * 2);
    ns_vnet_tx_plan(p, 1, &plan);
    assert_int_equal(ns_vnet_tx_iov(&plan, p, iov, 0), -1);
    assert_int_equal(ns_vnet_tx_iov(&plan, p, iov, 64), 1 + 1 + 2);
    free_all(p, 3);
}

/* Planned on transmit, split on receive: the same datagrams, but for the
 * UDP checksum (0 after the split). */
/* Packets of many pieces: a run stops where its iovec would pass what
 * writev takes (IOV_MAX), and the rest goes in the next frame. */
static void test_tx_run_iov_cap(void **state)
{
    (void)state;
    enum { N = 128, FR = NS_PKT_MAX_FRAGS, PL = 8 * FR };
    struct ns_pkt *pkts[N];
    struct ns_buf *b = ns_buf_alloc(PL);
    assert_non_null(b);
    memset(b->data, 0x77, PL);
    for (int i = 0; i < N; i++) {
        struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, 0);
        assert_non_null(p);
        for (int f = 0; f < FR; f++)
            assert_true(ns_pkt_add_frag(p, b, (uint32_t)f * 8, 8));
        uint8_t hdr[64];
        write_hdrs(hdr, &defo, PL);
        memcpy(ns_pkt_push(p, 42), hdr, 42);
        pkts[i] = p;
    }
    ns_buf_put(b);
    /* Each packet: its (header-only) head, which the iovec skips, plus 8
     * frags; so 2 + 9 for the first and 8 for every other at most. */
    struct ns_vnet_tx_plan plan;
    ns_vnet_tx_plan(pkts, N, &plan);
    int want = 1 + (NS_VNET_MAX_IOV - 2 - 1 - FR) / (1 + FR);
    assert_int_equal(plan.count, want);
    static struct iovec iov[NS_VNET_MAX_IOV + NS_PKT_MAX_FRAGS + 1];
    int niov = ns_vnet_tx_iov(&plan, pkts, iov, (int)(sizeof(iov) / sizeof(iov[0])));
    assert_true(niov > 0 && niov <= NS_VNET_MAX_IOV);
    size_t total = 0;
    for (int i = 0; i < niov; i++)
        total += iov[i].iov_len;
    assert_int_equal(total, NS_VNET_HLEN + 42 + (size_t)want * PL);
    free_all(pkts, N);
}

/* A lone packet whose UDP checksum the stack left partial: the frame asks
 * the kernel to finish it, and finishing it as the kernel would (here, the
 * receive side's csum_complete) gives a checksum that verifies. */
static void test_tx_single_partial(void **state)
{
    (void)state;
    struct ns_pkt *p = mkrun(700, 0x4242, 1, 9);
    uint8_t *ip = p->data + 14, *udp = ip + 20;
    p16(udp + 6, ref_pseudo(ip, 708));
    p->flags |= NS_PKT_F_CSUM_PARTIAL;
    struct ns_vnet_tx_plan plan;
    ns_vnet_tx_plan(&p, 1, &plan);
    assert_int_equal(plan.count, 1);
    assert_int_equal(plan.h.flags, NS_VNET_F_NEEDS_CSUM);
    assert_int_equal(plan.h.gso_type, NS_VNET_GSO_NONE);
    assert_int_equal(plan.h.csum_start, 34);
    assert_int_equal(plan.h.csum_offset, 6);
    struct iovec iov[NS_PKT_MAX_FRAGS + 2];
    int niov = ns_vnet_tx_iov(&plan, &p, iov, NS_PKT_MAX_FRAGS + 2);
    uint8_t *f = malloc(2048);
    assert_non_null(f);
    uint32_t flen = flatten(iov, niov, f);
    assert_int_equal(flen, NS_VNET_HLEN + 14 + 20 + 708);
    struct ns_vnet_hdr h;
    memcpy(&h, f, NS_VNET_HLEN);
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[1];
    assert_int_equal(ns_vnet_rx(&h, f + NS_VNET_HLEN, flen - NS_VNET_HLEN, out, 1, &st), 1);
    assert_int_equal(st.csum_done, 1);
    assert_true(udp_verifies(out[0]->data + 14, out[0]->data + 34, 708));
    /* Without the mark the same packet is a plain frame. */
    p->flags &= (uint16_t)~NS_PKT_F_CSUM_PARTIAL;
    ns_vnet_tx_plan(&p, 1, &plan);
    assert_true(is_zero_hdr(&plan.h));
    ns_pkt_free(out[0]);
    ns_pkt_free(p);

    /* A runt padded to 60 bytes by the link layer (a 16-byte SCTP packet:
     * COOKIE ACK) is no run candidate, yet its checksum is still asked for:
     * sent with the partial sum as if complete, it failed at the peer. */
    p = ns_pkt_alloc(NS_PKT_HEADROOM, 64);
    assert_non_null(p);
    memset(ns_pkt_put(p, 16), 0x5c, 16);
    uint8_t hdr[64];
    write_hdrs(hdr, &defo, 16);
    memcpy(ns_pkt_push(p, 42), hdr, 42);
    ip = p->data + 14;
    udp = ip + 20;
    p16(udp + 6, ref_pseudo(ip, 24));
    p->flags |= NS_PKT_F_CSUM_PARTIAL;
    memset(ns_pkt_put(p, 2), 0, 2);
    assert_int_equal(ns_pkt_len(p), 60);
    ns_vnet_tx_plan(&p, 1, &plan);
    assert_int_equal(plan.count, 1);
    assert_int_equal(plan.h.flags, NS_VNET_F_NEEDS_CSUM);
    assert_int_equal(plan.h.csum_start, 34);
    niov = ns_vnet_tx_iov(&plan, &p, iov, NS_PKT_MAX_FRAGS + 2);
    flen = flatten(iov, niov, f);
    memcpy(&h, f, NS_VNET_HLEN);
    assert_int_equal(ns_vnet_rx(&h, f + NS_VNET_HLEN, flen - NS_VNET_HLEN, out, 1, &st), 1);
    assert_true(udp_verifies(out[0]->data + 14, out[0]->data + 34, 24));
    ns_pkt_free(out[0]);
    ns_pkt_free(p);
    free(f);
}

static void test_round_trip(void **state)
{
    (void)state;
    enum { N = 9 };
    struct ns_pkt *p[N];
    for (int i = 0; i < N; i++)
        p[i] = mkrun(i == N - 1 ? 333 : 900, (uint16_t)(0xfffc + i), i % 3 == 1, (uint32_t)i);
    struct ns_vnet_tx_plan plan;
    ns_vnet_tx_plan(p, N, &plan);
    assert_int_equal(plan.count, N);
    static struct iovec iov[2 + NS_VNET_MAX_SEGS * (NS_PKT_MAX_FRAGS + 1)];
    int niov = ns_vnet_tx_iov(&plan, p, iov, (int)(sizeof(iov) / sizeof(iov[0])));
    uint8_t *wire = malloc(MAXFRAME + 16);
    assert_non_null(wire);
    uint32_t wlen = flatten(iov, niov, wire);

    /* The header read back from the bytes, as a TAP reader would. */
    struct ns_vnet_hdr h;
    memcpy(&h, wire, NS_VNET_HLEN);
    struct ns_vnet_rx_stats st = {0};
    struct ns_pkt *out[NS_VNET_MAX_SEGS];
    int n = ns_vnet_rx(&h, wire + NS_VNET_HLEN, wlen - NS_VNET_HLEN, out, NS_VNET_MAX_SEGS, &st);
    assert_int_equal(n, N);
    assert_int_equal(st.gso_segs, N);
    for (int i = 0; i < N; i++) {
        uint8_t *b = pkt_bytes(p[i]);
        uint32_t l = ns_pkt_len(p[i]);
        assert_int_equal(ns_pkt_len(out[i]), l);
        const uint8_t *d = out[i]->data;
        assert_memory_equal(d, b, 40);
        assert_int_equal(g16(d + 40), 0);
        assert_memory_equal(d + 42, b + 42, l - 42);
        free(b);
    }
    free_all(out, n);
    free_all(p, N);
    free(wire);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hdr_layout),
        cmocka_unit_test(test_rx_plain),
        cmocka_unit_test(test_rx_plain_needs_csum),
        cmocka_unit_test(test_rx_plain_csum_out_of_range),
        cmocka_unit_test(test_rx_uso),
        cmocka_unit_test(test_rx_uso_ip_options),
        cmocka_unit_test(test_rx_uso_bad),
        cmocka_unit_test(test_rx_uso_segment_too_long),
        cmocka_unit_test(test_rx_uso_ip_length),
        cmocka_unit_test(test_rx_nomem),
        cmocka_unit_test(test_tx_run),
        cmocka_unit_test(test_tx_run_stops),
        cmocka_unit_test(test_tx_iov_small),
        cmocka_unit_test(test_tx_run_iov_cap),
        cmocka_unit_test(test_tx_single_partial),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
