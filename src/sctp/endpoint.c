/* SCTP endpoints and the listener's side of the handshake: RFC 9260
 * sections 5.1 (INIT -> INIT ACK with a State Cookie, keeping no state),
 * 5.1.2 (address handling), 5.1.5 (COOKIE ECHO: authentication, staleness,
 * TCB creation), 3.3.2/3.3.3 (INIT field checks), 3.2.1/3.2.2 (unrecognized
 * parameters), 5.2.6 (granting a Cookie Preservative), 8.4 step 3. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sctp/assoc.h"

/* The most life a Cookie Preservative may add to a cookie. */
#define MAX_PRESERVATIVE_MS 60000u

static bool addr_in(const struct ns_sctp_ep *ep, const struct ns_sctp_addr *a)
{
    for (uint8_t i = 0; i < ep->n_addrs; i++) {
        if (ep->addrs[i].family == a->family && ep->addrs[i].addr == a->addr)
            return true;
    }
    return false;
}

static bool port_used(const struct ns_sctp *s, uint16_t port)
{
    for (const struct ns_sctp_ep *e = s->eps; e; e = e->next) {
        if (e->port == port)
            return true;
    }
    return false;
}

struct ns_sctp_ep *ns_sctp_ep_new(struct ns_sctp *s, uint16_t port,
                                  const struct ns_sctp_addr *addrs, unsigned n, int *err)
{
    int e = 0;
    if (n > NS_SCTP_MAX_LOCAL_ADDRS || (n && !addrs)) {
        e = -EINVAL;
        goto fail;
    }
    if (port == 0) {
        for (int tries = 0; tries < 64 && port == 0; tries++) {
            uint16_t c = (uint16_t)(49152 + ns_rng_below(s->rng, 16384));
            if (!port_used(s, c))
                port = c;
        }
        if (port == 0) {
            e = -EADDRINUSE;
            goto fail;
        }
    } else {
        /* One endpoint per port and address; a wildcard one owns the port. */
        for (const struct ns_sctp_ep *o = s->eps; o; o = o->next) {
            if (o->port != port || o->closed)
                continue;
            bool clash = o->n_addrs == 0 || n == 0;
            for (unsigned i = 0; i < n && !clash; i++)
                clash = addr_in(o, &addrs[i]);
            if (clash) {
                e = -EADDRINUSE;
                goto fail;
            }
        }
    }
    struct ns_sctp_ep *ep = ns_alloc_should_fail() ? NULL : calloc(1, sizeof(*ep));
    if (!ep) {
        e = -ENOMEM;
        s->stats.nomem++;
        goto fail;
    }
    ep->s = s;
    ep->port = port;
    ep->n_addrs = (uint8_t)n;
    if (n)
        memcpy(ep->addrs, addrs, n * sizeof(*addrs));
    ep->next = s->eps;
    s->eps = ep;
    if (err)
        *err = 0;
    return ep;
fail:
    if (err)
        *err = e;
    return NULL;
}

void ns_sctp_ep_listen(struct ns_sctp_ep *ep, bool on)
{
    ep->listening = on && !ep->closed;
}

uint16_t ns_sctp_ep_port(const struct ns_sctp_ep *ep)
{
    return ep->port;
}

void ns_sctp_ep_set_user(struct ns_sctp_ep *ep, void *user)
{
    ep->user = user;
}

void *ns_sctp_ep_user(const struct ns_sctp_ep *ep)
{
    return ep->user;
}

static void ep_unlink_free(struct ns_sctp_ep *ep)
{
    for (struct ns_sctp_ep **pp = &ep->s->eps; *pp; pp = &(*pp)->next) {
        if (*pp == ep) {
            *pp = ep->next;
            break;
        }
    }
    free(ep);
}

void ns_sctp_ep_close(struct ns_sctp_ep *ep)
{
    ep->closed = true;
    ep->listening = false;
    if (ep->refs == 0)
        ep_unlink_free(ep);
}

void ep_put(struct ns_sctp_ep *ep)
{
    if (--ep->refs == 0 && ep->closed)
        ep_unlink_free(ep);
}

struct ns_sctp_ep *ep_lookup(struct ns_sctp *s, uint16_t port, const struct ns_sctp_addr *local)
{
    struct ns_sctp_ep *wild = NULL;
    for (struct ns_sctp_ep *ep = s->eps; ep; ep = ep->next) {
        if (ep->port != port || ep->closed)
            continue;
        if (ep->n_addrs == 0)
            wild = ep;
        else if (addr_in(ep, local))
            return ep;
    }
    return wild;
}

/* ---- INIT ----------------------------------------------------------- */

static void cause_invalid_mandatory(struct ns_sctp_writer *w, const void *arg)
{
    (void)arg;
    ns_sctp_wr_cause_invalid_mandatory(w);
}

static void cause_unresolvable(struct ns_sctp_writer *w, const void *arg)
{
    const struct ns_sctp_init_params *ip = arg;
    ns_sctp_wr_cause_unresolvable_addr(w, ip->hostname_param, ip->hostname_param_len);
}

bool ep_init_check(struct ns_sctp *s, const struct ns_sctp_common *hdr,
                   const struct ns_sctp_chunk *c, struct ns_sctp_init_view *iv,
                   struct ns_sctp_init_params *ip, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst, uint64_t now)
{
    if (ns_sctp_parse_init(c, iv) != NS_SCTP_V_OK || iv->initiate_tag == 0) {
        /* RFC 9260 3.3.2: a zero Initiate Tag is silently discarded. */
        s->stats.rx_init_bad++;
        return false;
    }
    /* 3.3.2 and 6: zero stream counts and an a_rwnd below 1500 are
     * invalid mandatory fields (refused as Linux's sctp_verify_init does). */
    if (iv->os == 0 || iv->mis == 0 || iv->a_rwnd < NS_SCTP_MIN_RWND) {
        s->stats.rx_init_bad++;
        sctp_send_lone(s, hdr->dst_port, hdr->src_port, iv->initiate_tag, NS_SCTP_CT_ABORT, 0,
                       cause_invalid_mandatory, NULL, dst, src, now);
        return false;
    }
    if (ns_sctp_init_params_parse(iv, false, 0, ip) != NS_SCTP_V_OK) {
        s->stats.rx_init_bad++;
        return false;
    }
    if (ip->hostname_param) {
        /* 3.3.2.1: host names are not resolved; the INIT is refused. */
        s->stats.rx_init_bad++;
        sctp_send_lone(s, hdr->dst_port, hdr->src_port, iv->initiate_tag, NS_SCTP_CT_ABORT, 0,
                       cause_unresolvable, ip, dst, src, now);
        return false;
    }
    return true;
}

static uint16_t min16(uint16_t a, uint16_t b)
{
    return a < b ? a : b;
}

void ep_send_init_ack(struct ns_sctp *s, struct ns_sctp_ep *ep, const struct ns_sctp_common *hdr,
                      const struct ns_sctp_init_view *iv, const struct ns_sctp_init_params *ip,
                      const struct ns_sctp_cookie_tcb *tmpl, const struct ns_sctp_addr *src,
                      const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_sctp_cookie_tcb tcb;
    memset(&tcb, 0, sizeof(tcb));
    if (tmpl) {
        tcb = *tmpl;
    } else {
        tcb.local_tag = sctp_rand32_nonzero(s);
        tcb.local_initial_tsn = (uint32_t)ns_rng_u64(s->rng);
        tcb.local_os = (uint16_t)(s->p.out_streams ? s->p.out_streams : 1);
        tcb.local_mis = (uint16_t)(s->p.max_in_streams ? s->p.max_in_streams : 1);
        tcb.local_a_rwnd = s->p.rcvbuf_bytes;
    }
    /* No point offering more streams than the peer accepts. */
    tcb.local_os = min16(tcb.local_os, iv->mis);
    tcb.peer_tag = iv->initiate_tag;
    tcb.peer_a_rwnd = iv->a_rwnd;
    tcb.peer_initial_tsn = iv->initial_tsn;
    tcb.peer_os = iv->os;
    tcb.peer_mis = iv->mis;
    tcb.local_port = hdr->dst_port;
    tcb.peer_port = hdr->src_port;
    tcb.src = *src;
    tcb.n_addrs = 0;
    for (uint8_t i = 0; i < ip->n_ipv4 && tcb.n_addrs < NS_SCTP_COOKIE_MAX_ADDRS; i++) {
        /* Listed addresses reach the peer through the same encapsulation
         * port as the packet did. */
        tcb.addrs[tcb.n_addrs++] = (struct ns_sctp_addr){NS_SCTP_AF_INET4, src->port, ip->ipv4[i]};
    }
    uint32_t life = s->p.valid_cookie_life_ms;
    if (ip->has_cookie_preservative) {
        uint32_t extra = ip->cookie_preservative_ms;
        life += extra < MAX_PRESERVATIVE_MS ? extra : MAX_PRESERVATIVE_MS;
    }
    tcb.lifetime_ms = life;

    uint8_t cookie[NS_SCTP_COOKIE_MAX_LEN];
    size_t clen = ns_sctp_cookie_build(&s->cookie, &tcb, now, cookie, sizeof(cookie));
    if (clen == 0) {
        s->stats.nomem++;
        return;
    }
    struct ns_sctp_writer w;
    uint32_t budget = s->default_pmtu;
    if (ns_sctp_wr_start(&w, budget, hdr->dst_port, hdr->src_port, iv->initiate_tag) !=
        NS_SCTP_WR_OK) {
        s->stats.nomem++;
        return;
    }
    ns_sctp_wr_latch(&w);
    ns_sctp_wr_init_begin(&w, true, tcb.local_tag, tcb.local_a_rwnd, tcb.local_os, tcb.local_mis,
                          tcb.local_initial_tsn);
    /* With one address the packet's source says it all (and survives NAT). */
    for (uint8_t i = 0; ep->n_addrs > 1 && i < ep->n_addrs; i++)
        ns_sctp_wr_param_ipv4(&w, ep->addrs[i].addr);
    ns_sctp_wr_param_cookie(&w, cookie, (uint16_t)clen);
    /* Report what the INIT asked us to (3.2.2); what does not fit is left
     * out rather than failing the handshake: each report is optional. */
    for (uint8_t i = 0; i < ip->n_unrec; i++) {
        struct ns_sctp_wr_opt o;
        ns_sctp_wr_opt_begin(&w, &o);
        ns_sctp_wr_param_unrecognized(&w, ip->unrec[i].raw, ip->unrec[i].len);
        ns_sctp_wr_opt_end(&w, &o);
    }
    struct ns_pkt *p = NULL;
    if (ns_sctp_wr_end(&w) == NS_SCTP_WR_OK)
        p = ns_sctp_wr_finish(&w);
    if (!p) {
        ns_sctp_wr_discard(&w);
        return;
    }
    s->stats.tx_init_ack++;
    sctp_emit(s, p, dst, src, now);
}

/* ---- COOKIE ECHO -------------------------------------------------------- */

enum ns_sctp_cookie_res ep_cookie_open(struct ns_sctp *s, const struct ns_sctp_common *hdr,
                                       const struct ns_sctp_chunk *c,
                                       struct ns_sctp_cookie_tcb *tcb, uint32_t *staleness,
                                       uint64_t now)
{
    const uint8_t *ck;
    uint16_t len;
    if (ns_sctp_parse_cookie_echo(c, &ck, &len) != NS_SCTP_V_OK) {
        s->stats.cookie_bad++;
        return NS_SCTP_COOKIE_INVALID;
    }
    enum ns_sctp_cookie_res res = ns_sctp_cookie_verify(&s->cookie, ck, len, now, tcb, staleness);
    if (res == NS_SCTP_COOKIE_INVALID) {
        s->stats.cookie_bad++;
        return res;
    }
    /* 5.1.5 step 3: the cookie must be ours for these ports and come with
     * the tag we gave in the INIT ACK. */
    if (tcb->local_port != hdr->dst_port || tcb->peer_port != hdr->src_port ||
        tcb->local_tag != hdr->vtag || tcb->local_tag == 0 || tcb->peer_tag == 0) {
        s->stats.cookie_bad++;
        return NS_SCTP_COOKIE_INVALID;
    }
    return res;
}

static void cause_stale(struct ns_sctp_writer *w, const void *arg)
{
    ns_sctp_wr_cause_stale_cookie(w, *(const uint32_t *)arg);
}

void ep_send_stale(struct ns_sctp *s, const struct ns_sctp_common *hdr,
                   const struct ns_sctp_cookie_tcb *tcb, uint32_t staleness,
                   const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now)
{
    s->stats.cookie_stale++;
    sctp_send_lone(s, hdr->dst_port, hdr->src_port, tcb->peer_tag, NS_SCTP_CT_ERROR, 0, cause_stale,
                   &staleness, dst, src, now);
}

void ep_cookie_echo(struct ns_sctp *s, struct ns_sctp_ep *ep, struct ns_sctp_reader *r,
                    const struct ns_sctp_chunk *c, const struct ns_sctp_addr *src,
                    const struct ns_sctp_addr *dst, uint64_t now)
{
    const struct ns_sctp_common *hdr = &r->hdr;
    s->stats.rx_cookie_echo++;
    struct ns_sctp_cookie_tcb tcb;
    uint32_t stale = 0;
    enum ns_sctp_cookie_res res = ep_cookie_open(s, hdr, c, &tcb, &stale, now);
    if (res == NS_SCTP_COOKIE_INVALID)
        return;
    /* The peer of an existing association may answer from another of its
     * addresses: the cookie lists them (5.2.4). */
    struct ns_sctp_path *pa = sctp_path_lookup(s, hdr->dst_port, hdr->src_port, &tcb.src);
    for (uint8_t i = 0; !pa && i < tcb.n_addrs; i++)
        pa = sctp_path_lookup(s, hdr->dst_port, hdr->src_port, &tcb.addrs[i]);
    if (pa) {
        struct ns_sctp_assoc *a = pa->a;
        a->stats.rx_packets++;
        a->stats.rx_chunks++;
        if (hs_cookie_existing(a, hdr, &tcb, res, stale, src, dst, now)) {
            struct ns_sctp_path *np = path_find(a, src);
            assoc_process(a, r, np ? np : &a->paths[a->primary], now);
        }
        return;
    }
    if (res == NS_SCTP_COOKIE_STALE) {
        ep_send_stale(s, hdr, &tcb, stale, src, dst, now);
        return;
    }
    if (!ep->listening) {
        sctp_send_lone(s, hdr->dst_port, hdr->src_port, tcb.peer_tag, NS_SCTP_CT_ABORT, 0, NULL,
                       NULL, dst, src, now);
        s->stats.tx_ootb_abort++;
        return;
    }
    struct ns_sctp_assoc *a = assoc_alloc(s, ep, hdr->src_port);
    if (!a) {
        s->stats.nomem++;
        return;
    }
    if (!hs_from_cookie(a, &tcb, src, dst, now)) {
        s->stats.nomem++;
        assoc_destroy(a);
        return;
    }
    s->stats.passive_opens++;
    a->stats.rx_packets++;
    a->stats.rx_chunks++;
    a->pend |= PEND_COOKIE_ACK;
    assoc_established(a, "5.1 D: valid COOKIE ECHO, new TCB", now);
    struct ns_sctp_path *np = path_find(a, src);
    assoc_process(a, r, np ? np : &a->paths[a->primary], now);
}
