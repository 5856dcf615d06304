/* Text form of MAC addresses. */
#include "core/mac.h"

#include <stdio.h>

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
