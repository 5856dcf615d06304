/* SCTP State Cookie (RFC 9260 sections 5.1.3, 5.1.5 steps 1-3, and
 * section 3.3.10.3 for the staleness measure). Layout in cookie.h. */
#include "sctp/cookie.h"

#include "core/bytes.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

static void put_addr(uint8_t *p, const struct ns_sctp_addr *a)
{
    p[0] = a->family;
    p[1] = 0;
    ns_wr16(p + 2, a->port);
    ns_wr32(p + 4, a->addr);
}
static void get_addr(const uint8_t *p, struct ns_sctp_addr *a)
{
    a->family = p[0];
    a->port = ns_rd16(p + 2);
    a->addr = ns_rd32(p + 4);
}

static bool openssl_rand(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    return len <= INT32_MAX && RAND_bytes(out, (int)len) == 1;
}

static bool draw(struct ns_sctp_cookie_ctx *cx, uint8_t *out)
{
    return cx->rand(cx->rand_ctx, out, NS_SCTP_COOKIE_SECRET_LEN);
}

bool ns_sctp_cookie_ctx_init(struct ns_sctp_cookie_ctx *cx, uint32_t secret_life_ms,
                             ns_sctp_cookie_rand_fn rand, void *rand_ctx, uint64_t now)
{
    memset(cx, 0, sizeof(*cx));
    cx->rand = rand ? rand : openssl_rand;
    cx->rand_ctx = rand_ctx;
    cx->life_us = (uint64_t)(secret_life_ms ? secret_life_ms : 1) * 1000;
    cx->rotated_at_us = now;
    return draw(cx, cx->cur);
}

void ns_sctp_cookie_ctx_free(struct ns_sctp_cookie_ctx *cx)
{
    OPENSSL_cleanse(cx->cur, sizeof(cx->cur));
    OPENSSL_cleanse(cx->prev, sizeof(cx->prev));
    cx->have_prev = false;
}

uint64_t ns_sctp_cookie_next_rotation(const struct ns_sctp_cookie_ctx *cx)
{
    return cx->rotated_at_us + cx->life_us;
}

bool ns_sctp_cookie_tick(struct ns_sctp_cookie_ctx *cx, uint64_t now)
{
    if (now < cx->rotated_at_us || now - cx->rotated_at_us < cx->life_us)
        return true;
    uint64_t periods = (now - cx->rotated_at_us) / cx->life_us;
    uint8_t fresh[NS_SCTP_COOKIE_SECRET_LEN];
    if (!draw(cx, fresh))
        return false;
    if (periods == 1) {
        memcpy(cx->prev, cx->cur, sizeof(cx->prev));
        cx->have_prev = true;
    } else {
        /* Two or more periods without a tick: the current secret is older
         * than the previous one may be, so nothing made with it verifies. */
        OPENSSL_cleanse(cx->prev, sizeof(cx->prev));
        cx->have_prev = false;
    }
    memcpy(cx->cur, fresh, sizeof(cx->cur));
    OPENSSL_cleanse(fresh, sizeof(fresh));
    cx->rotated_at_us += periods * cx->life_us;
    return true;
}

static bool mac(const uint8_t *key, const uint8_t *body, size_t n, uint8_t *out)
{
    unsigned int len = 0;
    return HMAC(EVP_sha256(), key, NS_SCTP_COOKIE_SECRET_LEN, body, n, out, &len) &&
           len == NS_SCTP_COOKIE_MAC_LEN;
}

size_t ns_sctp_cookie_build(struct ns_sctp_cookie_ctx *cx, const struct ns_sctp_cookie_tcb *t,
                            uint64_t now, uint8_t *out, size_t cap)
{
    if (t->n_addrs > NS_SCTP_COOKIE_MAX_ADDRS || cap < NS_SCTP_COOKIE_LEN(t->n_addrs))
        return 0;
    if (!ns_sctp_cookie_tick(cx, now))
        return 0;
    uint8_t *p = out;
    p[0] = NS_SCTP_COOKIE_VERSION;
    p[1] = t->n_addrs;
    ns_wr16(p + 2, t->flags);
    ns_wr64(p + 4, now);
    ns_wr32(p + 12, t->lifetime_ms);
    ns_wr32(p + 16, t->peer_tag);
    ns_wr32(p + 20, t->peer_a_rwnd);
    ns_wr32(p + 24, t->peer_initial_tsn);
    ns_wr16(p + 28, t->peer_os);
    ns_wr16(p + 30, t->peer_mis);
    ns_wr32(p + 32, t->local_tag);
    ns_wr32(p + 36, t->local_initial_tsn);
    ns_wr16(p + 40, t->local_os);
    ns_wr16(p + 42, t->local_mis);
    ns_wr32(p + 44, t->local_a_rwnd);
    ns_wr32(p + 48, t->local_tie_tag);
    ns_wr32(p + 52, t->peer_tie_tag);
    ns_wr16(p + 56, t->local_port);
    ns_wr16(p + 58, t->peer_port);
    put_addr(p + 60, &t->src);
    for (uint8_t i = 0; i < t->n_addrs; i++)
        put_addr(p + NS_SCTP_COOKIE_BODY_FIXED + 8u * i, &t->addrs[i]);
    size_t body = NS_SCTP_COOKIE_BODY_FIXED + 8u * t->n_addrs;
    if (!mac(cx->cur, out, body, out + body))
        return 0;
    return body + NS_SCTP_COOKIE_MAC_LEN;
}

static bool mac_ok(const uint8_t *key, const uint8_t *c, size_t body)
{
    uint8_t m[NS_SCTP_COOKIE_MAC_LEN];
    if (!mac(key, c, body, m))
        return false;
    bool ok = CRYPTO_memcmp(m, c + body, NS_SCTP_COOKIE_MAC_LEN) == 0;
    OPENSSL_cleanse(m, sizeof(m));
    return ok;
}

enum ns_sctp_cookie_res ns_sctp_cookie_verify(struct ns_sctp_cookie_ctx *cx, const uint8_t *c,
                                              size_t len, uint64_t now,
                                              struct ns_sctp_cookie_tcb *t, uint32_t *staleness_us)
{
    if (staleness_us)
        *staleness_us = 0;
    if (len < NS_SCTP_COOKIE_LEN(0) || c[0] != NS_SCTP_COOKIE_VERSION ||
        c[1] > NS_SCTP_COOKIE_MAX_ADDRS || len != NS_SCTP_COOKIE_LEN(c[1]))
        return NS_SCTP_COOKIE_INVALID;
    /* A failed rotation keeps the old secrets, which still verify. */
    ns_sctp_cookie_tick(cx, now);
    size_t body = len - NS_SCTP_COOKIE_MAC_LEN;
    if (!mac_ok(cx->cur, c, body) && !(cx->have_prev && mac_ok(cx->prev, c, body)))
        return NS_SCTP_COOKIE_INVALID;

    memset(t, 0, sizeof(*t));
    t->n_addrs = c[1];
    t->flags = ns_rd16(c + 2);
    t->created_us = ns_rd64(c + 4);
    t->lifetime_ms = ns_rd32(c + 12);
    t->peer_tag = ns_rd32(c + 16);
    t->peer_a_rwnd = ns_rd32(c + 20);
    t->peer_initial_tsn = ns_rd32(c + 24);
    t->peer_os = ns_rd16(c + 28);
    t->peer_mis = ns_rd16(c + 30);
    t->local_tag = ns_rd32(c + 32);
    t->local_initial_tsn = ns_rd32(c + 36);
    t->local_os = ns_rd16(c + 40);
    t->local_mis = ns_rd16(c + 42);
    t->local_a_rwnd = ns_rd32(c + 44);
    t->local_tie_tag = ns_rd32(c + 48);
    t->peer_tie_tag = ns_rd32(c + 52);
    t->local_port = ns_rd16(c + 56);
    t->peer_port = ns_rd16(c + 58);
    get_addr(c + 60, &t->src);
    for (uint8_t i = 0; i < t->n_addrs; i++)
        get_addr(c + NS_SCTP_COOKIE_BODY_FIXED + 8u * i, &t->addrs[i]);

    if (t->created_us > now)
        return NS_SCTP_COOKIE_INVALID;
    uint64_t elapsed = now - t->created_us;
    uint64_t life = (uint64_t)t->lifetime_ms * 1000;
    if (elapsed > life) {
        uint64_t stale = elapsed - life;
        if (staleness_us)
            *staleness_us = stale > UINT32_MAX ? UINT32_MAX : (uint32_t)stale;
        return NS_SCTP_COOKIE_STALE;
    }
    return NS_SCTP_COOKIE_OK;
}
