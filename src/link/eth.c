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

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool ns_mac_parse(const char *s, struct ns_mac *m)
{
    /* Strictly six groups of one or two hex digits separated by ':'
     * (sscanf's %x would also take signs, "0x" and blanks). */
    uint8_t b[NS_ETH_ALEN];
    for (int i = 0; i < NS_ETH_ALEN; i++) {
        int hi = hexval(*s);
        if (hi < 0)
            return false;
        s++;
        int lo = hexval(*s);
        if (lo >= 0) {
            b[i] = (uint8_t)(hi << 4 | lo);
            s++;
        } else {
            b[i] = (uint8_t)hi;
        }
        if (*s != (i == NS_ETH_ALEN - 1 ? '\0' : ':'))
            return false;
        s++;
    }
    memcpy(m->b, b, NS_ETH_ALEN);
    return true;
}

void ns_mac_format(const uint8_t *m, char out[18])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}
