/* TAP segmentation offload (dev/vnet.c): the first 10 bytes are the virtio
 * header, the rest the frame a TAP read gave. What ns_vnet_rx makes of it
 * goes back through ns_vnet_tx_plan/ns_vnet_tx_iov; invariants of both
 * directions abort(). Seeds: fuzz/corpus/fuzz_vnet/, written by
 * fuzz/make_corpus_vnet.py. */
#include <stdlib.h>
#include <string.h>

#include "dev/vnet.h"

static uint16_t g16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < NS_VNET_HLEN || size - NS_VNET_HLEN > 65536 + 64)
        return 0; /* a TAP read is never larger */
    struct ns_vnet_hdr h;
    memcpy(&h, data, NS_VNET_HLEN);
    const uint8_t *frame = data + NS_VNET_HLEN;
    uint32_t len = (uint32_t)(size - NS_VNET_HLEN);

    struct ns_pkt *pkts[NS_VNET_MAX_SEGS];
    struct ns_vnet_rx_stats st = {0};
    int n = ns_vnet_rx(&h, frame, len, pkts, NS_VNET_MAX_SEGS, &st);
    if (n < 0 || n > NS_VNET_MAX_SEGS)
        abort();
    if (n == 0 && st.bad + st.nomem != 1)
        abort();
    if (n > 0 && st.bad + st.nomem != 0)
        abort();
    if (h.gso_type == NS_VNET_GSO_NONE && n == 1) {
        /* A plain frame comes back whole, at most its checksum filled in. */
        const struct ns_pkt *p = pkts[0];
        if (ns_pkt_len(p) != len || p->nfrags)
            abort();
        uint32_t at = (uint32_t)h.csum_start + h.csum_offset;
        for (uint32_t i = 0; i < len; i++)
            if (p->data[i] != frame[i] && !(st.csum_done && (i == at || i == at + 1)))
                abort();
    } else if (n > 0) {
        if (st.gso_frames != 1 || st.gso_segs != (uint64_t)n)
            abort();
        /* Every datagram: IPv4/UDP whose lengths describe it exactly, all
         * but the last of gso_size payload. */
        for (int i = 0; i < n; i++) {
            const struct ns_pkt *p = pkts[i];
            const uint8_t *ip = p->data + 14;
            uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4;
            if (p->nfrags || p->len < 14 + ihl + 8 || g16(p->data + 12) != 0x0800)
                abort();
            if (g16(ip + 2) != p->len - 14 || g16(ip + ihl + 4) != p->len - 14 - ihl)
                abort();
            uint32_t pl = p->len - 14 - ihl - 8;
            if (pl == 0 || pl > h.gso_size || (i < n - 1 && pl != h.gso_size))
                abort();
        }
    }

    if (n >= 2) {
        int at = 0;
        while (at < n) {
            struct ns_vnet_tx_plan plan;
            ns_vnet_tx_plan(pkts + at, n - at, &plan);
            if (plan.count < 1 || plan.count > n - at)
                abort();
            static struct iovec iov[2 + NS_VNET_MAX_SEGS * (NS_PKT_MAX_FRAGS + 1)];
            int niov = ns_vnet_tx_iov(&plan, pkts + at, iov, (int)(sizeof(iov) / sizeof(iov[0])));
            if (niov < 1)
                abort();
            uint64_t want = NS_VNET_HLEN + plan.hlen, got = 0;
            for (int k = 0; k < plan.count; k++)
                want += ns_pkt_len(pkts[at + k]) - plan.hlen;
            for (int k = 0; k < niov; k++)
                got += iov[k].iov_len;
            if (got != want)
                abort();
            if (plan.count > 1 &&
                (plan.hlen != NS_VNET_RUN_HLEN || want > NS_VNET_HLEN + 14 + 65535 ||
                 plan.h.gso_type != NS_VNET_GSO_UDP_L4))
                abort();
            if (plan.count == 1 && plan.hlen != 0)
                abort();
            at += plan.count;
        }
    }
    for (int i = 0; i < n; i++)
        ns_pkt_free(pkts[i]);
    return 0;
}
