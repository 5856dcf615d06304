/* Neighbour engine: the Neighbor Unreachability Detection state machine of
 * RFC 4861 section 7.3 (states 7.3.2, node behaviour 7.3.3, solicitation
 * limits 7.2.2 and the constants of section 10), which Linux applies to ARP
 * too, with RFC 1122 section 2.3.2.1 (cache validation, flood limits) and
 * 2.3.2.2 (queueing packets that wait for resolution). Behaviour follows
 * Linux's net/core/neighbour.c as described in docs/neighbour.md; the code
 * is our own.
 *
 * Timestamps (updated, confirmed, used) are compared with wrap-safe
 * arithmetic like jiffies, because "confirmed long ago" is stored as
 * now - 2 x base_reachable_time even when now is smaller than that.
 */
#include "link/neigh.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NEIGH_INIT_BUCKETS     16u
#define NEIGH_MAX_BUCKETS      (1u << 24)
#define NEIGH_RAND_PERIOD_US   (300 * NS_SEC)
#define NEIGH_FORCED_GC_GAP_US (5 * NS_SEC)
/* The queue holds at most unres_qlen_bytes / this many packets. */
#define NEIGH_MIN_QUEUE_CHARGE 64u
/* Forced GC spares entries whose state changed this recently. */
#define NEIGH_FORCED_GC_FRESH_US (5 * NS_SEC)

#define NEIGH_OF_TIMER(t) ((struct ns_neigh *)((char *)(t)-offsetof(struct ns_neigh, timer)))
#define TBL_OF_GC_TIMER(t)                                                                         \
    ((struct ns_neigh_table *)((char *)(t)-offsetof(struct ns_neigh_table, gc_timer)))

static inline bool t_before(uint64_t a, uint64_t b)
{
    return (int64_t)(a - b) < 0;
}
static inline bool t_before_eq(uint64_t a, uint64_t b)
{
    return (int64_t)(a - b) <= 0;
}

static uint64_t ms_us(uint32_t ms)
{
    return (uint64_t)ms * NS_MS;
}

/* ---- hashing ---------------------------------------------------------- */

/* SipHash-2-4 (Aumasson and Bernstein), keyed per table so that a peer
 * choosing addresses cannot aim them all at one bucket. */
static inline uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

#define SIP_ROUND(v0, v1, v2, v3)                                                                  \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl64(v1, 13);                                                                       \
        v1 ^= v0;                                                                                  \
        v0 = rotl64(v0, 32);                                                                       \
        v2 += v3;                                                                                  \
        v3 = rotl64(v3, 16);                                                                       \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = rotl64(v3, 21);                                                                       \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = rotl64(v1, 17);                                                                       \
        v1 ^= v2;                                                                                  \
        v2 = rotl64(v2, 32);                                                                       \
    } while (0)

static uint64_t siphash24(const uint64_t k[2], const uint8_t *in, size_t len)
{
    uint64_t v0 = k[0] ^ 0x736f6d6570736575ULL;
    uint64_t v1 = k[1] ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k[0] ^ 0x6c7967656e657261ULL;
    uint64_t v3 = k[1] ^ 0x7465646279746573ULL;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t m = 0;
        for (int b = 7; b >= 0; b--)
            m = m << 8 | in[i + (size_t)b];
        v3 ^= m;
        SIP_ROUND(v0, v1, v2, v3);
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)len << 56;
    for (size_t b = 0; i + b < len; b++)
        last |= (uint64_t)in[i + b] << (8 * b);
    v3 ^= last;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++)
        SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

static uint32_t bucket_of(const struct ns_neigh_table *tbl, uint32_t mask, uint32_t ifindex,
                          const void *key)
{
    uint8_t buf[4 + NS_NEIGH_MAX_KEY];
    buf[0] = (uint8_t)ifindex;
    buf[1] = (uint8_t)(ifindex >> 8);
    buf[2] = (uint8_t)(ifindex >> 16);
    buf[3] = (uint8_t)(ifindex >> 24);
    memcpy(buf + 4, key, tbl->key_len);
    return (uint32_t)siphash24(tbl->hash_key, buf, 4u + tbl->key_len) & mask;
}

static struct ns_neigh *find(const struct ns_neigh_table *tbl, uint32_t ifindex, const void *key)
{
    struct ns_neigh *n = tbl->buckets[bucket_of(tbl, tbl->hash_mask, ifindex, key)];
    for (; n; n = n->hnext)
        if (n->ifindex == ifindex && memcmp(n->key, key, tbl->key_len) == 0)
            return n;
    return NULL;
}

static void hash_grow(struct ns_neigh_table *tbl)
{
    uint32_t nb = (tbl->hash_mask + 1) * 2;
    if (nb > NEIGH_MAX_BUCKETS)
        return;
    struct ns_neigh **nbk = ns_alloc_should_fail() ? NULL : calloc(nb, sizeof(*nbk));
    if (!nbk) {
        tbl->stats.nomem++;
        return; /* longer chains, still correct */
    }
    for (uint32_t i = 0; i <= tbl->hash_mask; i++) {
        struct ns_neigh *n = tbl->buckets[i];
        while (n) {
            struct ns_neigh *next = n->hnext;
            uint32_t b = bucket_of(tbl, nb - 1, n->ifindex, n->key);
            n->hnext = nbk[b];
            nbk[b] = n;
            n = next;
        }
    }
    free(tbl->buckets);
    tbl->buckets = nbk;
    tbl->hash_mask = nb - 1;
    tbl->stats.hash_grows++;
}

static void hash_unlink(struct ns_neigh_table *tbl, struct ns_neigh *n)
{
    struct ns_neigh **pp = &tbl->buckets[bucket_of(tbl, tbl->hash_mask, n->ifindex, n->key)];
    for (; *pp; pp = &(*pp)->hnext) {
        if (*pp == n) {
            *pp = n->hnext;
            n->hnext = NULL;
            return;
        }
    }
}

/* ---- gc list: entries that may be collected, least recently updated first */

static void gc_unlink(struct ns_neigh_table *tbl, struct ns_neigh *n)
{
    if (!n->on_gc)
        return;
    if (n->gc_prev)
        n->gc_prev->gc_next = n->gc_next;
    else
        tbl->gc_head = n->gc_next;
    if (n->gc_next)
        n->gc_next->gc_prev = n->gc_prev;
    else
        tbl->gc_tail = n->gc_prev;
    n->gc_prev = n->gc_next = NULL;
    n->on_gc = false;
    tbl->gc_entries--;
}

static void gc_link_tail(struct ns_neigh_table *tbl, struct ns_neigh *n)
{
    n->gc_next = NULL;
    n->gc_prev = tbl->gc_tail;
    if (tbl->gc_tail)
        tbl->gc_tail->gc_next = n;
    else
        tbl->gc_head = n;
    tbl->gc_tail = n;
    n->on_gc = true;
    tbl->gc_entries++;
}

/* Keep the list ordered by `updated` and holding exactly the entries that
 * the administrator did not pin (PERMANENT, NOARP). */
static void gc_refresh(struct ns_neigh_table *tbl, struct ns_neigh *n)
{
    gc_unlink(tbl, n);
    if (!(n->state & (NS_NUD_PERMANENT | NS_NUD_NOARP)))
        gc_link_tail(tbl, n);
}

static void gc_timer_arm(struct ns_neigh_table *tbl, uint64_t now)
{
    if (!ns_timer_armed(&tbl->gc_timer))
        ns_timer_arm(tbl->timers, &tbl->gc_timer, now + ms_us(tbl->parms->gc_interval_ms));
}

/* ---- small helpers ------------------------------------------------------ */

static uint64_t reachable_time(struct ns_neigh_table *tbl, uint64_t now)
{
    uint32_t base = tbl->parms->base_reachable_time_ms;
    /* Redraw every 300 s as Linux does, and at once when the base was
     * changed (sysctl), so a new base takes effect without waiting. */
    if (base != tbl->reach_base_ms || t_before(tbl->last_rand + NEIGH_RAND_PERIOD_US, now)) {
        uint64_t b = ms_us(base);
        tbl->reachable_time_us = b ? b / 2 + ns_rng_below(tbl->rng, b) : 0;
        tbl->reach_base_ms = base;
        tbl->last_rand = now;
    }
    return tbl->reachable_time_us;
}

static uint64_t retrans_us(const struct ns_neigh_params *p)
{
    uint32_t ms =
        p->retrans_time_ms > p->retrans_floor_ms ? p->retrans_time_ms : p->retrans_floor_ms;
    return ms ? ms_us(ms) : 1;
}

static void hold(struct ns_neigh *n)
{
    n->refcnt++;
}

static void release(struct ns_neigh *n)
{
    if (--n->refcnt == 0 && n->dead)
        free(n);
}

static void purge_counted(struct ns_neigh_table *tbl, struct ns_pktq *q)
{
    struct ns_pkt *p;
    while ((p = ns_pktq_pop(q))) {
        tbl->stats.unres_discards++;
        ns_pkt_free(p);
    }
}

/* Unlink and free (or leave to the last holder). Queued packets are
 * discarded and counted as unres_discards. */
static void destroy(struct ns_neigh *n)
{
    struct ns_neigh_table *tbl = n->tbl;
    hash_unlink(tbl, n);
    gc_unlink(tbl, n);
    ns_timer_cancel(tbl->timers, &n->timer);
    purge_counted(tbl, &n->arp_queue);
    n->dead = true;
    tbl->entries--;
    tbl->stats.destroys++;
    if (n->refcnt == 0)
        free(n);
}

static void set_state(struct ns_neigh *n, uint8_t st, uint64_t now)
{
    ns_timer_cancel(n->tbl->timers, &n->timer);
    n->state = st;
    n->updated = now;
    gc_refresh(n->tbl, n);
}

/* Arm the entry's timer. If the timer heap cannot grow, fall back to a
 * state that needs no timer rather than leave an entry that never moves. */
static bool arm(struct ns_neigh *n, uint64_t when)
{
    struct ns_neigh_table *tbl = n->tbl;
    if (ns_timer_arm(tbl->timers, &n->timer, when))
        return true;
    if (n->state & (NS_NUD_REACHABLE | NS_NUD_DELAY)) {
        n->state = NS_NUD_STALE;
    } else if (n->state & (NS_NUD_INCOMPLETE | NS_NUD_PROBE)) {
        n->state = NS_NUD_FAILED;
        tbl->stats.res_failed++;
        purge_counted(tbl, &n->arp_queue);
    }
    return false;
}

static void xmit(struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now)
{
    hold(n);
    n->tbl->ops->output(n->tbl->ctx, n, pkt, now);
    release(n);
}

/* Resolution failed: FAILED, and every waiting packet goes back to its
 * sender through error_report, oldest first. The queue is detached first so
 * a sender that retries from inside error_report starts a fresh resolution. */
static void fail(struct ns_neigh *n, uint64_t now)
{
    struct ns_neigh_table *tbl = n->tbl;
    set_state(n, NS_NUD_FAILED, now);
    tbl->stats.res_failed++;
    struct ns_pktq q;
    ns_pktq_init(&q);
    ns_pktq_splice(&q, &n->arp_queue);
    struct ns_pkt *p;
    hold(n);
    while ((p = ns_pktq_pop(&q)))
        tbl->ops->error_report(tbl->ctx, n, p, now);
    release(n);
}

/* Send the next solicitation of an INCOMPLETE or PROBE phase, or fail the
 * entry when the phase's budget is spent. The callback comes last: nothing
 * here touches the entry after it. */
static void probe(struct ns_neigh *n, uint64_t now)
{
    struct ns_neigh_table *tbl = n->tbl;
    const struct ns_neigh_params *p = tbl->parms;
    uint32_t max = n->state == NS_NUD_INCOMPLETE
                       ? p->mcast_probes + p->app_probes
                       : p->ucast_probes + p->app_probes + p->mcast_reprobes;
    if (n->probes >= max) {
        fail(n, now);
        return;
    }
    bool unicast = n->state == NS_NUD_PROBE && n->probes < p->ucast_probes;
    uint8_t dst[NS_NEIGH_MAX_LLADDR];
    memcpy(dst, n->lladdr, sizeof(dst));
    if (!arm(n, now + retrans_us(p)))
        return;
    n->probes++;
    if (unicast)
        tbl->stats.probes_sent_ucast++;
    else
        tbl->stats.probes_sent_mcast++;
    hold(n);
    tbl->ops->solicit(tbl->ctx, n, unicast ? dst : NULL, n->arp_queue.head, now);
    release(n);
}

static void enqueue(struct ns_neigh *n, struct ns_pkt *pkt)
{
    struct ns_neigh_table *tbl = n->tbl;
    struct ns_pktq *q = &n->arp_queue;
    uint64_t limit = tbl->parms->unres_qlen_bytes;
    uint64_t len = ns_pkt_len(pkt);
    /* Tiny (even empty) packets would slip under a pure byte limit. */
    uint32_t max_count = (uint32_t)(limit / NEIGH_MIN_QUEUE_CHARGE);
    if (len > limit || max_count == 0) {
        tbl->stats.unres_discards++;
        ns_pkt_free(pkt);
        return;
    }
    while (q->head && ((uint64_t)q->bytes + len > limit || q->count >= max_count)) {
        tbl->stats.unres_discards++;
        ns_pkt_free(ns_pktq_pop(q));
    }
    ns_pktq_push(q, pkt);
}

/* Packets that waited for resolution leave in order. In STALE they go the
 * way any packet to a STALE entry goes: through DELAY. */
static void flush_queue(struct ns_neigh *n, uint64_t now)
{
    if (!n->arp_queue.head || !(n->state & NS_NUD_VALID))
        return;
    if (n->state == NS_NUD_STALE) {
        set_state(n, NS_NUD_DELAY, now);
        arm(n, now + ms_us(n->tbl->parms->delay_first_probe_time_ms));
    }
    struct ns_pktq q;
    ns_pktq_init(&q);
    ns_pktq_splice(&q, &n->arp_queue);
    struct ns_pkt *p;
    hold(n);
    while ((p = ns_pktq_pop(&q)))
        n->tbl->ops->output(n->tbl->ctx, n, p, now);
    release(n);
}

/* ---- timers ------------------------------------------------------------ */

static void neigh_timer(struct ns_timer *t, uint64_t now)
{
    struct ns_neigh *n = NEIGH_OF_TIMER(t);
    struct ns_neigh_table *tbl = n->tbl;
    const struct ns_neigh_params *p = tbl->parms;

    switch (n->state) {
    case NS_NUD_REACHABLE: {
        uint64_t rt = reachable_time(tbl, now);
        if (t_before(now, n->confirmed + rt)) {
            arm(n, n->confirmed + rt);
            return;
        }
        set_state(n, NS_NUD_STALE, now);
        return;
    }
    case NS_NUD_DELAY:
        if (t_before_eq(now, n->confirmed + ms_us(p->delay_first_probe_time_ms))) {
            set_state(n, NS_NUD_REACHABLE, now);
            uint64_t when = n->confirmed + reachable_time(tbl, now);
            arm(n, t_before(now, when) ? when : now);
            return;
        }
        set_state(n, NS_NUD_PROBE, now);
        n->probes = 0;
        probe(n, now);
        return;
    case NS_NUD_INCOMPLETE:
    case NS_NUD_PROBE:
        probe(n, now);
        return;
    default:
        return;
    }
}

static void gc_periodic(struct ns_timer *t, uint64_t now)
{
    struct ns_neigh_table *tbl = TBL_OF_GC_TIMER(t);
    const struct ns_neigh_params *p = tbl->parms;
    tbl->stats.periodic_gc_runs++;
    reachable_time(tbl, now);
    if (tbl->entries >= p->gc_thresh1) {
        uint64_t stale = ms_us(p->gc_stale_time_ms);
        struct ns_neigh *n = tbl->gc_head;
        while (n) {
            struct ns_neigh *next = n->gc_next;
            if (!(n->state & (NS_NUD_PERMANENT | NS_NUD_NOARP | NS_NUD_IN_TIMER))) {
                /* A confirmation counts as use. */
                if (t_before(n->used, n->confirmed) && t_before_eq(n->confirmed, now))
                    n->used = n->confirmed;
                bool fresh = t_before_eq(n->used, now) && t_before(now, n->used + stale);
                if (n->refcnt == 0 && (n->state == NS_NUD_FAILED || !fresh))
                    destroy(n);
            }
            n = next;
        }
    }
    if (tbl->gc_entries)
        gc_timer_arm(tbl, now);
}

/* Linux's neigh_forced_gc: drop idle entries, least recently updated first,
 * until the table is below gc_thresh2. Entries being resolved or timed
 * (INCOMPLETE, REACHABLE, DELAY, PROBE) and entries changed in the last 5 s
 * are spared unless FAILED. */
static void forced_gc(struct ns_neigh_table *tbl, uint64_t now)
{
    tbl->stats.forced_gc_runs++;
    struct ns_neigh *n = tbl->gc_head;
    while (n && tbl->gc_entries >= tbl->parms->gc_thresh2) {
        struct ns_neigh *next = n->gc_next;
        if (n->refcnt == 0 && !(n->state & NS_NUD_IN_TIMER) &&
            (n->state == NS_NUD_FAILED || t_before(n->updated + NEIGH_FORCED_GC_FRESH_US, now)))
            destroy(n);
        n = next;
    }
    tbl->last_flush = now;
}

/* ---- table ------------------------------------------------------------- */

int ns_neigh_table_init(struct ns_neigh_table *tbl, const char *id, uint8_t key_len,
                        uint8_t lladdr_len, const struct ns_neigh_params *parms,
                        struct ns_timers *timers, struct ns_rng *rng,
                        const struct ns_neigh_ops *ops, void *ctx, uint64_t now)
{
    if (key_len == 0 || key_len > NS_NEIGH_MAX_KEY || lladdr_len > NS_NEIGH_MAX_LLADDR)
        return -EINVAL;
    memset(tbl, 0, sizeof(*tbl));
    tbl->buckets = calloc(NEIGH_INIT_BUCKETS, sizeof(*tbl->buckets));
    if (!tbl->buckets)
        return -ENOMEM;
    tbl->hash_mask = NEIGH_INIT_BUCKETS - 1;
    tbl->id = id;
    tbl->key_len = key_len;
    tbl->lladdr_len = lladdr_len;
    tbl->parms = parms;
    tbl->timers = timers;
    tbl->rng = rng;
    tbl->ops = ops;
    tbl->ctx = ctx;
    tbl->hash_key[0] = ns_rng_u64(rng);
    tbl->hash_key[1] = ns_rng_u64(rng);
    tbl->last_flush = now;
    tbl->last_rand = now;
    tbl->reach_base_ms = parms->base_reachable_time_ms + 1; /* force the first draw */
    reachable_time(tbl, now);
    ns_timer_init(&tbl->gc_timer, gc_periodic);
    return 0;
}

void ns_neigh_table_free(struct ns_neigh_table *tbl)
{
    if (!tbl->buckets)
        return;
    for (uint32_t i = 0; i <= tbl->hash_mask; i++) {
        struct ns_neigh *n = tbl->buckets[i];
        while (n) {
            struct ns_neigh *next = n->hnext;
            ns_timer_cancel(tbl->timers, &n->timer);
            ns_pktq_purge(&n->arp_queue);
            free(n);
            n = next;
        }
    }
    ns_timer_cancel(tbl->timers, &tbl->gc_timer);
    free(tbl->buckets);
    tbl->buckets = NULL;
    tbl->gc_head = tbl->gc_tail = NULL;
    tbl->entries = tbl->gc_entries = 0;
}

struct ns_neigh *ns_neigh_lookup(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key)
{
    tbl->stats.lookups++;
    struct ns_neigh *n = find(tbl, ifindex, key);
    if (n)
        tbl->stats.hits++;
    return n;
}

static struct ns_neigh *create(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                               uint64_t now, int *err)
{
    const struct ns_neigh_params *p = tbl->parms;
    uint32_t e = tbl->gc_entries;
    if (e >= p->gc_thresh3 ||
        (e >= p->gc_thresh2 && t_before(tbl->last_flush + NEIGH_FORCED_GC_GAP_US, now))) {
        forced_gc(tbl, now);
        if (tbl->gc_entries >= p->gc_thresh3) {
            tbl->stats.table_fulls++;
            *err = -ENOBUFS;
            return NULL;
        }
    }
    struct ns_neigh *n = ns_alloc_should_fail() ? NULL : calloc(1, sizeof(*n));
    if (!n) {
        tbl->stats.nomem++;
        *err = -ENOMEM;
        return NULL;
    }
    n->tbl = tbl;
    n->ifindex = ifindex;
    memcpy(n->key, key, tbl->key_len);
    n->state = NS_NUD_NONE;
    n->updated = n->used = now;
    n->confirmed = now - 2 * ms_us(p->base_reachable_time_ms);
    ns_timer_init(&n->timer, neigh_timer);
    ns_pktq_init(&n->arp_queue);

    uint32_t b = bucket_of(tbl, tbl->hash_mask, ifindex, key);
    n->hnext = tbl->buckets[b];
    tbl->buckets[b] = n;
    tbl->entries++;
    gc_link_tail(tbl, n);
    tbl->stats.allocs++;
    if (tbl->entries > tbl->hash_mask + 1)
        hash_grow(tbl);
    gc_timer_arm(tbl, now);
    return n;
}

struct ns_neigh *ns_neigh_create(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                                 uint64_t now, int *err)
{
    int dummy;
    struct ns_neigh *n = find(tbl, ifindex, key);
    return n ? n : create(tbl, ifindex, key, now, err ? err : &dummy);
}

/* NONE or FAILED and a packet to send: start resolving. */
static int start_resolution(struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now)
{
    struct ns_neigh_table *tbl = n->tbl;
    const struct ns_neigh_params *p = tbl->parms;
    if (p->mcast_probes + p->app_probes == 0) {
        /* Nothing may be asked: fail at once; the sender hears of it. */
        set_state(n, NS_NUD_FAILED, now);
        tbl->stats.res_failed++;
        hold(n);
        tbl->ops->error_report(tbl->ctx, n, pkt, now);
        release(n);
        return 0;
    }
    set_state(n, NS_NUD_INCOMPLETE, now);
    n->probes = 0;
    enqueue(n, pkt);
    if (p->immediate_probe) {
        /* Solicit from the sending path itself: waiting for a timer tick
         * was the first-packet latency Linux removed in 2011. */
        probe(n, now);
    } else {
        arm(n, now + ms_us(p->tick_ms));
    }
    return 0;
}

int ns_neigh_output(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                    struct ns_pkt *pkt, uint64_t now)
{
    tbl->stats.lookups++;
    struct ns_neigh *n = find(tbl, ifindex, key);
    if (n) {
        tbl->stats.hits++;
    } else {
        int err = -ENOMEM;
        n = create(tbl, ifindex, key, now, &err);
        if (!n) {
            ns_pkt_free(pkt);
            return err;
        }
    }
    n->used = now;
    switch (n->state) {
    case NS_NUD_NONE:
    case NS_NUD_FAILED:
        return start_resolution(n, pkt, now);
    case NS_NUD_INCOMPLETE:
        enqueue(n, pkt);
        return 0;
    case NS_NUD_STALE:
        set_state(n, NS_NUD_DELAY, now);
        arm(n, now + ms_us(tbl->parms->delay_first_probe_time_ms));
        xmit(n, pkt, now);
        return 0;
    default: /* REACHABLE, DELAY, PROBE, PERMANENT, NOARP */
        xmit(n, pkt, now);
        return 0;
    }
}

static bool is_nud_value(uint8_t st)
{
    /* Exactly one state bit, or NONE. */
    return (st & (st - 1)) == 0;
}

int ns_neigh_update(struct ns_neigh *n, const uint8_t *lladdr, uint8_t new_state, uint32_t flags,
                    uint64_t now)
{
    struct ns_neigh_table *tbl = n->tbl;
    const struct ns_neigh_params *p = tbl->parms;
    uint8_t old = n->state;
    uint8_t nw = new_state;

    if (n->dead)
        return -ENOENT;
    if (!is_nud_value(nw))
        return -EINVAL;
    if (!(flags & NS_NEIGH_UPDATE_ADMIN) && ((old | nw) & (NS_NUD_PERMANENT | NS_NUD_NOARP)))
        return -EPERM;

    if (!(nw & NS_NUD_VALID)) {
        if (nw == old)
            return 0;
        if (nw == NS_NUD_FAILED && (old & (NS_NUD_INCOMPLETE | NS_NUD_PROBE))) {
            fail(n, now);
            return 0;
        }
        set_state(n, nw, now);
        if (nw == NS_NUD_INCOMPLETE) {
            n->probes = 0;
            arm(n, now); /* the timer sends the first solicitation */
        } else {
            purge_counted(tbl, &n->arp_queue);
        }
        return 0;
    }

    bool change_ll;
    if (lladdr) {
        change_ll = !(old & NS_NUD_VALID) || memcmp(lladdr, n->lladdr, tbl->lladdr_len) != 0;
    } else {
        if (!(old & NS_NUD_VALID))
            return -EINVAL; /* nothing to be valid with */
        change_ll = false;
    }

    /* Any news from the neighbour counts as a confirmation, even one that
     * is not allowed to change the cached address (as Linux does). */
    if (nw & NS_NUD_CONNECTED)
        n->confirmed = now;

    if (old & NS_NUD_VALID) {
        if (change_ll && !(flags & NS_NEIGH_UPDATE_OVERRIDE)) {
            if ((flags & NS_NEIGH_UPDATE_WEAK_OVERRIDE) && (old & NS_NUD_CONNECTED)) {
                change_ll = false;
                nw = NS_NUD_STALE;
            } else {
                return 0;
            }
        } else if (!change_ll && nw == NS_NUD_STALE && !(flags & NS_NEIGH_UPDATE_ADMIN)) {
            /* Hearing the same address again proves nothing new. */
            nw = old;
        }
    }

    /* Only real changes move `updated`, or no-op updates would keep
     * extending the locktime window. */
    if (nw != old || change_ll) {
        n->updated = now;
        gc_refresh(tbl, n);
    }
    if (change_ll) {
        memcpy(n->lladdr, lladdr, tbl->lladdr_len);
        if (!(nw & NS_NUD_CONNECTED))
            n->confirmed = now - 2 * ms_us(p->base_reachable_time_ms);
    }
    if (nw == old)
        return 0;

    ns_timer_cancel(tbl->timers, &n->timer);
    n->state = nw;
    gc_refresh(tbl, n);
    if (nw == NS_NUD_PROBE)
        n->probes = 0;
    if (nw & NS_NUD_IN_TIMER)
        arm(n, now + (nw == NS_NUD_REACHABLE ? reachable_time(tbl, now) : 0));
    flush_queue(n, now);
    return 0;
}

void ns_neigh_confirm(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key, uint64_t now)
{
    struct ns_neigh *n = find(tbl, ifindex, key);
    if (!n || !(n->state & NS_NUD_VALID))
        return;
    n->confirmed = now;
    if (n->state & (NS_NUD_STALE | NS_NUD_DELAY | NS_NUD_PROBE)) {
        set_state(n, NS_NUD_REACHABLE, now);
        n->probes = 0;
        arm(n, now + reachable_time(tbl, now));
    }
}

int ns_neigh_admin_set(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                       const uint8_t *lladdr, uint8_t state, uint64_t now)
{
    if (state != NS_NUD_PERMANENT && state != NS_NUD_NOARP && state != NS_NUD_REACHABLE &&
        state != NS_NUD_STALE)
        return -EINVAL;
    int err = -ENOMEM;
    struct ns_neigh *n = find(tbl, ifindex, key);
    bool created = n == NULL;
    if (!n) {
        n = create(tbl, ifindex, key, now, &err);
        if (!n)
            return err;
    }
    err = ns_neigh_update(n, lladdr, state, NS_NEIGH_UPDATE_ADMIN | NS_NEIGH_UPDATE_OVERRIDE, now);
    if (err < 0 && created && !n->dead)
        destroy(n);
    return err;
}

int ns_neigh_admin_del(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key, uint64_t now)
{
    struct ns_neigh *n = find(tbl, ifindex, key);
    if (!n)
        return -ENOENT;
    destroy(n);
    return 0;
}

unsigned ns_neigh_flush(struct ns_neigh_table *tbl, uint32_t ifindex, uint8_t states, uint64_t now)
{
    unsigned count = 0;
    /* NONE entries hold nothing; any flush of unpinned states takes them. */
    bool take_none = (states & ~(NS_NUD_PERMANENT | NS_NUD_NOARP)) != 0;
    for (uint32_t i = 0; i <= tbl->hash_mask; i++) {
        struct ns_neigh *n = tbl->buckets[i];
        while (n) {
            struct ns_neigh *next = n->hnext;
            if ((ifindex == 0 || n->ifindex == ifindex) &&
                ((n->state & states) || (n->state == NS_NUD_NONE && take_none))) {
                destroy(n);
                count++;
            }
            n = next;
        }
    }
    return count;
}

void ns_neigh_foreach(struct ns_neigh_table *tbl, ns_neigh_visit_fn fn, void *arg)
{
    for (uint32_t i = 0; i <= tbl->hash_mask; i++)
        for (const struct ns_neigh *n = tbl->buckets[i]; n; n = n->hnext)
            fn(arg, n);
}

static const struct {
    uint8_t state;
    const char *name;
} nud_names[] = {
    {NS_NUD_NONE, "NONE"},     {NS_NUD_INCOMPLETE, "INCOMPLETE"}, {NS_NUD_REACHABLE, "REACHABLE"},
    {NS_NUD_STALE, "STALE"},   {NS_NUD_DELAY, "DELAY"},           {NS_NUD_PROBE, "PROBE"},
    {NS_NUD_FAILED, "FAILED"}, {NS_NUD_NOARP, "NOARP"},           {NS_NUD_PERMANENT, "PERMANENT"},
};

const char *ns_nud_name(uint8_t state)
{
    for (size_t i = 0; i < sizeof(nud_names) / sizeof(nud_names[0]); i++)
        if (nud_names[i].state == state)
            return nud_names[i].name;
    return "UNKNOWN";
}

int ns_nud_parse(const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < sizeof(nud_names) / sizeof(nud_names[0]); i++)
        if (strcasecmp(nud_names[i].name, name) == 0)
            return nud_names[i].state;
    return -1;
}

void ns_neigh_params_default(struct ns_neigh_params *p)
{
    *p = (struct ns_neigh_params){
        .mcast_probes = 3,
        .ucast_probes = 3,
        .app_probes = 0,
        .mcast_reprobes = 0,
        .retrans_time_ms = 1000,
        .retrans_floor_ms = 500,
        .base_reachable_time_ms = 30000,
        .delay_first_probe_time_ms = 5000,
        .gc_stale_time_ms = 60000,
        .locktime_ms = 1000,
        .unres_qlen_bytes = 212992,
        .gc_thresh1 = 128,
        .gc_thresh2 = 512,
        .gc_thresh3 = 1024,
        .gc_interval_ms = 30000,
        .immediate_probe = 1,
        .tick_ms = 10,
    };
}
