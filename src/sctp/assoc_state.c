/* The association state machine's bookkeeping: the one place a state
 * changes (assoc_set_state), the transitions RFC 9260 allows, and the
 * debug-build consistency checks run when the outermost entry point
 * returns (dcsctp's IsConsistent).
 *
 * The transitions are those of the state diagram of section 4 (Figure 3),
 * plus the three the handshake rules add: 5.2.4 A (a restart brings any
 * state but SHUTDOWN-ACK-SENT back to ESTABLISHED), 5.2.4 B (an INIT
 * collision may go from COOKIE-WAIT straight to ESTABLISHED) and 5.2.6
 * (a Stale Cookie error sends COOKIE-ECHOED back to COOKIE-WAIT):
 *
 *   CLOSED ---------- 5.1 A connect --------> COOKIE-WAIT
 *   CLOSED ---------- 5.1 D valid COOKIE ECHO (new TCB) --> ESTABLISHED
 *   COOKIE-WAIT ----- 5.1 C INIT ACK -------> COOKIE-ECHOED
 *   COOKIE-WAIT ----- 5.2.4 B collision ----> ESTABLISHED
 *   COOKIE-ECHOED --- 5.1 E COOKIE ACK, 5.2.4 B/D --> ESTABLISHED
 *   COOKIE-ECHOED --- 5.2.6 stale cookie ---> COOKIE-WAIT
 *   ESTABLISHED ----- 9.2 user shutdown ----> SHUTDOWN-PENDING
 *   ESTABLISHED, SHUTDOWN-PENDING -- 9.2 SHUTDOWN received --> SHUTDOWN-RECEIVED
 *   SHUTDOWN-PENDING  9.2 all acked, SHUTDOWN sent --> SHUTDOWN-SENT
 *   SHUTDOWN-RECEIVED 9.2 all acked, SHUTDOWN ACK sent --> SHUTDOWN-ACK-SENT
 *   SHUTDOWN-SENT --- 9.2 SHUTDOWN received (both at once) --> SHUTDOWN-ACK-SENT
 *   ESTABLISHED .. SHUTDOWN-RECEIVED -- 5.2.4 A restart --> ESTABLISHED
 *   any open state -- ABORT, errors, SHUTDOWN COMPLETE --> CLOSED
 *
 * An association that reached CLOSED after being open stays CLOSED: only
 * a new TCB (no transition yet) leaves CLOSED.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sctp/assoc.h"

#define BIT(st) (1u << (st))

#ifndef NDEBUG
/* allowed[from]: the states it may go to. */
static const uint32_t allowed[] = {
    [NS_SCTP_CLOSED] = BIT(NS_SCTP_COOKIE_WAIT) | BIT(NS_SCTP_ESTABLISHED),
    [NS_SCTP_COOKIE_WAIT] =
        BIT(NS_SCTP_COOKIE_ECHOED) | BIT(NS_SCTP_ESTABLISHED) | BIT(NS_SCTP_CLOSED),
    [NS_SCTP_COOKIE_ECHOED] =
        BIT(NS_SCTP_ESTABLISHED) | BIT(NS_SCTP_COOKIE_WAIT) | BIT(NS_SCTP_CLOSED),
    [NS_SCTP_ESTABLISHED] = BIT(NS_SCTP_SHUTDOWN_PENDING) | BIT(NS_SCTP_SHUTDOWN_RECEIVED) |
                            BIT(NS_SCTP_ESTABLISHED) | BIT(NS_SCTP_CLOSED),
    [NS_SCTP_SHUTDOWN_PENDING] = BIT(NS_SCTP_SHUTDOWN_SENT) | BIT(NS_SCTP_SHUTDOWN_RECEIVED) |
                                 BIT(NS_SCTP_ESTABLISHED) | BIT(NS_SCTP_CLOSED),
    [NS_SCTP_SHUTDOWN_SENT] =
        BIT(NS_SCTP_SHUTDOWN_ACK_SENT) | BIT(NS_SCTP_ESTABLISHED) | BIT(NS_SCTP_CLOSED),
    [NS_SCTP_SHUTDOWN_RECEIVED] =
        BIT(NS_SCTP_SHUTDOWN_ACK_SENT) | BIT(NS_SCTP_ESTABLISHED) | BIT(NS_SCTP_CLOSED),
    [NS_SCTP_SHUTDOWN_ACK_SENT] = BIT(NS_SCTP_CLOSED),
};

static void check_fail(const struct ns_sctp_assoc *a, const char *what, int line)
{
    fprintf(stderr,
            "sctp: association %u inconsistent (assoc_state.c:%d): %s\n"
            "      state %s (last change: %s), tags %08x/%08x, paths %u\n",
            (unsigned)a->id, line, what, ns_sctp_state_name(a->state),
            a->state_why ? a->state_why : "-", (unsigned)a->my_vtag, (unsigned)a->peer_vtag,
            (unsigned)a->n_paths);
    abort();
}

#define CHECK(a, cond)                                                                             \
    do {                                                                                           \
        if (!(cond))                                                                               \
            check_fail((a), #cond, __LINE__);                                                      \
    } while (0)

static bool transition_ok(const struct ns_sctp_assoc *a, enum ns_sctp_state to)
{
    if ((unsigned)a->state >= sizeof(allowed) / sizeof(allowed[0]) ||
        (unsigned)to >= sizeof(allowed) / sizeof(allowed[0]))
        return false;
    /* Out of CLOSED only as a new TCB. */
    if (a->state == NS_SCTP_CLOSED && a->stats.state_changes != 0)
        return false;
    return (allowed[a->state] & BIT(to)) != 0;
}
#endif

void assoc_set_state(struct ns_sctp_assoc *a, enum ns_sctp_state st, const char *why)
{
#ifndef NDEBUG
    if (!why || !transition_ok(a, st)) {
        fprintf(stderr, "sctp: association %u: %s -> %s (%s) is not a transition RFC 9260 allows\n",
                (unsigned)a->id, ns_sctp_state_name(a->state), ns_sctp_state_name(st),
                why ? why : "no reason");
        abort();
    }
#endif
    a->state = st;
    a->state_why = why;
    a->stats.state_changes++;
    a->s->stats.state_changes++;
}

/* ---- Consistency checks (debug builds) ------------------------------------ */

#ifndef NDEBUG

static void check_retx(const struct ns_sctp_assoc *a)
{
    const struct ns_sctp_retx *rx = &a->rx;
    CHECK(a, (rx->n_chunks == 0) == (rx->head == NULL));
    CHECK(a, (rx->head == NULL) == (rx->tail == NULL));
    CHECK(a, !rx->tail || rx->tail->next == NULL);
    CHECK(a, rx->n_gap_acked + rx->n_rtx <= rx->n_chunks);
    CHECK(a, rx->flight <= rx->outstanding_bytes);
    if (rx->n_chunks == 0)
        CHECK(a, rx->flight == 0 && rx->outstanding_bytes == 0);
    /* Chunks neither cum- nor gap-acked, per path; and the paths' flight
     * adds up to the association's. */
    uint32_t outstanding = 0, flight = 0;
    for (uint8_t i = 0; i < NS_SCTP_MAX_PATHS; i++)
        outstanding += rx->path_outstanding[i];
    CHECK(a, outstanding == rx->n_chunks - rx->n_gap_acked);
    for (uint8_t i = 0; i < a->n_paths; i++) {
        CHECK(a, rx->paths[i] == &a->paths[i].cc);
        flight += a->paths[i].cc.flight;
    }
    CHECK(a, flight == rx->flight);
}

void assoc_check(const struct ns_sctp_assoc *a)
{
    struct ns_sctp *s = a->s;
    enum ns_sctp_state st = a->state;
    bool open = st != NS_SCTP_CLOSED;
    CHECK(a, (unsigned)st <= NS_SCTP_SHUTDOWN_ACK_SENT);
    CHECK(a, a->n_paths <= NS_SCTP_MAX_PATHS);
    CHECK(a, a->n_bad_sids <= NS_SCTP_MAX_BAD_SIDS);
    /* The outermost leave frees released closed associations. */
    CHECK(a, !a->on_dead);
    /* A CLOSED association at rest is one that ended (a new TCB is CLOSED
     * only inside the entry point creating it). */
    CHECK(a, open || a->stats.state_changes > 0);

    for (uint8_t i = 0; i < a->n_paths; i++) {
        const struct ns_sctp_path *pa = &a->paths[i];
        CHECK(a, pa->a == a && pa->idx == i);
        CHECK(a, pa->hashed == open);
        if (pa->hashed)
            CHECK(a, sctp_path_lookup(s, a->lport, a->pport, &pa->addr) == pa);
        CHECK(a, !ns_timer_armed(&pa->t3) || a->tx_ready);
        CHECK(a, !ns_timer_armed(&pa->hb) || st >= NS_SCTP_ESTABLISHED);
    }
    if (open) {
        CHECK(a, a->n_paths >= 1);
        CHECK(a, a->primary < a->n_paths && a->rtx_path < a->n_paths);
        CHECK(a, a->rx_path < a->n_paths && a->ctl_path < a->n_paths);
        CHECK(a, a->my_vtag != 0);
        CHECK(a, a->sq_ready);
    }

    bool t1 = ns_timer_armed(&a->t1), t2 = ns_timer_armed(&a->t2), t5 = ns_timer_armed(&a->t5);
    bool sd_timers = st == NS_SCTP_SHUTDOWN_SENT || st == NS_SCTP_SHUTDOWN_ACK_SENT;
    switch (st) {
    case NS_SCTP_CLOSED:
        CHECK(a, !t1 && !ns_timer_armed(&a->sack_timer));
        CHECK(a, !a->tx_ready && !a->sq_ready);
        CHECK(a, !a->cookie && !a->err_unrec && a->pend == 0);
        CHECK(a, !a->released);
        break;
    case NS_SCTP_COOKIE_WAIT:
        /* T1-init runs; the peer's tag is not known yet. */
        CHECK(a, t1);
        CHECK(a, a->peer_vtag == 0 && !a->cookie);
        break;
    case NS_SCTP_COOKIE_ECHOED:
        /* T1-cookie runs over the cookie the INIT ACK brought. */
        CHECK(a, t1);
        CHECK(a, a->peer_vtag != 0 && a->cookie && a->cookie_len > 0);
        CHECK(a, a->tx_ready && a->rx_ready);
        break;
    default:
        /* ESTABLISHED and the shutdown states: both tags, no handshake. */
        CHECK(a, !t1);
        CHECK(a, a->peer_vtag != 0 && !a->cookie);
        CHECK(a, a->tx_ready && a->rx_ready);
        CHECK(a, a->in_streams >= 1 && a->out_streams >= 1);
        break;
    }
    /* T2-shutdown runs exactly in SHUTDOWN-SENT and SHUTDOWN-ACK-SENT; the
     * guard only there. */
    CHECK(a, t2 == sd_timers);
    CHECK(a, !t5 || sd_timers);
    CHECK(a, !ns_timer_armed(&a->sack_timer) || a->rx_ready);
    if (a->tx_ready) {
        CHECK(a, a->sq_ready);
        check_retx(a);
    }
}

void sctp_check(struct ns_sctp *s)
{
    uint32_t n = 0, paths = 0;
    const struct ns_sctp_assoc *prev = NULL;
    if (s->depth != 0 || s->dead || s->ev_n != 0) {
        fprintf(stderr, "sctp: instance inconsistent at rest: depth %u, dead %p, %u events\n",
                (unsigned)s->depth, (void *)s->dead, (unsigned)s->ev_n);
        abort();
    }
    for (const struct ns_sctp_assoc *a = s->assocs; a; a = a->next) {
        CHECK(a, a->s == s && a->prev == prev);
        CHECK(a, ns_sctp_assoc_by_id(s, a->id) == a);
        assoc_check(a);
        for (uint8_t i = 0; i < a->n_paths; i++)
            paths += a->paths[i].hashed;
        prev = a;
        n++;
    }
    uint32_t refs = 0;
    for (const struct ns_sctp_ep *ep = s->eps; ep; ep = ep->next) {
        refs += ep->refs;
        /* A closed endpoint goes with its last association. */
        if (ep->closed && ep->refs == 0) {
            fprintf(stderr, "sctp: closed endpoint on port %u without associations kept\n",
                    (unsigned)ep->port);
            abort();
        }
    }
    if (n != s->n_assocs || paths != s->n_paths_hashed || refs != n) {
        fprintf(stderr,
                "sctp: instance inconsistent: %u associations listed, n_assocs %u; %u paths "
                "hashed, n_paths_hashed %u; endpoint refs %u\n",
                (unsigned)n, (unsigned)s->n_assocs, (unsigned)paths, (unsigned)s->n_paths_hashed,
                (unsigned)refs);
        abort();
    }
}

#endif
