/* Interfaces, Ethernet II input dispatch and link output (IEEE 802.3
 * framing with an EtherType; frames shorter than 60 bytes are padded). */
#include "link/iface.h"

#include <errno.h>
#include <string.h>

void ns_link_init(struct ns_link *l)
{
    memset(l, 0, sizeof(*l));
}

void ns_link_free(struct ns_link *l)
{
    for (uint32_t i = 0; i < l->n_ifaces; i++)
        ns_pktq_purge(&l->ifaces[i].txq);
}

int ns_link_register(struct ns_link *l, uint16_t type, ns_link_rx_fn input, void *ctx)
{
    for (uint32_t i = 0; i < l->n_protos; i++)
        if (l->protos[i].type == type)
            return -EEXIST;
    if (l->n_protos == NS_LINK_MAX_PROTOS)
        return -ENOSPC;
    l->protos[l->n_protos].type = type;
    l->protos[l->n_protos].input = input;
    l->protos[l->n_protos].ctx = ctx;
    l->n_protos++;
    return 0;
}

int ns_link_add_iface(struct ns_link *l, const char *name, const struct ns_mac *mac, uint32_t mtu)
{
    if (l->n_ifaces >= NS_MAX_IFACES)
        return -ENOSPC;
    if (!name || strlen(name) >= NS_IFNAMSIZ || mtu < 68 || mtu > 65535)
        return -EINVAL;
    if (ns_link_iface_by_name(l, name))
        return -EEXIST;
    struct ns_iface *ifc = &l->ifaces[l->n_ifaces];
    memset(ifc, 0, sizeof(*ifc));
    ifc->index = ++l->n_ifaces;
    strcpy(ifc->name, name);
    ifc->mac = *mac;
    ifc->mtu = mtu;
    ns_pktq_init(&ifc->txq);
    return (int)ifc->index;
}

struct ns_iface *ns_link_iface(struct ns_link *l, uint32_t ifindex)
{
    if (ifindex == 0 || ifindex > l->n_ifaces)
        return NULL;
    return &l->ifaces[ifindex - 1];
}

struct ns_iface *ns_link_iface_by_name(struct ns_link *l, const char *name)
{
    for (uint32_t i = 0; i < l->n_ifaces; i++)
        if (strcmp(l->ifaces[i].name, name) == 0)
            return &l->ifaces[i];
    return NULL;
}

struct ns_iface *ns_link_iface_by_addr(const struct ns_link *l, uint32_t addr)
{
    for (uint32_t i = 0; i < l->n_ifaces; i++)
        if (l->ifaces[i].addr && l->ifaces[i].addr == addr)
            return (struct ns_iface *)&l->ifaces[i];
    return NULL;
}

void ns_link_input(struct ns_link *l, uint32_t ifindex, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_iface *ifc = ns_link_iface(l, ifindex);
    struct ns_eth_stats *st = &l->eth_stats;
    if (!ifc || !ifc->up || !ns_pkt_linearize(pkt, 0)) {
        st->drop_nomem += ifc != NULL && ifc->up;
        ns_pkt_free(pkt);
        return;
    }
    st->rx_frames++;
    st->rx_bytes += pkt->len;
    pkt->ifindex = ifindex;
    pkt->ts = now;

    struct ns_eth_hdr h;
    switch (ns_eth_parse(pkt->data, pkt->len, &h)) {
    case NS_ETH_SHORT:
        st->drop_short++;
        ns_pkt_free(pkt);
        return;
    case NS_ETH_NOT_II:
        st->drop_not_ethernet_ii++;
        ns_pkt_free(pkt);
        return;
    case NS_ETH_OK:
        break;
    }
    if (ns_mac_is_bcast(h.dst.b)) {
        st->rx_bcast++;
        pkt->flags |= NS_PKT_F_BCAST;
    } else if (ns_mac_is_mcast(h.dst.b)) {
        /* We join no multicast groups. */
        st->rx_mcast++;
        st->drop_other_host++;
        ns_pkt_free(pkt);
        return;
    } else if (!ns_mac_eq(&h.dst, &ifc->mac)) {
        st->drop_other_host++;
        ns_pkt_free(pkt);
        return;
    }
    ns_pkt_pull(pkt, NS_ETH_HLEN);
    pkt->l3_off = NS_ETH_HLEN;
    for (uint32_t i = 0; i < l->n_protos; i++) {
        if (l->protos[i].type == h.type) {
            l->protos[i].input(l->protos[i].ctx, ifc, pkt, now);
            return;
        }
    }
    st->drop_unknown_type++;
    ns_pkt_free(pkt);
}

void ns_eth_output(struct ns_link *l, struct ns_iface *ifc, struct ns_pkt *pkt,
                   const struct ns_mac *dst, uint16_t type)
{
    struct ns_eth_stats *st = &l->eth_stats;
    if (ifc->txq.count >= NS_TXQ_LEN) {
        st->drop_txq_full++;
        ns_pkt_free(pkt);
        return;
    }
    uint8_t *h = ns_pkt_push(pkt, NS_ETH_HLEN);
    if (!h) {
        if (!ns_pkt_linearize(pkt, NS_PKT_HEADROOM)) {
            st->drop_nomem++;
            ns_pkt_free(pkt);
            return;
        }
        h = ns_pkt_push(pkt, NS_ETH_HLEN);
    }
    ns_eth_write(h, dst, &ifc->mac, type);
    /* Pad runts so every frame on the wire is at least 60 bytes. */
    uint32_t len = ns_pkt_len(pkt);
    if (len < NS_ETH_MIN_FRAME) {
        if (pkt->nfrags || ns_pkt_tailroom(pkt) < NS_ETH_MIN_FRAME - len) {
            struct ns_pkt *c = ns_pkt_alloc(0, NS_ETH_MIN_FRAME);
            if (!c) {
                st->drop_nomem++;
                ns_pkt_free(pkt);
                return;
            }
            ns_pkt_copy_out(pkt, 0, ns_pkt_put(c, len), len);
            c->ts = pkt->ts;
            c->flags = pkt->flags;
            ns_pkt_free(pkt);
            pkt = c;
        }
        memset(ns_pkt_put(pkt, NS_ETH_MIN_FRAME - len), 0, NS_ETH_MIN_FRAME - len);
    }
    st->tx_frames++;
    st->tx_bytes += ns_pkt_len(pkt);
    pkt->ifindex = ifc->index;
    ns_pktq_push(&ifc->txq, pkt);
    if (l->tx_ready)
        l->tx_ready(l->tx_ctx, ifc->index);
}
