/* ICMP for a host.
 *
 * RFC 792 (message formats: echo, destination unreachable, time exceeded,
 * parameter problem), RFC 1122 section 3.2.2 (verify the checksum; pass
 * errors to the transport named in the quoted header; never send an error
 * about an ICMP error, a non-initial fragment, a broadcast or multicast
 * destination or a source that names no single host; echo replies reuse the
 * request's data), RFC 1812 section 4.3.2.8 / Linux for rate limiting,
 * RFC 1191 section 4 (fragmentation needed carries the next-hop MTU; when it
 * is 0, guess the plateau below the datagram's size).
 */
#include "ipv4/icmp.h"

#include <errno.h>
#include <string.h>

#include "core/checksum.h"
#include "ipv4/layer.h"

#define ICMP_HLEN 8
/* Linux quotes as much as fits a 576-byte datagram (RFC 1812 4.3.2.3). */
#define QUOTE_MAX     (576 - NS_IP_HLEN - ICMP_HLEN)
#define ICMP_MAX_TYPE 18 /* Linux's NR_ICMP_TYPES */

static bool is_error_type(uint8_t t)
{
    return t == NS_ICMP_DEST_UNREACH || t == 4 /* source quench */ || t == 5 /* redirect */ ||
           t == NS_ICMP_TIME_EXCEEDED || t == NS_ICMP_PARAMETERPROB;
}

/* A source that names exactly one host (RFC 1122 3.2.2, 3.2.1.3). */
static bool single_host(const struct ns_ipv4 *ip, uint32_t a)
{
    return a != 0 && !ns_ip_is_mcast(a) && (a >> 28) != 0xf && (a >> 24) != 127 &&
           !ns_ip_is_bcast(ip, a);
}

static bool rate_limited_type(const struct ns_ip_params *p, uint8_t type, uint8_t code)
{
    if (type > ICMP_MAX_TYPE)
        return false;
    if (type == NS_ICMP_DEST_UNREACH && code == NS_ICMP_FRAG_NEEDED)
        return false;
    return (p->icmp_ratemask >> type) & 1;
}

static bool rl_allow(struct ns_ipv4 *ip, uint32_t dst, uint8_t type, uint8_t code, uint64_t now)
{
    const struct ns_ip_params *p = ip->params;
    if (!rate_limited_type(p, type, code))
        return true;
    struct ns_icmp_rl *rl = &ip->icmp_rl;

    /* Repay the global debt for the time since the last look. Clamp the
     * interval so the product cannot overflow (1e12 us repays any debt). */
    uint64_t elapsed = now > rl->tokens_at ? now - rl->tokens_at : 0;
    if (elapsed > 1000000000000ULL)
        elapsed = 1000000000000ULL;
    uint64_t repay = elapsed * p->icmp_msgs_per_sec;
    rl->tokens_us = rl->tokens_us > repay ? rl->tokens_us - repay : 0;
    if (now > rl->tokens_at)
        rl->tokens_at = now;
    if (rl->tokens_us + NS_SEC > (uint64_t)p->icmp_msgs_burst * NS_SEC) {
        ip->icmp_stats.out_rate_limited++;
        return false;
    }

    uint64_t gap = (uint64_t)p->icmp_ratelimit_ms * NS_MS;
    int slot = -1, victim = -1;
    for (int i = 0; i < NS_ICMP_RL_SLOTS; i++) {
        if (rl->dst[i] == dst) {
            slot = i;
            break;
        }
        if (victim < 0 ||
            (rl->dst[victim] != 0 && (rl->dst[i] == 0 || rl->last[i] < rl->last[victim])))
            victim = i;
    }
    if (slot >= 0 && gap && now < rl->last[slot] + gap) {
        ip->icmp_stats.out_rate_limited++;
        return false;
    }
    if (slot < 0)
        slot = victim;
    rl->dst[slot] = dst;
    rl->last[slot] = now;
    rl->tokens_us += NS_SEC;
    return true;
}

static void count_out(struct ns_icmp_stats *st, uint8_t type)
{
    st->out_msgs++;
    switch (type) {
    case NS_ICMP_DEST_UNREACH:
        st->out_dest_unreachs++;
        break;
    case NS_ICMP_TIME_EXCEEDED:
        st->out_time_excds++;
        break;
    case NS_ICMP_ECHO:
        st->out_echos++;
        break;
    case NS_ICMP_ECHOREPLY:
        st->out_echo_reps++;
        break;
    default:
        break;
    }
}

void ns_icmp_send_error(struct ns_ipv4 *ip, const struct ns_pkt *orig, uint8_t type, uint8_t code,
                        uint32_t info, uint64_t now)
{
    uint8_t q[QUOTE_MAX];
    uint32_t qlen = ns_pkt_len(orig);
    if (qlen > QUOTE_MAX)
        qlen = QUOTE_MAX;
    struct ns_ip_hdr h;
    if (!ns_pkt_copy_out(orig, 0, q, qlen) || !ns_ip_parse_quoted(q, qlen, &h))
        return;
    if (qlen > h.tot_len)
        qlen = h.tot_len;
    if (orig->flags & (NS_PKT_F_BCAST | NS_PKT_F_MCAST))
        return;
    if (h.frag & NS_IP_OFFMASK)
        return;
    if (ns_ip_is_bcast(ip, h.dst) || ns_ip_is_mcast(h.dst))
        return;
    if (!single_host(ip, h.src))
        return;
    if (h.proto == NS_IPPROTO_ICMP) {
        /* Unknown types count as errors, as in Linux: when unsure, stay
         * quiet rather than risk an error storm. */
        if (qlen < h.ihl + 1u || q[h.ihl] > ICMP_MAX_TYPE || is_error_type(q[h.ihl]))
            return;
    }
    if (!rl_allow(ip, h.src, type, code, now))
        return;

    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, ICMP_HLEN + qlen);
    if (!p)
        return;
    uint8_t *b = ns_pkt_put(p, ICMP_HLEN + qlen);
    memset(b, 0, ICMP_HLEN);
    b[0] = type;
    b[1] = code;
    if (type == NS_ICMP_DEST_UNREACH && code == NS_ICMP_FRAG_NEEDED)
        ns_wr16(b + 6, (uint16_t)info);
    else if (type == NS_ICMP_PARAMETERPROB)
        b[4] = (uint8_t)info;
    memcpy(b + ICMP_HLEN, q, qlen);
    ns_wr16(b + 2, ns_csum(b, ICMP_HLEN + qlen));

    /* Answer from the address the datagram was sent to when it is ours;
     * the precedence is internetwork control as Linux sets it. */
    struct ns_ip_out o = {
        .src = ns_link_iface_by_addr(ip->link, h.dst) ? h.dst : 0,
        .dst = h.src,
        .proto = NS_IPPROTO_ICMP,
        .tos = (uint8_t)((h.tos & 0x1e) | 0xc0),
    };
    if (ns_ip_output(ip, p, &o, now) == 0)
        count_out(&ip->icmp_stats, type);
}

static void echo_reply(struct ns_ipv4 *ip, struct ns_pkt *pkt, uint32_t len, uint32_t src,
                       uint32_t dst, uint64_t now)
{
    struct ns_icmp_stats *st = &ip->icmp_stats;
    if (ip->params->icmp_echo_ignore_all) {
        st->echo_ignored++;
        return;
    }
    /* Smurf amplification: broadcast echoes are ignored, like Linux's
     * icmp_echo_ignore_broadcasts=1, and so are requests from sources that
     * name no single host. */
    if ((pkt->flags & (NS_PKT_F_BCAST | NS_PKT_F_MCAST)) || ns_ip_is_bcast(ip, dst) ||
        ns_ip_is_mcast(dst) || !single_host(ip, src)) {
        st->echo_ignored++;
        return;
    }
    struct ns_pkt *r = ns_pkt_alloc(NS_PKT_HEADROOM, len);
    if (!r)
        return;
    uint8_t *b = ns_pkt_put(r, len);
    ns_pkt_copy_out(pkt, 0, b, len);
    b[0] = NS_ICMP_ECHOREPLY;
    b[1] = 0;
    ns_wr16(b + 2, 0);
    ns_wr16(b + 2, ns_csum(b, len));
    uint8_t tos = 0;
    if ((uint32_t)pkt->l3_off + NS_IP_HLEN <= ns_pkt_headroom(pkt))
        tos = ns_ip_rx_hdr(pkt)[1];
    struct ns_ip_out o = {.src = dst, .dst = src, .proto = NS_IPPROTO_ICMP, .tos = tos};
    if (ns_ip_output(ip, r, &o, now) == 0)
        count_out(st, NS_ICMP_ECHOREPLY);
}

static void echo_event(struct ns_ipv4 *ip, const struct ns_pkt *pkt, const uint8_t *hdr,
                       uint32_t len, uint32_t src, uint8_t ttl, uint64_t now)
{
    if (!ip->icmp_event)
        return;
    struct ns_icmp_event ev = {
        .kind = NS_ICMP_EV_ECHO_REPLY,
        .from = src,
        .id = ns_rd16(hdr + 4),
        .seq = ns_rd16(hdr + 6),
        .ttl = ttl,
        .bytes = len,
    };
    uint8_t t[8];
    if (len >= ICMP_HLEN + 8 && ns_pkt_copy_out(pkt, ICMP_HLEN, t, 8)) {
        uint64_t sent = 0;
        for (int i = 7; i >= 0; i--)
            sent = sent << 8 | t[i];
        ev.rtt_us = now >= sent ? now - sent : 0;
    }
    ip->icmp_event(ip->icmp_ctx, &ev, now);
}

/* Linux's icmp_err_convert[] for destination unreachable codes 0-15. */
static const int unreach_errno[16] = {
    ENETUNREACH,  EHOSTUNREACH, ENOPROTOOPT,  ECONNREFUSED, EMSGSIZE,     EOPNOTSUPP,
    ENETUNREACH,  EHOSTDOWN,    ENONET,       ENETUNREACH,  EHOSTUNREACH, ENETUNREACH,
    EHOSTUNREACH, EHOSTUNREACH, EHOSTUNREACH, EHOSTUNREACH,
};

/* RFC 1191 section 7 plateaus, largest first. */
static uint32_t plateau_below(uint32_t len)
{
    static const uint16_t plateaus[] = {65535, 32000, 17914, 8166, 4352, 2002,
                                        1492,  1006,  508,   296,  68};
    for (size_t i = 0; i < sizeof(plateaus) / sizeof(plateaus[0]); i++)
        if (plateaus[i] < len)
            return plateaus[i];
    return 68;
}

static void error_input(struct ns_ipv4 *ip, const struct ns_pkt *pkt, const uint8_t *hdr,
                        uint32_t len, uint32_t src, uint8_t ttl, uint64_t now)
{
    struct ns_icmp_stats *st = &ip->icmp_stats;
    uint8_t type = hdr[0], code = hdr[1];
    /* The quote: a whole IPv4 header plus the 8 bytes RFC 792 promises,
     * which hold the ports or the echo id/seq. */
    uint8_t q[60 + 8];
    uint32_t n = len - ICMP_HLEN < sizeof(q) ? len - ICMP_HLEN : (uint32_t)sizeof(q);
    struct ns_ip_hdr ih;
    if (!ns_pkt_copy_out(pkt, ICMP_HLEN, q, n) || !ns_ip_parse_quoted(q, n, &ih) ||
        n < ih.ihl + 8u) {
        st->in_errors++;
        return;
    }
    int err;
    if (type == NS_ICMP_DEST_UNREACH) {
        if (code >= 16) {
            st->in_errors++;
            return;
        }
        err = unreach_errno[code];
    } else if (type == NS_ICMP_TIME_EXCEEDED) {
        err = EHOSTUNREACH;
    } else {
        err = EPROTO;
    }
    /* We only ever send from our own addresses; anything else is not about
     * us (or is forged) and must not move PMTU or socket state. */
    if (!ns_link_iface_by_addr(ip->link, ih.src)) {
        st->in_errors++;
        return;
    }
    uint32_t mtu = 0;
    if (type == NS_ICMP_DEST_UNREACH && code == NS_ICMP_FRAG_NEEDED) {
        mtu = ns_rd16(hdr + 6);
        if (mtu == 0)
            mtu = plateau_below(ih.tot_len);
        /* SCTP checks the quoted verification tag first (RFC 9260
         * Appendix C) and updates the cache itself, so a blind forger
         * cannot shrink the path of an association. */
        if (ih.proto != NS_IPPROTO_SCTP || (ih.frag & NS_IP_OFFMASK))
            ns_pmtu_update(ip, ih.dst, mtu, now);
    }
    if (ih.frag & NS_IP_OFFMASK)
        return; /* a later fragment: no transport header in the quote */
    const uint8_t *l4 = q + ih.ihl;
    if (ih.proto == NS_IPPROTO_ICMP && l4[0] == NS_ICMP_ECHO) {
        if (ip->icmp_event) {
            struct ns_icmp_event ev = {
                .kind = NS_ICMP_EV_ERROR,
                .from = src,
                .id = ns_rd16(l4 + 4),
                .seq = ns_rd16(l4 + 6),
                .ttl = ttl,
                .type = type,
                .code = code,
                .bytes = len,
                .err = err,
            };
            ip->icmp_event(ip->icmp_ctx, &ev, now);
        }
    } else if (ih.proto == NS_IPPROTO_UDP) {
        /* An encapsulation on the socket (SCTP over UDP, RFC 6951 5.6)
         * looks behind the UDP header. */
        ns_udp_icmp_quote(ip, ih.src, ih.dst, l4, n - ih.ihl, type, code, mtu, err, now);
    } else {
        const struct ns_ip_proto *pr = ns_ipv4_proto(ip, ih.proto);
        if (pr && pr->err)
            pr->err(pr->ctx, ih.src, ih.dst, l4, n - ih.ihl, type, code, mtu, err, now);
    }
}

void ns_icmp_input(struct ns_ipv4 *ip, struct ns_iface *ifc, struct ns_pkt *pkt, uint32_t src,
                   uint32_t dst, uint8_t ttl, uint64_t now)
{
    struct ns_icmp_stats *st = &ip->icmp_stats;
    st->in_msgs++;
    uint32_t len = ns_pkt_len(pkt);
    uint8_t hdr[ICMP_HLEN];
    if (len < ICMP_HLEN || !ns_pkt_copy_out(pkt, 0, hdr, ICMP_HLEN)) {
        st->in_errors++;
        ns_pkt_free(pkt);
        return;
    }
    if (ns_csum_fold(ns_csum_pkt(pkt, 0, len, 0)) != 0xffff) {
        st->in_csum_errors++;
        st->in_errors++;
        ns_pkt_free(pkt);
        return;
    }
    switch (hdr[0]) {
    case NS_ICMP_ECHO:
        st->in_echos++;
        echo_reply(ip, pkt, len, src, dst, now);
        break;
    case NS_ICMP_ECHOREPLY:
        st->in_echo_reps++;
        echo_event(ip, pkt, hdr, len, src, ttl, now);
        break;
    case NS_ICMP_DEST_UNREACH:
        st->in_dest_unreachs++;
        if (hdr[1] == NS_ICMP_FRAG_NEEDED)
            st->in_frag_needed++;
        error_input(ip, pkt, hdr, len, src, ttl, now);
        break;
    case NS_ICMP_TIME_EXCEEDED:
        st->in_time_excds++;
        error_input(ip, pkt, hdr, len, src, ttl, now);
        break;
    case NS_ICMP_PARAMETERPROB:
        st->in_parm_probs++;
        error_input(ip, pkt, hdr, len, src, ttl, now);
        break;
    default:
        st->in_unknown_types++;
        break;
    }
    ns_pkt_free(pkt);
}

int ns_icmp_echo_send(struct ns_ipv4 *ip, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size,
                      uint8_t ttl, uint64_t now)
{
    if (size > NS_IP_MAXLEN - NS_IP_HLEN - ICMP_HLEN)
        return -EMSGSIZE;
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, ICMP_HLEN + size);
    if (!p)
        return -ENOMEM;
    uint8_t *b = ns_pkt_put(p, ICMP_HLEN + size);
    b[0] = NS_ICMP_ECHO;
    b[1] = 0;
    ns_wr16(b + 2, 0);
    ns_wr16(b + 4, id);
    ns_wr16(b + 6, seq);
    for (uint32_t i = 0; i < size; i++)
        b[ICMP_HLEN + i] = (uint8_t)i;
    if (size >= 8)
        for (int i = 0; i < 8; i++)
            b[ICMP_HLEN + i] = (uint8_t)(now >> (8 * i));
    ns_wr16(b + 2, ns_csum(b, ICMP_HLEN + size));
    p->ts = now;
    struct ns_ip_out o = {.dst = dst, .proto = NS_IPPROTO_ICMP, .ttl = ttl};
    int r = ns_ip_output(ip, p, &o, now);
    if (r == 0)
        count_out(&ip->icmp_stats, NS_ICMP_ECHO);
    return r;
}
