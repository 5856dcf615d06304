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

void ns_eth_write(uint8_t *out, const struct ns_mac *dst, const struct ns_mac *src,
                  uint16_t type)
{
    memcpy(out, dst->b, NS_ETH_ALEN);
    memcpy(out + 6, src->b, NS_ETH_ALEN);
    out[12] = (uint8_t)(type >> 8);
    out[13] = (uint8_t)type;
}

bool ns_mac_parse(const char *s, struct ns_mac *m)
{
    unsigned v[6];
    char tail;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &tail) != 6)
        return false;
    for (int i = 0; i < 6; i++)
        m->b[i] = (uint8_t)v[i];
    return true;
}

void ns_mac_format(const uint8_t *m, char out[18])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}
