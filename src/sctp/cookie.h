/* SCTP State Cookie (RFC 9260 sections 5.1.3 and 5.1.5).
 *
 * A listener keeps no state for an INIT: everything it needs to create the
 * association when the COOKIE ECHO comes back travels in the cookie,
 * authenticated with a MAC keyed by a local secret. The secret rotates every
 * cookie_secret_life_ms of injected time; the previous one is kept, so a
 * cookie made just before a rotation still verifies, and one made before two
 * rotations does not.
 *
 * Layout (version 1), all integers big-endian, no padding, no pointers:
 *
 *   off size  field
 *     0    1  version (1)
 *     1    1  number of peer addresses n (<= NS_SCTP_COOKIE_MAX_ADDRS)
 *     2    2  feature flags (NS_SCTP_COOKIE_F_*)
 *     4    8  creation time, microseconds of the stack's injected clock
 *    12    4  lifetime, milliseconds
 *    16    4  peer initiate tag          20   4  peer a_rwnd
 *    24    4  peer initial TSN           28   2  peer OS     30  2  peer MIS
 *    32    4  local tag                  36   4  local initial TSN
 *    40    2  local OS   42  2 local MIS 44   4  local a_rwnd
 *    48    4  local tie-tag              52   4  peer tie-tag
 *    56    2  local port                 58   2  peer port
 *    60    8  address the INIT came from (family 1, 0 1, port 2, addr 4)
 *    68  8*n  peer addresses, same encoding
 *  68+8n  32  HMAC-SHA256(secret, bytes 0 .. 68+8n), full length
 *
 * The full 32-byte MAC is kept: a cookie is sent once per handshake and 16
 * more bytes cost nothing, while a truncated MAC would need an argument.
 */
#ifndef NS_SCTP_COOKIE_H
#define NS_SCTP_COOKIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sctp/types.h"

#define NS_SCTP_COOKIE_VERSION    1
#define NS_SCTP_COOKIE_MAX_ADDRS  8
#define NS_SCTP_COOKIE_BODY_FIXED 68
#define NS_SCTP_COOKIE_MAC_LEN    32
#define NS_SCTP_COOKIE_SECRET_LEN 32
#define NS_SCTP_COOKIE_LEN(n)     (NS_SCTP_COOKIE_BODY_FIXED + 8u * (n) + NS_SCTP_COOKIE_MAC_LEN)
#define NS_SCTP_COOKIE_MAX_LEN    NS_SCTP_COOKIE_LEN(NS_SCTP_COOKIE_MAX_ADDRS)

/* Feature flags negotiated in the INIT / INIT ACK exchange. */
#define NS_SCTP_COOKIE_F_PEER_ECN         0x1
#define NS_SCTP_COOKIE_F_PEER_FORWARD_TSN 0x2
#define NS_SCTP_COOKIE_F_PEER_I_DATA      0x4

/* What the cookie carries: the essentials of the TCB (section 5.1.3). */
struct ns_sctp_cookie_tcb {
    uint16_t flags;       /* NS_SCTP_COOKIE_F_* */
    uint64_t created_us;  /* set by build from `now` */
    uint32_t lifetime_ms; /* Valid.Cookie.Life plus any granted preservative */
    /* From the peer's INIT. */
    uint32_t peer_tag;
    uint32_t peer_a_rwnd;
    uint32_t peer_initial_tsn;
    uint16_t peer_os;
    uint16_t peer_mis;
    /* Ours, as sent in the INIT ACK. */
    uint32_t local_tag;
    uint32_t local_initial_tsn;
    uint16_t local_os;
    uint16_t local_mis;
    uint32_t local_a_rwnd;
    /* Tie-tags (section 5.2.2): zero unless an association existed. */
    uint32_t local_tie_tag;
    uint32_t peer_tie_tag;
    uint16_t local_port;
    uint16_t peer_port;
    struct ns_sctp_addr src; /* where the INIT came from */
    uint8_t n_addrs;
    struct ns_sctp_addr addrs[NS_SCTP_COOKIE_MAX_ADDRS];
};

/* Fills out with len random bytes; false on failure. */
typedef bool (*ns_sctp_cookie_rand_fn)(void *ctx, uint8_t *out, size_t len);

struct ns_sctp_cookie_ctx {
    uint8_t cur[NS_SCTP_COOKIE_SECRET_LEN];
    uint8_t prev[NS_SCTP_COOKIE_SECRET_LEN];
    bool have_prev;
    uint64_t rotated_at_us; /* start of the current secret's period */
    uint64_t life_us;       /* rotation period */
    ns_sctp_cookie_rand_fn rand;
    void *rand_ctx;
};

/* rand NULL uses OpenSSL RAND_bytes. secret_life_ms 0 is taken as 1.
 * Returns false if no random bytes could be drawn. */
bool ns_sctp_cookie_ctx_init(struct ns_sctp_cookie_ctx *cx, uint32_t secret_life_ms,
                             ns_sctp_cookie_rand_fn rand, void *rand_ctx, uint64_t now);
/* Wipes the secrets. */
void ns_sctp_cookie_ctx_free(struct ns_sctp_cookie_ctx *cx);
/* Rotate if a period (or several) passed; build and verify call it too.
 * Returns false if random bytes could not be drawn (the old secrets stay). */
bool ns_sctp_cookie_tick(struct ns_sctp_cookie_ctx *cx, uint64_t now);
/* When the next rotation is due (a timer deadline for the endpoint). */
uint64_t ns_sctp_cookie_next_rotation(const struct ns_sctp_cookie_ctx *cx);

/* Serialize and MAC the cookie into out; tcb->created_us is taken from now.
 * Returns the length (NS_SCTP_COOKIE_LEN(n_addrs)) or 0 if cap is short,
 * n_addrs is too large or a rotation failed. */
size_t ns_sctp_cookie_build(struct ns_sctp_cookie_ctx *cx, const struct ns_sctp_cookie_tcb *tcb,
                            uint64_t now, uint8_t *out, size_t cap);

enum ns_sctp_cookie_res {
    NS_SCTP_COOKIE_OK = 0,
    NS_SCTP_COOKIE_INVALID, /* bad size, version or MAC: discard silently */
    NS_SCTP_COOKIE_STALE,   /* authentic but expired: send a Stale Cookie cause */
};

/* Authenticate (constant-time compare against the current, then the
 * previous secret) and decode. A cookie is stale when the time elapsed since
 * its creation is longer than its lifetime (section 5.1.5 step 3): then
 * *staleness_us = elapsed - lifetime (>= 1), saturated at UINT32_MAX for the
 * cause field. A creation time after now is INVALID. tcb is filled for OK
 * and STALE (the caller checks ports and the packet's vtag against it, step
 * 3 of section 5.1.5); staleness_us may be NULL. */
enum ns_sctp_cookie_res ns_sctp_cookie_verify(struct ns_sctp_cookie_ctx *cx, const uint8_t *cookie,
                                              size_t len, uint64_t now,
                                              struct ns_sctp_cookie_tcb *tcb,
                                              uint32_t *staleness_us);

#endif
