/* Types shared by the SCTP engine's modules (RFC 9260).
 *
 * The engine is sans-I/O: it is handed packets with their source and
 * destination transport addresses and the current time, and it hands back
 * packets, events and its next deadline. It knows nothing of IPv4, UDP,
 * threads or clocks, so the same engine runs over nstack's IPv4, over UDP
 * encapsulation (RFC 6951), or over a transport the application supplies.
 */
#ifndef NS_SCTP_TYPES_H
#define NS_SCTP_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pkt.h"
#include "nstack/types.h"

/* Serial number arithmetic for 32-bit TSNs and 16-bit SSNs (RFC 1982). */
static inline bool ns_tsn_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}
static inline bool ns_tsn_le(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) <= 0;
}
static inline bool ns_ssn_lt(uint16_t a, uint16_t b)
{
    return (int16_t)(uint16_t)(a - b) < 0;
}

/* struct ns_sctp_addr (nstack/types.h) is a transport address of a path.
 * Its identity is family and address: the encapsulation port follows the
 * peer (RFC 6951 5.4), so lookups (associations, paths, ICMP) use
 * ns_sctp_addr_same and never ns_sctp_addr_eq. */

/* The same transport address (port ignored: see above). */
static inline bool ns_sctp_addr_same(const struct ns_sctp_addr *a, const struct ns_sctp_addr *b)
{
    return a->family == b->family && a->addr == b->addr;
}

/* Every field equal, the encapsulation port included. */
static inline bool ns_sctp_addr_eq(const struct ns_sctp_addr *a, const struct ns_sctp_addr *b)
{
    return a->family == b->family && a->port == b->port && a->addr == b->addr;
}

/* DATA chunk flags (RFC 9260 section 3.3.1). */
#define NS_SCTP_DATA_E 0x01 /* last fragment */
#define NS_SCTP_DATA_B 0x02 /* first fragment */
#define NS_SCTP_DATA_U 0x04 /* unordered */
#define NS_SCTP_DATA_I 0x08 /* SACK immediately (RFC 7053) */

/* One DATA chunk's worth of user data, received or to be sent. The payload
 * is a reference into a refcounted buffer, so the data path moves chunks
 * between queues without copying them. */
struct ns_sctp_chunk_data {
    uint32_t tsn;
    uint16_t sid;
    uint16_t ssn;
    uint32_t ppid;
    uint8_t flags;
    struct ns_buf *buf; /* holds a reference */
    uint32_t off, len;
};

/* Tunables (sysctl keys `sctp.*`), RFC 9260 section 16 defaults unless
 * noted. */
struct ns_sctp_params {
    uint32_t rto_initial_ms;          /* 1000 */
    uint32_t rto_min_ms;              /* 1000 */
    uint32_t rto_max_ms;              /* 60000 */
    uint32_t max_burst;               /* 4 */
    uint32_t valid_cookie_life_ms;    /* 60000 */
    uint32_t association_max_retrans; /* 10 */
    uint32_t path_max_retrans;        /* 5 */
    uint32_t max_init_retransmits;    /* 8 */
    uint32_t hb_interval_ms;          /* 30000 */
    uint32_t sack_timeout_ms;         /* 200 */
    uint32_t sack_freq;               /* 2: SACK every second packet */
    uint32_t rcvbuf_bytes;            /* 212992 */
    uint32_t sndbuf_bytes;            /* 212992 */
    uint32_t max_message_bytes;       /* 262144 */
    uint32_t reasm_max_bytes;         /* 4 MiB across an association's reassembly */
    uint32_t out_streams;             /* 10: requested outbound streams */
    uint32_t max_in_streams;          /* 65535 */
    uint32_t cookie_secret_life_ms;   /* 60000: secret rotation period */
    uint32_t nodelay;                 /* 0: Nagle-like bundling delay on */
    uint32_t pd_point_bytes;          /* 0: partial delivery point = rcvbuf / 2 */
    /* UDP encapsulation (RFC 6951), read by the transport glue, not the
     * engine (Linux's net.sctp.udp_port and encap_port). */
    uint32_t udp_port;   /* 0 (off): our UDP encapsulation port */
    uint32_t encap_port; /* 0 (raw IP): the peer's port for new associations */
};

void ns_sctp_params_default(struct ns_sctp_params *p);

#endif
