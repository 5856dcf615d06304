/* Outbound user messages: RFC 9260 section 6.1 (transmission of DATA),
 * 6.6 (ordered and unordered delivery: SSN assignment), 6.9
 * (fragmentation: a message's fragments take consecutive TSNs and carry
 * B/E flags). The object pool used by the data path lives here too. */
#include "sctp/sendq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- Pool ------------------------------------------------------------- */

#define POOL_ALIGN 16u
#define SLAB_HDR   POOL_ALIGN /* the slab link, padded so objects stay aligned */

void ns_sctp_pool_init(struct ns_sctp_pool *p, size_t obj_size, uint32_t per_slab)
{
    memset(p, 0, sizeof(*p));
    if (obj_size < sizeof(void *))
        obj_size = sizeof(void *);
    p->obj_size = (uint32_t)((obj_size + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1));
    p->per_slab = per_slab ? per_slab : 64;
}

void ns_sctp_pool_free(struct ns_sctp_pool *p)
{
    void *s = p->slabs;
    while (s) {
        void *next = *(void **)s;
        free(s);
        s = next;
    }
    p->slabs = p->free = NULL;
    p->in_use = p->total = 0;
}

void *ns_sctp_pool_get(struct ns_sctp_pool *p)
{
    if (!p->free) {
        if (ns_alloc_should_fail())
            return NULL;
        uint8_t *slab = malloc(SLAB_HDR + (size_t)p->per_slab * p->obj_size);
        if (!slab)
            return NULL;
        *(void **)slab = p->slabs;
        p->slabs = slab;
        /* Thread the new objects so the lowest address comes out first. */
        for (uint32_t i = p->per_slab; i-- > 0;) {
            void *o = slab + SLAB_HDR + (size_t)i * p->obj_size;
            *(void **)o = p->free;
            p->free = o;
        }
        p->total += p->per_slab;
    }
    void *o = p->free;
    p->free = *(void **)o;
    p->in_use++;
    return o;
}

void ns_sctp_pool_put(struct ns_sctp_pool *p, void *obj)
{
    *(void **)obj = p->free;
    p->free = obj;
    p->in_use--;
}

/* ---- Send queue ------------------------------------------------------- */

struct ns_sctp_smsg {
    struct ns_sctp_smsg *next;
    struct ns_buf *buf; /* holds a reference */
    uint32_t off, len;
    uint32_t sent; /* bytes already pulled as chunks */
    uint32_t ppid;
    uint32_t context;
    uint16_t sid, ssn;
    bool unordered;
};

int ns_sctp_sendq_init(struct ns_sctp_sendq *q, const struct ns_sctp_params *p,
                       uint16_t n_out_streams)
{
    memset(q, 0, sizeof(*q));
    q->sndbuf = p->sndbuf_bytes;
    q->max_message = p->max_message_bytes;
    q->sched = NS_SCTP_SCHED_FCFS;
    ns_sctp_pool_init(&q->msg_pool, sizeof(struct ns_sctp_smsg), 256);
    ns_sctp_pool_init(&q->chunk_pool, sizeof(struct ns_sctp_txchunk), 256);
    return ns_sctp_sendq_set_streams(q, n_out_streams ? n_out_streams : 1);
}

static void msg_release(struct ns_sctp_sendq *q, struct ns_sctp_smsg *m)
{
    ns_buf_put(m->buf);
    ns_sctp_pool_put(&q->msg_pool, m);
}

void ns_sctp_sendq_free(struct ns_sctp_sendq *q)
{
    struct ns_sctp_smsg *m, *n;
    for (m = q->fifo_head; m; m = n) {
        n = m->next;
        msg_release(q, m);
    }
    for (uint32_t i = 0; i < q->streams_cap; i++) {
        for (m = q->streams[i].head; m; m = n) {
            n = m->next;
            msg_release(q, m);
        }
    }
    if (q->cur)
        msg_release(q, q->cur);
    ns_buf_put(q->arena);
    ns_sctp_pool_free(&q->msg_pool);
    ns_sctp_pool_free(&q->chunk_pool);
    free(q->streams);
    memset(q, 0, sizeof(*q));
}

int ns_sctp_sendq_set_streams(struct ns_sctp_sendq *q, uint16_t n)
{
    if (n > q->streams_cap) {
        struct ns_sctp_ostream *s =
            ns_alloc_should_fail() ? NULL : realloc(q->streams, (size_t)n * sizeof(*s));
        if (!s) {
            q->stats.enomem++;
            return -ENOMEM;
        }
        memset(s + q->streams_cap, 0, (size_t)(n - q->streams_cap) * sizeof(*s));
        q->streams = s;
        q->streams_cap = n;
    }
    q->n_streams = n;
    return 0;
}

int ns_sctp_sendq_set_sched(struct ns_sctp_sendq *q, enum ns_sctp_sched s)
{
    if (q->queued_msgs)
        return -EBUSY;
    q->sched = s;
    return 0;
}

/* Round-robin ring of streams with queued messages: rr_cur is served next,
 * rr_prev precedes it, and a stream that gets data joins just before
 * rr_cur, i.e. at the end of the current round. */
static void rr_insert(struct ns_sctp_sendq *q, uint16_t sid)
{
    struct ns_sctp_ostream *s = &q->streams[sid];
    s->on_rr = true;
    if (!q->rr_any) {
        s->rr_next = sid;
        q->rr_cur = q->rr_prev = sid;
        q->rr_any = true;
        return;
    }
    q->streams[q->rr_prev].rr_next = sid;
    s->rr_next = q->rr_cur;
    q->rr_prev = sid;
}

/* rr_cur has been served: drop it from the ring if it ran dry, else move on. */
static void rr_advance(struct ns_sctp_sendq *q)
{
    struct ns_sctp_ostream *s = &q->streams[q->rr_cur];
    if (s->head) {
        q->rr_prev = q->rr_cur;
        q->rr_cur = s->rr_next;
        return;
    }
    s->on_rr = false;
    if (s->rr_next == q->rr_cur) {
        q->rr_any = false;
        return;
    }
    q->streams[q->rr_prev].rr_next = s->rr_next;
    q->rr_cur = s->rr_next;
}

/* Copy the user's bytes: the only copy they undergo in the stack. */
static struct ns_buf *store_bytes(struct ns_sctp_sendq *q, const void *data, uint32_t len,
                                  uint32_t *off)
{
    if (len > NS_SCTP_SENDQ_ARENA_MSG_MAX) {
        struct ns_buf *b = ns_buf_alloc(len);
        if (!b)
            return NULL;
        memcpy(b->data, data, len);
        *off = 0;
        return b;
    }
    if (!q->arena || q->arena_used + len > q->arena->cap) {
        struct ns_buf *a = ns_buf_alloc(NS_SCTP_SENDQ_ARENA_SIZE);
        if (!a)
            return NULL;
        /* Chunks still referencing the old arena keep it alive. */
        ns_buf_put(q->arena);
        q->arena = a;
        q->arena_used = 0;
    }
    memcpy(q->arena->data + q->arena_used, data, len);
    *off = q->arena_used;
    q->arena_used += len;
    return ns_buf_get(q->arena);
}

/* The checks every message passes before its bytes are stored. */
static int enqueue_check(struct ns_sctp_sendq *q, uint16_t sid, uint32_t len)
{
    if (sid >= q->n_streams || len == 0) {
        q->stats.einval++;
        return -EINVAL;
    }
    if (len > q->max_message) {
        q->stats.emsgsize++;
        return -EMSGSIZE;
    }
    uint32_t used = q->queued_bytes + q->inflight_bytes;
    if (used > 0 && (used >= q->sndbuf || len > q->sndbuf - used)) {
        q->stats.eagain++;
        return -EAGAIN;
    }
    return 0;
}

/* Queues m, which holds a reference to its bytes. */
static void enqueue_msg(struct ns_sctp_sendq *q, struct ns_sctp_smsg *m, uint16_t sid,
                        struct ns_buf *b, uint32_t off, uint32_t len, uint32_t ppid, uint32_t flags,
                        uint32_t context)
{
    struct ns_sctp_ostream *s = &q->streams[sid];
    *m = (struct ns_sctp_smsg){.buf = b,
                               .off = off,
                               .len = len,
                               .ppid = ppid,
                               .context = context,
                               .sid = sid,
                               .unordered = (flags & NS_SCTP_SEND_UNORDERED) != 0};
    /* Unordered messages carry no sequence number (RFC 9260 6.6). */
    if (!m->unordered)
        m->ssn = s->next_ssn++;

    if (q->sched == NS_SCTP_SCHED_FCFS) {
        if (q->fifo_tail)
            q->fifo_tail->next = m;
        else
            q->fifo_head = m;
        q->fifo_tail = m;
    } else {
        if (s->tail)
            s->tail->next = m;
        else
            s->head = m;
        s->tail = m;
        if (!s->on_rr)
            rr_insert(q, sid);
    }
    q->queued_bytes += len;
    q->queued_msgs++;
    q->stats.msgs_queued++;
    q->stats.bytes_queued += len;
}

/* The checks and a message node for a new message; NULL with *rc set. */
static struct ns_sctp_smsg *enqueue_start(struct ns_sctp_sendq *q, uint16_t sid, uint32_t len,
                                          int *rc)
{
    *rc = enqueue_check(q, sid, len);
    if (*rc)
        return NULL;
    struct ns_sctp_smsg *m = ns_sctp_pool_get(&q->msg_pool);
    if (!m) {
        q->stats.enomem++;
        *rc = -ENOMEM;
    }
    return m;
}

int ns_sctp_sendq_enqueue(struct ns_sctp_sendq *q, uint16_t sid, const void *data, uint32_t len,
                          uint32_t ppid, uint32_t flags, uint32_t context)
{
    int rc;
    struct ns_sctp_smsg *m = enqueue_start(q, sid, len, &rc);
    if (!m)
        return rc;
    uint32_t off;
    struct ns_buf *b = store_bytes(q, data, len, &off);
    if (!b) {
        ns_sctp_pool_put(&q->msg_pool, m);
        q->stats.enomem++;
        return -ENOMEM;
    }
    enqueue_msg(q, m, sid, b, off, len, ppid, flags, context);
    return 0;
}

int ns_sctp_sendq_enqueue_buf(struct ns_sctp_sendq *q, uint16_t sid, struct ns_buf *b, uint32_t off,
                              uint32_t len, uint32_t ppid, uint32_t flags, uint32_t context)
{
    if (!b || off > b->cap || len > b->cap - off) {
        q->stats.einval++;
        return -EINVAL;
    }
    int rc;
    struct ns_sctp_smsg *m = enqueue_start(q, sid, len, &rc);
    if (!m)
        return rc;
    enqueue_msg(q, m, sid, ns_buf_get(b), off, len, ppid, flags, context);
    return 0;
}

/* The message the next chunk comes from, taken off its queue. */
static struct ns_sctp_smsg *select_msg(struct ns_sctp_sendq *q)
{
    if (q->cur)
        return q->cur;
    struct ns_sctp_smsg *m = NULL;
    if (q->sched == NS_SCTP_SCHED_FCFS) {
        m = q->fifo_head;
        if (m) {
            q->fifo_head = m->next;
            if (!q->fifo_head)
                q->fifo_tail = NULL;
        }
    } else if (q->rr_any) {
        struct ns_sctp_ostream *s = &q->streams[q->rr_cur];
        m = s->head;
        s->head = m->next;
        if (!s->head)
            s->tail = NULL;
        rr_advance(q);
    }
    if (m)
        m->next = NULL;
    q->cur = m;
    return m;
}

static const struct ns_sctp_smsg *peek_msg(const struct ns_sctp_sendq *q)
{
    if (q->cur)
        return q->cur;
    if (q->sched == NS_SCTP_SCHED_FCFS)
        return q->fifo_head;
    return q->rr_any ? q->streams[q->rr_cur].head : NULL;
}

static uint32_t frag_len(const struct ns_sctp_smsg *m, uint32_t max_payload)
{
    uint32_t left = m->len - m->sent;
    return left < max_payload ? left : max_payload;
}

uint32_t ns_sctp_sendq_peek_len(const struct ns_sctp_sendq *q, uint32_t max_payload)
{
    const struct ns_sctp_smsg *m = peek_msg(q);
    if (!m || max_payload == 0)
        return 0;
    return ns_sctp_data_wire_len(frag_len(m, max_payload));
}

struct ns_sctp_txchunk *ns_sctp_sendq_pull(struct ns_sctp_sendq *q, uint32_t room,
                                           uint32_t max_payload)
{
    if (max_payload == 0)
        return NULL;
    struct ns_sctp_smsg *m = select_msg(q);
    if (!m)
        return NULL;
    uint32_t flen = frag_len(m, max_payload);
    if (ns_sctp_data_wire_len(flen) > room)
        return NULL;
    struct ns_sctp_txchunk *c = ns_sctp_pool_get(&q->chunk_pool);
    if (!c) {
        q->stats.enomem++;
        return NULL;
    }
    uint8_t fl = 0;
    if (m->sent == 0)
        fl |= NS_SCTP_DATA_B;
    if (m->sent + flen == m->len)
        fl |= NS_SCTP_DATA_E;
    if (m->unordered)
        fl |= NS_SCTP_DATA_U;
    *c = (struct ns_sctp_txchunk){
        .d = {.sid = m->sid,
              .ssn = m->ssn,
              .ppid = m->ppid,
              .flags = fl,
              .buf = ns_buf_get(m->buf),
              .off = m->off + m->sent,
              .len = flen},
        .context = m->context,
    };
    m->sent += flen;
    q->queued_bytes -= flen;
    q->inflight_bytes += flen;
    q->stats.chunks_pulled++;
    if (fl & NS_SCTP_DATA_E) {
        if (!(fl & NS_SCTP_DATA_B))
            q->stats.msgs_fragmented++;
        q->cur = NULL;
        q->queued_msgs--;
        msg_release(q, m);
    }
    return c;
}

void ns_sctp_sendq_chunk_done(struct ns_sctp_sendq *q, struct ns_sctp_txchunk *c)
{
    q->inflight_bytes -= c->d.len;
    ns_buf_put(c->d.buf);
    ns_sctp_pool_put(&q->chunk_pool, c);
}
