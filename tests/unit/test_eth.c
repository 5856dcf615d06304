/* Ethernet II framing (link/eth.h): header parse/write, short frames,
 * 802.3 length fields, MAC address text form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "link/eth.h"

static void test_parse(void **st)
{
    (void)st;
    const uint8_t f[16] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00,
                           0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0xaa, 0xbb};
    struct ns_eth_hdr h;
    assert_int_equal(ns_eth_parse(f, sizeof(f), &h), NS_ETH_OK);
    const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};
    assert_memory_equal(h.dst.b, dst, 6);
    assert_memory_equal(h.src.b, src, 6);
    assert_int_equal(h.type, NS_ETHERTYPE_ARP);
    /* Exactly a header is fine. */
    assert_int_equal(ns_eth_parse(f, NS_ETH_HLEN, &h), NS_ETH_OK);
}

static void test_short(void **st)
{
    (void)st;
    uint8_t f[14] = {0};
    f[12] = 0x08;
    struct ns_eth_hdr h;
    for (uint32_t len = 0; len < NS_ETH_HLEN; len++)
        assert_int_equal(ns_eth_parse(f, len, &h), NS_ETH_SHORT);
}

static void test_8023_length(void **st)
{
    (void)st;
    uint8_t f[60] = {0};
    struct ns_eth_hdr h;
    /* 802.3 with LLC: the type field is a length (<= 1500). */
    f[12] = 0x00;
    f[13] = 0x2e;
    assert_int_equal(ns_eth_parse(f, sizeof(f), &h), NS_ETH_NOT_II);
    f[12] = 0x05;
    f[13] = 0xdc; /* 1500 */
    assert_int_equal(ns_eth_parse(f, sizeof(f), &h), NS_ETH_NOT_II);
    f[13] = 0xff; /* 0x05ff: undefined gap, not an EtherType either */
    assert_int_equal(ns_eth_parse(f, sizeof(f), &h), NS_ETH_NOT_II);
    f[12] = 0x06;
    f[13] = 0x00; /* 0x0600: the first EtherType */
    assert_int_equal(ns_eth_parse(f, sizeof(f), &h), NS_ETH_OK);
    assert_int_equal(h.type, 0x0600);
    f[12] = 0x86;
    f[13] = 0xdd;
    assert_int_equal(ns_eth_parse(f, sizeof(f), &h), NS_ETH_OK);
    assert_int_equal(h.type, 0x86dd);
}

static void test_write(void **st)
{
    (void)st;
    uint8_t out[16];
    memset(out, 0xcc, sizeof(out));
    struct ns_mac dst = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
    struct ns_mac src = {{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}};
    ns_eth_write(out, &dst, &src, NS_ETHERTYPE_IPV4);
    const uint8_t want[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x11,
                              0x22, 0x33, 0x44, 0x55, 0x08, 0x00, 0xcc, 0xcc};
    assert_memory_equal(out, want, sizeof(want));
    /* Round trip. */
    struct ns_eth_hdr h;
    assert_int_equal(ns_eth_parse(out, 14, &h), NS_ETH_OK);
    assert_true(ns_mac_eq(&h.dst, &dst));
    assert_true(ns_mac_eq(&h.src, &src));
    assert_int_equal(h.type, NS_ETHERTYPE_IPV4);
}

static void test_mac_classes(void **st)
{
    (void)st;
    assert_true(ns_mac_is_bcast(ns_mac_bcast.b));
    assert_true(ns_mac_is_mcast(ns_mac_bcast.b));
    const uint8_t mc[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    assert_true(ns_mac_is_mcast(mc));
    assert_false(ns_mac_is_bcast(mc));
    const uint8_t uc[6] = {0x02, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_false(ns_mac_is_mcast(uc));
    assert_false(ns_mac_is_bcast(uc));
    const uint8_t almost[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
    assert_false(ns_mac_is_bcast(almost));
    assert_false(ns_mac_is_mcast(ns_mac_zero.b));
}

static void test_mac_parse_good(void **st)
{
    (void)st;
    struct ns_mac m;
    assert_true(ns_mac_parse("02:00:00:00:00:01", &m));
    const uint8_t a[6] = {0x02, 0, 0, 0, 0, 0x01};
    assert_memory_equal(m.b, a, 6);
    assert_true(ns_mac_parse("AA:bb:Cc:dD:EE:ff", &m));
    const uint8_t b[6] = {0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    assert_memory_equal(m.b, b, 6);
    /* One-digit groups, as ip(8) accepts. */
    assert_true(ns_mac_parse("2:0:0:a:0:1", &m));
    const uint8_t c[6] = {0x02, 0, 0, 0x0a, 0, 0x01};
    assert_memory_equal(m.b, c, 6);
}

static void test_mac_parse_bad(void **st)
{
    (void)st;
    const char *bad[] = {
        "",
        "02:00:00:00:00",
        "02:00:00:00:00:",
        "02:00:00:00:00:01:",
        "02:00:00:00:00:01:02",
        "02:00:00:00:00:01x",
        "02:00:00:00:00:01 ",
        " 02:00:00:00:00:01",
        "02: 00:00:00:00:01",
        "02-00-00-00-00-01",
        "0200.0000.0001",
        "g2:00:00:00:00:01",
        "002:00:00:00:00:01",
        "02::00:00:00:01",
        "-1:00:00:00:00:01",
        "+1:00:00:00:00:01",
        "0x:00:00:00:00:01",
        "02:00:00:00:00:100",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ns_mac m = {{9, 9, 9, 9, 9, 9}};
        if (ns_mac_parse(bad[i], &m))
            fail_msg("accepted \"%s\"", bad[i]);
        /* A failed parse leaves the output alone. */
        const uint8_t nine[6] = {9, 9, 9, 9, 9, 9};
        assert_memory_equal(m.b, nine, 6);
    }
}

static void test_mac_format(void **st)
{
    (void)st;
    char out[18];
    const uint8_t m[6] = {0x02, 0x0a, 0xbc, 0x00, 0xff, 0x01};
    memset(out, 'x', sizeof(out));
    ns_mac_format(m, out);
    assert_string_equal(out, "02:0a:bc:00:ff:01");
    struct ns_mac back;
    assert_true(ns_mac_parse(out, &back));
    assert_memory_equal(back.b, m, 6);
    ns_mac_format(ns_mac_bcast.b, out);
    assert_string_equal(out, "ff:ff:ff:ff:ff:ff");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),         cmocka_unit_test(test_short),
        cmocka_unit_test(test_8023_length),   cmocka_unit_test(test_write),
        cmocka_unit_test(test_mac_classes),   cmocka_unit_test(test_mac_parse_good),
        cmocka_unit_test(test_mac_parse_bad), cmocka_unit_test(test_mac_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
