/* Simulation harness: stacks over memlinks on a virtual clock (sim.h). */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/pcap.h"

#define SIM_BATCH 64
/* Rounds at one instant before the harness declares a livelock (frames
 * bouncing with zero delay forever). */
#define SIM_MAX_ROUNDS 1000000

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Seed 0 means "from the OS" to ns_stack_new: never hand it out. */
static uint64_t derive_seed(uint64_t seed, uint64_t salt)
{
    uint64_t s = mix(mix(seed) ^ salt);
    return s ? s : 1;
}

struct sim *sim_new(uint64_t seed)
{
    struct sim *sim = calloc(1, sizeof(*sim));
    if (sim)
        sim->seed = seed;
    return sim;
}

void sim_free(struct sim *sim)
{
    if (!sim)
        return;
    for (int i = 0; i < sim->n_links; i++) {
        struct sim_link *l = &sim->links[i];
        for (int s = 0; s < 2; s++) {
            ns_pktq_purge(&l->pending[s]);
            ns_dev_close(l->end[s]);
        }
        ns_memlink_free(l->ml);
    }
    for (int i = 0; i < sim->n_nodes; i++) {
        ns_stack_free(sim->nodes[i].s);
        free(sim->nodes[i].icmp);
    }
    free(sim);
}

static void on_icmp(void *ctx, const struct ns_icmp_event *ev, uint64_t now)
{
    struct sim_node *n = ctx;
    if (n->n_icmp == n->cap_icmp) {
        size_t cap = n->cap_icmp ? 2 * n->cap_icmp : 256;
        struct sim_icmp_rec *r = realloc(n->icmp, cap * sizeof(*r));
        if (!r)
            abort();
        n->icmp = r;
        n->cap_icmp = cap;
    }
    n->icmp[n->n_icmp++] = (struct sim_icmp_rec){*ev, now};
    if (n->icmp_fn)
        n->icmp_fn(n->icmp_ctx, n->id, ev, now);
}

int sim_add_stack(struct sim *sim, const char *name, uint32_t ip, uint8_t plen,
                  const struct ns_mac *mac)
{
    if (sim->n_nodes >= SIM_MAX_NODES || strlen(name) >= sizeof(sim->nodes[0].name))
        return -1;
    int id = sim->n_nodes;
    struct sim_node *n = &sim->nodes[id];
    memset(n, 0, sizeof(*n));
    struct ns_stack_config cfg = {.seed = derive_seed(sim->seed, (uint64_t)id + 1)};
    n->s = ns_stack_new(&cfg, sim->now);
    if (!n->s)
        return -1;
    snprintf(n->name, sizeof(n->name), "%s", name);
    n->id = id;
    n->ip = ip;
    n->plen = plen;
    if (mac)
        n->mac = *mac;
    else
        ns_dev_mac_from_name(name, &n->mac);
    ns_stack_set_icmp_event(n->s, on_icmp, n);
    sim->n_nodes++;
    return id;
}

static int add_iface(struct sim *sim, struct sim_node *n, uint32_t mtu, struct ns_mac *mac)
{
    char ifname[NS_IFNAMSIZ];
    snprintf(ifname, sizeof(ifname), "eth%d", n->n_ifaces);
    *mac = n->mac;
    mac->b[5] = (uint8_t)(mac->b[5] + n->n_ifaces);
    int idx = ns_stack_add_iface(n->s, ifname, mac, mtu);
    if (idx < 0)
        return -1;
    if (n->n_ifaces == 0 && n->ip &&
        ns_stack_set_addr(n->s, (uint32_t)idx, n->ip, n->plen, sim->now) < 0)
        return -1;
    n->n_ifaces++;
    return idx;
}

int sim_link(struct sim *sim, int a, int b, const struct ns_memlink_cfg *cfg)
{
    if (sim->n_links >= SIM_MAX_LINKS || a < 0 || b < 0 || a >= sim->n_nodes || b >= sim->n_nodes ||
        a == b)
        return -1;
    int id = sim->n_links;
    struct sim_link *l = &sim->links[id];
    memset(l, 0, sizeof(*l));
    struct ns_memlink_cfg c = cfg ? *cfg : (struct ns_memlink_cfg){0};
    if (!c.mtu)
        c.mtu = 1500;
    if (!c.seed)
        c.seed = derive_seed(sim->seed, 0x1000 + (uint64_t)id);
    struct sim_node *na = &sim->nodes[a], *nb = &sim->nodes[b];
    int ia = add_iface(sim, na, c.mtu, &c.mac[0]);
    int ib = add_iface(sim, nb, c.mtu, &c.mac[1]);
    if (ia < 0 || ib < 0)
        return -1;
    c.name[0] = na->name;
    c.name[1] = nb->name;
    l->ml = ns_memlink_new(&c);
    if (!l->ml)
        return -1;
    l->node[0] = a;
    l->node[1] = b;
    l->ifindex[0] = (uint32_t)ia;
    l->ifindex[1] = (uint32_t)ib;
    l->end[0] = ns_memlink_end(l->ml, 0);
    l->end[1] = ns_memlink_end(l->ml, 1);
    ns_pktq_init(&l->pending[0]);
    ns_pktq_init(&l->pending[1]);
    sim->n_links++;
    ns_stack_iface_up(na->s, (uint32_t)ia, sim->now);
    ns_stack_iface_up(nb->s, (uint32_t)ib, sim->now);
    return id;
}

int sim_link_pcap(struct sim *sim, int link, int side, const char *path)
{
    if (link < 0 || link >= sim->n_links)
        return -1;
    struct sim_link *l = &sim->links[link];
    char err[160];
    struct ns_dev *t = ns_pcap_trace(l->end[side ? 1 : 0], path, NULL, err, sizeof(err));
    if (!t) {
        fprintf(stderr, "sim: %s\n", err);
        return -1;
    }
    l->end[side ? 1 : 0] = t;
    return 0;
}

/* Move a stack's transmit queue into its link end. True if anything went. */
static bool flush_tx(struct sim *sim, struct sim_link *l, int side)
{
    struct ns_stack *s = sim->nodes[l->node[side]].s;
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(s, l->ifindex[side])))
        ns_pktq_push(&l->pending[side], p);
    bool moved = false;
    struct ns_pktq *q = &l->pending[side];
    while (q->count) {
        struct ns_pkt *batch[SIM_BATCH];
        int n = 0;
        while (n < SIM_BATCH && q->head)
            batch[n++] = ns_pktq_pop(q);
        int took = ns_dev_send(l->end[side], batch, n, sim->now);
        if (took < 0)
            took = 0;
        if (took > 0)
            moved = true;
        if (took < n) {
            /* Put back what the device left, ahead of the rest. */
            struct ns_pktq rest;
            ns_pktq_init(&rest);
            for (int i = took; i < n; i++)
                ns_pktq_push(&rest, batch[i]);
            ns_pktq_splice(&rest, q);
            *q = rest;
            break;
        }
    }
    return moved;
}

static bool deliver_rx(struct sim *sim, struct sim_link *l, int side)
{
    struct ns_stack *s = sim->nodes[l->node[side]].s;
    bool got = false;
    for (;;) {
        struct ns_pkt *batch[SIM_BATCH];
        int n = ns_dev_recv(l->end[side], batch, SIM_BATCH, sim->now);
        if (n <= 0)
            break;
        got = true;
        for (int i = 0; i < n; i++)
            ns_stack_input_pkt(s, l->ifindex[side], batch[i], sim->now);
    }
    return got;
}

/* Everything that happens at sim->now, until nothing more does. */
static void settle(struct sim *sim)
{
    for (unsigned round = 0;; round++) {
        if (round >= SIM_MAX_ROUNDS) {
            fprintf(stderr, "sim: livelock at t=%llu us\n", (unsigned long long)sim->now);
            abort();
        }
        bool progress = false;
        for (int i = 0; i < sim->n_nodes; i++) {
            struct ns_stack *s = sim->nodes[i].s;
            if (ns_stack_next_deadline(s) <= sim->now) {
                ns_stack_poll(s, sim->now);
                progress = true;
            }
        }
        for (int i = 0; i < sim->n_links; i++)
            for (int side = 0; side < 2; side++)
                progress |= flush_tx(sim, &sim->links[i], side);
        for (int i = 0; i < sim->n_links; i++)
            for (int side = 0; side < 2; side++)
                progress |= deliver_rx(sim, &sim->links[i], side);
        if (!progress)
            return;
    }
}

static uint64_t next_event(const struct sim *sim)
{
    uint64_t next = NS_TIME_NEVER;
    for (int i = 0; i < sim->n_nodes; i++) {
        uint64_t d = ns_stack_next_deadline(sim->nodes[i].s);
        if (d < next)
            next = d;
    }
    for (int i = 0; i < sim->n_links; i++) {
        uint64_t d = ns_memlink_next_deadline(sim->links[i].ml);
        if (d < next)
            next = d;
    }
    return next;
}

void sim_run_until(struct sim *sim, uint64_t t)
{
    /* Work queued by the caller since the last run (an echo request just
     * sent, say) goes out at the current instant. */
    settle(sim);
    while (sim->now < t) {
        uint64_t next = next_event(sim);
        if (next > t) {
            sim->now = t;
            break;
        }
        /* A deadline already behind us cannot happen after settle(); never
         * step backwards if it does. */
        sim->now = next > sim->now ? next : sim->now;
        sim->steps++;
        settle(sim);
    }
    settle(sim);
}

void sim_run_for(struct sim *sim, uint64_t dt)
{
    sim_run_until(sim, sim->now + dt);
}

const struct sim_icmp_rec *sim_icmp_events(struct sim *sim, int node, size_t *n)
{
    *n = sim->nodes[node].n_icmp;
    return sim->nodes[node].icmp;
}

void sim_icmp_clear(struct sim *sim, int node)
{
    sim->nodes[node].n_icmp = 0;
}

void sim_on_icmp(struct sim *sim, int node, sim_icmp_fn fn, void *ctx)
{
    sim->nodes[node].icmp_fn = fn;
    sim->nodes[node].icmp_ctx = ctx;
}

size_t sim_icmp_count(struct sim *sim, int node, enum ns_icmp_event_kind kind)
{
    size_t c = 0;
    for (size_t i = 0; i < sim->nodes[node].n_icmp; i++)
        c += sim->nodes[node].icmp[i].ev.kind == kind;
    return c;
}

uint64_t sim_ctr(struct ns_stack *s, const char *group, const char *name)
{
    struct ns_ctr_group g[32];
    size_t n = ns_stack_counters(s, g, 32);
    for (size_t k = 0; k < n; k++) {
        if (strcmp(g[k].name, group) != 0)
            continue;
        for (size_t i = 0; i < g[k].n; i++)
            if (strcmp(g[k].names[i], name) == 0)
                return g[k].vals[i];
    }
    fprintf(stderr, "sim_ctr: no counter %s.%s\n", group, name);
    abort();
}
