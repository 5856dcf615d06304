#include "core/checksum.h"

#include "core/pkt.h"

uint32_t ns_csum_add(uint32_t sum, const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t s = sum;
    while (len >= 2) {
        s += (uint32_t)(p[0] << 8 | p[1]);
        p += 2;
        len -= 2;
    }
    if (len)
        s += (uint32_t)p[0] << 8;
    while (s >> 32)
        s = (s & 0xffffffffu) + (s >> 32);
    return (uint32_t)s;
}

uint16_t ns_csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

uint16_t ns_csum(const void *data, size_t len)
{
    return (uint16_t)~ns_csum_fold(ns_csum_add(0, data, len));
}

static uint32_t swap16_sum(uint32_t s)
{
    /* A piece that starts on an odd offset contributes byte-swapped. */
    s = ns_csum_fold(s);
    return ((s & 0xff) << 8) | (s >> 8);
}

uint32_t ns_csum_pkt(const struct ns_pkt *p, uint32_t off, uint32_t len, uint32_t sum)
{
    uint32_t pos = 0; /* bytes summed so far */
    struct piece {
        const uint8_t *d;
        uint32_t n;
    } pieces[NS_PKT_MAX_FRAGS + 1];
    int np = 0;
    pieces[np++] = (struct piece){p->data, p->len};
    for (int i = 0; i < p->nfrags; i++)
        pieces[np++] = (struct piece){p->frags[i].buf->data + p->frags[i].off, p->frags[i].len};
    uint64_t total = sum;
    for (int i = 0; i < np && len > 0; i++) {
        if (off >= pieces[i].n) {
            off -= pieces[i].n;
            continue;
        }
        uint32_t n = pieces[i].n - off < len ? pieces[i].n - off : len;
        uint32_t s = ns_csum_add(0, pieces[i].d + off, n);
        total += (pos & 1) ? swap16_sum(s) : ns_csum_fold(s);
        pos += n;
        len -= n;
        off = 0;
    }
    while (total >> 32)
        total = (total & 0xffffffffu) + (total >> 32);
    return (uint32_t)total;
}

uint32_t ns_csum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
    uint64_t s = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
    while (s >> 32)
        s = (s & 0xffffffffu) + (s >> 32);
    return (uint32_t)s;
}
