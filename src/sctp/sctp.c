/* The per-stack SCTP instance: packet input with the checksum (RFC 9260
 * section 6.8), demultiplexing to associations, the verification tag rules
 * (8.5, 8.5.1), out-of-the-blue packets (8.4), lookup tables and the
 * deferred event queue. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sctp/assoc.h"
#include "sctp/crc32c.h"

#define SACK_GAPS_MAX 4096 /* gap blocks of a received SACK we look at */

static bool rng_cookie_rand(void *ctx, uint8_t *out, size_t len)
{
    struct ns_rng *r = ctx;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = ns_rng_u64(r);
        size_t n = len - i < 8 ? len - i : 8;
        memcpy(out + i, &v, n);
    }
    return true;
}

int ns_sctp_init(struct ns_sctp *s, const struct ns_sctp_config *cfg, uint64_t now)
{
    memset(s, 0, sizeof(*s));
    if (!cfg || !cfg->timers || !cfg->rng)
        return -EINVAL;
    if (cfg->params)
        s->p = *cfg->params;
    else
        ns_sctp_params_default(&s->p);
    s->timers = cfg->timers;
    s->rng = cfg->rng;
    s->ops = cfg->ops;
    s->default_pmtu = cfg->default_pmtu ? cfg->default_pmtu : NS_SCTP_DEFAULT_PMTU;
    if (s->default_pmtu < NS_SCTP_MIN_PMTU)
        s->default_pmtu = NS_SCTP_MIN_PMTU;
    s->next_id = 1;
    s->path_hash_mask = 255;
    s->id_hash_mask = 255;
    s->path_hash = calloc(s->path_hash_mask + 1, sizeof(*s->path_hash));
    s->id_hash = calloc(s->id_hash_mask + 1, sizeof(*s->id_hash));
    s->gaps = malloc(SACK_GAPS_MAX * sizeof(*s->gaps));
    /* Events are not lost to a failed allocation unless 64 are pending. */
    s->ev_cap = 64;
    s->evq = malloc(s->ev_cap * sizeof(*s->evq));
    bool ok = s->path_hash && s->id_hash && s->gaps && s->evq;
    if (ok)
        ok = ns_sctp_cookie_ctx_init(&s->cookie, s->p.cookie_secret_life_ms,
                                     cfg->cookie_secret_from_rng ? rng_cookie_rand : NULL,
                                     cfg->cookie_secret_from_rng ? s->rng : NULL, now);
    if (!ok) {
        free(s->path_hash);
        free(s->id_hash);
        free(s->gaps);
        free(s->evq);
        memset(s, 0, sizeof(*s));
        return -ENOMEM;
    }
    return 0;
}

void ns_sctp_free(struct ns_sctp *s)
{
    while (s->assocs)
        assoc_destroy(s->assocs);
    struct ns_sctp_ep *ep = s->eps, *n;
    for (; ep; ep = n) {
        n = ep->next;
        free(ep);
    }
    ns_sctp_cookie_ctx_free(&s->cookie);
    free(s->path_hash);
    free(s->id_hash);
    free(s->gaps);
    free(s->evq);
    memset(s, 0, sizeof(*s));
}

void ns_sctp_set_params(struct ns_sctp *s, const struct ns_sctp_params *p)
{
    s->p = *p;
    s->cookie.life_us = (uint64_t)p->cookie_secret_life_ms * 1000;
}

size_t ns_sctp_counters(const struct ns_sctp *s, struct ns_ctr_group *out, size_t max)
{
    NS_CTR_NAMES(names, NS_SCTP_COUNTERS);
    if (max < 1)
        return 0;
    out[0] = NS_CTR_GROUP_NAMED("sctp", names, &s->stats);
    return 1;
}

uint32_t sctp_rand32_nonzero(struct ns_sctp *s)
{
    uint32_t v;
    do {
        v = (uint32_t)ns_rng_u64(s->rng);
    } while (v == 0);
    return v;
}

/* ---- Deferred events ------------------------------------------------- */

struct ns_sctp_event *sctp_event_new(struct ns_sctp *s, struct ns_sctp_assoc *a,
                                     enum ns_sctp_event_type type)
{
    if (a && a->released)
        return NULL;
    if (s->ev_n == s->ev_cap) {
        uint32_t cap = s->ev_cap ? s->ev_cap * 2 : 64;
        struct ns_sctp_event *q = ns_alloc_should_fail() ? NULL : malloc((size_t)cap * sizeof(*q));
        if (!q) {
            s->stats.nomem++;
            return NULL;
        }
        for (uint32_t i = 0; i < s->ev_n; i++)
            q[i] = s->evq[(s->ev_head + i) % s->ev_cap];
        free(s->evq);
        s->evq = q;
        s->ev_cap = cap;
        s->ev_head = 0;
    }
    struct ns_sctp_event *e = &s->evq[(s->ev_head + s->ev_n) % s->ev_cap];
    s->ev_n++;
    memset(e, 0, sizeof(*e));
    e->type = type;
    e->assoc = a;
    e->assoc_id = a ? a->id : 0;
    return e;
}

void sctp_enter(struct ns_sctp *s)
{
    s->depth++;
}

void sctp_leave(struct ns_sctp *s, uint64_t now)
{
    if (s->depth > 1) {
        s->depth--;
        return;
    }
    /* depth stays 1 while callbacks run, so calls they make queue their
     * events here instead of recursing. */
    while (s->ev_n) {
        struct ns_sctp_event ev = s->evq[s->ev_head];
        s->ev_head = (s->ev_head + 1) % s->ev_cap;
        s->ev_n--;
        if (ev.assoc && ev.assoc->released)
            continue;
        s->stats.events++;
        if (s->ops.event)
            s->ops.event(s->ops.ctx, &ev, now);
    }
    while (s->dead) {
        struct ns_sctp_assoc *a = s->dead;
        s->dead = a->dead_next;
        assoc_destroy(a);
    }
    s->depth = 0;
    /* Debug builds: everything at rest must be consistent (assoc_state.c). */
    sctp_check(s);
}

/* ---- Output ---------------------------------------------------------- */

void sctp_emit(struct ns_sctp *s, struct ns_pkt *p, const struct ns_sctp_addr *src,
               const struct ns_sctp_addr *dst, uint64_t now)
{
    s->stats.tx_packets++;
    if (s->ops.output)
        s->ops.output(s->ops.ctx, p, src, dst, now);
    else
        ns_pkt_free(p);
}

void sctp_send_lone(struct ns_sctp *s, uint16_t sport, uint16_t dport, uint32_t vtag, uint8_t type,
                    uint8_t flags, sctp_causes_fn fn, const void *arg,
                    const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_sctp_writer w;
    if (ns_sctp_wr_start(&w, s->default_pmtu, sport, dport, vtag) != NS_SCTP_WR_OK) {
        s->stats.nomem++;
        return;
    }
    ns_sctp_wr_latch(&w);
    ns_sctp_wr_begin(&w, type, flags);
    if (fn) {
        /* Causes that do not fit are left out; the chunk still goes. */
        struct ns_sctp_wr_opt o;
        ns_sctp_wr_opt_begin(&w, &o);
        fn(&w, arg);
        ns_sctp_wr_opt_end(&w, &o);
    }
    struct ns_pkt *p = ns_sctp_wr_end(&w) == NS_SCTP_WR_OK ? ns_sctp_wr_finish(&w) : NULL;
    if (!p) {
        ns_sctp_wr_discard(&w);
        return;
    }
    sctp_emit(s, p, src, dst, now);
}

/* ---- Lookup tables --------------------------------------------------- */

static uint32_t path_key(uint16_t lport, uint16_t pport, const struct ns_sctp_addr *a)
{
    /* Not the encapsulation port: it is no part of a path's identity
     * (sctp/types.h) and changes under a hashed path (RFC 6951 5.4). */
    uint64_t k =
        (uint64_t)lport << 48 ^ (uint64_t)pport << 32 ^ a->addr ^ (uint64_t)a->family << 40;
    k *= 0x9e3779b97f4a7c15ULL;
    return (uint32_t)(k >> 32);
}

static void path_rehash(struct ns_sctp *s)
{
    uint32_t nmask = s->path_hash_mask * 2 + 1;
    struct ns_sctp_path **nh =
        ns_alloc_should_fail() ? NULL : calloc((size_t)nmask + 1, sizeof(*nh));
    if (!nh)
        return; /* longer chains, still correct */
    for (uint32_t i = 0; i <= s->path_hash_mask; i++) {
        struct ns_sctp_path *pa = s->path_hash[i], *n;
        for (; pa; pa = n) {
            n = pa->hnext;
            uint32_t b = path_key(pa->a->lport, pa->a->pport, &pa->addr) & nmask;
            pa->hnext = nh[b];
            nh[b] = pa;
        }
    }
    free(s->path_hash);
    s->path_hash = nh;
    s->path_hash_mask = nmask;
}

bool sctp_path_hash_add(struct ns_sctp *s, struct ns_sctp_path *pa)
{
    if (pa->hashed)
        return true;
    if (s->n_paths_hashed > 2 * (s->path_hash_mask + 1))
        path_rehash(s);
    uint32_t b = path_key(pa->a->lport, pa->a->pport, &pa->addr) & s->path_hash_mask;
    pa->hnext = s->path_hash[b];
    s->path_hash[b] = pa;
    pa->hashed = true;
    s->n_paths_hashed++;
    return true;
}

void sctp_path_hash_del(struct ns_sctp *s, struct ns_sctp_path *pa)
{
    if (!pa->hashed)
        return;
    uint32_t b = path_key(pa->a->lport, pa->a->pport, &pa->addr) & s->path_hash_mask;
    for (struct ns_sctp_path **pp = &s->path_hash[b]; *pp; pp = &(*pp)->hnext) {
        if (*pp == pa) {
            *pp = pa->hnext;
            break;
        }
    }
    pa->hnext = NULL;
    pa->hashed = false;
    s->n_paths_hashed--;
}

struct ns_sctp_path *sctp_path_lookup(struct ns_sctp *s, uint16_t lport, uint16_t pport,
                                      const struct ns_sctp_addr *peer)
{
    uint32_t b = path_key(lport, pport, peer) & s->path_hash_mask;
    for (struct ns_sctp_path *pa = s->path_hash[b]; pa; pa = pa->hnext) {
        if (pa->a->lport == lport && pa->a->pport == pport && ns_sctp_addr_same(&pa->addr, peer))
            return pa;
    }
    return NULL;
}

static uint32_t id_bucket(const struct ns_sctp *s, uint32_t id)
{
    return (uint32_t)((id * 0x9e3779b1u) >> 8) & s->id_hash_mask;
}

static void id_rehash(struct ns_sctp *s)
{
    uint32_t omask = s->id_hash_mask, nmask = omask * 2 + 1;
    struct ns_sctp_assoc **nh =
        ns_alloc_should_fail() ? NULL : calloc((size_t)nmask + 1, sizeof(*nh));
    if (!nh)
        return;
    struct ns_sctp_assoc **old = s->id_hash;
    s->id_hash = nh;
    s->id_hash_mask = nmask;
    for (uint32_t i = 0; i <= omask; i++) {
        struct ns_sctp_assoc *a = old[i], *n;
        for (; a; a = n) {
            n = a->id_next;
            uint32_t b = id_bucket(s, a->id);
            a->id_next = nh[b];
            nh[b] = a;
        }
    }
    free(old);
}

bool sctp_id_add(struct ns_sctp *s, struct ns_sctp_assoc *a)
{
    if (s->n_assocs > 2 * (s->id_hash_mask + 1))
        id_rehash(s);
    /* Ids are not reused while an association holding one exists. */
    for (uint32_t tries = 0; tries < 1000; tries++) {
        uint32_t id = s->next_id++;
        if (s->next_id == 0)
            s->next_id = 1;
        if (id == 0 || ns_sctp_assoc_by_id(s, id))
            continue;
        a->id = id;
        uint32_t b = id_bucket(s, id);
        a->id_next = s->id_hash[b];
        s->id_hash[b] = a;
        return true;
    }
    return false;
}

void sctp_id_del(struct ns_sctp *s, struct ns_sctp_assoc *a)
{
    uint32_t b = id_bucket(s, a->id);
    for (struct ns_sctp_assoc **pp = &s->id_hash[b]; *pp; pp = &(*pp)->id_next) {
        if (*pp == a) {
            *pp = a->id_next;
            return;
        }
    }
}

struct ns_sctp_assoc *ns_sctp_assoc_by_id(struct ns_sctp *s, uint32_t id)
{
    for (struct ns_sctp_assoc *a = s->id_hash[id_bucket(s, id)]; a; a = a->id_next) {
        if (a->id == id)
            return a;
    }
    return NULL;
}

/* ---- Input ------------------------------------------------------------ */

/* Out of the blue (8.4): no association, and not an INIT or COOKIE ECHO we
 * could process. */
static void ootb(struct ns_sctp *s, struct ns_sctp_reader *r, const struct ns_sctp_addr *src,
                 const struct ns_sctp_addr *dst, uint64_t now)
{
    s->stats.rx_ootb++;
    bool shutdown_ack = false;
    struct ns_sctp_chunk c;
    struct ns_sctp_reader it = *r;
    while (ns_sctp_reader_next(&it, &c)) {
        switch (c.type) {
        case NS_SCTP_CT_ABORT:             /* step 2 */
        case NS_SCTP_CT_SHUTDOWN_COMPLETE: /* step 6 */
        case NS_SCTP_CT_COOKIE_ACK:        /* step 7 */
            return;
        case NS_SCTP_CT_ERROR: {
            struct ns_sctp_causes_view v;
            struct ns_sctp_cause_iter ci;
            struct ns_sctp_cause cause;
            if (ns_sctp_parse_causes(&c, &v) != NS_SCTP_V_OK)
                break;
            ns_sctp_cause_iter_init(&ci, &v);
            while (ns_sctp_cause_next(&ci, &cause)) {
                if (cause.code == NS_SCTP_CAUSE_STALE_COOKIE)
                    return; /* step 7 */
            }
            break;
        }
        case NS_SCTP_CT_SHUTDOWN_ACK:
            shutdown_ack = true;
            break;
        default:
            break;
        }
    }
    const struct ns_sctp_common *h = &r->hdr;
    if (shutdown_ack) {
        /* Step 5: the peer lost its SHUTDOWN COMPLETE; no TCB here, so the
         * tag is reflected. */
        sctp_send_lone(s, h->dst_port, h->src_port, h->vtag, NS_SCTP_CT_SHUTDOWN_COMPLETE,
                       NS_SCTP_FLAG_T, NULL, NULL, dst, src, now);
        s->stats.tx_ootb_shutdown_complete++;
        return;
    }
    /* Step 8. */
    sctp_send_lone(s, h->dst_port, h->src_port, h->vtag, NS_SCTP_CT_ABORT, NS_SCTP_FLAG_T, NULL,
                   NULL, dst, src, now);
    s->stats.tx_ootb_abort++;
}

static void abort_init(struct ns_sctp *s, const struct ns_sctp_common *h, uint32_t init_tag,
                       const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now)
{
    /* 8.4 step 3: the INIT's tag, T bit clear. */
    sctp_send_lone(s, h->dst_port, h->src_port, init_tag, NS_SCTP_CT_ABORT, 0, NULL, NULL, dst, src,
                   now);
    s->stats.tx_ootb_abort++;
}

/* An INIT ACK may come from an address of the peer we did not send the
 * INIT to: the association is then found by our tag (5.1 C). */
static struct ns_sctp_path *init_ack_path(struct ns_sctp *s, const struct ns_sctp_common *h,
                                          const struct ns_sctp_addr *src,
                                          const struct ns_sctp_addr *dst, uint64_t now)
{
    for (struct ns_sctp_assoc *a = s->assocs; a; a = a->next) {
        if (a->state == NS_SCTP_COOKIE_WAIT && a->my_vtag == h->vtag && a->lport == h->dst_port &&
            a->pport == h->src_port)
            return path_add(a, src, dst, false, now);
    }
    return NULL;
}

/* RFC 6951 5.4: the remote encapsulation port of a path is the UDP source
 * port of the last packet received on it. Called only once the packet
 * passed the verification tag rules (or carried an authenticated cookie),
 * so a blind sender cannot move a path. A packet straight over IP (port 0)
 * from a path's address likewise moves that path off UDP. */
static void path_learn_port(struct ns_sctp_path *pa, const struct ns_sctp_addr *src)
{
    if (pa->addr.port == src->port)
        return;
    pa->addr.port = src->port;
    pa->a->stats.encap_port_changes++;
}

/* The packet matched the association of pa by its addresses and ports. */
static void assoc_input(struct ns_sctp *s, struct ns_sctp_reader *r, const struct ns_sctp_chunk *f,
                        struct ns_sctp_path *pa, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_sctp_assoc *a = pa->a;
    const struct ns_sctp_common *h = &r->hdr;
    a->stats.rx_packets++;

    if (f->type == NS_SCTP_CT_INIT) {
        a->stats.rx_chunks++;
        hs_init_existing(a, h, f, src, dst, now);
        return;
    }
    if (f->type == NS_SCTP_CT_COOKIE_ECHO) {
        a->stats.rx_chunks++;
        s->stats.rx_cookie_echo++;
        struct ns_sctp_cookie_tcb tcb;
        uint32_t stale = 0;
        enum ns_sctp_cookie_res res = ep_cookie_open(s, h, f, &tcb, &stale, now);
        if (res == NS_SCTP_COOKIE_INVALID)
            return;
        if (!hs_cookie_existing(a, h, &tcb, res, stale, src, dst, now))
            return;
        path_learn_port(pa, src);
        pa->local = *dst;
        /* r is past the COOKIE ECHO: bundled DATA etc. follow. */
        assoc_process(a, r, pa, now);
        return;
    }
    uint64_t t = r->types_lo;
    if (t & (1ull << NS_SCTP_CT_SHUTDOWN_ACK) &&
        (a->state == NS_SCTP_COOKIE_WAIT || a->state == NS_SCTP_COOKIE_ECHOED)) {
        /* 8.5.1 E: as if out of the blue. */
        ns_sctp_reader_rewind(r, f);
        ootb(s, r, src, dst, now);
        return;
    }
    if (t & (1ull << NS_SCTP_CT_ABORT | 1ull << NS_SCTP_CT_SHUTDOWN_COMPLETE)) {
        /* 8.5.1 B, C: our tag with T clear, or the peer's with T set. */
        struct ns_sctp_reader it = *r;
        struct ns_sctp_chunk c = *f;
        bool found = f->type == NS_SCTP_CT_ABORT || f->type == NS_SCTP_CT_SHUTDOWN_COMPLETE;
        while (!found && ns_sctp_reader_next(&it, &c))
            found = c.type == NS_SCTP_CT_ABORT || c.type == NS_SCTP_CT_SHUTDOWN_COMPLETE;
        bool tbit = (c.flags & NS_SCTP_FLAG_T) != 0;
        bool ok = tbit ? (a->peer_vtag != 0 && h->vtag == a->peer_vtag) : h->vtag == a->my_vtag;
        if (!ok) {
            a->stats.drop_bad_vtag++;
            s->stats.rx_bad_vtag++;
            return;
        }
        path_learn_port(pa, src);
        if (tbit) {
            /* Only the reflected chunk is trusted: process exactly it. */
            struct ns_sctp_reader one;
            ns_sctp_reader_one(r, &c, &one);
            assoc_process(a, &one, pa, now);
            return;
        }
    } else if (h->vtag != a->my_vtag) {
        a->stats.drop_bad_vtag++;
        s->stats.rx_bad_vtag++;
        return;
    }
    /* Replies leave from the address the peer used, to the port it used. */
    path_learn_port(pa, src);
    pa->local = *dst;
    /* f was consumed by the caller: rewind so assoc_process sees it. */
    ns_sctp_reader_rewind(r, f);
    assoc_process(a, r, pa, now);
}

void ns_sctp_batch_begin(struct ns_sctp *s)
{
    if (s->batching)
        return;
    /* Held entered for the whole batch: events queue until the end (and
     * associations that end are freed then). */
    sctp_enter(s);
    s->batching = true;
}

void ns_sctp_batch_end(struct ns_sctp *s, uint64_t now)
{
    if (!s->batching)
        return;
    s->batching = false;
    sctp_leave(s, now);
}

void ns_sctp_input(struct ns_sctp *s, struct ns_pkt *p, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst, uint64_t now)
{
    sctp_enter(s);
    s->stats.rx_packets++;
    struct ns_sctp_reader r;
    struct ns_sctp_chunk f;
    if (p->nfrags && !ns_pkt_linearize(p, 0)) {
        s->stats.nomem++;
        goto out;
    }
    if (p->len < NS_SCTP_COMMON_HLEN) {
        s->stats.rx_malformed++;
        goto out;
    }
    s->rx_buf = p->buf;
    if (!ns_sctp_checksum_verify_buf(p->data, p->len)) {
        s->stats.rx_bad_csum++;
        goto out;
    }
    if (ns_sctp_reader_init(&r, p->data, p->len) != NS_SCTP_V_OK) {
        s->stats.rx_malformed++;
        goto out;
    }
    if (!ns_sctp_reader_bundling_ok(&r)) {
        s->stats.rx_bad_bundling++;
        goto out;
    }
    if (!ns_sctp_reader_next(&r, &f))
        goto out;
    const struct ns_sctp_common *h = &r.hdr;
    /* 8.5.1 A: tag 0 belongs to INIT alone, and INIT to tag 0. */
    if ((h->vtag == 0) != (f.type == NS_SCTP_CT_INIT)) {
        s->stats.rx_bad_vtag++;
        goto out;
    }
    struct ns_sctp_path *pa = sctp_path_lookup(s, h->dst_port, h->src_port, src);
    if (!pa && f.type == NS_SCTP_CT_INIT_ACK)
        pa = init_ack_path(s, h, src, dst, now);
    if (pa) {
        assoc_input(s, &r, &f, pa, src, dst, now);
        goto out;
    }

    struct ns_sctp_ep *ep = ep_lookup(s, h->dst_port, dst);
    if (f.type == NS_SCTP_CT_INIT) {
        s->stats.rx_init++;
        struct ns_sctp_init_view iv;
        struct ns_sctp_init_params ip;
        if (!ep_init_check(s, h, &f, &iv, &ip, src, dst, now))
            goto out;
        /* A known peer may come from a new source address: its INIT lists
         * the addresses of the association (5.2.1, 5.2.2). */
        for (uint8_t i = 0; i < ip.n_ipv4; i++) {
            struct ns_sctp_addr x = {NS_SCTP_AF_INET4, src->port, ip.ipv4[i]};
            pa = sctp_path_lookup(s, h->dst_port, h->src_port, &x);
            if (pa) {
                pa->a->stats.rx_packets++;
                pa->a->stats.rx_chunks++;
                hs_init_existing(pa->a, h, &f, src, dst, now);
                goto out;
            }
        }
        if (!ep || !ep->listening) {
            s->stats.rx_no_endpoint += !ep;
            abort_init(s, h, iv.initiate_tag, src, dst, now);
            goto out;
        }
        ep_send_init_ack(s, ep, h, &iv, &ip, NULL, src, dst, now);
        goto out;
    }
    if (f.type == NS_SCTP_CT_COOKIE_ECHO && ep) {
        ep_cookie_echo(s, ep, &r, &f, src, dst, now);
        goto out;
    }
    if (!ep)
        s->stats.rx_no_endpoint++;
    ns_sctp_reader_rewind(&r, &f);
    ootb(s, &r, src, dst, now);
out:
    s->rx_buf = NULL;
    ns_pkt_free(p);
    sctp_leave(s, now);
}
