/* Shared set-up for the whole-stack fuzz targets: one stack with an address,
 * a gateway, a permanent and a resolved neighbour, a bound UDP socket, a
 * pending resolution with queued packets, and a datagram half reassembled,
 * so fuzzed frames reach every state the input path has. */
#ifndef NS_FUZZ_COMMON_H
#define NS_FUZZ_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "stack/stack.h"

#define FZ_OUR_IP   0xc6120002u /* 198.18.0.2 */
#define FZ_PEER_IP  0xc6120001u /* 198.18.0.1, resolved (STALE) */
#define FZ_PERM_IP  0xc6120003u /* 198.18.0.3, permanent */
#define FZ_UNRES_IP 0xc6120009u /* 198.18.0.9, INCOMPLETE with a queue */

static const struct ns_mac fz_our_mac = {{0x02, 0, 0, 0, 0, 0x02}};
static const struct ns_mac fz_peer_mac = {{0x02, 0, 0, 0, 0, 0x01}};

static void fz_drain(struct ns_stack *s)
{
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(s, 1)))
        ns_pkt_free(p);
}

static struct ns_udp_sock *fz_udp;

static struct ns_stack *fz_stack_new(uint64_t now)
{
    struct ns_stack_config cfg = {.seed = 42};
    struct ns_stack *s = ns_stack_new(&cfg, now);
    if (!s)
        return NULL;
    int idx = ns_stack_add_iface(s, "fz0", &fz_our_mac, 1500);
    ns_stack_set_addr(s, (uint32_t)idx, FZ_OUR_IP, 24, now);
    ns_stack_set_gateway(s, FZ_PEER_IP);
    ns_stack_iface_up(s, (uint32_t)idx, now);
    uint32_t k = htonl(FZ_PERM_IP);
    ns_neigh_admin_set(&s->arp.tbl, (uint32_t)idx, &k, fz_peer_mac.b, NS_NUD_PERMANENT, now);
    k = htonl(FZ_PEER_IP);
    ns_neigh_admin_set(&s->arp.tbl, (uint32_t)idx, &k, fz_peer_mac.b, NS_NUD_STALE, now);
    fz_udp = ns_udp_open(&s->ip);
    if (fz_udp) {
        ns_udp_bind(fz_udp, 0, 9);
        /* Two datagrams wait for 198.18.0.9 to resolve. */
        ns_udp_sendto(fz_udp, "queued-1", 8, FZ_UNRES_IP, 7, now);
        ns_udp_sendto(fz_udp, "queued-2", 8, FZ_UNRES_IP, 7, now);
    }
    ns_icmp_echo_send(&s->ip, FZ_PEER_IP, 0x1234, 1, 56, 0, now);
    fz_drain(s);
    return s;
}

#endif
