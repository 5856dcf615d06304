/* SCTP State Cookie: round trip, the explicit byte layout and its MAC,
 * tampering, expiry with the staleness measure, secret rotation on the
 * injected clock, and that the bytes depend on nothing but the inputs and
 * the secret. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/rng.h"
#include "sctp/cookie.h"

/* Secrets from a seeded generator, so tests know them. */
struct trand {
    struct ns_rng rng;
    int fail_after; /* draws that succeed before failing; -1 never fails */
    int draws;
};

static bool trand_fn(void *ctx, uint8_t *out, size_t len)
{
    struct trand *t = ctx;
    if (t->fail_after >= 0 && t->draws >= t->fail_after)
        return false;
    t->draws++;
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)ns_rng_u64(&t->rng);
    return true;
}

static void trand_init(struct trand *t, uint64_t seed)
{
    ns_rng_seed(&t->rng, seed);
    t->fail_after = -1;
    t->draws = 0;
}

static struct ns_sctp_cookie_tcb sample_tcb(void)
{
    struct ns_sctp_cookie_tcb t;
    memset(&t, 0, sizeof(t));
    t.flags = NS_SCTP_COOKIE_F_PEER_FORWARD_TSN | NS_SCTP_COOKIE_F_PEER_ECN;
    t.lifetime_ms = 60000;
    t.peer_tag = 0x11223344;
    t.peer_a_rwnd = 106496;
    t.peer_initial_tsn = 0x55667788;
    t.peer_os = 10;
    t.peer_mis = 65535;
    t.local_tag = 0xaabbccdd;
    t.local_initial_tsn = 0x01020304;
    t.local_os = 5;
    t.local_mis = 7;
    t.local_a_rwnd = 212992;
    t.local_tie_tag = 0xa1a2a3a4;
    t.peer_tie_tag = 0xb1b2b3b4;
    t.local_port = 5001;
    t.peer_port = 5000;
    t.src = (struct ns_sctp_addr){NS_SCTP_AF_INET4, 0, 0xc6120001};
    t.n_addrs = 2;
    t.addrs[0] = (struct ns_sctp_addr){NS_SCTP_AF_INET4, 0, 0xc6120001};
    t.addrs[1] = (struct ns_sctp_addr){NS_SCTP_AF_INET4, 9899, 0xc6120101};
    return t;
}

static void assert_tcb_equal(const struct ns_sctp_cookie_tcb *a, const struct ns_sctp_cookie_tcb *b)
{
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->created_us, b->created_us);
    assert_int_equal(a->lifetime_ms, b->lifetime_ms);
    assert_int_equal(a->peer_tag, b->peer_tag);
    assert_int_equal(a->peer_a_rwnd, b->peer_a_rwnd);
    assert_int_equal(a->peer_initial_tsn, b->peer_initial_tsn);
    assert_int_equal(a->peer_os, b->peer_os);
    assert_int_equal(a->peer_mis, b->peer_mis);
    assert_int_equal(a->local_tag, b->local_tag);
    assert_int_equal(a->local_initial_tsn, b->local_initial_tsn);
    assert_int_equal(a->local_os, b->local_os);
    assert_int_equal(a->local_mis, b->local_mis);
    assert_int_equal(a->local_a_rwnd, b->local_a_rwnd);
    assert_int_equal(a->local_tie_tag, b->local_tie_tag);
    assert_int_equal(a->peer_tie_tag, b->peer_tie_tag);
    assert_int_equal(a->local_port, b->local_port);
    assert_int_equal(a->peer_port, b->peer_port);
    assert_true(ns_sctp_addr_eq(&a->src, &b->src));
    assert_int_equal(a->n_addrs, b->n_addrs);
    for (int i = 0; i < a->n_addrs; i++)
        assert_true(ns_sctp_addr_eq(&a->addrs[i], &b->addrs[i]));
}

#define T0 1000000000ull /* an arbitrary start of the injected clock */

static void test_roundtrip(void **state)
{
    (void)state;
    struct trand tr;
    trand_init(&tr, 1);
    struct ns_sctp_cookie_ctx cx;
    assert_true(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, T0));
    struct ns_sctp_cookie_tcb in = sample_tcb(), out;
    uint8_t ck[NS_SCTP_COOKIE_MAX_LEN];
    size_t n = ns_sctp_cookie_build(&cx, &in, T0 + 5, ck, sizeof(ck));
    assert_int_equal(n, NS_SCTP_COOKIE_LEN(2));
    assert_int_equal(n, 68 + 16 + 32);
    uint32_t stale = 99;
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 10, &out, &stale), NS_SCTP_COOKIE_OK);
    assert_int_equal(stale, 0);
    in.created_us = T0 + 5;
    assert_tcb_equal(&in, &out);

    /* No addresses, and the maximum. */
    in.n_addrs = 0;
    n = ns_sctp_cookie_build(&cx, &in, T0 + 5, ck, sizeof(ck));
    assert_int_equal(n, 100);
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 10, &out, NULL), NS_SCTP_COOKIE_OK);
    assert_tcb_equal(&in, &out);
    in.n_addrs = NS_SCTP_COOKIE_MAX_ADDRS;
    for (int i = 0; i < NS_SCTP_COOKIE_MAX_ADDRS; i++)
        in.addrs[i] =
            (struct ns_sctp_addr){NS_SCTP_AF_INET4, (uint16_t)i, 0xc6120000u + (uint32_t)i};
    n = ns_sctp_cookie_build(&cx, &in, T0 + 5, ck, sizeof(ck));
    assert_int_equal(n, NS_SCTP_COOKIE_MAX_LEN);
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 10, &out, NULL), NS_SCTP_COOKIE_OK);
    assert_tcb_equal(&in, &out);

    /* Too many addresses, or no room. */
    in.n_addrs = NS_SCTP_COOKIE_MAX_ADDRS + 1;
    assert_int_equal(ns_sctp_cookie_build(&cx, &in, T0, ck, sizeof(ck)), 0);
    in.n_addrs = 2;
    assert_int_equal(ns_sctp_cookie_build(&cx, &in, T0, ck, NS_SCTP_COOKIE_LEN(2) - 1), 0);
    ns_sctp_cookie_ctx_free(&cx);
}

/* The bytes are exactly the documented layout followed by HMAC-SHA256 of
 * them under the secret; nothing else goes in. */
static void test_layout_and_mac(void **state)
{
    (void)state;
    struct trand tr;
    trand_init(&tr, 77);
    struct ns_sctp_cookie_ctx cx;
    /* Started just before the creation time below, so no rotation. */
    assert_true(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, 0x0102030405060700ull));
    uint8_t secret[32];
    struct trand tr2;
    trand_init(&tr2, 77);
    trand_fn(&tr2, secret, 32);

    struct ns_sctp_cookie_tcb in = sample_tcb();
    uint8_t ck[NS_SCTP_COOKIE_MAX_LEN];
    size_t n = ns_sctp_cookie_build(&cx, &in, 0x0102030405060708ull, ck, sizeof(ck));
    assert_int_equal(n, 116);
    static const uint8_t body[84] = {
        1,    2,    0x00, 0x03,                         /* version, n, flags */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* created */
        0x00, 0x00, 0xea, 0x60,                         /* lifetime 60000 ms */
        0x11, 0x22, 0x33, 0x44, 0x00, 0x01, 0xa0, 0x00, /* peer tag, a_rwnd */
        0x55, 0x66, 0x77, 0x88, 0x00, 0x0a, 0xff, 0xff, /* peer TSN, OS, MIS */
        0xaa, 0xbb, 0xcc, 0xdd, 0x01, 0x02, 0x03, 0x04, /* local tag, TSN */
        0x00, 0x05, 0x00, 0x07, 0x00, 0x03, 0x40, 0x00, /* local OS, MIS, a_rwnd */
        0xa1, 0xa2, 0xa3, 0xa4, 0xb1, 0xb2, 0xb3, 0xb4, /* tie-tags */
        0x13, 0x89, 0x13, 0x88,                         /* ports */
        4,    0,    0x00, 0x00, 0xc6, 0x12, 0x00, 0x01, /* source */
        4,    0,    0x00, 0x00, 0xc6, 0x12, 0x00, 0x01, /* addresses */
        4,    0,    0x26, 0xab, 0xc6, 0x12, 0x01, 0x01,
    };
    assert_memory_equal(ck, body, sizeof(body));
    uint8_t mac[32];
    unsigned int mlen = 0;
    assert_non_null(HMAC(EVP_sha256(), secret, 32, body, sizeof(body), mac, &mlen));
    assert_int_equal(mlen, 32);
    assert_memory_equal(ck + 84, mac, 32);
    struct ns_sctp_cookie_tcb out;
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, 0x0102030405060708ull, &out, NULL),
                     NS_SCTP_COOKIE_OK);

    /* Authentic MACs over a wrong version, or over an address count that
     * disagrees with the length, are still refused. */
    uint8_t bad[NS_SCTP_COOKIE_MAX_LEN];
    memcpy(bad, body, sizeof(body));
    bad[0] = 2;
    assert_non_null(HMAC(EVP_sha256(), secret, 32, bad, sizeof(body), bad + 84, &mlen));
    assert_int_equal(ns_sctp_cookie_verify(&cx, bad, n, 0x0102030405060708ull, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    memcpy(bad, body, sizeof(body));
    bad[1] = 3;
    assert_non_null(HMAC(EVP_sha256(), secret, 32, bad, sizeof(body), bad + 84, &mlen));
    assert_int_equal(ns_sctp_cookie_verify(&cx, bad, n, 0x0102030405060708ull, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    bad[1] = NS_SCTP_COOKIE_MAX_ADDRS + 1;
    assert_int_equal(ns_sctp_cookie_verify(&cx, bad,
                                           NS_SCTP_COOKIE_LEN(NS_SCTP_COOKIE_MAX_ADDRS + 1),
                                           0x0102030405060708ull, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    /* Re-MACed with the right fields: accepted, proving the MAC is exactly
     * HMAC-SHA256 over the body. */
    memcpy(bad, body, sizeof(body));
    assert_non_null(HMAC(EVP_sha256(), secret, 32, bad, sizeof(body), bad + 84, &mlen));
    assert_int_equal(ns_sctp_cookie_verify(&cx, bad, n, 0x0102030405060708ull, &out, NULL),
                     NS_SCTP_COOKIE_OK);
    ns_sctp_cookie_ctx_free(&cx);
    /* Freed secrets are wiped. */
    static const uint8_t zero[32];
    assert_memory_equal(cx.cur, zero, 32);
}

static void test_tamper(void **state)
{
    (void)state;
    struct trand tr;
    trand_init(&tr, 2);
    struct ns_sctp_cookie_ctx cx;
    assert_true(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, T0));
    struct ns_sctp_cookie_tcb in = sample_tcb(), out;
    uint8_t ck[NS_SCTP_COOKIE_MAX_LEN + 1];
    size_t n = ns_sctp_cookie_build(&cx, &in, T0, ck, sizeof(ck));
    assert_int_equal(n, 116);
    for (size_t bit = 0; bit < n * 8; bit++) {
        ck[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 1, &out, NULL),
                         NS_SCTP_COOKIE_INVALID);
        ck[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 1, &out, NULL), NS_SCTP_COOKIE_OK);
    /* Wrong sizes, including one extra byte and truncations. */
    ck[n] = 0;
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n + 1, T0, &out, NULL), NS_SCTP_COOKIE_INVALID);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(ns_sctp_cookie_verify(&cx, ck, k, T0, &out, NULL), NS_SCTP_COOKIE_INVALID);
    /* A cookie made under another secret. */
    struct trand tr3;
    trand_init(&tr3, 3);
    struct ns_sctp_cookie_ctx other;
    assert_true(ns_sctp_cookie_ctx_init(&other, 60000, trand_fn, &tr3, T0));
    uint8_t ck2[NS_SCTP_COOKIE_MAX_LEN];
    n = ns_sctp_cookie_build(&other, &in, T0, ck2, sizeof(ck2));
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck2, n, T0, &out, NULL), NS_SCTP_COOKIE_INVALID);
    assert_int_equal(ns_sctp_cookie_verify(&other, ck2, n, T0, &out, NULL), NS_SCTP_COOKIE_OK);
    /* Verified before it was made: impossible on a monotonic clock. */
    assert_int_equal(ns_sctp_cookie_verify(&other, ck2, n, T0 - 1, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    ns_sctp_cookie_ctx_free(&other);
    ns_sctp_cookie_ctx_free(&cx);
}

static void test_expiry(void **state)
{
    (void)state;
    struct trand tr;
    trand_init(&tr, 4);
    struct ns_sctp_cookie_ctx cx;
    /* A long secret life so only the cookie's own lifetime matters. */
    assert_true(ns_sctp_cookie_ctx_init(&cx, 10000000, trand_fn, &tr, T0));
    struct ns_sctp_cookie_tcb in = sample_tcb(), out;
    in.lifetime_ms = 60000;
    uint8_t ck[NS_SCTP_COOKIE_MAX_LEN];
    size_t n = ns_sctp_cookie_build(&cx, &in, T0, ck, sizeof(ck));
    uint32_t st = 7;
    /* Elapsed time equal to the lifetime is not "longer than" it. */
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 60000000, &out, &st),
                     NS_SCTP_COOKIE_OK);
    assert_int_equal(st, 0);
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 60000001, &out, &st),
                     NS_SCTP_COOKIE_STALE);
    assert_int_equal(st, 1);
    assert_int_equal(out.local_tag, 0xaabbccdd); /* decoded all the same */
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 61500000, &out, &st),
                     NS_SCTP_COOKIE_STALE);
    assert_int_equal(st, 1500000);
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 60000000 + 5000000000ull, &out, &st),
                     NS_SCTP_COOKIE_STALE);
    assert_int_equal(st, UINT32_MAX);
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 61500000, &out, NULL),
                     NS_SCTP_COOKIE_STALE);

    /* A lifetime extended by a preservative. */
    in.lifetime_ms = 60000 + 5000;
    n = ns_sctp_cookie_build(&cx, &in, T0, ck, sizeof(ck));
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 65000000, &out, &st),
                     NS_SCTP_COOKIE_OK);
    assert_int_equal(ns_sctp_cookie_verify(&cx, ck, n, T0 + 65000002, &out, &st),
                     NS_SCTP_COOKIE_STALE);
    assert_int_equal(st, 2);
    ns_sctp_cookie_ctx_free(&cx);
}

static void test_rotation(void **state)
{
    (void)state;
    struct trand tr;
    trand_init(&tr, 5);
    struct ns_sctp_cookie_ctx cx;
    const uint64_t P = 60000000; /* 60 s secret life */
    assert_true(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, T0));
    assert_int_equal(ns_sctp_cookie_next_rotation(&cx), T0 + P);
    struct ns_sctp_cookie_tcb in = sample_tcb(), out;
    in.lifetime_ms = 1000000; /* long, so only rotation matters here */
    uint8_t a[NS_SCTP_COOKIE_MAX_LEN], b[NS_SCTP_COOKIE_MAX_LEN];
    size_t na = ns_sctp_cookie_build(&cx, &in, T0 + P - 1, a, sizeof(a));
    assert_int_equal(tr.draws, 1);
    /* One rotation later: made under the previous secret, still good. */
    assert_int_equal(ns_sctp_cookie_verify(&cx, a, na, T0 + P, &out, NULL), NS_SCTP_COOKIE_OK);
    assert_int_equal(tr.draws, 2);
    assert_int_equal(ns_sctp_cookie_next_rotation(&cx), T0 + 2 * P);
    size_t nb = ns_sctp_cookie_build(&cx, &in, T0 + P, b, sizeof(b));
    assert_int_equal(ns_sctp_cookie_verify(&cx, a, na, T0 + 2 * P - 1, &out, NULL),
                     NS_SCTP_COOKIE_OK);
    /* Two rotations after it was made: gone. The one made after the first
     * rotation survives the second. */
    assert_int_equal(ns_sctp_cookie_verify(&cx, a, na, T0 + 2 * P, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    assert_int_equal(ns_sctp_cookie_verify(&cx, b, nb, T0 + 2 * P, &out, NULL), NS_SCTP_COOKIE_OK);
    assert_int_equal(ns_sctp_cookie_verify(&cx, b, nb, T0 + 3 * P, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    ns_sctp_cookie_ctx_free(&cx);

    /* Two periods pass with no call in between: both secrets are new. */
    trand_init(&tr, 6);
    assert_true(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, T0));
    na = ns_sctp_cookie_build(&cx, &in, T0 + 10, a, sizeof(a));
    assert_true(ns_sctp_cookie_tick(&cx, T0 + 2 * P + 5));
    assert_false(cx.have_prev);
    assert_int_equal(ns_sctp_cookie_next_rotation(&cx), T0 + 3 * P);
    assert_int_equal(ns_sctp_cookie_verify(&cx, a, na, T0 + 2 * P + 5, &out, NULL),
                     NS_SCTP_COOKIE_INVALID);
    ns_sctp_cookie_ctx_free(&cx);

    /* The generator fails at a rotation: build refuses, the old secrets
     * keep verifying what they made. */
    trand_init(&tr, 7);
    tr.fail_after = 1;
    assert_true(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, T0));
    na = ns_sctp_cookie_build(&cx, &in, T0 + 1, a, sizeof(a));
    assert_int_equal(na, 116);
    assert_false(ns_sctp_cookie_tick(&cx, T0 + P));
    assert_int_equal(ns_sctp_cookie_build(&cx, &in, T0 + P, b, sizeof(b)), 0);
    assert_int_equal(ns_sctp_cookie_verify(&cx, a, na, T0 + P, &out, NULL), NS_SCTP_COOKIE_OK);
    ns_sctp_cookie_ctx_free(&cx);
    trand_init(&tr, 8);
    tr.fail_after = 0;
    assert_false(ns_sctp_cookie_ctx_init(&cx, 60000, trand_fn, &tr, T0));
}

/* Equal inputs and secrets give equal bytes, whatever the addresses of the
 * structures and whatever sits in their padding; and no pointer value of
 * this process shows up in the cookie. */
static void test_pure_function(void **state)
{
    (void)state;
    struct trand t1, t2;
    trand_init(&t1, 9);
    trand_init(&t2, 9);
    struct ns_sctp_cookie_ctx *c1 = test_malloc(sizeof(*c1));
    struct ns_sctp_cookie_ctx c2;
    assert_true(ns_sctp_cookie_ctx_init(c1, 60000, trand_fn, &t1, T0));
    assert_true(ns_sctp_cookie_ctx_init(&c2, 60000, trand_fn, &t2, T0));
    struct ns_sctp_cookie_tcb *in1 = test_malloc(sizeof(*in1));
    memset(in1, 0xa5, sizeof(*in1)); /* garbage in the padding */
    struct ns_sctp_cookie_tcb s = sample_tcb();
    in1->flags = s.flags;
    in1->created_us = 12345;
    in1->lifetime_ms = s.lifetime_ms;
    in1->peer_tag = s.peer_tag;
    in1->peer_a_rwnd = s.peer_a_rwnd;
    in1->peer_initial_tsn = s.peer_initial_tsn;
    in1->peer_os = s.peer_os;
    in1->peer_mis = s.peer_mis;
    in1->local_tag = s.local_tag;
    in1->local_initial_tsn = s.local_initial_tsn;
    in1->local_os = s.local_os;
    in1->local_mis = s.local_mis;
    in1->local_a_rwnd = s.local_a_rwnd;
    in1->local_tie_tag = s.local_tie_tag;
    in1->peer_tie_tag = s.peer_tie_tag;
    in1->local_port = s.local_port;
    in1->peer_port = s.peer_port;
    in1->src.family = s.src.family;
    in1->src.port = s.src.port;
    in1->src.addr = s.src.addr;
    in1->n_addrs = 1;
    in1->addrs[0].family = s.addrs[0].family;
    in1->addrs[0].port = s.addrs[0].port;
    in1->addrs[0].addr = s.addrs[0].addr;
    s.n_addrs = 1;
    uint8_t *k1 = test_malloc(NS_SCTP_COOKIE_MAX_LEN);
    uint8_t k2[NS_SCTP_COOKIE_MAX_LEN];
    size_t n1 = ns_sctp_cookie_build(c1, in1, T0 + 3, k1, NS_SCTP_COOKIE_MAX_LEN);
    size_t n2 = ns_sctp_cookie_build(&c2, &s, T0 + 3, k2, sizeof(k2));
    assert_int_equal(n1, n2);
    assert_memory_equal(k1, k2, n1);

    const uintptr_t ptrs[] = {(uintptr_t)c1, (uintptr_t)&c2, (uintptr_t)in1, (uintptr_t)&s,
                              (uintptr_t)k1, (uintptr_t)k2,  (uintptr_t)&t1, (uintptr_t)trand_fn};
    for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
        /* The low 4 bytes of a pointer, either byte order, anywhere. */
        uint8_t le[4], be[4];
        for (int j = 0; j < 4; j++) {
            le[j] = (uint8_t)(ptrs[i] >> (8 * j));
            be[3 - j] = le[j];
        }
        for (size_t off = 0; off + 4 <= n1; off++) {
            assert_false(memcmp(k1 + off, le, 4) == 0);
            assert_false(memcmp(k1 + off, be, 4) == 0);
        }
    }
    test_free(k1);
    test_free(in1);
    ns_sctp_cookie_ctx_free(c1);
    ns_sctp_cookie_ctx_free(&c2);
    test_free(c1);
}

/* The default generator is OpenSSL's: two contexts get different secrets. */
static void test_openssl_rand(void **state)
{
    (void)state;
    struct ns_sctp_cookie_ctx a, b;
    assert_true(ns_sctp_cookie_ctx_init(&a, 60000, NULL, NULL, 0));
    assert_true(ns_sctp_cookie_ctx_init(&b, 60000, NULL, NULL, 0));
    assert_memory_not_equal(a.cur, b.cur, 32);
    struct ns_sctp_cookie_tcb in = sample_tcb(), out;
    uint8_t ck[NS_SCTP_COOKIE_MAX_LEN];
    size_t n = ns_sctp_cookie_build(&a, &in, 1, ck, sizeof(ck));
    assert_int_equal(ns_sctp_cookie_verify(&a, ck, n, 2, &out, NULL), NS_SCTP_COOKIE_OK);
    assert_int_equal(ns_sctp_cookie_verify(&b, ck, n, 2, &out, NULL), NS_SCTP_COOKIE_INVALID);
    ns_sctp_cookie_ctx_free(&a);
    ns_sctp_cookie_ctx_free(&b);
}

/* ns_sctp_params_default: RFC 9260 section 16 and the types.h comments. */
static void test_params_default(void **state)
{
    (void)state;
    struct ns_sctp_params p;
    memset(&p, 0xff, sizeof(p));
    ns_sctp_params_default(&p);
    assert_int_equal(p.rto_initial_ms, 1000);
    assert_int_equal(p.rto_min_ms, 1000);
    assert_int_equal(p.rto_max_ms, 60000);
    assert_int_equal(p.max_burst, 4);
    assert_int_equal(p.valid_cookie_life_ms, 60000);
    assert_int_equal(p.association_max_retrans, 10);
    assert_int_equal(p.path_max_retrans, 5);
    assert_int_equal(p.max_init_retransmits, 8);
    assert_int_equal(p.hb_interval_ms, 30000);
    assert_int_equal(p.sack_timeout_ms, 200);
    assert_int_equal(p.sack_freq, 2);
    assert_int_equal(p.rcvbuf_bytes, 212992);
    assert_int_equal(p.sndbuf_bytes, 212992);
    assert_int_equal(p.max_message_bytes, 262144);
    assert_int_equal(p.reasm_max_bytes, 4u * 1024 * 1024);
    assert_int_equal(p.out_streams, 10);
    assert_int_equal(p.max_in_streams, 65535);
    assert_int_equal(p.cookie_secret_life_ms, 60000);
    assert_int_equal(p.nodelay, 0);
    assert_int_equal(p.pd_point_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),    cmocka_unit_test(test_layout_and_mac),
        cmocka_unit_test(test_tamper),       cmocka_unit_test(test_expiry),
        cmocka_unit_test(test_rotation),     cmocka_unit_test(test_pure_function),
        cmocka_unit_test(test_openssl_rand), cmocka_unit_test(test_params_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
