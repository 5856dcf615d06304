/* Inbound streams and reassembly: RFC 9260 sections 6.5 (stream
 * identifiers, invalid streams), 6.6 (ordered and unordered delivery),
 * 6.9 (reassembly of fragments with consecutive TSNs), 6.2 (receive window,
 * receiver silly window avoidance); RFC 6458 section 8.1.21 (partial
 * delivery; the choice made is described in reasm.h). */
#include "sctp/reasm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_COST ((uint32_t)sizeof(struct ns_sctp_rchunk))

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* ---- Message queues ---------------------------------------------------- */

static void q_push(struct ns_sctp_rmsgq *q, struct ns_sctp_rmsg *m)
{
    m->next = NULL;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->count++;
    q->bytes += m->len;
}

struct ns_sctp_rmsg *ns_sctp_rmsgq_pop(struct ns_sctp_rmsgq *q)
{
    struct ns_sctp_rmsg *m = q->head;
    if (!m)
        return NULL;
    q->head = m->next;
    if (!q->head)
        q->tail = NULL;
    m->next = NULL;
    q->count--;
    q->bytes -= m->len;
    return m;
}

void ns_sctp_rmsgq_splice(struct ns_sctp_rmsgq *dst, struct ns_sctp_rmsgq *src)
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
    ns_sctp_rmsgq_init(src);
}

uint32_t ns_sctp_rmsg_copy(const struct ns_sctp_rmsg *m, uint32_t off, void *dst, uint32_t len)
{
    uint8_t *d = dst;
    uint32_t done = 0;
    for (const struct ns_sctp_rchunk *c = m->chunks; c && done < len; c = c->next) {
        if (off >= c->d.len) {
            off -= c->d.len;
            continue;
        }
        uint32_t n = min_u32(c->d.len - off, len - done);
        memcpy(d + done, c->d.buf->data + c->d.off + off, n);
        done += n;
        off = 0;
    }
    return done;
}

/* ---- Setup --------------------------------------------------------------- */

int ns_sctp_reasm_init(struct ns_sctp_reasm *r, const struct ns_sctp_params *p,
                       uint16_t n_in_streams)
{
    memset(r, 0, sizeof(*r));
    r->rcvbuf = p->rcvbuf_bytes;
    r->max_mem = p->reasm_max_bytes;
    /* Above half the buffer a message could fill the window before it is
     * complete and stall the association, so the point is capped there. */
    uint32_t half = r->rcvbuf / 2;
    r->pd_point = p->pd_point_bytes ? min_u32(p->pd_point_bytes, half) : half;
    if (r->pd_point == 0)
        r->pd_point = 1;
    r->last_adv = r->rcvbuf;
    ns_sctp_rmsgq_init(&r->ready);
    ns_sctp_rmsgq_init(&r->held);
    ns_sctp_pool_init(&r->chunk_pool, sizeof(struct ns_sctp_rchunk), 256);
    ns_sctp_pool_init(&r->msg_pool, sizeof(struct ns_sctp_rmsg), 256);
    return ns_sctp_reasm_set_streams(r, n_in_streams ? n_in_streams : 1);
}

int ns_sctp_reasm_set_streams(struct ns_sctp_reasm *r, uint16_t n)
{
    if (n > r->streams_cap) {
        struct ns_sctp_istream *s =
            ns_alloc_should_fail() ? NULL : realloc(r->streams, (size_t)n * sizeof(*s));
        if (!s) {
            r->stats.nomem++;
            return -ENOMEM;
        }
        memset(s + r->streams_cap, 0, (size_t)(n - r->streams_cap) * sizeof(*s));
        r->streams = s;
        r->streams_cap = n;
    }
    r->n_streams = n;
    return 0;
}

static void chunks_release(struct ns_sctp_reasm *r, struct ns_sctp_rchunk *c)
{
    while (c) {
        struct ns_sctp_rchunk *n = c->next;
        ns_buf_put(c->d.buf);
        ns_sctp_pool_put(&r->chunk_pool, c);
        c = n;
    }
}

static void msg_release(struct ns_sctp_reasm *r, struct ns_sctp_rmsg *m)
{
    chunks_release(r, m->chunks);
    ns_sctp_pool_put(&r->msg_pool, m);
}

void ns_sctp_reasm_free(struct ns_sctp_reasm *r)
{
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&r->ready)))
        msg_release(r, m);
    while ((m = ns_sctp_rmsgq_pop(&r->held)))
        msg_release(r, m);
    for (uint32_t i = 0; i < r->streams_cap; i++) {
        struct ns_sctp_istream *s = &r->streams[i];
        chunks_release(r, s->frags);
        while ((m = s->waiting)) {
            s->waiting = m->next;
            msg_release(r, m);
        }
    }
    ns_sctp_pool_free(&r->chunk_pool);
    ns_sctp_pool_free(&r->msg_pool);
    free(r->streams);
    memset(r, 0, sizeof(*r));
}

/* ---- Delivery ------------------------------------------------------------ */

static void to_ready(struct ns_sctp_reasm *r, struct ns_sctp_rmsg *m)
{
    r->held_bytes -= m->len;
    r->held_mem -= m->len + m->nchunks * CHUNK_COST;
    r->unread_bytes += m->len;
    if (m->flags & NS_SCTP_RMSG_PARTIAL)
        r->stats.pd_pieces++;
    else
        r->stats.msgs_delivered++;
    q_push(&r->ready, m);
}

/* Nothing overtakes a partial delivery in progress (interleave level 0). */
static void deliver(struct ns_sctp_reasm *r, struct ns_sctp_rmsg *m)
{
    if (r->pd_active)
        q_push(&r->held, m);
    else
        to_ready(r, m);
}

static void drain_waiting(struct ns_sctp_reasm *r, struct ns_sctp_istream *s)
{
    struct ns_sctp_rmsg *m;
    while ((m = s->waiting) && m->ssn == s->next_ssn) {
        s->waiting = m->next;
        s->next_ssn++;
        deliver(r, m);
    }
}

/* Detach first..last (a run of the stream's list) as a message. */
static struct ns_sctp_rmsg *take_run(struct ns_sctp_reasm *r, struct ns_sctp_istream *s,
                                     struct ns_sctp_rchunk *first, struct ns_sctp_rchunk *last,
                                     struct ns_sctp_rmsg *m)
{
    if (first->prev)
        first->prev->next = last->next;
    else
        s->frags = last->next;
    if (last->next)
        last->next->prev = first->prev;
    else
        s->frags_tail = first->prev;
    last->next = NULL;
    first->prev = NULL;
    m->next = NULL;
    m->chunks = first;
    m->len = 0;
    m->nchunks = 0;
    for (struct ns_sctp_rchunk *c = first; c; c = c->next) {
        m->len += c->d.len;
        m->nchunks++;
        c->run_b = NULL;
    }
    m->tsn = first->d.tsn;
    return m;
}

static void pd_finish(struct ns_sctp_reasm *r);

/* Deliver the fragments of the partially delivered message that are now
 * contiguous with what was delivered, starting at x (tsn == pd_next_tsn). */
static void pd_continue(struct ns_sctp_reasm *r, struct ns_sctp_istream *s,
                        struct ns_sctp_rchunk *x, struct ns_sctp_rmsg *m)
{
    struct ns_sctp_rchunk *last = x;
    while (!(last->d.flags & NS_SCTP_DATA_E) && last->next && last->next->d.tsn == last->d.tsn + 1)
        last = last->next;
    bool end = (last->d.flags & NS_SCTP_DATA_E) != 0;
    take_run(r, s, x, last, m);
    m->sid = r->pd_meta.sid;
    m->ssn = r->pd_meta.ssn;
    m->ppid = r->pd_meta.ppid;
    m->flags = (uint16_t)(r->pd_meta.flags | NS_SCTP_RMSG_PARTIAL | (end ? NS_SCTP_RMSG_EOR : 0));
    r->pd_next_tsn = last->d.tsn + 1;
    to_ready(r, m);
    if (end)
        pd_finish(r);
}

static bool pd_eligible(const struct ns_sctp_reasm *r, const struct ns_sctp_istream *s,
                        const struct ns_sctp_rchunk *b)
{
    if (r->pd_active || b->run_b != b)
        return false;
    if (!(b->d.flags & NS_SCTP_DATA_U) && b->d.ssn != s->next_ssn)
        return false;
    return b->prefix_len >= r->pd_point || r->held_bytes + r->unread_bytes >= r->rcvbuf;
}

/* Start delivering b's message in pieces. Returns false only when no
 * message object could be had (the check runs again on the next arrival). */
static bool pd_start(struct ns_sctp_reasm *r, uint16_t sid, struct ns_sctp_rchunk *b)
{
    struct ns_sctp_rmsg *m = ns_sctp_pool_get(&r->msg_pool);
    if (!m)
        return false;
    struct ns_sctp_istream *s = &r->streams[sid];
    bool unordered = (b->d.flags & NS_SCTP_DATA_U) != 0;
    r->pd_active = true;
    r->pd_sid = sid;
    r->pd_meta.sid = sid;
    r->pd_meta.ssn = b->d.ssn;
    r->pd_meta.ppid = b->d.ppid;
    r->pd_meta.flags = unordered ? NS_SCTP_RMSG_UNORDERED : 0;
    r->stats.pd_started++;
    struct ns_sctp_rchunk *last = b->prefix_end;
    take_run(r, s, b, last, m);
    m->sid = sid;
    m->ssn = r->pd_meta.ssn;
    m->ppid = r->pd_meta.ppid;
    m->flags = (uint16_t)(r->pd_meta.flags | NS_SCTP_RMSG_PARTIAL);
    r->pd_next_tsn = last->d.tsn + 1;
    to_ready(r, m);
    if (!unordered) {
        /* The stream moves on: later messages queue behind the pieces. */
        s->next_ssn++;
        drain_waiting(r, s);
    }
    return true;
}

static void pd_check_stream(struct ns_sctp_reasm *r, uint16_t sid)
{
    struct ns_sctp_istream *s = &r->streams[sid];
    for (struct ns_sctp_rchunk *c = s->frags; c && !r->pd_active; c = c->next) {
        if (pd_eligible(r, s, c)) {
            pd_start(r, sid, c);
            return;
        }
    }
}

static void pd_finish(struct ns_sctp_reasm *r)
{
    r->pd_active = false;
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&r->held)))
        to_ready(r, m);
    /* Messages that crossed the point while this one was in progress. */
    for (uint32_t i = 0; i < r->n_streams && !r->pd_active; i++) {
        if (r->streams[i].frags)
            pd_check_stream(r, (uint16_t)i);
    }
}

/* A whole message: deliver it or park it until its SSN is next. */
static enum ns_sctp_rx_verdict complete(struct ns_sctp_reasm *r, uint16_t sid,
                                        struct ns_sctp_rmsg *m)
{
    struct ns_sctp_istream *s = &r->streams[sid];
    m->sid = sid;
    m->ssn = m->chunks->d.ssn;
    m->ppid = m->chunks->d.ppid;
    bool unordered = (m->chunks->d.flags & NS_SCTP_DATA_U) != 0;
    m->flags = (uint16_t)(NS_SCTP_RMSG_EOR | (unordered ? NS_SCTP_RMSG_UNORDERED : 0));
    if (unordered) {
        deliver(r, m);
        return NS_SCTP_RX_OK;
    }
    if (m->ssn == s->next_ssn) {
        s->next_ssn++;
        deliver(r, m);
        drain_waiting(r, s);
        if (s->frags)
            pd_check_stream(r, sid);
        return NS_SCTP_RX_OK;
    }
    if (ns_ssn_lt(m->ssn, s->next_ssn)) {
        /* Already delivered that SSN: the peer reused it. */
        r->held_bytes -= m->len;
        r->held_mem -= m->len + m->nchunks * CHUNK_COST;
        msg_release(r, m);
        r->stats.invalid++;
        return NS_SCTP_RX_INVALID;
    }
    struct ns_sctp_rmsg **pp = &s->waiting;
    while (*pp && ns_ssn_lt((*pp)->ssn, m->ssn))
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
    return NS_SCTP_RX_OK;
}

/* ---- Receive -------------------------------------------------------------- */

/* Fragments a and b have consecutive TSNs on one stream: one ends a message
 * exactly when the other begins one, and inside a message they agree. */
static bool consistent(const struct ns_sctp_rchunk *a, const struct ns_sctp_rchunk *b)
{
    bool a_end = (a->d.flags & NS_SCTP_DATA_E) != 0;
    bool b_begin = (b->d.flags & NS_SCTP_DATA_B) != 0;
    if (a_end != b_begin)
        return false;
    if (a_end)
        return true;
    return a->d.ssn == b->d.ssn && ((a->d.flags ^ b->d.flags) & NS_SCTP_DATA_U) == 0;
}

enum ns_sctp_rx_verdict ns_sctp_reasm_rx(struct ns_sctp_reasm *r,
                                         const struct ns_sctp_chunk_data *d, bool in_seq)
{
    if (d->len == 0 || !d->buf || d->off > d->buf->cap || d->len > d->buf->cap - d->off) {
        r->stats.invalid++;
        return NS_SCTP_RX_INVALID;
    }
    if (d->sid >= r->n_streams) {
        r->stats.bad_sid++;
        return NS_SCTP_RX_BAD_SID;
    }
    uint32_t cost = d->len + CHUNK_COST;
    if (!in_seq && (r->held_mem + cost > r->max_mem || r->held_mem + cost < r->held_mem)) {
        r->stats.nomem++;
        return NS_SCTP_RX_NOMEM;
    }
    struct ns_sctp_istream *s = &r->streams[d->sid];
    bool unordered = (d->flags & NS_SCTP_DATA_U) != 0;
    bool pd_here = r->pd_active && r->pd_sid == d->sid;
    bool pd_frag = pd_here && ((r->pd_meta.flags & NS_SCTP_RMSG_UNORDERED) != 0) == unordered &&
                   d->ssn == r->pd_meta.ssn && !ns_tsn_lt(d->tsn, r->pd_next_tsn);
    if (pd_here && d->tsn == r->pd_next_tsn && (d->flags & NS_SCTP_DATA_B)) {
        r->stats.invalid++;
        return NS_SCTP_RX_INVALID;
    }
    if (!unordered && !pd_frag && ns_ssn_lt(d->ssn, s->next_ssn)) {
        r->stats.invalid++;
        return NS_SCTP_RX_INVALID;
    }

    /* Both objects up front so no failure can leave a half-done insert. */
    struct ns_sctp_rchunk *x = ns_sctp_pool_get(&r->chunk_pool);
    struct ns_sctp_rmsg *m = x ? ns_sctp_pool_get(&r->msg_pool) : NULL;
    if (!m) {
        if (x)
            ns_sctp_pool_put(&r->chunk_pool, x);
        r->stats.nomem++;
        return NS_SCTP_RX_NOMEM;
    }
    *x = (struct ns_sctp_rchunk){.d = *d};

    /* Sorted insert, searching from the tail where in-order data lands. */
    struct ns_sctp_rchunk *prev = s->frags_tail;
    while (prev && ns_tsn_lt(d->tsn, prev->d.tsn))
        prev = prev->prev;
    if (prev && prev->d.tsn == d->tsn) {
        ns_sctp_pool_put(&r->chunk_pool, x);
        ns_sctp_pool_put(&r->msg_pool, m);
        r->stats.dup++;
        return NS_SCTP_RX_DUP;
    }
    struct ns_sctp_rchunk *next = prev ? prev->next : s->frags;
    bool prev_adj = prev && prev->d.tsn + 1 == d->tsn;
    bool next_adj = next && d->tsn + 1 == next->d.tsn;
    if ((prev_adj && !consistent(prev, x)) || (next_adj && !consistent(x, next))) {
        ns_sctp_pool_put(&r->chunk_pool, x);
        ns_sctp_pool_put(&r->msg_pool, m);
        r->stats.invalid++;
        return NS_SCTP_RX_INVALID;
    }
    x->prev = prev;
    x->next = next;
    if (prev)
        prev->next = x;
    else
        s->frags = x;
    if (next)
        next->prev = x;
    else
        s->frags_tail = x;

    ns_buf_get(x->d.buf);
    r->held_bytes += d->len;
    r->held_mem += cost;
    r->stats.chunks_in++;
    r->stats.bytes_in += d->len;

    if (pd_here && d->tsn == r->pd_next_tsn) {
        pd_continue(r, s, x, m);
        return NS_SCTP_RX_OK;
    }

    struct ns_sctp_rchunk *b = NULL;
    if (d->flags & NS_SCTP_DATA_B) {
        b = x;
        x->run_b = x;
        x->prefix_len = x->d.len;
        x->prefix_end = x;
    } else if (prev_adj && prev->run_b && prev->run_b->prefix_end == prev) {
        b = prev->run_b;
        x->run_b = b;
        b->prefix_len += x->d.len;
        b->prefix_end = x;
    }
    if (!b) {
        ns_sctp_pool_put(&r->msg_pool, m);
        return NS_SCTP_RX_OK;
    }
    /* Fragments that were waiting after x now join the prefix. */
    struct ns_sctp_rchunk *cur = x;
    while (!(cur->d.flags & NS_SCTP_DATA_E) && cur->next && cur->next->d.tsn == cur->d.tsn + 1) {
        cur = cur->next;
        cur->run_b = b;
        b->prefix_len += cur->d.len;
        b->prefix_end = cur;
    }
    if (cur->d.flags & NS_SCTP_DATA_E) {
        take_run(r, s, b, cur, m);
        return complete(r, d->sid, m);
    }
    ns_sctp_pool_put(&r->msg_pool, m);
    if (pd_eligible(r, s, b))
        pd_start(r, d->sid, b);
    return NS_SCTP_RX_OK;
}

/* ---- Socket side and window ------------------------------------------------- */

void ns_sctp_reasm_take(struct ns_sctp_reasm *r, struct ns_sctp_rmsgq *dst)
{
    ns_sctp_rmsgq_splice(dst, &r->ready);
}

void ns_sctp_reasm_msg_free(struct ns_sctp_reasm *r, struct ns_sctp_rmsg *m)
{
    r->unread_bytes = r->unread_bytes > m->len ? r->unread_bytes - m->len : 0;
    msg_release(r, m);
}

uint32_t ns_sctp_reasm_rwnd(const struct ns_sctp_reasm *r)
{
    uint64_t used = (uint64_t)r->held_bytes + r->unread_bytes;
    return used >= r->rcvbuf ? 0 : r->rcvbuf - (uint32_t)used;
}

/* Receiver SWS avoidance: never offer less than min(rcvbuf/2, MTU). */
static uint32_t sws_window(const struct ns_sctp_reasm *r, uint32_t mtu)
{
    uint32_t thr = min_u32(r->rcvbuf / 2, mtu);
    uint32_t w = ns_sctp_reasm_rwnd(r);
    return w < thr ? 0 : w;
}

uint32_t ns_sctp_reasm_advertise(struct ns_sctp_reasm *r, uint32_t mtu)
{
    r->last_adv = sws_window(r, mtu);
    return r->last_adv;
}

bool ns_sctp_reasm_window_update_due(const struct ns_sctp_reasm *r, uint32_t mtu)
{
    uint32_t thr = min_u32(r->rcvbuf / 2, mtu);
    uint32_t w = sws_window(r, mtu);
    return w > r->last_adv && w - r->last_adv >= thr;
}
