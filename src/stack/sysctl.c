/* `nstack sysctl` keys. sctp.* keys are the fields of struct
 * ns_sctp_params (RFC 9260 section 16 names). Neighbour keys mirror Linux's
 * /proc/sys/net/ipv4/neigh/default names with the unit appended; knobs Linux
 * lacks (immediate_probe, retrans_floor_ms, tick_ms) sit directly under
 * neigh. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "stack/stack.h"

struct sysctl_def {
    struct ns_sysctl_info info;
    size_t off;
};

#define NEIGH(key, field, lo, hi, help)                                                            \
    {                                                                                              \
        {key, lo, hi, help}, offsetof(struct ns_params, neigh.field)                               \
    }
#define IP(key, field, lo, hi, help)                                                               \
    {                                                                                              \
        {key, lo, hi, help}, offsetof(struct ns_params, ip.field)                                  \
    }

#define SCTP(key, field, lo, hi, help)                                                             \
    {                                                                                              \
        {"sctp." key, lo, hi, help}, offsetof(struct ns_params, sctp.field)                        \
    }

static const struct sysctl_def defs[] = {
    NEIGH("neigh.default.mcast_probes", mcast_probes, 0, 100,
          "broadcast solicits before an INCOMPLETE entry fails"),
    NEIGH("neigh.default.ucast_probes", ucast_probes, 0, 100,
          "unicast solicits in PROBE before the entry fails"),
    NEIGH("neigh.default.app_probes", app_probes, 0, 100, "user-space resolver probes (unused)"),
    NEIGH("neigh.default.mcast_resolicit", mcast_reprobes, 0, 100,
          "broadcast solicits after the unicast ones in PROBE"),
    NEIGH("neigh.default.retrans_time_ms", retrans_time_ms, 1, 3600000, "time between solicits"),
    NEIGH("neigh.default.base_reachable_time_ms", base_reachable_time_ms, 1, 3600000,
          "mean of the random REACHABLE lifetime"),
    NEIGH("neigh.default.delay_first_probe_time_ms", delay_first_probe_time_ms, 0, 3600000,
          "time in DELAY before unicast probing"),
    NEIGH("neigh.default.gc_stale_time_ms", gc_stale_time_ms, 1, 86400000,
          "unused entries older than this may be collected"),
    NEIGH("neigh.default.locktime_ms", locktime_ms, 0, 3600000,
          "no lladdr change within this time of the last update"),
    NEIGH("neigh.default.unres_qlen_bytes", unres_qlen_bytes, 0, 1u << 30,
          "bytes queued per unresolved entry"),
    NEIGH("neigh.default.gc_thresh1", gc_thresh1, 0, 10000000, "no gc below this many entries"),
    NEIGH("neigh.default.gc_thresh2", gc_thresh2, 0, 10000000,
          "forced gc above this many entries if the last one is 5 s old"),
    NEIGH("neigh.default.gc_thresh3", gc_thresh3, 1, 10000000, "hard limit on entries"),
    NEIGH("neigh.default.gc_interval_ms", gc_interval_ms, 100, 86400000,
          "period of the garbage collector"),
    NEIGH("neigh.immediate_probe", immediate_probe, 0, 1,
          "1: first solicit from the output path; 0: one tick later (pre-2011 Linux)"),
    NEIGH("neigh.retrans_floor_ms", retrans_floor_ms, 0, 3600000,
          "lower bound of the first retransmission interval"),
    NEIGH("neigh.tick_ms", tick_ms, 1, 1000, "the tick of immediate_probe=0"),
    IP("ipv4.ip_default_ttl", default_ttl, 1, 255, "TTL of packets we originate"),
    IP("ipv4.ipfrag_high_thresh", ipfrag_high_thresh, 0, 1u << 30, "bytes of reassembly memory"),
    IP("ipv4.ipfrag_time_ms", ipfrag_time_ms, 1, 3600000, "reassembly timeout"),
    IP("ipv4.ipfrag_max_frags", ipfrag_max_frags, 1, 8192, "fragments per datagram"),
    IP("ipv4.icmp_ratelimit_ms", icmp_ratelimit_ms, 0, 3600000,
       "min gap per destination for rate-limited ICMP types"),
    IP("ipv4.icmp_ratemask", icmp_ratemask, 0, 0xffffffffu, "ICMP types that are rate limited"),
    IP("ipv4.icmp_msgs_per_sec", icmp_msgs_per_sec, 0, 1000000, "global ICMP rate"),
    IP("ipv4.icmp_msgs_burst", icmp_msgs_burst, 0, 1000000, "global ICMP burst"),
    IP("ipv4.icmp_echo_ignore_all", icmp_echo_ignore_all, 0, 1, "do not answer echo requests"),
    IP("ipv4.pmtu_expires_ms", pmtu_expires_ms, 1000, 86400000, "path MTU cache lifetime"),
    IP("ipv4.udp_rmem_bytes", udp_rcvbuf_bytes, 1024, 1u << 30, "UDP receive buffer"),
    /* SCTP keys apply to associations created after the change: each
     * association copies the parameters when it is set up (RFC 9260 keeps
     * RTO and retransmission limits per association). cookie_secret_life_ms
     * takes effect at the next secret rotation check. */
    SCTP("rto_initial_ms", rto_initial_ms, 1, 3600000, "RTO before any RTT measurement"),
    SCTP("rto_min_ms", rto_min_ms, 1, 3600000, "lower bound of the RTO"),
    SCTP("rto_max_ms", rto_max_ms, 1, 3600000, "upper bound of the RTO"),
    SCTP("max_burst", max_burst, 1, 1000, "packets sent at once per trigger"),
    SCTP("valid_cookie_life_ms", valid_cookie_life_ms, 1000, 3600000, "lifetime of a State Cookie"),
    SCTP("association_max_retrans", association_max_retrans, 1, 1000,
         "consecutive errors before the association is lost"),
    SCTP("path_max_retrans", path_max_retrans, 0, 1000,
         "consecutive errors before a path goes inactive"),
    SCTP("max_init_retransmits", max_init_retransmits, 1, 1000,
         "INIT / COOKIE ECHO retransmissions before giving up"),
    SCTP("hb_interval_ms", hb_interval_ms, 1, 86400000, "heartbeat interval of an idle path"),
    SCTP("sack_timeout_ms", sack_timeout_ms, 1, 500, "delayed SACK timeout (at most 500 ms)"),
    SCTP("sack_freq", sack_freq, 1, 64, "packets received per SACK"),
    SCTP("rcvbuf_bytes", rcvbuf_bytes, 4096, 1u << 30, "receive window of an association"),
    SCTP("sndbuf_bytes", sndbuf_bytes, 4096, 1u << 30, "send buffer of an association"),
    SCTP("max_message_bytes", max_message_bytes, 1, 1u << 30, "largest message sent"),
    SCTP("reasm_max_bytes", reasm_max_bytes, 4096, 1u << 30, "reassembly memory of an association"),
    SCTP("out_streams", out_streams, 1, 65535, "outbound streams requested"),
    SCTP("max_in_streams", max_in_streams, 1, 65535, "inbound streams accepted"),
    SCTP("cookie_secret_life_ms", cookie_secret_life_ms, 1000, 86400000,
         "cookie secret rotation period"),
    SCTP("nodelay", nodelay, 0, 1, "1: send at once, no bundling delay"),
    SCTP("pd_point_bytes", pd_point_bytes, 0, 1u << 30,
         "partial delivery point; 0 = rcvbuf_bytes / 2"),
    /* RFC 6951, Linux's net.sctp.udp_port / encap_port; they apply at
     * once (udp_port binds nstack's UDP), and encap_port to associations
     * started afterwards. */
    SCTP("udp_port", udp_port, 0, 65535,
         "local UDP encapsulation port (RFC 6951, 9899 is IANA's); 0 = SCTP over raw IP only"),
    SCTP("encap_port", encap_port, 0, 65535,
         "peer's UDP encapsulation port for new associations; 0 = raw IP"),
};

static const struct sysctl_def *find(const char *key)
{
    for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
        if (strcmp(defs[i].info.key, key) == 0)
            return &defs[i];
    return NULL;
}

int ns_sysctl_get(struct ns_stack *s, const char *key, uint32_t *val)
{
    const struct sysctl_def *d = find(key);
    if (!d)
        return -ENOENT;
    memcpy(val, (const char *)&s->params + d->off, sizeof(*val));
    return 0;
}

int ns_sysctl_set(struct ns_stack *s, const char *key, uint32_t val, uint64_t now)
{
    const struct sysctl_def *d = find(key);
    if (!d)
        return -ENOENT;
    if (val < d->info.min || val > d->info.max)
        return -ERANGE;
    if (d->off >= offsetof(struct ns_params, sctp) &&
        d->off < offsetof(struct ns_params, sctp) + sizeof(struct ns_sctp_params)) {
        /* rto_min <= rto_max, as Linux's net.sctp sysctls insist. */
        struct ns_sctp_params p = s->params.sctp;
        memcpy((char *)&p + (d->off - offsetof(struct ns_params, sctp)), &val, sizeof(val));
        if (p.rto_min_ms > p.rto_max_ms)
            return -EINVAL;
        bool udp = d->off == offsetof(struct ns_params, sctp.udp_port);
        /* Hosted mode: the port is the host socket's, fixed at start. */
        if (udp && ns_stack_sctp_is_hosted(s) && val != s->params.sctp.udp_port)
            return -EINVAL;
        struct ns_sctp_params old = s->params.sctp;
        s->params.sctp = p;
        if (udp) {
            int r = ns_stack_sctp_udp_sync(s);
            if (r < 0) {
                s->params.sctp = old;
                (void)ns_stack_sctp_udp_sync(s);
                return r;
            }
        }
        ns_sctp_set_params(&s->sctp, &p);
        (void)now;
        return 0;
    }
    memcpy((char *)&s->params + d->off, &val, sizeof(val));
    (void)now;
    return 0;
}

const struct ns_sysctl_info *ns_sysctl_at(size_t i)
{
    return i < sizeof(defs) / sizeof(defs[0]) ? &defs[i].info : NULL;
}
