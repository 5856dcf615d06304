/* SCTP associations: life cycle and chunk dispatch (RFC 9260 sections 4,
 * 6.10 bundling order on receive, 3.2 unrecognized chunk types, 3.3.7
 * ABORT, 3.3.10 ERROR, 8.1 the association error counter, 9.1 abort), the
 * user API of sctp.h (send, receive, shutdown, abort, release; RFC 6458
 * semantics for the events) and association info. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sctp/assoc.h"

const char *ns_sctp_state_name(enum ns_sctp_state st)
{
    switch (st) {
    case NS_SCTP_CLOSED:
        return "CLOSED";
    case NS_SCTP_COOKIE_WAIT:
        return "COOKIE-WAIT";
    case NS_SCTP_COOKIE_ECHOED:
        return "COOKIE-ECHOED";
    case NS_SCTP_ESTABLISHED:
        return "ESTABLISHED";
    case NS_SCTP_SHUTDOWN_PENDING:
        return "SHUTDOWN-PENDING";
    case NS_SCTP_SHUTDOWN_SENT:
        return "SHUTDOWN-SENT";
    case NS_SCTP_SHUTDOWN_RECEIVED:
        return "SHUTDOWN-RECEIVED";
    case NS_SCTP_SHUTDOWN_ACK_SENT:
        return "SHUTDOWN-ACK-SENT";
    }
    return "?";
}

const char *ns_sctp_event_name(enum ns_sctp_event_type t)
{
    static const char *const names[] = {
        "COMM_UP",        "COMM_LOST",      "RESTART",          "SHUTDOWN_COMPLETE",
        "CANT_STR_ASSOC", "SHUTDOWN_EVENT", "SEND_FAILED",      "PARTIAL_DELIVERY_ABORTED",
        "DATA_READY",     "WRITABLE",       "PEER_ADDR_CHANGE",
    };
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* ---- Objects ------------------------------------------------------------ */

struct ns_sctp_assoc *assoc_alloc(struct ns_sctp *s, struct ns_sctp_ep *ep, uint16_t pport)
{
    struct ns_sctp_assoc *a = ns_alloc_should_fail() ? NULL : calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->s = s;
    a->ep = ep;
    a->p = s->p;
    a->lport = ep->port;
    a->pport = pport;
    a->state = NS_SCTP_CLOSED; /* a new TCB: no transition yet (assoc_set_state) */
    if (!sctp_id_add(s, a)) {
        free(a);
        return NULL;
    }
    ep->refs++;
    hs_timers_init(a);
    sd_timers_init(a);
    data_timers_init(a);
    a->next = s->assocs;
    if (s->assocs)
        s->assocs->prev = a;
    s->assocs = a;
    s->n_assocs++;
    return a;
}

static void stop_timers(struct ns_sctp_assoc *a)
{
    struct ns_timers *ts = a->s->timers;
    ns_timer_cancel(ts, &a->t1);
    ns_timer_cancel(ts, &a->t2);
    ns_timer_cancel(ts, &a->t5);
    data_stop_timers(a);
    path_stop_timers(a);
}

static void free_tx(struct ns_sctp_assoc *a)
{
    if (a->tx_ready)
        ns_sctp_retx_free(&a->rx);
    if (a->sq_ready)
        ns_sctp_sendq_free(&a->sq);
    a->tx_ready = a->sq_ready = false;
}

void assoc_destroy(struct ns_sctp_assoc *a)
{
    struct ns_sctp *s = a->s;
    stop_timers(a);
    path_unhash_all(a);
    free_tx(a);
    if (a->rx_ready) {
        ns_sctp_tsnmap_free(&a->map);
        ns_sctp_reasm_free(&a->ra);
        a->rx_ready = false;
    }
    free(a->cookie);
    free(a->err_unrec);
    sctp_id_del(s, a);
    if (a->prev)
        a->prev->next = a->next;
    else
        s->assocs = a->next;
    if (a->next)
        a->next->prev = a->prev;
    s->n_assocs--;
    if (a->on_dead) {
        for (struct ns_sctp_assoc **pp = &s->dead; *pp; pp = &(*pp)->dead_next) {
            if (*pp == a) {
                *pp = a->dead_next;
                break;
            }
        }
    }
    ep_put(a->ep);
    free(a);
}

static void to_dead(struct ns_sctp_assoc *a)
{
    if (a->on_dead)
        return;
    a->on_dead = true;
    a->dead_next = a->s->dead;
    a->s->dead = a;
}

bool assoc_setup_tx(struct ns_sctp_assoc *a, uint32_t peer_rwnd, uint64_t now)
{
    if (!a->sq_ready) {
        if (ns_sctp_sendq_init(&a->sq, &a->p, a->out_streams) != 0)
            return false;
        a->sq_ready = true;
    } else if (ns_sctp_sendq_set_streams(&a->sq, a->out_streams) != 0) {
        return false;
    }
    ns_sctp_retx_init(&a->rx, &a->p, &a->sq, a->my_itsn, peer_rwnd);
    a->tx_ready = true;
    for (uint8_t i = 0; i < a->n_paths; i++) {
        path_init_cc(a, &a->paths[i], peer_rwnd, now);
        ns_sctp_retx_set_path(&a->rx, i, &a->paths[i].cc);
    }
    return true;
}

bool assoc_setup_rx(struct ns_sctp_assoc *a)
{
    if (ns_sctp_tsnmap_init(&a->map, a->peer_itsn, 0, &a->p) != 0)
        return false;
    if (ns_sctp_reasm_init(&a->ra, &a->p, a->in_streams) != 0) {
        ns_sctp_tsnmap_free(&a->map);
        return false;
    }
    a->rx_ready = true;
    a->stamped = NULL;
    return true;
}

void assoc_reset_rx(struct ns_sctp_assoc *a)
{
    if (!a->rx_ready)
        return;
    /* reasm has no reset of its own and must not be re-created: messages
     * the user took still point into its pools. Everything held for
     * reassembly goes; the delivery queue and taken messages stay. */
    struct ns_sctp_reasm *r = &a->ra;
    for (uint32_t i = 0; i < r->streams_cap; i++) {
        struct ns_sctp_istream *st = &r->streams[i];
        struct ns_sctp_rchunk *c = st->frags, *cn;
        for (; c; c = cn) {
            cn = c->next;
            ns_buf_put(c->d.buf);
            ns_sctp_pool_put(&r->chunk_pool, c);
        }
        struct ns_sctp_rmsg *m = st->waiting, *mn;
        for (; m; m = mn) {
            mn = m->next;
            for (c = m->chunks; c; c = cn) {
                cn = c->next;
                ns_buf_put(c->d.buf);
                ns_sctp_pool_put(&r->chunk_pool, c);
            }
            ns_sctp_pool_put(&r->msg_pool, m);
        }
        st->frags = st->frags_tail = NULL;
        st->waiting = NULL;
        st->next_ssn = 0;
    }
    /* Complete messages that waited behind the aborted partial delivery
     * were received and acknowledged: they are delivered. */
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&r->held))) {
        r->unread_bytes += m->len;
        m->next = NULL;
        if (r->ready.tail)
            r->ready.tail->next = m;
        else
            r->ready.head = m;
        r->ready.tail = m;
        r->ready.count++;
        r->ready.bytes += m->len;
    }
    r->pd_active = false;
    r->held_bytes = 0;
    r->held_mem = 0;
    ns_sctp_reasm_set_streams(r, a->in_streams);
    ns_sctp_tsnmap_reset(&a->map, a->peer_itsn, &a->p);
}

/* ---- Ending ------------------------------------------------------------- */

static void send_failed(struct ns_sctp_assoc *a, const struct ns_sctp_txchunk *c, uint32_t len,
                        uint16_t flags)
{
    struct ns_sctp_event *e = sctp_event_new(a->s, a, NS_SCTP_EV_SEND_FAILED);
    if (!e)
        return;
    e->context = c->context;
    e->ppid = c->d.ppid;
    e->sid = c->d.sid;
    e->len = len;
    e->flags = flags;
}

void assoc_fail_data(struct ns_sctp_assoc *a)
{
    uint32_t acc = 0;
    if (a->tx_ready) {
        /* A message's chunks are consecutive; report it at its last one
         * still held (its E fragment, unless the rest is still queued). */
        for (struct ns_sctp_txchunk *c = a->rx.head; c; c = c->next) {
            acc += c->d.len;
            if (c->d.flags & NS_SCTP_DATA_E) {
                send_failed(a, c, acc, NS_SCTP_SF_SENT);
                acc = 0;
            }
        }
        a->last_next_tsn = ns_sctp_retx_next_tsn(&a->rx);
        a->last_cum_ack = ns_sctp_retx_cum_ack(&a->rx);
        ns_sctp_retx_free(&a->rx);
        a->tx_ready = false;
    }
    if (a->sq_ready) {
        /* Pulling with no size limit yields each queued message (or the
         * rest of a partly sent one) as a single chunk. */
        struct ns_sctp_txchunk *c;
        while ((c = ns_sctp_sendq_pull(&a->sq, UINT32_MAX, UINT32_MAX - 64))) {
            bool first = (c->d.flags & NS_SCTP_DATA_B) != 0;
            send_failed(a, c, acc + c->d.len, first ? NS_SCTP_SF_UNSENT : NS_SCTP_SF_SENT);
            acc = 0;
            ns_sctp_sendq_chunk_done(&a->sq, c);
        }
        ns_sctp_sendq_free(&a->sq);
        a->sq_ready = false;
    }
}

/* The rule that ends an association, for assoc_set_state. */
static const char *close_rule(enum ns_sctp_event_type ev, enum ns_sctp_reason why)
{
    switch (why) {
    case NS_SCTP_R_PEER_ABORT:
        return "9.1: ABORT received";
    case NS_SCTP_R_USER_ABORT:
        return ev == NS_SCTP_EV_CANT_STR_ASSOC ? "9.1: ABORT (user, no peer state)"
                                               : "9.1: ABORT (user)";
    case NS_SCTP_R_MAX_RETRANS:
        return "8.1: Association.Max.Retrans exceeded";
    case NS_SCTP_R_INIT_TIMEOUT:
        return "5.1 C/E: Max.Init.Retransmits exceeded";
    case NS_SCTP_R_SHUTDOWN_GUARD:
        return "9.2: T5-shutdown-guard expired";
    case NS_SCTP_R_PROTOCOL:
        return "protocol error: TCB destroyed, ABORT sent if the peer has state";
    case NS_SCTP_R_NOMEM:
        return "out of resource";
    case NS_SCTP_R_NONE:
        break;
    }
    return "9.2: SHUTDOWN COMPLETE";
}

struct ns_sctp_event *assoc_close(struct ns_sctp_assoc *a, enum ns_sctp_event_type ev,
                                  enum ns_sctp_reason why, uint16_t cause, uint64_t now)
{
    struct ns_sctp *s = a->s;
    if (a->state == NS_SCTP_CLOSED)
        return NULL;
    bool pd = a->rx_ready && ns_sctp_reasm_pd_active(&a->ra);
    assoc_set_state(a, NS_SCTP_CLOSED, close_rule(ev, why));
    stop_timers(a);
    path_unhash_all(a);
    assoc_fail_data(a);
    free(a->cookie);
    a->cookie = NULL;
    free(a->err_unrec);
    a->err_unrec = NULL;
    a->pend = 0;
    if (pd)
        sctp_event_new(s, a, NS_SCTP_EV_PARTIAL_DELIVERY_ABORTED);
    if (ev == NS_SCTP_EV_COMM_LOST)
        s->stats.comm_lost++;
    else if (ev == NS_SCTP_EV_CANT_STR_ASSOC)
        s->stats.cant_start++;
    else if (ev == NS_SCTP_EV_SHUTDOWN_COMPLETE)
        s->stats.shutdowns++;
    struct ns_sctp_event *e = sctp_event_new(s, a, ev);
    if (e) {
        e->reason = why;
        e->cause = cause;
    }
    if (a->released)
        to_dead(a);
    (void)now;
    return e;
}

bool assoc_wr_start(struct ns_sctp_assoc *a, struct ns_sctp_writer *w, struct ns_sctp_path *pa)
{
    if (ns_sctp_wr_start(w, pa->pmtu, a->lport, a->pport, a->peer_vtag) != NS_SCTP_WR_OK) {
        a->s->stats.nomem++;
        return false;
    }
    ns_sctp_wr_latch(w);
    return true;
}

void assoc_wr_send(struct ns_sctp_assoc *a, struct ns_sctp_writer *w, struct ns_sctp_path *pa,
                   uint64_t now)
{
    uint32_t n = w->nchunks;
    struct ns_pkt *p = ns_sctp_wr_finish(w);
    if (!p) {
        ns_sctp_wr_discard(w);
        return;
    }
    a->stats.tx_packets++;
    a->stats.tx_chunks += n;
    sctp_emit(a->s, p, &pa->local, &pa->addr, now);
}

void assoc_send_abort(struct ns_sctp_assoc *a, uint16_t code, const void *v, uint16_t vlen,
                      uint64_t now)
{
    if (a->peer_vtag == 0 || a->n_paths == 0)
        return; /* COOKIE-WAIT: the peer keeps no state to abort */
    struct ns_sctp_path *pa = path_data(a);
    struct ns_sctp_writer w;
    if (!assoc_wr_start(a, &w, pa))
        return;
    ns_sctp_wr_abort_begin(&w, false);
    if (code) {
        /* A reason that does not fit is cut rather than dropped. */
        uint32_t room = ns_sctp_wr_room(&w);
        if (room < NS_SCTP_TLV_HLEN + 4)
            vlen = 0;
        else if (vlen > room - NS_SCTP_TLV_HLEN - 4)
            vlen = (uint16_t)(room - NS_SCTP_TLV_HLEN - 4);
        ns_sctp_wr_cause(&w, code, v, vlen);
    }
    if (ns_sctp_wr_end(&w) != NS_SCTP_WR_OK) {
        ns_sctp_wr_discard(&w);
        return;
    }
    a->s->stats.aborts_tx++;
    assoc_wr_send(a, &w, pa, now);
}

static bool pre_established(const struct ns_sctp_assoc *a)
{
    return a->state == NS_SCTP_COOKIE_WAIT || a->state == NS_SCTP_COOKIE_ECHOED;
}

struct ns_sctp_event *assoc_peer_abort(struct ns_sctp_assoc *a, uint16_t code, uint64_t now)
{
    a->s->stats.aborts_rx++;
    return assoc_close(a, pre_established(a) ? NS_SCTP_EV_CANT_STR_ASSOC : NS_SCTP_EV_COMM_LOST,
                       NS_SCTP_R_PEER_ABORT, code, now);
}

void assoc_abort_protocol(struct ns_sctp_assoc *a, uint16_t code, const void *v, uint16_t vlen,
                          uint64_t now)
{
    assoc_send_abort(a, code, v, vlen, now);
    assoc_close(a, pre_established(a) ? NS_SCTP_EV_CANT_STR_ASSOC : NS_SCTP_EV_COMM_LOST,
                NS_SCTP_R_PROTOCOL, code, now);
}

bool assoc_error(struct ns_sctp_assoc *a, uint64_t now)
{
    a->errors++;
    if (a->errors <= a->p.association_max_retrans)
        return false;
    assoc_send_abort(a, 0, NULL, 0, now);
    assoc_close(a, NS_SCTP_EV_COMM_LOST, NS_SCTP_R_MAX_RETRANS, 0, now);
    return true;
}

void assoc_established(struct ns_sctp_assoc *a, const char *why, uint64_t now)
{
    assoc_set_state(a, NS_SCTP_ESTABLISHED, why);
    a->rtx_path = a->primary;
    a->s->stats.established++;
    struct ns_sctp_event *e = sctp_event_new(a->s, a, NS_SCTP_EV_COMM_UP);
    if (e) {
        e->in_streams = a->in_streams;
        e->out_streams = a->out_streams;
    }
    path_hb_start(a, now);
    if (a->shutdown_req)
        sd_progress(a, now);
}

void assoc_stamp_ready(struct ns_sctp_assoc *a)
{
    if (!a->rx_ready)
        return;
    bool was_empty = a->stamped == NULL;
    struct ns_sctp_rmsg *m = a->stamped ? a->stamped->next : a->ra.ready.head;
    if (!m)
        return;
    for (; m; m = m->next) {
        m->assoc_id = a->id;
        a->stamped = m;
    }
    /* Edge-triggered: everything ready is stamped at the end of each
     * packet, so nothing stamped means the queue was empty. */
    if (was_empty)
        sctp_event_new(a->s, a, NS_SCTP_EV_DATA_READY);
}

/* ---- Received chunks ---------------------------------------------------- */

static void rx_abort(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now)
{
    struct ns_sctp_causes_view v;
    uint16_t code = 0;
    const uint8_t *info = NULL;
    uint16_t info_len = 0;
    if (ns_sctp_parse_causes(c, &v) == NS_SCTP_V_OK && v.ncauses) {
        struct ns_sctp_cause_iter ci;
        struct ns_sctp_cause cause;
        ns_sctp_cause_iter_init(&ci, &v);
        if (ns_sctp_cause_next(&ci, &cause)) {
            code = cause.code;
            if (code == NS_SCTP_CAUSE_USER_ABORT) {
                info = cause.value;
                info_len = cause.vlen;
            }
        }
    }
    struct ns_sctp_event *e = assoc_peer_abort(a, code, now);
    if (e && info) {
        e->info_len = info_len < NS_SCTP_EV_INFO_MAX ? info_len : NS_SCTP_EV_INFO_MAX;
        memcpy(e->info, info, e->info_len);
    }
}

static void rx_error(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now)
{
    a->stats.rx_errors++;
    struct ns_sctp_causes_view v;
    if (ns_sctp_parse_causes(c, &v) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++;
        return;
    }
    struct ns_sctp_cause_iter ci;
    struct ns_sctp_cause cause;
    ns_sctp_cause_iter_init(&ci, &v);
    while (ns_sctp_cause_next(&ci, &cause)) {
        if (cause.code == NS_SCTP_CAUSE_STALE_COOKIE && a->state == NS_SCTP_COOKIE_ECHOED) {
            hs_5_2_6_stale_cookie(a, cause.staleness_us, now);
            return;
        }
        /* Other causes are informational for us: we send only streams
         * and chunks the peer negotiated. */
    }
}

static void report_unknown(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c,
                           struct ns_sctp_path *pa, uint64_t now)
{
    struct ns_sctp_writer w;
    if (a->peer_vtag == 0 || !assoc_wr_start(a, &w, pa))
        return;
    ns_sctp_wr_error_begin(&w);
    ns_sctp_wr_cause_unrecognized_chunk(&w, c);
    if (ns_sctp_wr_end(&w) != NS_SCTP_WR_OK) {
        /* A chunk too large to echo within the PMTU is not reported. */
        ns_sctp_wr_discard(&w);
        return;
    }
    a->stats.tx_errors++;
    assoc_wr_send(a, &w, pa, now);
}

void assoc_process(struct ns_sctp_assoc *a, struct ns_sctp_reader *r, struct ns_sctp_path *pa,
                   uint64_t now)
{
    bool had_data = false;
    struct ns_sctp_chunk c;
    a->ctl_path = pa->idx;
    while (a->state != NS_SCTP_CLOSED && ns_sctp_reader_next(r, &c)) {
        a->stats.rx_chunks++;
        switch (c.type) {
        case NS_SCTP_CT_DATA:
            if (!a->rx_ready || a->state < NS_SCTP_ESTABLISHED ||
                a->state == NS_SCTP_SHUTDOWN_ACK_SENT) {
                a->stats.drop_state++;
                break;
            }
            had_data = true;
            a->rx_path = pa->idx;
            if (!data_rx(a, &c, now))
                return;
            break;
        case NS_SCTP_CT_INIT_ACK:
            if (a->state == NS_SCTP_COOKIE_WAIT)
                hs_5_1c_init_ack(a, &c, pa, now);
            else
                a->stats.drop_state++; /* 5.2.3 */
            break;
        case NS_SCTP_CT_SACK:
            if (a->tx_ready && a->state >= NS_SCTP_ESTABLISHED)
                data_rx_sack(a, &c, now);
            else
                a->stats.drop_state++;
            break;
        case NS_SCTP_CT_HEARTBEAT:
            path_rx_heartbeat(a, &c, pa, now);
            break;
        case NS_SCTP_CT_HEARTBEAT_ACK:
            path_rx_heartbeat_ack(a, &c, now);
            break;
        case NS_SCTP_CT_ABORT:
            rx_abort(a, &c, now);
            return;
        case NS_SCTP_CT_SHUTDOWN:
            sd_9_2_shutdown(a, &c, now);
            break;
        case NS_SCTP_CT_SHUTDOWN_ACK:
            sd_9_2_shutdown_ack(a, now);
            break;
        case NS_SCTP_CT_ERROR:
            rx_error(a, &c, now);
            break;
        case NS_SCTP_CT_COOKIE_ACK:
            if (a->state == NS_SCTP_COOKIE_ECHOED)
                hs_5_1e_cookie_ack(a, now);
            else
                a->stats.drop_state++; /* 5.2.5 */
            break;
        case NS_SCTP_CT_SHUTDOWN_COMPLETE:
            sd_9_2_shutdown_complete(a, now);
            return;
        case NS_SCTP_CT_INIT:
        case NS_SCTP_CT_COOKIE_ECHO:
            /* Only meaningful as the first chunk, handled before. */
            a->stats.drop_state++;
            break;
        default: {
            /* Everything else, extensions included, was not negotiated:
             * the type's upper bits decide (3.2). */
            enum ns_sctp_unknown_action act = ns_sctp_chunk_action(c.type);
            a->stats.drop_unknown_chunk++;
            if (ns_sctp_action_reports(act))
                report_unknown(a, &c, pa, now);
            if (ns_sctp_action_stops(act))
                goto done;
            break;
        }
        }
    }
done:
    if (a->state == NS_SCTP_CLOSED)
        return;
    if (had_data)
        data_rx_done(a, now);
    data_output(a, now);
}

/* ---- User API ----------------------------------------------------------- */

uint32_t ns_sctp_assoc_id(const struct ns_sctp_assoc *a)
{
    return a->id;
}

enum ns_sctp_state ns_sctp_assoc_state(const struct ns_sctp_assoc *a)
{
    return a->state;
}

struct ns_sctp_ep *ns_sctp_assoc_ep(const struct ns_sctp_assoc *a)
{
    return a->ep;
}

void ns_sctp_assoc_set_user(struct ns_sctp_assoc *a, void *user)
{
    a->user = user;
}

void *ns_sctp_assoc_user(const struct ns_sctp_assoc *a)
{
    return a->user;
}

struct ns_sctp_assoc *ns_sctp_assoc_next(struct ns_sctp *s, struct ns_sctp_assoc *prev)
{
    return prev ? prev->next : s->assocs;
}

/* Either data (copied) or b + off (referenced). */
static int send_common(struct ns_sctp_assoc *a, uint16_t sid, uint32_t ppid, uint32_t flags,
                       const void *data, struct ns_buf *b, uint32_t off, uint32_t len,
                       uint32_t context, uint64_t now)
{
    struct ns_sctp *s = a->s;
    int rc;
    sctp_enter(s);
    if (a->state == NS_SCTP_CLOSED || !a->sq_ready) {
        rc = -ENOTCONN;
    } else if (a->shutdown_req || a->state >= NS_SCTP_SHUTDOWN_PENDING) {
        rc = -EPIPE;
    } else {
        uint32_t uf = flags & NS_SCTP_SEND_UNORDERED;
        rc = b ? ns_sctp_sendq_enqueue_buf(&a->sq, sid, b, off, len, ppid, uf, context)
               : ns_sctp_sendq_enqueue(&a->sq, sid, data, len, ppid, uf, context);
        if (rc == -EAGAIN) {
            a->want_writable = true;
            a->want_space = len;
        } else if (rc == 0 && !(flags & NS_SCTP_SEND_MORE))
            data_output(a, now);
    }
    sctp_leave(s, now);
    return rc;
}

int ns_sctp_send(struct ns_sctp_assoc *a, uint16_t sid, uint32_t ppid, uint32_t flags,
                 const void *data, uint32_t len, uint32_t context, uint64_t now)
{
    return send_common(a, sid, ppid, flags, data, NULL, 0, len, context, now);
}

int ns_sctp_send_buf(struct ns_sctp_assoc *a, uint16_t sid, uint32_t ppid, uint32_t flags,
                     struct ns_buf *b, uint32_t off, uint32_t len, uint32_t context, uint64_t now)
{
    if (!b)
        return -EINVAL;
    return send_common(a, sid, ppid, flags, NULL, b, off, len, context, now);
}

void ns_sctp_flush(struct ns_sctp_assoc *a, uint64_t now)
{
    sctp_enter(a->s);
    if (a->state != NS_SCTP_CLOSED)
        data_output(a, now);
    sctp_leave(a->s, now);
}

uint32_t ns_sctp_send_space(const struct ns_sctp_assoc *a)
{
    if (a->state == NS_SCTP_CLOSED || !a->sq_ready)
        return 0;
    return ns_sctp_sendq_space(&a->sq);
}

void ns_sctp_recv_take(struct ns_sctp_assoc *a, struct ns_sctp_rmsgq *dst)
{
    if (!a->rx_ready)
        return;
    struct ns_sctp_rmsg *m = a->stamped ? a->stamped->next : a->ra.ready.head;
    for (; m; m = m->next)
        m->assoc_id = a->id;
    ns_sctp_reasm_take(&a->ra, dst);
    a->stamped = NULL;
}

void ns_sctp_msg_free(struct ns_sctp_assoc *a, struct ns_sctp_rmsg *m, uint64_t now)
{
    if (!a->rx_ready)
        return;
    sctp_enter(a->s);
    ns_sctp_reasm_msg_free(&a->ra, m);
    if (assoc_can_data(a) || a->state == NS_SCTP_SHUTDOWN_SENT) {
        struct ns_sctp_path *pa = &a->paths[a->rx_path];
        if (ns_sctp_reasm_window_update_due(&a->ra, pa->pmtu)) {
            a->pend |= PEND_SACK;
            data_output(a, now);
        }
    }
    sctp_leave(a->s, now);
}

int ns_sctp_abort(struct ns_sctp_assoc *a, const void *reason, uint16_t len, uint64_t now)
{
    struct ns_sctp *s = a->s;
    if (a->state == NS_SCTP_CLOSED)
        return -ENOTCONN;
    sctp_enter(s);
    assoc_send_abort(a, NS_SCTP_CAUSE_USER_ABORT, reason, reason ? len : 0, now);
    assoc_close(a, pre_established(a) ? NS_SCTP_EV_CANT_STR_ASSOC : NS_SCTP_EV_COMM_LOST,
                NS_SCTP_R_USER_ABORT, NS_SCTP_CAUSE_USER_ABORT, now);
    sctp_leave(s, now);
    return 0;
}

void ns_sctp_assoc_release(struct ns_sctp_assoc *a, uint64_t now)
{
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    a->released = true;
    if (a->state == NS_SCTP_CLOSED) {
        to_dead(a);
    } else if (a->state == NS_SCTP_COOKIE_WAIT) {
        /* Nothing to shut down gracefully: the peer has no state yet. */
        assoc_close(a, NS_SCTP_EV_CANT_STR_ASSOC, NS_SCTP_R_USER_ABORT, 0, now);
    } else {
        a->shutdown_req = true;
        sd_progress(a, now);
    }
    sctp_leave(s, now);
}

int ns_sctp_set_pmtu(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer, uint32_t pmtu)
{
    struct ns_sctp_path *pa = path_find(a, peer);
    if (!pa)
        return -ENOENT;
    if (pmtu < NS_SCTP_MIN_PMTU || pmtu > 65535)
        return -EINVAL;
    pa->pmtu = pmtu & ~3u;
    ns_sctp_cc_set_mtu(&pa->cc, pa->pmtu);
    return 0;
}

int ns_sctp_set_primary(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer)
{
    struct ns_sctp_path *pa = path_find(a, peer);
    if (!pa)
        return -ENOENT;
    a->primary = pa->idx;
    return 0;
}

int ns_sctp_assoc_info(const struct ns_sctp_assoc *a, struct ns_sctp_assoc_info *o)
{
    memset(o, 0, sizeof(*o));
    o->id = a->id;
    o->state = a->state;
    o->local_port = a->lport;
    o->peer_port = a->pport;
    o->local_vtag = a->my_vtag;
    o->peer_vtag = a->peer_vtag;
    o->in_streams = a->in_streams;
    o->out_streams = a->out_streams;
    o->local_initial_tsn = a->my_itsn;
    o->peer_initial_tsn = a->peer_itsn;
    o->errors = a->errors;
    o->n_paths = a->n_paths;
    o->primary = a->primary;
    if (a->rx_ready) {
        o->rwnd = ns_sctp_reasm_rwnd(&a->ra);
        o->peer_cum_tsn = ns_sctp_tsnmap_cum(&a->map);
        o->rcv_unread = a->ra.unread_bytes;
    }
    if (a->tx_ready) {
        o->peer_rwnd = ns_sctp_retx_peer_rwnd(&a->rx);
        o->flight = ns_sctp_retx_flight(&a->rx);
        o->outstanding_chunks = a->rx.n_chunks;
        o->next_tsn = ns_sctp_retx_next_tsn(&a->rx);
        o->cum_ack = ns_sctp_retx_cum_ack(&a->rx);
    } else if (a->state == NS_SCTP_CLOSED && a->last_next_tsn != a->last_cum_ack) {
        o->next_tsn = a->last_next_tsn;
        o->cum_ack = a->last_cum_ack;
    } else {
        o->next_tsn = a->my_itsn;
        o->cum_ack = a->my_itsn - 1;
    }
    if (a->sq_ready) {
        o->sndbuf_used = a->sq.queued_bytes + a->sq.inflight_bytes;
        o->queued_msgs = a->sq.queued_msgs;
    }
    for (uint8_t i = 0; i < a->n_paths; i++) {
        const struct ns_sctp_path *pa = &a->paths[i];
        struct ns_sctp_path_info *pi = &o->paths[i];
        pi->addr = pa->addr;
        pi->local = pa->local;
        pi->active = pa->active;
        pi->confirmed = pa->confirmed;
        pi->primary = i == a->primary;
        pi->pmtu = pa->pmtu;
        pi->cwnd = pa->cc.cwnd;
        pi->ssthresh = pa->cc.ssthresh;
        pi->flight = pa->cc.flight;
        pi->errors = pa->errors;
        pi->srtt_us = pa->cc.srtt_us;
        pi->rttvar_us = pa->cc.rttvar_us;
        pi->rto_us = pa->cc.rto_us;
    }
    if (a->n_paths) {
        const struct ns_sctp_path_info *pp = &o->paths[a->primary];
        o->cwnd = pp->cwnd;
        o->ssthresh = pp->ssthresh;
        o->srtt_us = pp->srtt_us;
        o->rto_us = pp->rto_us;
    }
    o->stats = a->stats;
    return 0;
}

size_t ns_sctp_assoc_counters(const struct ns_sctp_assoc *a, struct ns_ctr_group *out, size_t max)
{
    NS_CTR_NAMES(assoc_names, NS_SCTP_ASSOC_COUNTERS);
    NS_CTR_NAMES(retx_names, NS_SCTP_RETX_COUNTERS);
    NS_CTR_NAMES(sendq_names, NS_SCTP_SENDQ_COUNTERS);
    NS_CTR_NAMES(tsnmap_names, NS_SCTP_TSNMAP_COUNTERS);
    NS_CTR_NAMES(reasm_names, NS_SCTP_REASM_COUNTERS);
    size_t n = 0;
    if (n < max)
        out[n++] = NS_CTR_GROUP_NAMED("assoc", assoc_names, &a->stats);
    if (a->tx_ready && n < max)
        out[n++] = NS_CTR_GROUP_NAMED("retx", retx_names, &a->rx.stats);
    if (a->sq_ready && n < max)
        out[n++] = NS_CTR_GROUP_NAMED("sendq", sendq_names, &a->sq.stats);
    if (a->rx_ready && n < max)
        out[n++] = NS_CTR_GROUP_NAMED("tsnmap", tsnmap_names, &a->map.stats);
    if (a->rx_ready && n < max)
        out[n++] = NS_CTR_GROUP_NAMED("reasm", reasm_names, &a->ra.stats);
    return n;
}
