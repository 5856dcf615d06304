/* ICMP errors about packets the engine sent (RFC 9260 Appendix C).
 *
 * The transport (nstack's IPv4, its UDP encapsulation, or a host socket's
 * IP_RECVERR queue) parses the ICMP message and hands over the quoted SCTP
 * packet; the rules that decide whether it may touch an association live
 * here, so every transport applies the same ones:
 *  - ICMP5/ICMP6: the quoted verification tag must be the one we put in
 *    packets to that peer, or, with tag 0, the quote must be our INIT
 *    carrying the initiate tag of an association still in COOKIE-WAIT;
 *    anyone able to send ICMP could otherwise kill or shrink associations
 *    blindly.
 *  - RFC 6951 5.6: for UDP encapsulation the quoted datagram must have gone
 *    to the encapsulation port the path uses now (it follows the peer,
 *    5.4): an error about a port the path has left is stale.
 *  - ICMP8 (protocol unreachable; for UDP encapsulation also a port
 *    unreachable, 5.6): the peer cannot do SCTP at all, so the association
 *    ends as the peer's ABORT would end it instead of retransmitting until
 *    Max.Init.Retransmits / Association.Max.Retrans.
 *  - Fragmentation needed (RFC 1191 section 6, RFC 9260 7.3): the path MTU
 *    only ever goes down on ICMP; raising it again is the transport's
 *    business (its PMTU cache expiring).
 */
#include "sctp/assoc.h"

/* Offsets in the quoted packet: common header, then the first chunk's
 * type (12) and, for an INIT, its initiate tag (16). */
#define Q_CHUNK_TYPE 12
#define Q_INIT_TAG   16
#define Q_INIT_LEN   20

static bool quote_is_ours(const struct ns_sctp_assoc *a, const uint8_t *q, uint32_t len)
{
    uint32_t vtag = ns_rd32(q + 4);
    if (vtag)
        return a->peer_vtag != 0 && vtag == a->peer_vtag;
    /* Tag 0 is only ever an INIT; once the peer's tag is known, later
     * packets carry it, so a zero-tag quote can only be about the
     * handshake still waiting for the INIT ACK. */
    return a->state == NS_SCTP_COOKIE_WAIT && len >= Q_INIT_LEN &&
           q[Q_CHUNK_TYPE] == NS_SCTP_CT_INIT && ns_rd32(q + Q_INIT_TAG) == a->my_vtag;
}

enum ns_sctp_icmp_verdict ns_sctp_icmp_error(struct ns_sctp *s, const struct ns_sctp_addr *peer,
                                             const uint8_t *sctp, uint32_t len,
                                             enum ns_sctp_icmp_kind kind, uint32_t pmtu,
                                             uint64_t now)
{
    if (len < 8 || !sctp)
        return NS_SCTP_ICMP_NO_ASSOC;
    /* The quote is a packet we sent: its source port is ours. */
    struct ns_sctp_path *pa = sctp_path_lookup(s, ns_rd16(sctp), ns_rd16(sctp + 2), peer);
    if (!pa || pa->a->state == NS_SCTP_CLOSED)
        return NS_SCTP_ICMP_NO_ASSOC;
    struct ns_sctp_assoc *a = pa->a;
    if (!quote_is_ours(a, sctp, len))
        return NS_SCTP_ICMP_BAD_TAG;
    if (pa->addr.port != peer->port)
        return NS_SCTP_ICMP_WRONG_PORT;

    if (kind == NS_SCTP_ICMP_PROT_UNREACH) {
        /* As the peer's ABORT without causes would. */
        sctp_enter(s);
        assoc_peer_abort(a, 0, now);
        sctp_leave(s, now);
        return NS_SCTP_ICMP_ABORTED;
    }
    if (kind != NS_SCTP_ICMP_FRAG_NEEDED || pmtu == 0)
        return NS_SCTP_ICMP_IGNORED;
    uint32_t m = pmtu;
    if (m < NS_SCTP_MIN_PMTU)
        m = NS_SCTP_MIN_PMTU; /* the transport fragments what is still larger */
    if (m > 65535)
        m = 65535;
    m &= ~3u;
    if (m >= pa->pmtu || ns_sctp_set_pmtu(a, &pa->addr, m) < 0)
        return NS_SCTP_ICMP_IGNORED;
    return NS_SCTP_ICMP_PMTU_LOWERED;
}
