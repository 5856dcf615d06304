#include "core/pkt.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t fail_countdown;
static _Atomic uint64_t fail_period;
static _Atomic uint64_t live_bufs, live_buf_bytes, live_pkts;
/* Off unless a test asks: the counters are shared by every thread, and
 * updating them on each buffer's life was cache-line traffic between the
 * stack and application threads on the per-message path. */
static atomic_bool gauges_on;

void ns_pkt_gauges_enable(void)
{
    atomic_store(&gauges_on, true);
}

static inline void gauge(_Atomic uint64_t *g, int64_t delta)
{
    if (atomic_load_explicit(&gauges_on, memory_order_relaxed))
        atomic_fetch_add_explicit(g, (uint64_t)delta, memory_order_relaxed);
}

void ns_pkt_gauges(struct ns_pkt_gauges *out)
{
    out->bufs = atomic_load_explicit(&live_bufs, memory_order_relaxed);
    out->buf_bytes = atomic_load_explicit(&live_buf_bytes, memory_order_relaxed);
    out->pkts = atomic_load_explicit(&live_pkts, memory_order_relaxed);
}

void ns_alloc_fail_set(uint64_t nth, uint64_t period)
{
    atomic_store(&fail_countdown, nth);
    atomic_store(&fail_period, period);
}

static _Atomic uint64_t alloc_calls;

uint64_t ns_alloc_calls(void)
{
    return atomic_load_explicit(&alloc_calls, memory_order_relaxed);
}

bool ns_alloc_should_fail(void)
{
    uint64_t c = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    if (c == 0)
        return false; /* disarmed: one relaxed load on the hot path */
    atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
    if (atomic_fetch_sub(&fail_countdown, 1) != 1)
        return false;
    atomic_store(&fail_countdown, atomic_load(&fail_period));
    return true;
}

struct ns_buf *ns_buf_alloc(uint32_t cap)
{
    if (ns_alloc_should_fail())
        return NULL;
    struct ns_buf *b = malloc(sizeof(*b) + cap);
    if (!b)
        return NULL;
    atomic_init(&b->refcnt, 1);
    b->cap = cap;
    gauge(&live_bufs, 1);
    gauge(&live_buf_bytes, cap);
    return b;
}

struct ns_buf *ns_buf_get(struct ns_buf *b)
{
    atomic_fetch_add_explicit(&b->refcnt, 1, memory_order_relaxed);
    return b;
}

void ns_buf_put(struct ns_buf *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refcnt, 1, memory_order_acq_rel) == 1) {
        gauge(&live_bufs, -1);
        gauge(&live_buf_bytes, -(int64_t)b->cap);
        free(b);
    }
}

struct ns_pkt *ns_pkt_alloc(uint32_t headroom, uint32_t size)
{
    if (ns_alloc_should_fail())
        return NULL;
    struct ns_pkt *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->buf = ns_buf_alloc(headroom + size);
    if (!p->buf) {
        free(p);
        return NULL;
    }
    p->data = p->buf->data + headroom;
    gauge(&live_pkts, 1);
    return p;
}

struct ns_pkt *ns_pkt_from(const void *data, uint32_t len)
{
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, len);
    if (p && len)
        memcpy(ns_pkt_put(p, len), data, len);
    return p;
}

void ns_pkt_free(struct ns_pkt *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nfrags; i++)
        ns_buf_put(p->frags[i].buf);
    ns_buf_put(p->buf);
    gauge(&live_pkts, -1);
    free(p);
}

uint8_t *ns_pkt_push(struct ns_pkt *p, uint32_t n)
{
    if (ns_pkt_headroom(p) < n)
        return NULL;
    p->data -= n;
    p->len += n;
    return p->data;
}

uint8_t *ns_pkt_pull(struct ns_pkt *p, uint32_t n)
{
    if (p->len < n)
        return NULL;
    p->data += n;
    p->len -= n;
    return p->data;
}

uint8_t *ns_pkt_put(struct ns_pkt *p, uint32_t n)
{
    if (p->nfrags || ns_pkt_tailroom(p) < n)
        return NULL;
    uint8_t *t = p->data + p->len;
    p->len += n;
    return t;
}

void ns_pkt_trim(struct ns_pkt *p, uint32_t len)
{
    if (len >= ns_pkt_len(p))
        return;
    if (len <= p->len) {
        for (int i = 0; i < p->nfrags; i++)
            ns_buf_put(p->frags[i].buf);
        p->nfrags = 0;
        p->frag_len = 0;
        p->len = len;
        return;
    }
    uint32_t left = len - p->len;
    int i = 0;
    for (; i < p->nfrags && left > 0; i++) {
        if (p->frags[i].len >= left) {
            p->frags[i].len = left;
            left = 0;
        } else {
            left -= p->frags[i].len;
        }
    }
    for (int j = i; j < p->nfrags; j++)
        ns_buf_put(p->frags[j].buf);
    p->nfrags = (uint8_t)i;
    p->frag_len = len - p->len;
}

bool ns_pkt_add_frag(struct ns_pkt *p, struct ns_buf *buf, uint32_t off, uint32_t len)
{
    if (p->nfrags >= NS_PKT_MAX_FRAGS || off > buf->cap || len > buf->cap - off)
        return false;
    p->frags[p->nfrags++] = (struct ns_frag){ns_buf_get(buf), off, len};
    p->frag_len += len;
    return true;
}

bool ns_pkt_copy_out(const struct ns_pkt *p, uint32_t off, void *dst, uint32_t len)
{
    if (off > ns_pkt_len(p) || len > ns_pkt_len(p) - off)
        return false;
    uint8_t *d = dst;
    if (off < p->len) {
        uint32_t n = p->len - off < len ? p->len - off : len;
        memcpy(d, p->data + off, n);
        d += n;
        len -= n;
        off = 0;
    } else {
        off -= p->len;
    }
    for (int i = 0; i < p->nfrags && len > 0; i++) {
        const struct ns_frag *f = &p->frags[i];
        if (off >= f->len) {
            off -= f->len;
            continue;
        }
        uint32_t n = f->len - off < len ? f->len - off : len;
        memcpy(d, f->buf->data + f->off + off, n);
        d += n;
        len -= n;
        off = 0;
    }
    return true;
}

bool ns_pkt_linearize(struct ns_pkt *p, uint32_t headroom)
{
    if (p->nfrags == 0 && ns_pkt_headroom(p) >= headroom)
        return true;
    uint32_t total = ns_pkt_len(p);
    struct ns_buf *nb = ns_buf_alloc(headroom + total);
    if (!nb)
        return false;
    ns_pkt_copy_out(p, 0, nb->data + headroom, total);
    for (int i = 0; i < p->nfrags; i++)
        ns_buf_put(p->frags[i].buf);
    ns_buf_put(p->buf);
    p->buf = nb;
    p->data = nb->data + headroom;
    p->len = total;
    p->nfrags = 0;
    p->frag_len = 0;
    return true;
}

static void copy_meta(struct ns_pkt *dst, const struct ns_pkt *src)
{
    dst->ifindex = src->ifindex;
    dst->nexthop = src->nexthop;
    dst->l3_off = src->l3_off;
    dst->l4_off = src->l4_off;
    dst->flags = src->flags;
    dst->ts = src->ts;
}

struct ns_pkt *ns_pkt_copy(const struct ns_pkt *p)
{
    uint32_t total = ns_pkt_len(p);
    struct ns_pkt *c = ns_pkt_alloc(NS_PKT_HEADROOM, total);
    if (!c)
        return NULL;
    ns_pkt_copy_out(p, 0, ns_pkt_put(c, total), total);
    copy_meta(c, p);
    return c;
}

struct ns_pkt *ns_pkt_clone(const struct ns_pkt *p)
{
    /* The clone gets an empty head of its own and references the original's
     * head and fragments, so nothing the clone's user pushes can reach the
     * shared bytes. */
    if (p->nfrags + 1 > NS_PKT_MAX_FRAGS)
        return ns_pkt_copy(p);
    struct ns_pkt *c = ns_pkt_alloc(NS_PKT_HEADROOM, 0);
    if (!c)
        return NULL;
    if (p->len)
        ns_pkt_add_frag(c, p->buf, (uint32_t)(p->data - p->buf->data), p->len);
    for (int i = 0; i < p->nfrags; i++)
        ns_pkt_add_frag(c, p->frags[i].buf, p->frags[i].off, p->frags[i].len);
    copy_meta(c, p);
    return c;
}

int ns_pkt_iov(const struct ns_pkt *p, struct iovec *iov, int max)
{
    int n = 0;
    if (p->len && n < max)
        iov[n++] = (struct iovec){p->data, p->len};
    for (int i = 0; i < p->nfrags && n < max; i++)
        iov[n++] = (struct iovec){p->frags[i].buf->data + p->frags[i].off, p->frags[i].len};
    return n;
}

void ns_pktq_push(struct ns_pktq *q, struct ns_pkt *p)
{
    p->next = NULL;
    if (q->tail)
        q->tail->next = p;
    else
        q->head = p;
    q->tail = p;
    q->count++;
    q->bytes += ns_pkt_len(p);
}

struct ns_pkt *ns_pktq_pop(struct ns_pktq *q)
{
    struct ns_pkt *p = q->head;
    if (!p)
        return NULL;
    q->head = p->next;
    if (!q->head)
        q->tail = NULL;
    p->next = NULL;
    q->count--;
    q->bytes -= ns_pkt_len(p);
    return p;
}

void ns_pktq_splice(struct ns_pktq *dst, struct ns_pktq *src)
{
    if (!src->head)
        return;
    if (dst->tail)
        dst->tail->next = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    dst->count += src->count;
    dst->bytes += src->bytes;
    ns_pktq_init(src);
}

void ns_pktq_purge(struct ns_pktq *q)
{
    struct ns_pkt *p;
    while ((p = ns_pktq_pop(q)))
        ns_pkt_free(p);
}

uint32_t ns_pkt_size(const struct ns_pkt *p)
{
    return ns_pkt_len(p);
}
