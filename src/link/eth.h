/* Ethernet II framing (IEEE 802.3 with EtherType >= 0x0600). */
#ifndef NS_LINK_ETH_H
#define NS_LINK_ETH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/counters.h"
#include "core/mac.h"

#define NS_ETH_MIN_FRAME  60 /* without FCS; shorter frames are padded on output */
#define NS_ETHERTYPE_IPV4 0x0800
#define NS_ETHERTYPE_ARP  0x0806

/* A parsed header; the frame stays where it is. */
struct ns_eth_hdr {
    struct ns_mac dst, src;
    uint16_t type;
};

enum ns_eth_verdict {
    NS_ETH_OK = 0,
    NS_ETH_SHORT,  /* fewer than 14 bytes */
    NS_ETH_NOT_II, /* length field (802.3/LLC), not an EtherType */
};

enum ns_eth_verdict ns_eth_parse(const uint8_t *frame, uint32_t len, struct ns_eth_hdr *h);
void ns_eth_write(uint8_t *out, const struct ns_mac *dst, const struct ns_mac *src, uint16_t type);

/* clang-format off */
#define NS_ETH_COUNTERS(X) \
    X(rx_frames) \
    X(rx_bytes) \
    X(rx_bcast) \
    X(rx_mcast) \
    X(tx_frames) \
    X(tx_bytes) \
    X(drop_short) \
    X(drop_not_ethernet_ii) \
    X(drop_other_host) \
    X(drop_unknown_type) \
    X(drop_nomem) \
    X(drop_txq_full)
/* clang-format on */

struct ns_eth_stats {
    NS_ETH_COUNTERS(NS_CTR_FIELD)
};

#endif
