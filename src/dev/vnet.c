/* Segmentation offload for TAP: splitting USO frames the kernel hands us and
 * building them from runs of equal datagrams (virtio 1.x 5.1.6.2, Linux
 * virtio_net_hdr_to_skb and __udp_gso_segment for what the kernel checks). */
#include "dev/vnet.h"

#include <string.h>

#include "core/checksum.h"
#include "core/bytes.h"

#define ETH_HLEN  14
#define IP_MIN    20
#define UDP_HLEN  8
#define PROTO_UDP 17

static void ip_fix(uint8_t *ip, uint32_t ihl, uint16_t tot_len, uint16_t id)
{
    ns_wr16(ip + 2, tot_len);
    ns_wr16(ip + 4, id);
    ns_wr16(ip + 10, 0);
    ns_wr16(ip + 10, ns_csum(ip, ihl));
}

static struct ns_pkt *pkt_of(const uint8_t *a, uint32_t alen, const uint8_t *b, uint32_t blen)
{
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, alen + blen);
    if (!p)
        return NULL;
    uint8_t *d = ns_pkt_put(p, alen + blen);
    memcpy(d, a, alen);
    if (blen)
        memcpy(d + alen, b, blen);
    return p;
}

/* A plain frame whose checksum the kernel left partial: finish it as the
 * hardware would, the sum from csum_start to the end (the field itself holds
 * the pseudo header's sum and is part of it), complemented. */
static void csum_complete(const struct ns_vnet_hdr *h, struct ns_pkt *p,
                          struct ns_vnet_rx_stats *st)
{
    uint32_t start = h->csum_start, at = (uint32_t)h->csum_start + h->csum_offset;
    if (start >= p->len || at + 2 > p->len || (start & 1))
        return; /* nothing we can place; the receiver's check will catch it */
    uint16_t c = (uint16_t)~ns_csum_fold(ns_csum_add(0, p->data + start, p->len - start));
    /* The header said "partial" over what the kernel made; only UDP spells
     * a computed zero as 0xffff, and a zero TCP/ICMP sum cannot come out of
     * a one's complement over data that includes a nonzero pseudo header. */
    ns_wr16(p->data + at, c ? c : 0xffff);
    st->csum_done++;
}

int ns_vnet_rx(const struct ns_vnet_hdr *h, const uint8_t *frame, uint32_t len, struct ns_pkt **out,
               int max, struct ns_vnet_rx_stats *st)
{
    if (max < 1)
        return 0;
    if (h->gso_type == NS_VNET_GSO_NONE) {
        struct ns_pkt *p = pkt_of(frame, len, NULL, 0);
        if (!p) {
            st->nomem++;
            return 0;
        }
        if (h->flags & NS_VNET_F_NEEDS_CSUM)
            csum_complete(h, p, st);
        out[0] = p;
        return 1;
    }
    /* UDP over IPv4 only: we never ask for TSO, and USO for IPv6 has no
     * IPv6 layer here to go to. */
    if (h->gso_type != NS_VNET_GSO_UDP_L4 || h->gso_size == 0 ||
        len < ETH_HLEN + IP_MIN + UDP_HLEN || ns_rd16(frame + 12) != 0x0800)
        goto bad;
    const uint8_t *ip = frame + ETH_HLEN;
    uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4;
    if ((ip[0] >> 4) != 4 || ihl < IP_MIN || ip[9] != PROTO_UDP ||
        ETH_HLEN + ihl + UDP_HLEN > len || (ns_rd16(ip + 6) & 0x3fff) != 0)
        goto bad;
    uint32_t hl = ETH_HLEN + ihl + UDP_HLEN;
    /* The IP length bounds the datagram when it is set and sane; trailing
     * bytes past it are link padding. */
    uint32_t end = len;
    uint32_t tot = ns_rd16(ip + 2);
    if (tot >= ihl + UDP_HLEN && ETH_HLEN + tot < end)
        end = ETH_HLEN + tot;
    uint32_t payload = end - hl, seg = h->gso_size;
    if (payload == 0)
        goto bad;
    uint32_t nsegs = (payload + seg - 1) / seg;
    if (nsegs > NS_VNET_MAX_SEGS || nsegs > (uint32_t)max)
        goto bad;
    /* Each datagram's lengths must fit their 16-bit fields. */
    if (ihl + UDP_HLEN + (payload < seg ? payload : seg) > 0xffff)
        goto bad;
    uint16_t id = ns_rd16(ip + 4);
    uint8_t hdr[ETH_HLEN + 60 + UDP_HLEN];
    memcpy(hdr, frame, hl);
    uint8_t *hip = hdr + ETH_HLEN, *hudp = hdr + ETH_HLEN + ihl;
    for (uint32_t i = 0; i < nsegs; i++) {
        uint32_t off = hl + i * seg;
        uint32_t n = end - off < seg ? end - off : seg;
        ip_fix(hip, ihl, (uint16_t)(ihl + UDP_HLEN + n), (uint16_t)(id + i));
        ns_wr16(hudp + 4, (uint16_t)(UDP_HLEN + n));
        ns_wr16(hudp + 6, 0);
        struct ns_pkt *p = pkt_of(hdr, hl, frame + off, n);
        if (!p) {
            for (uint32_t j = 0; j < i; j++)
                ns_pkt_free(out[j]);
            st->nomem++;
            return 0;
        }
        out[i] = p;
    }
    st->gso_frames++;
    st->gso_segs += nsegs;
    return (int)nsegs;
bad:
    st->bad++;
    return 0;
}

/* ---- transmit ---- */

/* The headers of p if it could lead or join a run: IPv4 without options,
 * not a fragment, UDP; NULL otherwise. */
static const uint8_t *run_hdr(const struct ns_pkt *p, uint32_t *payload)
{
    if (p->len < NS_VNET_RUN_HLEN)
        return NULL;
    const uint8_t *f = p->data, *ip = f + ETH_HLEN;
    if (ns_rd16(f + 12) != 0x0800 || ip[0] != 0x45 || ip[9] != PROTO_UDP ||
        (ns_rd16(ip + 6) & 0x3fff))
        return NULL;
    uint32_t tot = ns_rd16(ip + 2), ulen = ns_rd16(ip + 20 + 4);
    if (tot != ns_pkt_len(p) - ETH_HLEN || ulen != tot - IP_MIN || ulen <= UDP_HLEN)
        return NULL;
    *payload = ulen - UDP_HLEN;
    return f;
}

/* Same link addresses, type, IP version/TOS, flags, TTL, protocol,
 * addresses and ports: every byte but the lengths, ID and checksums. */
static int same_flow(const uint8_t *a, const uint8_t *b)
{
    return memcmp(a, b, ETH_HLEN + 2) == 0 && memcmp(a + 20, b + 20, 4) == 0 &&
           memcmp(a + 26, b + 26, 8) == 0 && memcmp(a + 34, b + 34, 4) == 0;
}

void ns_vnet_tx_plan(struct ns_pkt *const *pkts, int n, struct ns_vnet_tx_plan *plan)
{
    memset(&plan->h, 0, sizeof(plan->h));
    plan->count = 1;
    plan->hlen = 0;
    uint32_t seg;
    const uint8_t *first = run_hdr(pkts[0], &seg);
    const struct ns_pkt *p0 = pkts[0];
    if ((p0->flags & NS_PKT_F_CSUM_PARTIAL) && p0->len >= ETH_HLEN + IP_MIN + UDP_HLEN &&
        ns_rd16(p0->data + 12) == 0x0800 && (p0->data[ETH_HLEN] >> 4) == 4) {
        /* Alone or leading a run: the kernel finishes its UDP checksum,
         * over the datagram and any Ethernet padding (zeros) after it. */
        uint32_t ihl = (uint32_t)(p0->data[ETH_HLEN] & 0x0f) * 4;
        if (ihl >= IP_MIN && p0->len >= ETH_HLEN + ihl + UDP_HLEN) {
            plan->h.flags = NS_VNET_F_NEEDS_CSUM;
            plan->h.csum_start = (uint16_t)(ETH_HLEN + ihl);
            plan->h.csum_offset = 6;
        }
    }
    if (!first || n < 2)
        return;
    uint32_t total = seg;
    int k = 1;
    int niov = 2 + 1 + pkts[0]->nfrags;
    while (k < n && k < NS_VNET_MAX_SEGS) {
        uint32_t pl;
        const uint8_t *f = run_hdr(pkts[k], &pl);
        if (!f || pl > seg || !same_flow(first, f) || IP_MIN + UDP_HLEN + total + pl > 65535 ||
            niov + 1 + pkts[k]->nfrags > NS_VNET_MAX_IOV)
            break;
        niov += 1 + pkts[k]->nfrags;
        total += pl;
        k++;
        if (pl < seg)
            break; /* a short one ends the run */
    }
    if (k < 2)
        return;
    memcpy(plan->hdr, first, NS_VNET_RUN_HLEN);
    uint8_t *ip = plan->hdr + ETH_HLEN, *udp = ip + IP_MIN;
    uint16_t ulen = (uint16_t)(UDP_HLEN + total);
    ip_fix(ip, IP_MIN, (uint16_t)(IP_MIN + ulen), ns_rd16(ip + 4));
    ns_wr16(udp + 4, ulen);
    /* The kernel finishes the checksum of each datagram from the pseudo
     * header sum over the whole run's length (it swaps in each datagram's
     * length as it cuts; __udp_gso_segment). */
    ns_wr16(udp + 6, 0);
    ns_wr16(udp + 6,
            ns_csum_fold(ns_csum_pseudo(ns_rd32(ip + 12), ns_rd32(ip + 16), PROTO_UDP, ulen)));
    plan->h.flags = NS_VNET_F_NEEDS_CSUM;
    plan->h.gso_type = NS_VNET_GSO_UDP_L4;
    plan->h.hdr_len = NS_VNET_RUN_HLEN;
    plan->h.gso_size = (uint16_t)seg;
    plan->h.csum_start = ETH_HLEN + IP_MIN;
    plan->h.csum_offset = 6;
    plan->hlen = NS_VNET_RUN_HLEN;
    plan->count = k;
}

int ns_vnet_tx_iov(const struct ns_vnet_tx_plan *plan, struct ns_pkt *const *pkts,
                   struct iovec *iov, int max)
{
    if (max < 1)
        return -1;
    int n = 0;
    iov[n++] = (struct iovec){(void *)&plan->h, NS_VNET_HLEN};
    if (plan->count == 1) {
        if (max - n < NS_PKT_MAX_FRAGS + 1)
            return -1;
        return n + ns_pkt_iov(pkts[0], iov + n, max - n);
    }
    if (max - n < 1)
        return -1;
    iov[n++] = (struct iovec){(void *)plan->hdr, plan->hlen};
    for (int i = 0; i < plan->count; i++) {
        const struct ns_pkt *p = pkts[i];
        if (max - n < NS_PKT_MAX_FRAGS + 1)
            return -1;
        if (p->len > plan->hlen)
            iov[n++] = (struct iovec){p->data + plan->hlen, p->len - plan->hlen};
        for (int f = 0; f < p->nfrags; f++)
            iov[n++] = (struct iovec){p->frags[f].buf->data + p->frags[f].off, p->frags[f].len};
    }
    return n;
}
