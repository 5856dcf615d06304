/* memlink: simulated point-to-point Ethernet link (see memlink.h). Frames in
 * flight towards each end sit in a min-heap keyed by (delivery time, send
 * sequence), so equal delivery times come out in sending order. */
#include "dev/memlink.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/timer.h"

struct ml_entry {
    uint64_t at;
    uint64_t seq;
    struct ns_pkt *pkt;
};

/* One direction: frames sent by end `from`, travelling to the other end. */
struct ml_dir {
    struct ml_entry *heap;
    uint32_t n, cap;
    uint64_t seq;
    uint64_t busy_until; /* the sender's serialiser is busy until then */
    struct ns_memlink_stats stats;
};

struct ml_end {
    struct ns_dev dev;
    struct ns_memlink *link;
    int side;
    bool closed;
};

struct ns_memlink {
    struct ns_memlink_cfg cfg;
    struct ns_rng rng;
    struct ml_end end[2];
    struct ml_dir dir[2]; /* indexed by the sending end */
};

static bool entry_before(const struct ml_entry *a, const struct ml_entry *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static bool heap_push(struct ml_dir *d, uint64_t at, struct ns_pkt *pkt)
{
    if (d->n == d->cap) {
        uint32_t ncap = d->cap ? d->cap * 2 : 64;
        struct ml_entry *nh = realloc(d->heap, ncap * sizeof(*nh));
        if (!nh)
            return false;
        d->heap = nh;
        d->cap = ncap;
    }
    struct ml_entry e = {at, d->seq++, pkt};
    uint32_t i = d->n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!entry_before(&e, &d->heap[parent]))
            break;
        d->heap[i] = d->heap[parent];
        i = parent;
    }
    d->heap[i] = e;
    return true;
}

static struct ns_pkt *heap_pop(struct ml_dir *d)
{
    struct ns_pkt *top = d->heap[0].pkt;
    struct ml_entry last = d->heap[--d->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = l;
        if (l >= d->n)
            break;
        if (r < d->n && entry_before(&d->heap[r], &d->heap[l]))
            m = r;
        if (!entry_before(&d->heap[m], &last))
            break;
        d->heap[i] = d->heap[m];
        i = m;
    }
    if (d->n)
        d->heap[i] = last;
    return top;
}

static void dir_purge(struct ml_dir *d, bool count)
{
    while (d->n) {
        ns_pkt_free(heap_pop(d));
        if (count)
            d->stats.drop_closed++;
    }
}

static bool chance(uint64_t draw, uint32_t ppm)
{
    return draw < ppm;
}

/* A frame on the wire carries bytes only: give the receiver a linear packet
 * with full headroom and none of the sender's metadata. */
static struct ns_pkt *wire_copy(struct ns_pkt *p)
{
    if (p->nfrags || ns_pkt_headroom(p) < NS_PKT_HEADROOM) {
        struct ns_pkt *c = ns_pkt_copy(p);
        ns_pkt_free(p);
        p = c;
        if (!p)
            return NULL;
    }
    p->next = NULL;
    p->ifindex = 0;
    p->nexthop = 0;
    p->l3_off = p->l4_off = 0;
    p->flags = 0;
    p->ts = 0;
    return p;
}

static int ml_send(struct ns_dev *dev, struct ns_pkt **pkts, int n, uint64_t now)
{
    struct ml_end *e = (struct ml_end *)dev;
    struct ns_memlink *l = e->link;
    const struct ns_memlink_cfg *c = &l->cfg;
    struct ml_dir *d = &l->dir[e->side];
    bool peer_closed = l->end[!e->side].closed;
    uint32_t limit = c->queue_limit ? c->queue_limit : NS_MEMLINK_DEFAULT_QLEN;

    for (int i = 0; i < n; i++) {
        struct ns_pkt *p = pkts[i];
        uint32_t len = ns_pkt_len(p);
        /* Every frame consumes the same draws whatever the outcome, so the
         * loss pattern for a seed does not shift when other knobs change. */
        uint64_t r_loss = ns_rng_below(&l->rng, NS_MEMLINK_MILLION);
        uint64_t r_dup = ns_rng_below(&l->rng, NS_MEMLINK_MILLION);
        uint64_t r_reorder = ns_rng_below(&l->rng, NS_MEMLINK_MILLION);
        uint64_t j1 = ns_rng_below(&l->rng, c->jitter_us + 1);
        uint64_t j2 = ns_rng_below(&l->rng, c->jitter_us + 1);

        d->stats.sent++;
        d->stats.sent_bytes += len;
        dev->stats.tx_frames++;
        dev->stats.tx_bytes += len;
        if (len > c->mtu + NS_ETH_HLEN) {
            d->stats.drop_oversize++;
            ns_pkt_free(p);
            continue;
        }
        if (peer_closed) {
            d->stats.drop_closed++;
            ns_pkt_free(p);
            continue;
        }
        if (d->n >= limit) {
            d->stats.drop_queue_full++;
            ns_pkt_free(p);
            continue;
        }
        if (chance(r_loss, c->loss_ppm)) {
            d->stats.lost++;
            ns_pkt_free(p);
            continue;
        }
        p = wire_copy(p);
        if (!p) {
            d->stats.drop_nomem++;
            continue;
        }
        uint64_t depart = now;
        if (c->rate_bytes_per_s) {
            uint64_t start = d->busy_until > now ? d->busy_until : now;
            uint64_t ser =
                ((uint64_t)len * 1000000 + c->rate_bytes_per_s - 1) / c->rate_bytes_per_s;
            d->busy_until = start + ser;
            depart = d->busy_until;
        }
        uint64_t at = depart + c->delay_us + j1;
        if (chance(r_reorder, c->reorder_ppm)) {
            at += c->reorder_delay_us;
            d->stats.reordered++;
        }
        struct ns_pkt *dup = NULL;
        if (chance(r_dup, c->dup_ppm)) {
            dup = ns_pkt_copy(p);
            if (!dup)
                d->stats.drop_nomem++;
        }
        if (!heap_push(d, at, p)) {
            d->stats.drop_nomem++;
            ns_pkt_free(p);
        }
        if (dup) {
            if (d->n >= limit) {
                d->stats.drop_queue_full++;
                ns_pkt_free(dup);
            } else if (!heap_push(d, depart + c->delay_us + j2, dup)) {
                d->stats.drop_nomem++;
                ns_pkt_free(dup);
            } else {
                d->stats.duplicated++;
            }
        }
    }
    return n;
}

static int ml_recv(struct ns_dev *dev, struct ns_pkt **pkts, int max, uint64_t now)
{
    struct ml_end *e = (struct ml_end *)dev;
    struct ml_dir *d = &e->link->dir[!e->side];
    int n = 0;
    while (n < max && d->n && d->heap[0].at <= now) {
        struct ns_pkt *p = heap_pop(d);
        uint32_t len = ns_pkt_len(p);
        d->stats.delivered++;
        d->stats.delivered_bytes += len;
        dev->stats.rx_frames++;
        dev->stats.rx_bytes += len;
        p->ts = now;
        pkts[n++] = p;
    }
    return n;
}

static void ml_close(struct ns_dev *dev)
{
    struct ml_end *e = (struct ml_end *)dev;
    e->closed = true;
    dir_purge(&e->link->dir[!e->side], true);
}

static const struct ns_dev_ops ml_ops = {
    .recv = ml_recv,
    .send = ml_send,
    .close = ml_close,
};

void ns_memlink_set_impairments(struct ns_memlink *l, const struct ns_memlink_cfg *cfg)
{
    struct ns_memlink_cfg *c = &l->cfg;
    c->loss_ppm = cfg->loss_ppm > NS_MEMLINK_MILLION ? NS_MEMLINK_MILLION : cfg->loss_ppm;
    c->dup_ppm = cfg->dup_ppm > NS_MEMLINK_MILLION ? NS_MEMLINK_MILLION : cfg->dup_ppm;
    c->reorder_ppm = cfg->reorder_ppm > NS_MEMLINK_MILLION ? NS_MEMLINK_MILLION : cfg->reorder_ppm;
    c->reorder_delay_us = cfg->reorder_delay_us;
    c->delay_us = cfg->delay_us;
    /* Bounded so that jitter_us + 1 cannot wrap. */
    c->jitter_us = cfg->jitter_us > UINT32_MAX ? UINT32_MAX : cfg->jitter_us;
    c->rate_bytes_per_s = cfg->rate_bytes_per_s;
    c->queue_limit = cfg->queue_limit;
}

struct ns_memlink *ns_memlink_new(const struct ns_memlink_cfg *cfg)
{
    struct ns_memlink *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    struct ns_memlink_cfg zero = {0};
    if (!cfg)
        cfg = &zero;
    l->cfg.seed = cfg->seed;
    l->cfg.mtu = cfg->mtu ? cfg->mtu : 1500;
    ns_memlink_set_impairments(l, cfg);
    ns_rng_seed(&l->rng, cfg->seed);
    for (int s = 0; s < 2; s++) {
        struct ml_end *e = &l->end[s];
        e->link = l;
        e->side = s;
        e->dev.ops = &ml_ops;
        e->dev.fd = -1;
        e->dev.rx_burst = 1;
        e->dev.mtu = l->cfg.mtu;
        if (ns_mac_eq(&cfg->mac[s], &ns_mac_zero))
            e->dev.mac = (struct ns_mac){{0x02, 0, 0, 0, 0, (uint8_t)(s + 1)}};
        else
            e->dev.mac = cfg->mac[s];
        snprintf(e->dev.name, sizeof(e->dev.name), "%s",
                 cfg->name[s] ? cfg->name[s] : (s ? "ml1" : "ml0"));
        l->dir[s].busy_until = 0;
    }
    l->cfg.mac[0] = l->end[0].dev.mac;
    l->cfg.mac[1] = l->end[1].dev.mac;
    l->cfg.name[0] = l->cfg.name[1] = NULL; /* the caller's strings may not outlive us */
    return l;
}

void ns_memlink_free(struct ns_memlink *l)
{
    if (!l)
        return;
    for (int s = 0; s < 2; s++) {
        dir_purge(&l->dir[s], false);
        free(l->dir[s].heap);
    }
    free(l);
}

struct ns_dev *ns_memlink_end(struct ns_memlink *l, int side)
{
    return &l->end[side ? 1 : 0].dev;
}

uint64_t ns_memlink_end_deadline(const struct ns_memlink *l, int side)
{
    const struct ml_dir *d = &l->dir[side ? 0 : 1];
    return d->n ? d->heap[0].at : NS_TIME_NEVER;
}

uint64_t ns_memlink_next_deadline(const struct ns_memlink *l)
{
    uint64_t a = ns_memlink_end_deadline(l, 0), b = ns_memlink_end_deadline(l, 1);
    return a < b ? a : b;
}

uint32_t ns_memlink_inflight(const struct ns_memlink *l, int side)
{
    return l->dir[side ? 0 : 1].n;
}

const struct ns_memlink_stats *ns_memlink_stats(const struct ns_memlink *l, int side)
{
    return &l->dir[side ? 1 : 0].stats;
}
