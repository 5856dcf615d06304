/* IPv4 reassembly.
 *
 * RFC 791 section 3.2 (fragments are identified by source, destination,
 * protocol and ID; the offset-0 fragment's header becomes the datagram's;
 * the reassembly timer runs from the first fragment), RFC 1122 section
 * 3.3.2 (reassembly timeout, ICMP time exceeded code 1 if fragment zero was
 * received), RFC 815 for the idea of tracking holes (here: a sorted list of
 * non-overlapping pieces whose byte count reaches the total).
 *
 * Overlapping or duplicate fragments discard the whole datagram, as Linux
 * does for IPv4 since 2018 and RFC 5722 requires for IPv6: overlaps are how
 * attackers slip data past filters. Memory is the real bytes held (packet
 * structs, their buffers, our bookkeeping), capped by ipfrag_high_thresh
 * across all datagrams: the oldest datagrams are evicted to make room, so a
 * flood of gapped fragments from many sources cannot grow it further.
 */
#include "ipv4/reass.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/checksum.h"

struct ns_reass_frag {
    struct ns_reass_frag *next;
    struct ns_pkt *pkt; /* data at its own IPv4 header */
    uint32_t off, len;  /* payload range in the datagram */
    uint32_t hlen;      /* the payload starts this far into pkt */
    uint32_t charge;    /* bytes counted against the cap */
};

void ns_reass_init(struct ns_reass *r, const struct ns_ip_params *parms, struct ns_timers *timers,
                   struct ns_ip_stats *stats)
{
    memset(r, 0, sizeof(*r));
    r->parms = parms;
    r->timers = timers;
    r->stats = stats;
}

static uint32_t bucket_of(const struct ns_reass *r, uint32_t src, uint32_t dst, uint16_t id,
                          uint8_t proto)
{
    uint32_t h = (src ^ r->hash_seed) * 0x9e3779b1u;
    h ^= dst + 0x85ebca6bu + (h << 6) + (h >> 2);
    h ^= ((uint32_t)id << 8 | proto) * 0xc2b2ae35u;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    return h & 255;
}

static uint32_t truesize(const struct ns_pkt *p)
{
    return (uint32_t)(sizeof(*p) + sizeof(struct ns_buf)) + p->buf->cap + p->frag_len;
}

static void dgram_free(struct ns_reass *r, struct ns_reass_dgram *d)
{
    struct ns_reass_dgram **pp = &r->buckets[bucket_of(r, d->src, d->dst, d->id, d->proto)];
    while (*pp != d)
        pp = &(*pp)->next;
    *pp = d->next;
    if (d->lru_prev)
        d->lru_prev->lru_next = d->lru_next;
    else
        r->lru_head = d->lru_next;
    if (d->lru_next)
        d->lru_next->lru_prev = d->lru_prev;
    else
        r->lru_tail = d->lru_prev;
    ns_timer_cancel(r->timers, &d->timer);
    struct ns_reass_frag *f = d->frags;
    while (f) {
        struct ns_reass_frag *n = f->next;
        ns_pkt_free(f->pkt);
        free(f);
        f = n;
    }
    r->mem -= d->mem;
    r->count--;
    free(d);
}

static void dgram_fail(struct ns_reass *r, struct ns_reass_dgram *d)
{
    r->stats->reasm_fails++;
    dgram_free(r, d);
}

static void dgram_expired(struct ns_timer *t, uint64_t now)
{
    struct ns_reass_dgram *d =
        (struct ns_reass_dgram *)((char *)t - offsetof(struct ns_reass_dgram, timer));
    struct ns_reass *r = d->r;
    r->stats->reasm_timeouts++;
    if (d->first && r->on_timeout)
        r->on_timeout(r->ctx, d->first, now);
    dgram_fail(r, d);
}

static struct ns_reass_dgram *dgram_find(struct ns_reass *r, const struct ns_ip_hdr *h)
{
    struct ns_reass_dgram *d = r->buckets[bucket_of(r, h->src, h->dst, h->id, h->proto)];
    while (d && !(d->src == h->src && d->dst == h->dst && d->id == h->id && d->proto == h->proto))
        d = d->next;
    return d;
}

static struct ns_reass_dgram *dgram_new(struct ns_reass *r, const struct ns_ip_hdr *h, uint64_t now)
{
    struct ns_reass_dgram *d = ns_alloc_should_fail() ? NULL : calloc(1, sizeof(*d));
    if (!d) {
        r->stats->reasm_nomem++;
        return NULL;
    }
    d->src = h->src;
    d->dst = h->dst;
    d->id = h->id;
    d->proto = h->proto;
    d->r = r;
    d->mem = sizeof(*d);
    ns_timer_init(&d->timer, dgram_expired);
    /* Without a timer the datagram could be held forever. */
    if (!ns_timer_arm(r->timers, &d->timer, now + (uint64_t)r->parms->ipfrag_time_ms * NS_MS)) {
        free(d);
        return NULL;
    }
    struct ns_reass_dgram **b = &r->buckets[bucket_of(r, h->src, h->dst, h->id, h->proto)];
    d->next = *b;
    *b = d;
    d->lru_prev = r->lru_tail;
    if (r->lru_tail)
        r->lru_tail->lru_next = d;
    else
        r->lru_head = d;
    r->lru_tail = d;
    r->mem += d->mem;
    r->count++;
    return d;
}

void ns_reass_free(struct ns_reass *r)
{
    while (r->lru_head)
        dgram_free(r, r->lru_head);
}

/* The datagram is complete: one linear packet with the offset-0 fragment's
 * header (options included), tot_len set, fragment field cleared. */
static struct ns_pkt *dgram_build(struct ns_reass *r, struct ns_reass_dgram *d)
{
    const struct ns_reass_frag *f0 = d->frags;
    uint32_t hlen = f0->hlen;
    if (hlen + d->total_len > NS_IP_MAXLEN) {
        dgram_fail(r, d);
        return NULL;
    }
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, hlen + d->total_len);
    if (!p) {
        dgram_fail(r, d);
        return NULL;
    }
    uint8_t *b = ns_pkt_put(p, hlen + d->total_len);
    ns_pkt_copy_out(f0->pkt, 0, b, hlen);
    for (const struct ns_reass_frag *f = d->frags; f; f = f->next)
        ns_pkt_copy_out(f->pkt, f->hlen, b + hlen + f->off, f->len);
    ns_wr16(b + 2, (uint16_t)(hlen + d->total_len));
    ns_wr16(b + 6, 0);
    ns_wr16(b + 10, 0);
    ns_wr16(b + 10, ns_csum(b, hlen));
    p->ifindex = f0->pkt->ifindex;
    p->flags = f0->pkt->flags;
    p->ts = f0->pkt->ts;
    r->stats->reasm_oks++;
    dgram_free(r, d);
    return p;
}

struct ns_pkt *ns_reass_add(struct ns_reass *r, struct ns_pkt *pkt, const struct ns_ip_hdr *h,
                            uint64_t now)
{
    struct ns_ip_stats *st = r->stats;
    st->reasm_reqds++;
    if (r->seed_rng) {
        r->hash_seed = (uint32_t)ns_rng_u64(r->seed_rng);
        r->seed_rng = NULL;
    }
    uint32_t off = (uint32_t)(h->frag & NS_IP_OFFMASK) * 8;
    uint32_t plen = (uint32_t)h->tot_len - h->ihl;
    uint32_t end = off + plen;
    bool more = (h->frag & NS_IP_MF) != 0;
    struct ns_reass_dgram *d = dgram_find(r, h);

    /* Empty fragments add nothing; a non-last fragment must end on an
     * 8-byte boundary or the next offset could not follow it. */
    if (plen == 0 || (more && (plen & 7)) || ns_pkt_len(pkt) < h->tot_len) {
        st->reasm_fails++;
        ns_pkt_free(pkt);
        return NULL;
    }
    ns_pkt_trim(pkt, h->tot_len);
    if (h->ihl + end > NS_IP_MAXLEN) {
        /* Would reassemble beyond 65535 bytes (the "ping of death"). */
        if (d)
            dgram_free(r, d);
        st->reasm_fails++;
        ns_pkt_free(pkt);
        return NULL;
    }

    struct ns_reass_frag *prev = NULL, *next = NULL;
    if (d) {
        next = d->frags;
        while (next && next->off < off) {
            prev = next;
            next = next->next;
        }
        struct ns_reass_frag *last = prev;
        for (struct ns_reass_frag *f = next; f; f = f->next)
            last = f;
        uint32_t held_end = last ? last->off + last->len : 0;
        bool overlap = (prev && prev->off + prev->len > off) || (next && next->off < end);
        bool bad_end = more ? (d->total_len && end > d->total_len)
                            : ((d->total_len && d->total_len != end) || held_end > end);
        if (overlap)
            st->reasm_overlaps++;
        if (overlap || bad_end || d->nfrags >= r->parms->ipfrag_max_frags) {
            dgram_fail(r, d);
            ns_pkt_free(pkt);
            return NULL;
        }
    } else if (r->parms->ipfrag_max_frags == 0) {
        st->reasm_fails++;
        ns_pkt_free(pkt);
        return NULL;
    }

    uint32_t charge = truesize(pkt) + (uint32_t)sizeof(struct ns_reass_frag);
    uint32_t need = charge + (d ? 0 : (uint32_t)sizeof(struct ns_reass_dgram));
    uint32_t cap = r->parms->ipfrag_high_thresh;
    /* Make room by evicting the oldest other datagrams. */
    while (need <= cap && r->mem + need > cap) {
        struct ns_reass_dgram *old = r->lru_head;
        if (old == d)
            old = d->lru_next;
        if (!old)
            break;
        st->reasm_mem_drops++;
        dgram_fail(r, old);
    }
    if (r->mem + need > cap) {
        /* Only this datagram is left and the fragment still does not fit:
         * drop the fragment; the datagram keeps its timer. */
        st->reasm_mem_drops++;
        ns_pkt_free(pkt);
        return NULL;
    }

    struct ns_reass_frag *f = ns_alloc_should_fail() ? NULL : malloc(sizeof(*f));
    if (!f) {
        st->reasm_nomem++;
        st->reasm_fails++;
        ns_pkt_free(pkt);
        return NULL;
    }
    if (!d && !(d = dgram_new(r, h, now))) {
        free(f);
        st->reasm_fails++;
        ns_pkt_free(pkt);
        return NULL;
    }
    f->pkt = pkt;
    f->off = off;
    f->len = plen;
    f->hlen = h->ihl;
    f->charge = charge;
    f->next = next;
    if (prev)
        prev->next = f;
    else
        d->frags = f;
    d->nfrags++;
    d->have_len += plen;
    d->mem += charge;
    r->mem += charge;
    if (off == 0)
        d->first = pkt;
    if (!more)
        d->total_len = end;
    if (d->total_len && d->have_len == d->total_len)
        return dgram_build(r, d);
    return NULL;
}
