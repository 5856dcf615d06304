/* Paths of an association (the peer's transport addresses): RFC 9260
 * sections 6.4 (multi-homed: data to the primary, failover), 8.2 (path
 * error counter, Path.Max.Retrans, active/inactive), 8.3 (HEARTBEAT on
 * idle paths every RTO + HB.interval with +-50% RTO jitter and back-off,
 * RTT from HEARTBEAT ACK), 5.4 (confirming addresses with a random
 * nonce), and the per-path PMTU. */
#include <string.h>

#include "sctp/assoc.h"

/* Our Heartbeat Info (opaque to the peer, echoed back):
 *   0 version(1) 1 path index 2 family 3 zero 4 port(2) 6 zero(2)
 *   8 address(4) 12 nonce(8) 20 send time(8) */
#define HB_INFO_LEN 28
#define HB_VERSION  1

static void hb_fire(struct ns_timer *t, uint64_t now);

struct ns_sctp_path *path_find(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer)
{
    for (uint8_t i = 0; i < a->n_paths; i++) {
        if (ns_sctp_addr_same(&a->paths[i].addr, peer))
            return &a->paths[i];
    }
    return NULL;
}

void path_init_cc(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint32_t peer_rwnd,
                  uint64_t now)
{
    ns_sctp_cc_init(&pa->cc, &a->p, pa->pmtu, peer_rwnd, now);
}

static bool hb_state(const struct ns_sctp_assoc *a)
{
    return a->state == NS_SCTP_ESTABLISHED || a->state == NS_SCTP_SHUTDOWN_PENDING ||
           a->state == NS_SCTP_SHUTDOWN_RECEIVED;
}

/* RTO + HB.interval (confirmed paths only), +-50% of the RTO (8.3). */
static uint64_t hb_period(struct ns_sctp_assoc *a, const struct ns_sctp_path *pa)
{
    uint64_t rto = pa->cc.rto_us;
    uint64_t base = rto + (pa->confirmed ? (uint64_t)a->p.hb_interval_ms * NS_MS : 0);
    uint64_t j = ns_rng_below(a->s->rng, rto + 1);
    uint64_t v = base - rto / 2 + j;
    return v ? v : 1;
}

static void hb_arm(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now)
{
    if (!pa->confirmed || a->p.hb_interval_ms)
        ns_timer_arm(a->s->timers, &pa->hb, now + hb_period(a, pa));
    else
        ns_timer_cancel(a->s->timers, &pa->hb);
}

struct ns_sctp_path *path_add(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer,
                              const struct ns_sctp_addr *local, bool confirmed, uint64_t now)
{
    struct ns_sctp_path *pa = path_find(a, peer);
    if (pa) {
        if (confirmed)
            pa->confirmed = true;
        return pa;
    }
    if (a->n_paths >= NS_SCTP_MAX_PATHS || peer->family != NS_SCTP_AF_INET4 || peer->addr == 0)
        return NULL;
    /* An address already in another association between the same ports
     * would make lookups ambiguous. */
    if (sctp_path_lookup(a->s, a->lport, a->pport, peer))
        return NULL;
    uint8_t idx = a->n_paths++;
    pa = &a->paths[idx];
    memset(pa, 0, sizeof(*pa));
    pa->a = a;
    pa->idx = idx;
    pa->addr = *peer;
    if (local)
        pa->local = *local;
    else
        pa->local = (struct ns_sctp_addr){NS_SCTP_AF_INET4, 0, 0};
    pa->active = true;
    pa->confirmed = confirmed;
    pa->pmtu = a->s->default_pmtu & ~3u;
    ns_timer_init(&pa->t3, data_t3_fire);
    ns_timer_init(&pa->hb, hb_fire);
    path_init_cc(a, pa, a->tx_ready ? ns_sctp_retx_peer_rwnd(&a->rx) : 0, now);
    if (a->tx_ready)
        ns_sctp_retx_set_path(&a->rx, idx, &pa->cc);
    sctp_path_hash_add(a->s, pa);
    if (hb_state(a))
        ns_timer_arm(a->s->timers, &pa->hb, confirmed ? now + hb_period(a, pa) : now);
    return pa;
}

struct ns_sctp_path *path_data(struct ns_sctp_assoc *a)
{
    struct ns_sctp_path *pa = &a->paths[a->primary];
    if (pa->active && pa->confirmed)
        return pa;
    for (uint8_t i = 0; i < a->n_paths; i++) {
        if (a->paths[i].active && a->paths[i].confirmed)
            return &a->paths[i];
    }
    return pa;
}

struct ns_sctp_path *path_alternate(struct ns_sctp_assoc *a, const struct ns_sctp_path * not )
{
    for (uint8_t k = 1; k <= a->n_paths; k++) {
        struct ns_sctp_path *pa = &a->paths[(not ->idx + k) % a->n_paths];
        if (pa != not &&pa->active && pa->confirmed)
            return pa;
    }
    return NULL;
}

static void addr_event(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, enum ns_sctp_addr_state st)
{
    struct ns_sctp_event *e = sctp_event_new(a->s, a, NS_SCTP_EV_PEER_ADDR_CHANGE);
    if (e) {
        e->addr = pa->addr;
        e->addr_state = st;
    }
}

void path_error(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now)
{
    (void)now;
    pa->errors++;
    if (pa->active && pa->errors > a->p.path_max_retrans) {
        pa->active = false;
        a->stats.path_failures++;
        addr_event(a, pa, NS_SCTP_ADDR_UNREACHABLE);
    }
}

void path_ok(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now)
{
    (void)now;
    pa->errors = 0;
    if (!pa->active) {
        pa->active = true;
        addr_event(a, pa, NS_SCTP_ADDR_AVAILABLE);
    }
}

void path_hb_start(struct ns_sctp_assoc *a, uint64_t now)
{
    for (uint8_t i = 0; i < a->n_paths; i++) {
        struct ns_sctp_path *pa = &a->paths[i];
        if (pa->confirmed)
            hb_arm(a, pa, now);
        else
            ns_timer_arm(a->s->timers, &pa->hb, now); /* probe at once (5.4) */
    }
}

void path_stop_timers(struct ns_sctp_assoc *a)
{
    for (uint8_t i = 0; i < a->n_paths; i++) {
        ns_timer_cancel(a->s->timers, &a->paths[i].t3);
        ns_timer_cancel(a->s->timers, &a->paths[i].hb);
    }
}

void path_unhash_all(struct ns_sctp_assoc *a)
{
    for (uint8_t i = 0; i < a->n_paths; i++)
        sctp_path_hash_del(a->s, &a->paths[i]);
}

/* ---- Heartbeats ----------------------------------------------------------- */

static void send_hb(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now)
{
    uint8_t info[HB_INFO_LEN] = {0};
    pa->hb_nonce = ns_rng_u64(a->s->rng);
    pa->hb_sent_at = now;
    info[0] = HB_VERSION;
    info[1] = pa->idx;
    info[2] = pa->addr.family;
    ns_wr16(info + 4, pa->addr.port);
    ns_wr32(info + 8, pa->addr.addr);
    ns_wr64(info + 12, pa->hb_nonce);
    ns_wr64(info + 20, now);
    struct ns_sctp_writer w;
    if (!assoc_wr_start(a, &w, pa))
        return;
    if (ns_sctp_wr_heartbeat(&w, info, sizeof(info)) != NS_SCTP_WR_OK) {
        ns_sctp_wr_discard(&w);
        return;
    }
    pa->hb_outstanding = true;
    a->stats.hb_sent++;
    assoc_wr_send(a, &w, pa, now);
}

static void hb_fire(struct ns_timer *t, uint64_t now)
{
    struct ns_sctp_path *pa = NS_SCTP_CONTAINER(t, struct ns_sctp_path, hb);
    struct ns_sctp_assoc *a = pa->a;
    struct ns_sctp *s = a->s;
    sctp_enter(s);
    if (!hb_state(a))
        goto out;
    if (pa->hb_outstanding) {
        /* Unanswered for at least an RTO: an error, and back off (8.3). */
        pa->hb_outstanding = false;
        a->stats.hb_timeouts++;
        ns_sctp_cc_backoff(&pa->cc);
        path_error(a, pa, now);
        /* Probes of addresses not yet confirmed do not count against the
         * association itself. */
        if (pa->confirmed && assoc_error(a, now))
            goto out;
    }
    bool send;
    if (!pa->confirmed)
        send = pa->errors <= a->p.path_max_retrans; /* give up on a dead address */
    else
        send = a->p.hb_interval_ms != 0 && !pa->data_since_hb;
    pa->data_since_hb = false;
    if (send)
        send_hb(a, pa, now);
    if (pa->confirmed || send)
        hb_arm(a, pa, now);
out:
    sctp_leave(s, now);
}

void path_rx_heartbeat(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c,
                       struct ns_sctp_path *pa, uint64_t now)
{
    struct ns_sctp_hb_view h;
    if (a->peer_vtag == 0) {
        a->stats.drop_state++;
        return;
    }
    if (ns_sctp_parse_heartbeat(c, &h) != NS_SCTP_V_OK) {
        a->stats.drop_bad_chunk++;
        return;
    }
    struct ns_sctp_writer w;
    if (!assoc_wr_start(a, &w, pa))
        return;
    if (ns_sctp_wr_heartbeat_ack(&w, &h) != NS_SCTP_WR_OK) {
        ns_sctp_wr_discard(&w); /* too large to echo within the PMTU */
        return;
    }
    a->stats.hb_rx++;
    assoc_wr_send(a, &w, pa, now);
}

void path_rx_heartbeat_ack(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now)
{
    struct ns_sctp_hb_view h;
    if (ns_sctp_parse_heartbeat(c, &h) != NS_SCTP_V_OK || h.info_len != HB_INFO_LEN ||
        h.info[0] != HB_VERSION || h.info[1] >= a->n_paths) {
        a->stats.drop_bad_hb_ack++;
        return;
    }
    struct ns_sctp_path *pa = &a->paths[h.info[1]];
    struct ns_sctp_addr addr = {h.info[2], ns_rd16(h.info + 4), ns_rd32(h.info + 8)};
    uint64_t nonce = ns_rd64(h.info + 12), sent = ns_rd64(h.info + 20);
    /* The port is left out: the path's encapsulation port may have moved
     * (RFC 6951 5.4) while the HEARTBEAT was out. */
    if (!ns_sctp_addr_same(&addr, &pa->addr) || !pa->hb_outstanding || nonce != pa->hb_nonce ||
        sent != pa->hb_sent_at || sent > now) {
        a->stats.drop_bad_hb_ack++;
        return;
    }
    pa->hb_outstanding = false;
    a->stats.hb_acked++;
    ns_sctp_cc_rtt_sample(&pa->cc, now - sent);
    a->errors = 0;
    path_ok(a, pa, now);
    if (!pa->confirmed) {
        pa->confirmed = true;
        addr_event(a, pa, NS_SCTP_ADDR_CONFIRMED);
        if (hb_state(a))
            hb_arm(a, pa, now);
    }
}
