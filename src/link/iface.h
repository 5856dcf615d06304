/* The link layer of one stack: its interfaces (name, MAC, MTU, address,
 * transmit queue), Ethernet II input dispatch by EtherType to the
 * protocols that registered for it (ARP, IPv4), and Ethernet output onto
 * an interface's transmit queue. Upper layers register with it; it knows
 * none of them. */
#ifndef NS_LINK_IFACE_H
#define NS_LINK_IFACE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/mac.h"
#include "core/pkt.h"
#include "link/eth.h"

#define NS_MAX_IFACES 8
#define NS_IFNAMSIZ   16
#define NS_TXQ_LEN    1000 /* frames, as Linux's default txqueuelen */

struct ns_iface {
    uint32_t index; /* 1-based; 0 is "none" */
    char name[NS_IFNAMSIZ];
    struct ns_mac mac;
    uint32_t mtu;
    uint32_t addr; /* host order; 0 = no address */
    uint8_t plen;
    bool up;
    /* The device finishes UDP checksums (NS_PKT_F_CSUM_PARTIAL); the
     * embedder sets it from the device (a TAP with offload). */
    bool tx_csum_offload;
    struct ns_pktq txq; /* complete Ethernet frames for the device */
};

/* A protocol's input for one EtherType: pkt->data at its header, the
 * Ethernet header in front (pkt->l3_off). Takes ownership. */
typedef void (*ns_link_rx_fn)(void *ctx, struct ns_iface *ifc, struct ns_pkt *pkt, uint64_t now);

#define NS_LINK_MAX_PROTOS 4

struct ns_link {
    struct ns_iface ifaces[NS_MAX_IFACES];
    uint32_t n_ifaces;
    struct ns_eth_stats eth_stats;
    struct {
        uint16_t type;
        ns_link_rx_fn input;
        void *ctx;
    } protos[NS_LINK_MAX_PROTOS];
    uint32_t n_protos;
    /* Something was queued on interface ifindex's txq (wake the device
     * writer): the embedder's hook, set through ns_stack_set_tx_ready. */
    void (*tx_ready)(void *ctx, uint32_t ifindex);
    void *tx_ctx;
};

void ns_link_init(struct ns_link *l);
/* Frees what the transmit queues hold. */
void ns_link_free(struct ns_link *l);
/* Input for EtherType `type` goes to input(ctx, ...). 0, -ENOSPC, -EEXIST. */
int ns_link_register(struct ns_link *l, uint16_t type, ns_link_rx_fn input, void *ctx);

/* Returns the new ifindex, or -ENOSPC / -EINVAL / -EEXIST. */
int ns_link_add_iface(struct ns_link *l, const char *name, const struct ns_mac *mac, uint32_t mtu);
struct ns_iface *ns_link_iface(struct ns_link *l, uint32_t ifindex);
struct ns_iface *ns_link_iface_by_name(struct ns_link *l, const char *name);
/* The interface whose address is addr (0 never matches), or NULL. */
struct ns_iface *ns_link_iface_by_addr(const struct ns_link *l, uint32_t addr);

/* A received frame (data at the Ethernet header) on ifindex: checked,
 * counted and handed to its EtherType's protocol. Takes ownership. */
void ns_link_input(struct ns_link *l, uint32_t ifindex, struct ns_pkt *pkt, uint64_t now);
/* Push an Ethernet header (padding runts to 60 bytes) and queue the frame
 * on ifc's txq; dropped and counted when the queue is full. Takes pkt. */
void ns_eth_output(struct ns_link *l, struct ns_iface *ifc, struct ns_pkt *pkt,
                   const struct ns_mac *dst, uint16_t type);

#endif
