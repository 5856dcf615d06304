/* CRC32c and the SCTP checksum: RFC 3720 appendix B.4 vectors, both
 * implementations against a bitwise reference on random buffers, chaining,
 * and the checksum's place and byte order in a packet made by scapy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/pkt.h"
#include "core/rng.h"
#include "sctp/crc32c.h"

/* Straight from the definition: reflected polynomial 0x82F63B78, one bit at
 * a time. Shares nothing with the code under test. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
    }
    return ~c;
}

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void check_vectors(crc_fn f)
{
    uint8_t b[48];
    memset(b, 0, 32);
    assert_int_equal(f(0, b, 32), 0x8a9136aau);
    memset(b, 0xff, 32);
    assert_int_equal(f(0, b, 32), 0x62a8ab43u);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    assert_int_equal(f(0, b, 32), 0x46dd794eu);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(31 - i);
    assert_int_equal(f(0, b, 32), 0x113fdb5cu);
    /* The iSCSI read command PDU of RFC 3720 B.4. */
    static const uint8_t iscsi[48] = {
        0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    assert_int_equal(f(0, iscsi, sizeof(iscsi)), 0xd9963a56u);
    assert_int_equal(f(0, "123456789", 9), 0xe3069283u);
    assert_int_equal(f(0, b, 0), 0);
    assert_int_equal(f(0x12345678u, b, 0), 0x12345678u);
}

static void test_vectors_dispatch(void **state)
{
    (void)state;
    check_vectors(ns_crc32c);
}

static void test_vectors_sw(void **state)
{
    (void)state;
    check_vectors(ns_crc32c_sw);
}

static void test_vectors_hw(void **state)
{
    (void)state;
    if (!ns_crc32c_hw_available())
        skip();
    check_vectors(ns_crc32c_hw);
}

static void test_random_buffers(void **state)
{
    (void)state;
    struct ns_rng rng;
    ns_rng_seed(&rng, 0x5c7b);
    static uint8_t buf[4096 + 16];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)ns_rng_u64(&rng);
    bool hw = ns_crc32c_hw_available();
    for (int iter = 0; iter < 2000; iter++) {
        size_t align = ns_rng_below(&rng, 16);
        size_t len = ns_rng_below(&rng, iter < 200 ? 40 : 4097);
        const uint8_t *p = buf + align;
        uint32_t ref = crc_bitwise(p, len);
        assert_int_equal(ns_crc32c_sw(0, p, len), ref);
        if (hw)
            assert_int_equal(ns_crc32c_hw(0, p, len), ref);
        assert_int_equal(ns_crc32c(0, p, len), ref);
        /* Chaining at a random split point gives the same CRC. */
        size_t cut = len ? ns_rng_below(&rng, len + 1) : 0;
        assert_int_equal(ns_crc32c_sw(ns_crc32c_sw(0, p, cut), p + cut, len - cut), ref);
        if (hw)
            assert_int_equal(ns_crc32c_hw(ns_crc32c_hw(0, p, cut), p + cut, len - cut), ref);
        /* Mixed: one implementation's state continues in the other. */
        assert_int_equal(ns_crc32c_hw(ns_crc32c_sw(0, p, cut), p + cut, len - cut), ref);
    }
}

/* An INIT packet (SCTP common header onwards) made by scapy 2.5.0:
 * SCTP(sport=5000, dport=5001, tag=0)/SCTPChunkInit(init_tag=0x11223344,
 * a_rwnd=106496, n_out_streams=10, n_in_streams=65535, init_tsn=0x55667788,
 * params=[IPv4 198.18.0.1, IPv4 198.18.0.2, SupportedAddrTypes [5],
 * CookiePreservative 5000, ECN, SupportedExtensions [192, 64], FwdTSN]).
 * scapy put 96 8c 9b dc in the checksum field. */
static const uint8_t scapy_init[80] = {
    0x13, 0x88, 0x13, 0x89, 0x00, 0x00, 0x00, 0x00, 0x96, 0x8c, 0x9b, 0xdc, 0x01, 0x00, 0x00, 0x44,
    0x11, 0x22, 0x33, 0x44, 0x00, 0x01, 0xa0, 0x00, 0x00, 0x0a, 0xff, 0xff, 0x55, 0x66, 0x77, 0x88,
    0x00, 0x05, 0x00, 0x08, 0xc6, 0x12, 0x00, 0x01, 0x00, 0x05, 0x00, 0x08, 0xc6, 0x12, 0x00, 0x02,
    0x00, 0x0c, 0x00, 0x06, 0x00, 0x05, 0x00, 0x00, 0x00, 0x09, 0x00, 0x08, 0x00, 0x00, 0x13, 0x88,
    0x80, 0x00, 0x00, 0x04, 0x80, 0x08, 0x00, 0x06, 0xc0, 0x40, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x04,
};

static void test_sctp_checksum_scapy(void **state)
{
    (void)state;
    /* The CRC value, then its wire form: least significant byte first. */
    assert_int_equal(ns_sctp_checksum(scapy_init, sizeof(scapy_init)), 0xdc9b8c96u);
    assert_true(ns_sctp_checksum_verify_buf(scapy_init, sizeof(scapy_init)));

    uint8_t b[sizeof(scapy_init)];
    memcpy(b, scapy_init, sizeof(b));
    b[8] = b[9] = b[10] = b[11] = 0;
    struct ns_pkt *p = ns_pkt_from(b, sizeof(b));
    assert_non_null(p);
    assert_false(ns_sctp_checksum_verify(p));
    assert_true(ns_sctp_checksum_fill(p));
    assert_memory_equal(p->data, scapy_init, sizeof(scapy_init));
    assert_true(ns_sctp_checksum_verify(p));
    ns_pkt_free(p);

    /* Every single-bit flip is caught (CRC32c detects all 1-bit errors). */
    for (size_t i = 0; i < sizeof(b) * 8; i++) {
        memcpy(b, scapy_init, sizeof(b));
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
        assert_false(ns_sctp_checksum_verify_buf(b, sizeof(b)));
    }
    assert_false(ns_sctp_checksum_verify_buf(scapy_init, 11));
    assert_int_equal(ns_sctp_checksum(scapy_init, 11), 0);
}

/* The same packet scattered over head and frags, including a split inside
 * the common header. */
static void test_sctp_checksum_frags(void **state)
{
    (void)state;
    for (uint32_t head = 0; head <= 40; head++) {
        struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, head);
        assert_non_null(p);
        memcpy(ns_pkt_put(p, head), scapy_init, head);
        struct ns_buf *b = ns_buf_alloc(sizeof(scapy_init) + 8);
        assert_non_null(b);
        memcpy(b->data + 3, scapy_init, sizeof(scapy_init));
        uint32_t off = head;
        uint32_t pieces[3] = {5, 1, 0};
        for (int i = 0; i < 3 && off < sizeof(scapy_init); i++) {
            uint32_t n = pieces[i] ? pieces[i] : (uint32_t)sizeof(scapy_init) - off;
            if (n > sizeof(scapy_init) - off)
                n = (uint32_t)sizeof(scapy_init) - off;
            assert_true(ns_pkt_add_frag(p, b, 3 + off, n));
            off += n;
        }
        ns_buf_put(b);
        assert_int_equal(ns_pkt_len(p), sizeof(scapy_init));
        assert_int_equal(ns_sctp_checksum_pkt(p), 0xdc9b8c96u);
        assert_true(ns_sctp_checksum_verify(p));
        if (head >= 12) {
            memset(p->data + 8, 0xee, 4);
            assert_false(ns_sctp_checksum_verify(p));
            assert_true(ns_sctp_checksum_fill(p));
            assert_memory_equal(p->data + 8, scapy_init + 8, 4);
        } else {
            assert_false(ns_sctp_checksum_fill(p));
        }
        ns_pkt_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_dispatch),    cmocka_unit_test(test_vectors_sw),
        cmocka_unit_test(test_vectors_hw),          cmocka_unit_test(test_random_buffers),
        cmocka_unit_test(test_sctp_checksum_scapy), cmocka_unit_test(test_sctp_checksum_frags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
