/* Test support: SCTP engines (src/sctp/sctp.h) joined by a simulated
 * network of SCTP packets on one virtual clock, with seeded loss,
 * duplication, reordering (delay jitter) and addresses that can be cut.
 * Everything is deterministic from the seeds.
 *
 *   struct sp_net *net = sp_net_new(7);
 *   struct sp_node *a = sp_node_new(net, (uint32_t[]){SP_IP(198,18,0,1)}, 1, NULL);
 *   struct sp_node *b = sp_node_new(net, (uint32_t[]){SP_IP(198,18,1,1)}, 1, NULL);
 *   ... ns_sctp_ep_new(&b->sctp, ...), ns_sctp_connect(...)
 *   sp_run_for(net, 1 * NS_SEC);
 *
 * A node in capture mode keeps its output packets (sp_node.out) instead of
 * sending them, so unit tests can look at every byte and forward, drop or
 * rewrite each packet themselves.
 */
#ifndef NS_TESTS_SCTP_PIPE_H
#define NS_TESTS_SCTP_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sctp/sctp.h"

#define SP_IP(a, b, c, d)                                                                          \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define SP_MAX_NODES 8
#define SP_MAX_ADDRS 4

struct sp_net;

/* A packet the node sent (capture mode). */
struct sp_out {
    struct ns_pkt *p;
    struct ns_sctp_addr src, dst;
    uint64_t at;
};

struct sp_node {
    struct sp_net *net;
    int id;
    struct ns_sctp sctp;
    struct ns_timers timers;
    struct ns_rng rng;
    struct ns_sctp_addr addrs[SP_MAX_ADDRS];
    int n_addrs;

    /* Every event, in order (assoc pointers may dangle after release). */
    struct ns_sctp_event *ev;
    size_t n_ev, cap_ev;
    /* Called after an event is recorded (may call into the engine). */
    void (*on_event)(void *ctx, struct sp_node *n, const struct ns_sctp_event *ev, uint64_t now);
    void *ev_ctx;

    bool capture;
    struct sp_out *out;
    size_t n_out, cap_out;

    uint64_t confirms; /* path_confirm callbacks */

    struct ns_sctp_params params;
    uint32_t pmtu;
};

struct sp_link_cfg {
    uint64_t delay_us;    /* one-way base delay */
    uint64_t jitter_us;   /* extra uniform delay in [0, jitter]: reorders packets */
    uint32_t reorder_ppm; /* packets that get the jitter, per million (0: all) */
    uint32_t loss_ppm;    /* packets lost, per million */
    uint32_t dup_ppm;     /* packets delivered twice, per million */
};

/* Called for every packet entering the network; return false to drop it. */
typedef bool (*sp_filter_fn)(void *ctx, struct sp_net *net, const uint8_t *pkt, uint32_t len,
                             const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst);

struct sp_flight;

struct sp_net {
    uint64_t now;
    struct ns_rng rng;
    struct sp_link_cfg link;
    struct sp_node *nodes[SP_MAX_NODES];
    int n_nodes;
    struct sp_flight *fl; /* in flight, ordered by delivery time then sequence */
    uint64_t seq;
    sp_filter_fn filter;
    void *filter_ctx;
    uint32_t down[SP_MAX_NODES * SP_MAX_ADDRS]; /* addresses whose packets vanish */
    int n_down;
    /* statistics */
    uint64_t sent, lost, dups, delivered, filtered, unroutable, steps;
};

struct sp_net *sp_net_new(uint64_t seed);
void sp_net_free(struct sp_net *net);
/* A node with n addresses (host order) and params (NULL = defaults, with
 * the cookie secret drawn from the node's seeded rng). */
struct sp_node *sp_node_new(struct sp_net *net, const uint32_t *addrs, int n,
                            const struct ns_sctp_params *params);
/* Same with a default PMTU. */
struct sp_node *sp_node_new_pmtu(struct sp_net *net, const uint32_t *addrs, int n,
                                 const struct ns_sctp_params *params, uint32_t pmtu);

/* Lose all state (a crash and reboot): a fresh engine with the same
 * addresses and params; events and captured packets are kept. */
void sp_node_reboot(struct sp_node *n);

static inline struct ns_sctp_addr sp_addr(uint32_t ip)
{
    return (struct ns_sctp_addr){NS_SCTP_AF_INET4, 0, ip};
}

/* Put a packet on the network at the current time (takes p). */
void sp_send(struct sp_net *net, struct ns_pkt *p, const struct ns_sctp_addr *src,
             const struct ns_sctp_addr *dst);
/* Hand a packet straight to the node owning dst, now (takes p). */
void sp_deliver(struct sp_net *net, struct ns_pkt *p, const struct ns_sctp_addr *src,
                const struct ns_sctp_addr *dst);
/* Bytes straight to a node (a copy is made). */
void sp_inject(struct sp_net *net, struct sp_node *to, const void *bytes, uint32_t len,
               const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst);

/* Run until virtual time t (timers fire on the way), or for dt more. */
void sp_run_until(struct sp_net *net, uint64_t t);
void sp_run_for(struct sp_net *net, uint64_t dt);
/* Run until pred(ctx) is true or t_max passes; returns pred's last value. */
bool sp_run_until_pred(struct sp_net *net, uint64_t t_max, bool (*pred)(void *ctx), void *ctx);
/* Fire the timers of every node due now. */
void sp_timers(struct sp_net *net);
/* The earliest timer deadline of a node. */
uint64_t sp_next_deadline(struct sp_node *n);

void sp_addr_down(struct sp_net *net, uint32_t ip, bool down);

/* Capture mode helpers. */
/* Forward captured packet i of node n onto the network (or drop it), removing it. */
void sp_out_forward(struct sp_node *n, size_t i);
void sp_out_drop(struct sp_node *n, size_t i);
void sp_out_clear(struct sp_node *n);
/* Linear copy of captured packet i (NULL if i is out of range); *len set. */
const uint8_t *sp_out_bytes(struct sp_node *n, size_t i, uint32_t *len);
/* Chunk type of the k-th chunk of a linear SCTP packet, -1 if absent. */
int sp_chunk_type(const uint8_t *pkt, uint32_t len, int k);
int sp_chunk_count(const uint8_t *pkt, uint32_t len);
/* Offset of the k-th chunk, 0 if absent. */
uint32_t sp_chunk_off(const uint8_t *pkt, uint32_t len, int k);
uint32_t sp_rd32(const uint8_t *p);
uint16_t sp_rd16(const uint8_t *p);
/* Recompute the CRC32c of a linear packet after a test edited it. */
void sp_fix_csum(uint8_t *pkt, uint32_t len);

/* Two nodes on one network: b listens on SP_PORT_B, a connects from
 * SP_PORT_A. sp_pair_setup runs until both sides are ESTABLISHED. */
#define SP_IP_A   SP_IP(198, 18, 0, 1)
#define SP_IP_A2  SP_IP(198, 18, 0, 2)
#define SP_IP_B   SP_IP(198, 18, 1, 1)
#define SP_IP_B2  SP_IP(198, 18, 1, 2)
#define SP_PORT_A 4000
#define SP_PORT_B 5000

struct sp_pair {
    struct sp_net *net;
    struct sp_node *a, *b;
    struct ns_sctp_ep *ea, *eb;
    struct ns_sctp_assoc *aa, *ab; /* a's and b's association */
};

/* pa/pb: params of each side (NULL = defaults). The nodes have n_a / n_b
 * addresses (SP_IP_A, SP_IP_A2 / SP_IP_B, SP_IP_B2) and their endpoints
 * list them all. Returns false if the handshake did not finish in 10 s. */
bool sp_pair_setup(struct sp_pair *p, uint64_t seed, const struct ns_sctp_params *pa,
                   const struct ns_sctp_params *pb, int n_a, int n_b, uint64_t delay_us);
/* Nodes and endpoints only (capture mode off, nothing connected). */
void sp_pair_nodes(struct sp_pair *p, uint64_t seed, const struct ns_sctp_params *pa,
                   const struct ns_sctp_params *pb, int n_a, int n_b, uint64_t delay_us);
void sp_pair_free(struct sp_pair *p);
/* Take every delivered message of as, free them; returns how many. */
uint32_t sp_drain(struct sp_net *net, struct ns_sctp_assoc *as);

/* Events of a node. */
size_t sp_count_ev(const struct sp_node *n, enum ns_sctp_event_type t);
const struct ns_sctp_event *sp_last_ev(const struct sp_node *n, enum ns_sctp_event_type t);
void sp_clear_ev(struct sp_node *n);

#endif
