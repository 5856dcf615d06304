/* Association start-up on the initiator's side and everything that meets
 * an existing association during a handshake: RFC 9260 sections 5.1 (A-E:
 * INIT, INIT ACK, COOKIE ECHO, COOKIE ACK, T1-init and T1-cookie with
 * back-off and Max.Init.Retransmits), 5.2.1 (INIT in COOKIE-WAIT or
 * COOKIE-ECHOED), 5.2.2 (unexpected INIT, restart with new addresses),
 * 5.2.3 (unexpected INIT ACK), 5.2.4 (COOKIE ECHO with a TCB: table 2
 * cases A-D), 5.2.6 (Stale Cookie: retry with a Cookie Preservative),
 * 3.3.3 (INIT ACK checks), 3.2.2 (reporting unrecognized parameters). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sctp/assoc.h"

static uint16_t min16(uint16_t a, uint16_t b)
{
    return a < b ? a : b;
}

static uint16_t param16(uint32_t v)
{
    return (uint16_t)(v == 0 ? 1 : v > 65535 ? 65535 : v);
}

static void send_init(struct ns_sctp_assoc *a, uint64_t now)
{
    struct ns_sctp_path *pa = &a->paths[a->primary];
    struct ns_sctp_writer w;
    if (ns_sctp_wr_start(&w, pa->pmtu, a->lport, a->pport, 0) != NS_SCTP_WR_OK) {
        a->s->stats.nomem++;
        return;
    }
    /* All of it or nothing: the writer latches, one check at the end. */
    ns_sctp_wr_latch(&w);
    ns_sctp_wr_init_begin(&w, false, a->my_vtag, a->p.rcvbuf_bytes, a->req_os, a->req_mis,
                          a->my_itsn);
    const struct ns_sctp_ep *ep = a->ep;
    for (uint8_t i = 0; ep->n_addrs > 1 && i < ep->n_addrs; i++)
        ns_sctp_wr_param_ipv4(&w, ep->addrs[i].addr);
    if (a->preservative_ms)
        ns_sctp_wr_param_cookie_preservative(&w, a->preservative_ms);
    uint16_t types[1] = {NS_SCTP_ADDRTYPE_IPV4};
    ns_sctp_wr_param_supported_addr_types(&w, types, 1);
    if (ns_sctp_wr_end(&w) != NS_SCTP_WR_OK) {
        ns_sctp_wr_discard(&w);
        return;
    }
    assoc_wr_send(a, &w, pa, now);
}

bool hs_write_cookie_echo(struct ns_sctp_assoc *a, struct ns_sctp_writer *w)
{
    if (ns_sctp_wr_cookie_echo(w, a->cookie, a->cookie_len) != NS_SCTP_WR_OK)
        return false;
    if (a->err_unrec) {
        /* 3.2.2: reported in an ERROR after the COOKIE ECHO; if it does
         * not fit it is simply not reported (an optional section: w may
         * latch or not, this works on both). */
        struct ns_sctp_wr_opt o;
        ns_sctp_wr_opt_begin(w, &o);
        ns_sctp_wr_error_begin(w);
        ns_sctp_wr_cause(w, NS_SCTP_CAUSE_UNRECOGNIZED_PARAMS, a->err_unrec, a->err_unrec_len);
        ns_sctp_wr_end(w);
        if (ns_sctp_wr_opt_end(w, &o) == NS_SCTP_WR_OK)
            a->stats.tx_errors++;
        free(a->err_unrec);
        a->err_unrec = NULL;
    }
    return true;
}

/* A COOKIE ECHO alone (T1-cookie retransmission): DATA that rode with the
 * first one is retransmitted by T3 once the association is up. */
static void send_cookie_echo(struct ns_sctp_assoc *a, uint64_t now)
{
    struct ns_sctp_path *pa = &a->paths[a->primary];
    uint32_t need = NS_SCTP_COMMON_HLEN + NS_SCTP_CHUNK_HLEN + ns_sctp_pad4(a->cookie_len);
    struct ns_sctp_writer w;
    if (ns_sctp_wr_start(&w, need > pa->pmtu ? need : pa->pmtu, a->lport, a->pport, a->peer_vtag) !=
        NS_SCTP_WR_OK) {
        a->s->stats.nomem++;
        return;
    }
    if (!hs_write_cookie_echo(a, &w)) {
        ns_sctp_wr_discard(&w);
        return;
    }
    a->cookie_sent_at = now;
    assoc_wr_send(a, &w, pa, now);
}

static void t1_fire(struct ns_timer *t, uint64_t now)
{
    struct ns_sctp_assoc *a = NS_SCTP_CONTAINER(t, struct ns_sctp_assoc, t1);
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    a->stats.t1_timeouts++;
    if (++a->t1_count > a->p.max_init_retransmits) {
        assoc_close(a, NS_SCTP_EV_CANT_STR_ASSOC, NS_SCTP_R_INIT_TIMEOUT, 0, now);
        goto out;
    }
    uint64_t max = (uint64_t)a->p.rto_max_ms * NS_MS;
    a->t1_rto = a->t1_rto * 2 > max ? max : a->t1_rto * 2;
    if (a->state == NS_SCTP_COOKIE_WAIT)
        send_init(a, now);
    else if (a->state == NS_SCTP_COOKIE_ECHOED)
        send_cookie_echo(a, now);
    ns_timer_arm(s->timers, &a->t1, now + a->t1_rto);
out:
    sctp_leave(s, now);
}

void hs_timers_init(struct ns_sctp_assoc *a)
{
    ns_timer_init(&a->t1, t1_fire);
}

static void t1_start(struct ns_sctp_assoc *a, uint64_t now)
{
    a->t1_count = 0;
    a->t1_rto = (uint64_t)a->p.rto_initial_ms * NS_MS;
    ns_timer_arm(a->s->timers, &a->t1, now + a->t1_rto);
}

struct ns_sctp_assoc *ns_sctp_connect(struct ns_sctp_ep *ep, const struct ns_sctp_addr *peers,
                                      unsigned n_peers, uint16_t peer_port, uint64_t now, int *err)
{
    struct ns_sctp *s = ep->s;
    int e = 0;
    struct ns_sctp_assoc *a = NULL;
    sctp_enter(s);
    if (!peers || n_peers == 0 || n_peers > NS_SCTP_MAX_PATHS || peer_port == 0 || ep->closed) {
        e = -EINVAL;
        goto out;
    }
    for (unsigned i = 0; i < n_peers; i++) {
        if (sctp_path_lookup(s, ep->port, peer_port, &peers[i])) {
            e = -EISCONN;
            goto out;
        }
    }
    a = assoc_alloc(s, ep, peer_port);
    if (!a) {
        s->stats.nomem++;
        e = -ENOMEM;
        goto out;
    }
    struct ns_sctp_addr any = {NS_SCTP_AF_INET4, 0, 0};
    const struct ns_sctp_addr *local = ep->n_addrs ? &ep->addrs[0] : &any;
    for (unsigned i = 0; i < n_peers; i++)
        path_add(a, &peers[i], local, false, now);
    if (a->n_paths == 0 || !ns_sctp_addr_eq(&a->paths[0].addr, &peers[0])) {
        /* Not an IPv4 address, or 0: nowhere to send the INIT. */
        assoc_destroy(a);
        a = NULL;
        e = -EINVAL;
        goto out;
    }
    a->primary = 0;
    a->my_vtag = sctp_rand32_nonzero(s);
    a->my_itsn = (uint32_t)ns_rng_u64(s->rng);
    a->req_os = param16(a->p.out_streams);
    a->req_mis = param16(a->p.max_in_streams);
    a->out_streams = a->req_os;
    if (ns_sctp_sendq_init(&a->sq, &a->p, a->out_streams) != 0) {
        s->stats.nomem++;
        assoc_destroy(a);
        a = NULL;
        e = -ENOMEM;
        goto out;
    }
    a->sq_ready = true;
    assoc_set_state(a, NS_SCTP_COOKIE_WAIT, "5.1 A: ASSOCIATE, INIT sent");
    s->stats.active_opens++;
    send_init(a, now);
    t1_start(a, now);
out:
    if (err)
        *err = e;
    sctp_leave(s, now);
    return a;
}

/* ---- INIT ACK (5.1 C) ----------------------------------------------------- */

static void cause_missing_cookie(struct ns_sctp_assoc *a, uint64_t now)
{
    uint8_t v[6] = {0, 0, 0, 1, 0, NS_SCTP_PT_STATE_COOKIE};
    assoc_abort_protocol(a, NS_SCTP_CAUSE_MISSING_PARAM, v, sizeof(v), now);
}

static void keep_unrecognized(struct ns_sctp_assoc *a, const struct ns_sctp_init_params *ip)
{
    uint32_t total = 0;
    for (uint8_t i = 0; i < ip->n_unrec; i++)
        total += ns_sctp_pad4(ip->unrec[i].len);
    if (total == 0 || total > 60000)
        return;
    a->err_unrec = ns_alloc_should_fail() ? NULL : malloc(total);
    if (!a->err_unrec) {
        a->s->stats.nomem++; /* the ERROR reporting them is skipped */
        return;
    }
    uint32_t off = 0;
    for (uint8_t i = 0; i < ip->n_unrec; i++) {
        memcpy(a->err_unrec + off, ip->unrec[i].raw, ip->unrec[i].len);
        uint32_t pad = ns_sctp_pad4(ip->unrec[i].len) - ip->unrec[i].len;
        memset(a->err_unrec + off + ip->unrec[i].len, 0, pad);
        off += ip->unrec[i].len + pad;
    }
    a->err_unrec_len = (uint16_t)total;
}

void hs_5_1c_init_ack(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c,
                      struct ns_sctp_path *pa, uint64_t now)
{
    struct ns_sctp_init_view iv;
    struct ns_sctp_init_params ip;
    if (ns_sctp_parse_init(c, &iv) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++;
        return;
    }
    if (iv.initiate_tag == 0) {
        /* 3.3.3: destroy the TCB; the peer has nothing to abort. */
        assoc_close(a, NS_SCTP_EV_CANT_STR_ASSOC, NS_SCTP_R_PROTOCOL,
                    NS_SCTP_CAUSE_INVALID_MANDATORY, now);
        return;
    }
    if (ns_sctp_init_params_parse(&iv, true, 0, &ip) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++; /* T1-init retries */
        return;
    }
    a->peer_vtag = iv.initiate_tag; /* for the ABORTs below */
    if (iv.os == 0 || iv.mis == 0 || iv.a_rwnd < NS_SCTP_MIN_RWND) {
        assoc_abort_protocol(a, NS_SCTP_CAUSE_INVALID_MANDATORY, NULL, 0, now);
        return;
    }
    if (ip.hostname_param) {
        assoc_abort_protocol(a, NS_SCTP_CAUSE_UNRESOLVABLE_ADDR, ip.hostname_param,
                             ip.hostname_param_len, now);
        return;
    }
    if (!ip.cookie) {
        cause_missing_cookie(a, now);
        return;
    }
    uint8_t *ck = ns_alloc_should_fail() ? NULL : malloc(ip.cookie_len);
    if (!ck) {
        a->s->stats.nomem++;
        a->peer_vtag = 0;
        return;
    }
    memcpy(ck, ip.cookie, ip.cookie_len);
    ns_timer_cancel(a->s->timers, &a->t1);
    free(a->cookie);
    a->cookie = ck;
    a->cookie_len = ip.cookie_len;
    free(a->err_unrec);
    a->err_unrec = NULL;
    keep_unrecognized(a, &ip);

    a->peer_itsn = iv.initial_tsn;
    a->out_streams = min16(a->req_os, iv.mis);
    a->in_streams = min16(a->req_mis, iv.os);
    /* The INIT went to the primary and this answer carries our tag. */
    a->paths[a->primary].confirmed = true;
    for (uint8_t i = 0; i < ip.n_ipv4; i++) {
        struct ns_sctp_addr x = {NS_SCTP_AF_INET4, pa->addr.port, ip.ipv4[i]};
        path_add(a, &x, &pa->local, false, now);
    }
    bool ok;
    if (!a->tx_ready) {
        ok = assoc_setup_tx(a, iv.a_rwnd, now);
    } else {
        /* A retry after a stale cookie: data sent with the first COOKIE
         * ECHO stays outstanding under the same TSNs. */
        ok = ns_sctp_sendq_set_streams(&a->sq, a->out_streams) == 0;
        a->rx.peer_rwnd = iv.a_rwnd;
    }
    if (ok && a->rx_ready) {
        ns_sctp_tsnmap_free(&a->map);
        ns_sctp_reasm_free(&a->ra);
        a->rx_ready = false;
    }
    if (ok)
        ok = assoc_setup_rx(a);
    if (!ok) {
        a->s->stats.nomem++;
        assoc_abort_protocol(a, NS_SCTP_CAUSE_OUT_OF_RESOURCE, NULL, 0, now);
        return;
    }
    assoc_set_state(a, NS_SCTP_COOKIE_ECHOED, "5.1 C: INIT ACK, COOKIE ECHO to send");
    a->cookie_first = true;
    a->cookie_sent_at = now;
    t1_start(a, now);
    /* data_output (run by the caller at the end of the packet) sends the
     * COOKIE ECHO with whatever DATA fits. */
}

void hs_5_1e_cookie_ack(struct ns_sctp_assoc *a, uint64_t now)
{
    ns_timer_cancel(a->s->timers, &a->t1);
    free(a->cookie);
    a->cookie = NULL;
    a->cookie_first = false;
    assoc_established(a, "5.1 E: COOKIE ACK", now);
}

void hs_5_2_6_stale_cookie(struct ns_sctp_assoc *a, uint32_t staleness_us, uint64_t now)
{
    if (++a->stale_count > a->p.max_init_retransmits) {
        assoc_close(a, NS_SCTP_EV_CANT_STR_ASSOC, NS_SCTP_R_PROTOCOL, NS_SCTP_CAUSE_STALE_COOKIE,
                    now);
        return;
    }
    /* 5.2.6: ask for twice the measured staleness (in ms, at least 1). */
    uint64_t ms = ((uint64_t)staleness_us + 999) / 1000;
    uint64_t want = 2 * (ms ? ms : 1);
    a->preservative_ms = want > UINT32_MAX ? UINT32_MAX : (uint32_t)want;
    free(a->cookie);
    a->cookie = NULL;
    a->cookie_first = false;
    a->peer_vtag = 0;
    assoc_set_state(a, NS_SCTP_COOKIE_WAIT, "5.2.6: Stale Cookie, new INIT with a preservative");
    send_init(a, now);
    t1_start(a, now);
}

/* ---- A new association from a cookie (5.1 D at the listener) ------------- */

static void paths_from_cookie(struct ns_sctp_assoc *a, const struct ns_sctp_cookie_tcb *tcb,
                              const struct ns_sctp_addr *dst, uint64_t now)
{
    /* The INIT ACK reached the peer through the INIT's source address. */
    path_add(a, &tcb->src, dst, true, now);
    for (uint8_t i = 0; i < tcb->n_addrs; i++)
        path_add(a, &tcb->addrs[i], dst, false, now);
}

static void tags_from_cookie(struct ns_sctp_assoc *a, const struct ns_sctp_cookie_tcb *tcb)
{
    a->my_vtag = tcb->local_tag;
    a->peer_vtag = tcb->peer_tag;
    a->my_itsn = tcb->local_initial_tsn;
    a->peer_itsn = tcb->peer_initial_tsn;
    a->req_os = tcb->local_os;
    a->req_mis = tcb->local_mis;
    a->out_streams = min16(tcb->local_os, tcb->peer_mis);
    a->in_streams = min16(tcb->peer_os, tcb->local_mis);
    if (a->out_streams == 0)
        a->out_streams = 1;
    if (a->in_streams == 0)
        a->in_streams = 1;
}

bool hs_from_cookie(struct ns_sctp_assoc *a, const struct ns_sctp_cookie_tcb *tcb,
                    const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now)
{
    tags_from_cookie(a, tcb);
    /* The COOKIE ECHO's source is where the peer is now: the primary. */
    struct ns_sctp_path *pa = path_add(a, src, dst, true, now);
    if (!pa)
        return false;
    a->primary = pa->idx;
    paths_from_cookie(a, tcb, dst, now);
    return assoc_setup_tx(a, tcb->peer_a_rwnd, now) && assoc_setup_rx(a);
}

/* ---- INIT for an existing association (5.2.1, 5.2.2) --------------------- */

static void cause_new_addrs(struct ns_sctp_writer *w, const void *arg)
{
    const uint32_t *v = arg;
    ns_sctp_wr_cause_restart_new_addrs(w, v + 1, (uint16_t)v[0]);
}

void hs_init_existing(struct ns_sctp_assoc *a, const struct ns_sctp_common *hdr,
                      const struct ns_sctp_chunk *c, const struct ns_sctp_addr *src,
                      const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_sctp *s = a->s;
    struct ns_sctp_init_view iv;
    struct ns_sctp_init_params ip;
    s->stats.rx_init++;
    if (!ep_init_check(s, hdr, c, &iv, &ip, src, dst, now))
        return;
    struct ns_sctp_cookie_tcb tmpl;
    memset(&tmpl, 0, sizeof(tmpl));
    tmpl.local_a_rwnd = a->p.rcvbuf_bytes;
    tmpl.local_tie_tag = a->my_vtag;
    tmpl.peer_tie_tag = a->peer_vtag;
    switch (a->state) {
    case NS_SCTP_SHUTDOWN_ACK_SENT:
        /* 9.2: the peer missed our SHUTDOWN ACK's completion. */
        a->pend |= PEND_SHUTDOWN_ACK;
        data_output(a, now);
        return;
    case NS_SCTP_COOKIE_WAIT:
    case NS_SCTP_COOKIE_ECHOED:
        /* 5.2.1: answer with the parameters of our own INIT. */
        tmpl.local_tag = a->my_vtag;
        tmpl.local_initial_tsn = a->my_itsn;
        tmpl.local_os = a->req_os;
        tmpl.local_mis = a->req_mis;
        s->stats.collisions++;
        ep_send_init_ack(s, a->ep, hdr, &iv, &ip, &tmpl, src, dst, now);
        return;
    case NS_SCTP_CLOSED:
        return;
    default:
        break;
    }
    /* 5.2.2: a possible restart. New addresses are refused. */
    uint32_t fresh[1 + NS_SCTP_MAX_PEER_ADDRS + 1];
    uint32_t nf = 0;
    if (!path_find(a, src))
        fresh[1 + nf++] = src->addr;
    for (uint8_t i = 0; i < ip.n_ipv4; i++) {
        struct ns_sctp_addr x = {NS_SCTP_AF_INET4, src->port, ip.ipv4[i]};
        if (!path_find(a, &x) && x.addr != src->addr)
            fresh[1 + nf++] = x.addr;
    }
    if (nf) {
        fresh[0] = nf;
        sctp_send_lone(s, hdr->dst_port, hdr->src_port, iv.initiate_tag, NS_SCTP_CT_ABORT, 0,
                       cause_new_addrs, fresh, dst, src, now);
        return;
    }
    do {
        tmpl.local_tag = sctp_rand32_nonzero(s);
    } while (tmpl.local_tag == a->my_vtag || tmpl.local_tag == a->peer_vtag);
    tmpl.local_initial_tsn = (uint32_t)ns_rng_u64(s->rng);
    tmpl.local_os = param16(a->p.out_streams);
    tmpl.local_mis = param16(a->p.max_in_streams);
    ep_send_init_ack(s, a->ep, hdr, &iv, &ip, &tmpl, src, dst, now);
}

/* ---- COOKIE ECHO for an existing association (5.2.4) ----------------------- */

static bool hs_5_2_4a_restart(struct ns_sctp_assoc *a, const struct ns_sctp_cookie_tcb *tcb,
                              const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst,
                              uint64_t now)
{
    struct ns_sctp *s = a->s;
    bool pd = a->rx_ready && ns_sctp_reasm_pd_active(&a->ra);
    /* As if an ABORT and a new COOKIE ECHO had come in, except that the
     * user hears RESTART instead of COMM_LOST (5.2.4 A). Unacknowledged
     * data is not retained. */
    assoc_fail_data(a);
    if (pd)
        sctp_event_new(s, a, NS_SCTP_EV_PARTIAL_DELIVERY_ABORTED);
    ns_timer_cancel(s->timers, &a->t1);
    ns_timer_cancel(s->timers, &a->t2);
    ns_timer_cancel(s->timers, &a->t5);
    data_stop_timers(a);
    path_stop_timers(a);
    a->pend = 0;
    a->n_bad_sids = 0;
    a->fast_rtx = false;
    a->errors = 0;
    tags_from_cookie(a, tcb);
    for (uint8_t i = 0; i < a->n_paths; i++) {
        struct ns_sctp_path *pa = &a->paths[i];
        pa->errors = 0;
        pa->active = true;
        pa->hb_outstanding = false;
    }
    path_add(a, src, dst, true, now);
    paths_from_cookie(a, tcb, dst, now);
    /* Congestion state starts over (5.2.4 A), which setup_tx does. */
    if (!assoc_setup_tx(a, tcb->peer_a_rwnd, now)) {
        s->stats.nomem++;
        assoc_close(a, NS_SCTP_EV_COMM_LOST, NS_SCTP_R_NOMEM, 0, now);
        return false;
    }
    assoc_reset_rx(a);
    assoc_stamp_ready(a);
    assoc_set_state(a, NS_SCTP_ESTABLISHED, "5.2.4 A: the peer restarted");
    a->rtx_path = a->primary;
    s->stats.restarts++;
    struct ns_sctp_event *e = sctp_event_new(s, a, NS_SCTP_EV_RESTART);
    if (e) {
        e->in_streams = a->in_streams;
        e->out_streams = a->out_streams;
    }
    path_hb_start(a, now);
    a->pend |= PEND_COOKIE_ACK;
    if (a->shutdown_req)
        sd_progress(a, now);
    return true;
}

bool hs_cookie_existing(struct ns_sctp_assoc *a, const struct ns_sctp_common *hdr,
                        const struct ns_sctp_cookie_tcb *tcb, enum ns_sctp_cookie_res res,
                        uint32_t staleness, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_sctp *s = a->s;
    bool lt = tcb->local_tag == a->my_vtag;
    bool pt = tcb->peer_tag == a->peer_vtag;
    bool ltt = tcb->local_tie_tag != 0 && tcb->local_tie_tag == a->my_vtag;
    bool ptt = tcb->peer_tie_tag != 0 && tcb->peer_tie_tag == a->peer_vtag;
    if (res == NS_SCTP_COOKIE_STALE && !(lt && pt)) {
        /* Stale and not a duplicate of this very association. */
        ep_send_stale(s, hdr, tcb, staleness, src, dst, now);
        return false;
    }
    if (!lt && !pt && ltt && ptt) {
        /* A: the peer restarted. */
        if (a->state == NS_SCTP_SHUTDOWN_ACK_SENT) {
            a->pend |= PEND_SHUTDOWN_ACK | PEND_COOKIE_WHILE_SD;
            data_output(a, now);
            return false;
        }
        return hs_5_2_4a_restart(a, tcb, src, dst, now);
    }
    if (lt && !pt) {
        /* B: INIT collision; our tag, the peer's new one. */
        s->stats.cookie_collision++;
        if (a->state == NS_SCTP_COOKIE_WAIT || a->state == NS_SCTP_COOKIE_ECHOED) {
            ns_timer_cancel(s->timers, &a->t1);
            tags_from_cookie(a, tcb);
            a->paths[a->primary].confirmed = true;
            paths_from_cookie(a, tcb, dst, now);
            bool ok = true;
            if (!a->tx_ready) {
                ok = assoc_setup_tx(a, tcb->peer_a_rwnd, now);
            } else {
                ok = ns_sctp_sendq_set_streams(&a->sq, a->out_streams) == 0;
                a->rx.peer_rwnd = tcb->peer_a_rwnd;
            }
            if (ok && a->rx_ready) {
                /* Nothing was accepted from the peer before ESTABLISHED. */
                ns_sctp_tsnmap_free(&a->map);
                ns_sctp_reasm_free(&a->ra);
                a->rx_ready = false;
            }
            if (!ok || !assoc_setup_rx(a)) {
                s->stats.nomem++;
                assoc_abort_protocol(a, NS_SCTP_CAUSE_OUT_OF_RESOURCE, NULL, 0, now);
                return false;
            }
            free(a->cookie);
            a->cookie = NULL;
            a->cookie_first = false;
            assoc_established(a, "5.2.4 B: COOKIE ECHO after an INIT collision", now);
        }
        /* Already established: the peer's tag stays; it gets its COOKIE ACK. */
        a->pend |= PEND_COOKIE_ACK;
        return true;
    }
    if (lt && pt) {
        /* D: both tags match, a duplicate (or the answer to our own
         * INIT ACK in a collision). */
        s->stats.cookie_duplicate++;
        if (a->state == NS_SCTP_COOKIE_ECHOED) {
            ns_timer_cancel(s->timers, &a->t1);
            free(a->cookie);
            a->cookie = NULL;
            a->cookie_first = false;
            assoc_established(a, "5.2.4 D: COOKIE ECHO matching both tags", now);
        }
        a->pend |= PEND_COOKIE_ACK;
        return true;
    }
    /* C (a late cookie) and combinations table 2 does not list. */
    s->stats.cookie_unmatched++;
    return false;
}
