/* Simulated SCTP packet network for tests (see sctp_pipe.h). */
#include "sctp_pipe.h"

#include <stdlib.h>
#include <string.h>

#include "sctp/chunk.h"
#include "sctp/crc32c.h"

struct sp_flight {
    struct sp_flight *next;
    uint64_t at, seq;
    struct ns_pkt *p;
    struct ns_sctp_addr src, dst;
};

static void node_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    struct sp_node *n = ctx;
    if (n->n_ev == n->cap_ev) {
        n->cap_ev = n->cap_ev ? 2 * n->cap_ev : 64;
        n->ev = realloc(n->ev, n->cap_ev * sizeof(*n->ev));
    }
    n->ev[n->n_ev++] = *ev;
    if (n->on_event)
        n->on_event(n->ev_ctx, n, ev, now);
}

static void node_output(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst, uint64_t now)
{
    struct sp_node *n = ctx;
    struct ns_sctp_addr s = *src;
    if (s.addr == 0 && n->n_addrs) /* the "transport" picks our first address */
        s = n->addrs[0];
    if (n->capture) {
        if (n->n_out == n->cap_out) {
            n->cap_out = n->cap_out ? 2 * n->cap_out : 16;
            n->out = realloc(n->out, n->cap_out * sizeof(*n->out));
        }
        n->out[n->n_out++] = (struct sp_out){p, s, *dst, now};
        return;
    }
    sp_send(n->net, p, &s, dst);
}

static void node_confirm(void *ctx, const struct ns_sctp_addr *dst, uint64_t now)
{
    struct sp_node *n = ctx;
    (void)dst;
    (void)now;
    n->confirms++;
}

static int node_engine(struct sp_node *nd)
{
    struct ns_sctp_config cfg = {
        .params = &nd->params,
        .timers = &nd->timers,
        .rng = &nd->rng,
        .default_pmtu = nd->pmtu,
        .cookie_secret_from_rng = true,
        .ops = {.output = node_output,
                .event = node_event,
                .path_confirm = node_confirm,
                .ctx = nd},
    };
    return ns_sctp_init(&nd->sctp, &cfg, nd->net->now);
}

struct sp_net *sp_net_new(uint64_t seed)
{
    struct sp_net *net = calloc(1, sizeof(*net));
    ns_rng_seed(&net->rng, seed);
    net->now = 1000000; /* start away from 0 so "time 0" bugs show */
    return net;
}

void sp_net_free(struct sp_net *net)
{
    while (net->fl) {
        struct sp_flight *f = net->fl;
        net->fl = f->next;
        ns_pkt_free(f->p);
        free(f);
    }
    for (int i = 0; i < net->n_nodes; i++) {
        struct sp_node *n = net->nodes[i];
        sp_out_clear(n);
        ns_sctp_free(&n->sctp);
        ns_timers_free(&n->timers);
        free(n->out);
        free(n->ev);
        free(n);
    }
    free(net);
}

struct sp_node *sp_node_new_pmtu(struct sp_net *net, const uint32_t *addrs, int n,
                                 const struct ns_sctp_params *params, uint32_t pmtu)
{
    if (net->n_nodes == SP_MAX_NODES || n > SP_MAX_ADDRS)
        return NULL;
    struct sp_node *nd = calloc(1, sizeof(*nd));
    nd->net = net;
    nd->id = net->n_nodes;
    ns_timers_init(&nd->timers);
    ns_rng_seed(&nd->rng, ns_rng_u64(&net->rng));
    for (int i = 0; i < n; i++)
        nd->addrs[i] = sp_addr(addrs[i]);
    nd->n_addrs = n;
    if (params)
        nd->params = *params;
    else
        ns_sctp_params_default(&nd->params);
    nd->pmtu = pmtu;
    if (node_engine(nd) != 0) {
        ns_timers_free(&nd->timers);
        free(nd);
        return NULL;
    }
    net->nodes[net->n_nodes++] = nd;
    return nd;
}

void sp_node_reboot(struct sp_node *n)
{
    ns_sctp_free(&n->sctp);
    ns_timers_free(&n->timers);
    ns_timers_init(&n->timers);
    node_engine(n);
}

struct sp_node *sp_node_new(struct sp_net *net, const uint32_t *addrs, int n,
                            const struct ns_sctp_params *params)
{
    return sp_node_new_pmtu(net, addrs, n, params, 0);
}

static struct sp_node *owner(struct sp_net *net, const struct ns_sctp_addr *a)
{
    for (int i = 0; i < net->n_nodes; i++) {
        struct sp_node *n = net->nodes[i];
        for (int k = 0; k < n->n_addrs; k++) {
            if (n->addrs[k].addr == a->addr)
                return n;
        }
    }
    return NULL;
}

static bool is_down(const struct sp_net *net, uint32_t ip)
{
    for (int i = 0; i < net->n_down; i++) {
        if (net->down[i] == ip)
            return true;
    }
    return false;
}

void sp_addr_down(struct sp_net *net, uint32_t ip, bool down)
{
    for (int i = 0; i < net->n_down; i++) {
        if (net->down[i] == ip) {
            if (!down)
                net->down[i] = net->down[--net->n_down];
            return;
        }
    }
    if (down && net->n_down < SP_MAX_NODES * SP_MAX_ADDRS)
        net->down[net->n_down++] = ip;
}

static void schedule(struct sp_net *net, struct ns_pkt *p, const struct ns_sctp_addr *src,
                     const struct ns_sctp_addr *dst)
{
    uint64_t at = net->now + net->link.delay_us;
    if (net->link.jitter_us &&
        (!net->link.reorder_ppm || ns_rng_below(&net->rng, 1000000) < net->link.reorder_ppm))
        at += ns_rng_below(&net->rng, net->link.jitter_us + 1);
    struct sp_flight *f = malloc(sizeof(*f));
    *f = (struct sp_flight){NULL, at, net->seq++, p, *src, *dst};
    struct sp_flight **pp = &net->fl;
    while (*pp && ((*pp)->at < at || ((*pp)->at == at && (*pp)->seq < f->seq)))
        pp = &(*pp)->next;
    f->next = *pp;
    *pp = f;
}

void sp_send(struct sp_net *net, struct ns_pkt *p, const struct ns_sctp_addr *src,
             const struct ns_sctp_addr *dst)
{
    net->sent++;
    if (is_down(net, src->addr) || is_down(net, dst->addr)) {
        net->lost++;
        ns_pkt_free(p);
        return;
    }
    if (net->filter) {
        struct ns_pkt *c = ns_pkt_copy(p);
        bool keep = net->filter(net->filter_ctx, net, c->data, c->len, src, dst);
        ns_pkt_free(c);
        if (!keep) {
            net->filtered++;
            ns_pkt_free(p);
            return;
        }
    }
    if (net->link.loss_ppm && ns_rng_below(&net->rng, 1000000) < net->link.loss_ppm) {
        net->lost++;
        ns_pkt_free(p);
        return;
    }
    if (net->link.dup_ppm && ns_rng_below(&net->rng, 1000000) < net->link.dup_ppm) {
        net->dups++;
        schedule(net, ns_pkt_copy(p), src, dst);
    }
    schedule(net, p, src, dst);
}

void sp_deliver(struct sp_net *net, struct ns_pkt *p, const struct ns_sctp_addr *src,
                const struct ns_sctp_addr *dst)
{
    struct sp_node *n = owner(net, dst);
    if (!n) {
        net->unroutable++;
        ns_pkt_free(p);
        return;
    }
    net->delivered++;
    ns_sctp_input(&n->sctp, p, src, dst, net->now);
}

void sp_inject(struct sp_net *net, struct sp_node *to, const void *bytes, uint32_t len,
               const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst)
{
    ns_sctp_input(&to->sctp, ns_pkt_from(bytes, len), src, dst, net->now);
}

uint64_t sp_next_deadline(struct sp_node *n)
{
    return ns_timers_next(&n->timers);
}

void sp_timers(struct sp_net *net)
{
    for (int i = 0; i < net->n_nodes; i++)
        ns_timers_run(&net->nodes[i]->timers, net->now);
}

void sp_run_until(struct sp_net *net, uint64_t t)
{
    for (;;) {
        uint64_t next = net->fl ? net->fl->at : NS_TIME_NEVER;
        for (int i = 0; i < net->n_nodes; i++) {
            uint64_t d = ns_timers_next(&net->nodes[i]->timers);
            if (d < next)
                next = d;
        }
        if (next > t)
            break;
        if (next > net->now)
            net->now = next;
        net->steps++;
        while (net->fl && net->fl->at <= net->now) {
            struct sp_flight *f = net->fl;
            net->fl = f->next;
            sp_deliver(net, f->p, &f->src, &f->dst);
            free(f);
        }
        sp_timers(net);
    }
    if (t > net->now)
        net->now = t;
}

void sp_run_for(struct sp_net *net, uint64_t dt)
{
    sp_run_until(net, net->now + dt);
}

bool sp_run_until_pred(struct sp_net *net, uint64_t t_max, bool (*pred)(void *ctx), void *ctx)
{
    while (!pred(ctx)) {
        uint64_t next = net->fl ? net->fl->at : NS_TIME_NEVER;
        for (int i = 0; i < net->n_nodes; i++) {
            uint64_t d = ns_timers_next(&net->nodes[i]->timers);
            if (d < next)
                next = d;
        }
        if (next > t_max) {
            net->now = t_max > net->now ? t_max : net->now;
            return pred(ctx);
        }
        sp_run_until(net, next > net->now ? next : net->now);
    }
    return true;
}

/* ---- Capture mode ----------------------------------------------------- */

static void out_remove(struct sp_node *n, size_t i)
{
    memmove(&n->out[i], &n->out[i + 1], (n->n_out - i - 1) * sizeof(*n->out));
    n->n_out--;
}

void sp_out_forward(struct sp_node *n, size_t i)
{
    if (i >= n->n_out)
        return;
    struct sp_out o = n->out[i];
    out_remove(n, i);
    sp_send(n->net, o.p, &o.src, &o.dst);
}

void sp_out_drop(struct sp_node *n, size_t i)
{
    if (i >= n->n_out)
        return;
    ns_pkt_free(n->out[i].p);
    out_remove(n, i);
}

void sp_out_clear(struct sp_node *n)
{
    for (size_t i = 0; i < n->n_out; i++)
        ns_pkt_free(n->out[i].p);
    n->n_out = 0;
}

const uint8_t *sp_out_bytes(struct sp_node *n, size_t i, uint32_t *len)
{
    if (i >= n->n_out)
        return NULL;
    struct ns_pkt *p = n->out[i].p;
    if (p->nfrags && !ns_pkt_linearize(p, 0))
        return NULL;
    *len = p->len;
    return p->data;
}

uint32_t sp_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint16_t sp_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t sp_chunk_off(const uint8_t *pkt, uint32_t len, int k)
{
    uint32_t off = NS_SCTP_COMMON_HLEN;
    for (int i = 0; off + 4 <= len; i++) {
        if (i == k)
            return off;
        uint16_t cl = sp_rd16(pkt + off + 2);
        if (cl < 4)
            return 0;
        off += (cl + 3u) & ~3u;
    }
    return 0;
}

int sp_chunk_type(const uint8_t *pkt, uint32_t len, int k)
{
    uint32_t off = sp_chunk_off(pkt, len, k);
    return off ? pkt[off] : -1;
}

int sp_chunk_count(const uint8_t *pkt, uint32_t len)
{
    int n = 0;
    while (sp_chunk_off(pkt, len, n))
        n++;
    return n;
}

void sp_fix_csum(uint8_t *pkt, uint32_t len)
{
    memset(pkt + NS_SCTP_CSUM_OFF, 0, 4);
    uint32_t c = ns_sctp_checksum(pkt, len);
    pkt[8] = (uint8_t)c;
    pkt[9] = (uint8_t)(c >> 8);
    pkt[10] = (uint8_t)(c >> 16);
    pkt[11] = (uint8_t)(c >> 24);
}

size_t sp_count_ev(const struct sp_node *n, enum ns_sctp_event_type t)
{
    size_t c = 0;
    for (size_t i = 0; i < n->n_ev; i++)
        c += n->ev[i].type == t;
    return c;
}

const struct ns_sctp_event *sp_last_ev(const struct sp_node *n, enum ns_sctp_event_type t)
{
    for (size_t i = n->n_ev; i-- > 0;) {
        if (n->ev[i].type == t)
            return &n->ev[i];
    }
    return NULL;
}

void sp_clear_ev(struct sp_node *n)
{
    n->n_ev = 0;
}

/* ---- Pairs ------------------------------------------------------------- */

void sp_pair_nodes(struct sp_pair *p, uint64_t seed, const struct ns_sctp_params *pa,
                   const struct ns_sctp_params *pb, int n_a, int n_b, uint64_t delay_us)
{
    memset(p, 0, sizeof(*p));
    uint32_t ia[2] = {SP_IP_A, SP_IP_A2}, ib[2] = {SP_IP_B, SP_IP_B2};
    p->net = sp_net_new(seed);
    p->net->link.delay_us = delay_us;
    p->a = sp_node_new(p->net, ia, n_a, pa);
    p->b = sp_node_new(p->net, ib, n_b, pb);
    struct ns_sctp_addr la[2] = {sp_addr(ia[0]), sp_addr(ia[1])};
    struct ns_sctp_addr lb[2] = {sp_addr(ib[0]), sp_addr(ib[1])};
    p->ea = ns_sctp_ep_new(&p->a->sctp, SP_PORT_A, la, (unsigned)n_a, NULL);
    p->eb = ns_sctp_ep_new(&p->b->sctp, SP_PORT_B, lb, (unsigned)n_b, NULL);
    ns_sctp_ep_listen(p->eb, true);
}

static bool pair_up(void *ctx)
{
    struct sp_pair *p = ctx;
    return sp_count_ev(p->a, NS_SCTP_EV_COMM_UP) && sp_count_ev(p->b, NS_SCTP_EV_COMM_UP);
}

bool sp_pair_setup(struct sp_pair *p, uint64_t seed, const struct ns_sctp_params *pa,
                   const struct ns_sctp_params *pb, int n_a, int n_b, uint64_t delay_us)
{
    sp_pair_nodes(p, seed, pa, pb, n_a, n_b, delay_us);
    struct ns_sctp_addr peer = sp_addr(SP_IP_B);
    p->aa = ns_sctp_connect(p->ea, &peer, 1, SP_PORT_B, p->net->now, NULL);
    if (!p->aa)
        return false;
    if (!sp_run_until_pred(p->net, p->net->now + 10 * NS_SEC, pair_up, p))
        return false;
    p->ab = sp_last_ev(p->b, NS_SCTP_EV_COMM_UP)->assoc;
    return true;
}

void sp_pair_free(struct sp_pair *p)
{
    sp_net_free(p->net);
    memset(p, 0, sizeof(*p));
}

uint32_t sp_drain(struct sp_net *net, struct ns_sctp_assoc *as)
{
    struct ns_sctp_rmsgq q;
    ns_sctp_rmsgq_init(&q);
    ns_sctp_recv_take(as, &q);
    uint32_t n = 0;
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&q))) {
        ns_sctp_msg_free(as, m, net->now);
        n++;
    }
    return n;
}
