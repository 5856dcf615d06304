/* The 48-bit IEEE 802 MAC address: the type devices and the link layer
 * share, with its text form ("02:00:00:00:00:01"). */
#ifndef NS_CORE_MAC_H
#define NS_CORE_MAC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nstack/types.h"

/* Ethernet II header: devices size their frame buffers with it. */
#define NS_ETH_HLEN 14

static const struct ns_mac ns_mac_bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
static const struct ns_mac ns_mac_zero = {{0}};

static inline bool ns_mac_eq(const struct ns_mac *a, const struct ns_mac *b)
{
    return memcmp(a->b, b->b, NS_ETH_ALEN) == 0;
}
static inline bool ns_mac_is_bcast(const uint8_t *m)
{
    return (m[0] & m[1] & m[2] & m[3] & m[4] & m[5]) == 0xff;
}
static inline bool ns_mac_is_mcast(const uint8_t *m)
{
    return m[0] & 1;
}

/* "02:00:00:00:00:01" <-> mac; parse returns false on bad syntax. */
bool ns_mac_parse(const char *s, struct ns_mac *m);
void ns_mac_format(const uint8_t *m, char out[18]);

#endif
