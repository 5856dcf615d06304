/* Simulation harness for tests: several stack instances joined by memlinks
 * on one virtual clock. Everything is deterministic from the seeds: run the
 * same scenario twice and every frame, counter and event is the same.
 *
 *   struct sim *sim = sim_new(1);
 *   int a = sim_add_stack(sim, "a", SIM_IP(198, 18, 0, 1), 24, NULL);
 *   int b = sim_add_stack(sim, "b", SIM_IP(198, 18, 0, 2), 24, NULL);
 *   sim_link(sim, a, b, &(struct ns_memlink_cfg){.delay_us = 1000});
 *   ns_icmp_echo_send(&sim_stack(sim, a)->ip, SIM_IP(198, 18, 0, 2), 1, 1, 56, 0, sim_now(sim));
 *   sim_run_for(sim, 100 * NS_MS);
 *
 * The run loop, at each instant: fires due timers (ns_stack_poll), moves
 * every interface's transmit queue into its link end, hands every frame
 * due at that end to its stack, and repeats until nothing moves; then it
 * jumps to the earliest stack deadline or link delivery. It never
 * busy-waits and stops exactly at the requested time.
 */
#ifndef NS_TESTS_SIM_H
#define NS_TESTS_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "dev/memlink.h"
#include "stack/stack.h"

#define SIM_MAX_NODES 16
#define SIM_MAX_LINKS 32
#define SIM_IP(a, b, c, d)                                                                         \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

struct sim_icmp_rec {
    struct ns_icmp_event ev;
    uint64_t at;
};

struct sim_node;
typedef void (*sim_icmp_fn)(void *ctx, int node, const struct ns_icmp_event *ev, uint64_t now);

struct sim_node {
    char name[16];
    int id;
    struct ns_stack *s;
    uint32_t ip;
    uint8_t plen;
    struct ns_mac mac;
    int n_ifaces;
    struct sim_icmp_rec *icmp; /* every ICMP event, in order */
    size_t n_icmp, cap_icmp;
    sim_icmp_fn icmp_fn; /* optional, called after recording */
    void *icmp_ctx;
};

struct sim_link {
    struct ns_memlink *ml;
    struct ns_dev *end[2]; /* the memlink ends, or pcap tracers around them */
    int node[2];
    uint32_t ifindex[2];
    struct ns_pktq pending[2]; /* frames the end did not take yet */
};

struct sim {
    uint64_t now;
    uint64_t seed;
    uint64_t steps; /* instants visited by the run loop */
    struct sim_node nodes[SIM_MAX_NODES];
    int n_nodes;
    struct sim_link links[SIM_MAX_LINKS];
    int n_links;
};

/* A simulation at time 0. Stack i gets a seed derived from (seed, i), a
 * link with cfg->seed 0 one derived from (seed, link index). */
struct sim *sim_new(uint64_t seed);
void sim_free(struct sim *sim);

/* A stack named `name` (at most 15 characters). ip (host order) and plen go
 * on its first interface once it is linked; ip 0 = none. mac NULL: derived
 * from the name. The k-th interface (eth<k>) uses mac with k added to its
 * last byte. Returns the node id, or -1. */
int sim_add_stack(struct sim *sim, const char *name, uint32_t ip, uint8_t plen,
                  const struct ns_mac *mac);
/* Join nodes a and b with a memlink (cfg NULL: ideal link). Adds an
 * interface on each, sets the node's address on its first one, brings both
 * up (which announces the addresses at the current time). Returns the link
 * id, or -1. The memlink's mtu, macs and names are set from the nodes. */
int sim_link(struct sim *sim, int a, int b, const struct ns_memlink_cfg *cfg);
/* Record what end `side` (0 = node a, 1 = node b) of a link sends and
 * receives in a pcap file, with virtual timestamps. 0 or -1. */
int sim_link_pcap(struct sim *sim, int link, int side, const char *path);

static inline struct ns_stack *sim_stack(struct sim *sim, int node)
{
    return sim->nodes[node].s;
}
static inline uint64_t sim_now(const struct sim *sim)
{
    return sim->now;
}
static inline struct ns_memlink *sim_memlink(struct sim *sim, int link)
{
    return sim->links[link].ml;
}
/* The interface index the link uses on node side (0 = a, 1 = b). */
static inline uint32_t sim_ifindex(struct sim *sim, int link, int side)
{
    return sim->links[link].ifindex[side];
}

/* Run until virtual time t (no-op if t <= now), or for dt more. */
/* A counter of s by group and name as `nstack stats` lists it; aborts the
 * test when there is no such counter. */
uint64_t sim_ctr(struct ns_stack *s, const char *group, const char *name);
/* Test bytes that differ with position and seed. */
static inline void sim_pattern(uint8_t *b, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}
void sim_run_until(struct sim *sim, uint64_t t);
void sim_run_for(struct sim *sim, uint64_t dt);

/* ICMP events (echo replies, errors) node received so far. */
const struct sim_icmp_rec *sim_icmp_events(struct sim *sim, int node, size_t *n);
void sim_icmp_clear(struct sim *sim, int node);
void sim_on_icmp(struct sim *sim, int node, sim_icmp_fn fn, void *ctx);
/* Count of node's events of kind (NS_ICMP_EV_ECHO_REPLY / _ERROR). */
size_t sim_icmp_count(struct sim *sim, int node, enum ns_icmp_event_kind kind);

#endif
