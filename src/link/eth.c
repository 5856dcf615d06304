#include "link/eth.h"

#include <stdio.h>

enum ns_eth_verdict ns_eth_parse(const uint8_t *f, uint32_t len, struct ns_eth_hdr *h)
{
    if (len < NS_ETH_HLEN)
        return NS_ETH_SHORT;
    memcpy(h->dst.b, f, NS_ETH_ALEN);
    memcpy(h->src.b, f + 6, NS_ETH_ALEN);
    h->type = (uint16_t)(f[12] << 8 | f[13]);
    if (h->type < 0x0600)
        return NS_ETH_NOT_II;
    return NS_ETH_OK;
}

void ns_eth_write(uint8_t *out, const struct ns_mac *dst, const struct ns_mac *src, uint16_t type)
{
    memcpy(out, dst->b, NS_ETH_ALEN);
    memcpy(out + 6, src->b, NS_ETH_ALEN);
    out[12] = (uint8_t)(type >> 8);
    out[13] = (uint8_t)type;
}
