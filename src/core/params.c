#include "core/params.h"

#include <string.h>

void ns_params_default(struct ns_params *p)
{
    memset(p, 0, sizeof(*p));
    p->neigh = (struct ns_neigh_params){
        .mcast_probes = 3,
        .ucast_probes = 3,
        .app_probes = 0,
        .mcast_reprobes = 0,
        .retrans_time_ms = 1000,
        .retrans_floor_ms = 500,
        .base_reachable_time_ms = 30000,
        .delay_first_probe_time_ms = 5000,
        .gc_stale_time_ms = 60000,
        .locktime_ms = 1000,
        .unres_qlen_bytes = 212992,
        .gc_thresh1 = 128,
        .gc_thresh2 = 512,
        .gc_thresh3 = 1024,
        .gc_interval_ms = 30000,
        .immediate_probe = 1,
        .tick_ms = 10,
    };
    p->ip = (struct ns_ip_params){
        .default_ttl = 64,
        .ipfrag_high_thresh = 4 * 1024 * 1024,
        .ipfrag_time_ms = 30000,
        .ipfrag_max_frags = 64,
        .icmp_ratelimit_ms = 1000,
        .icmp_ratemask = 0x1818,
        .icmp_msgs_per_sec = 1000,
        .icmp_msgs_burst = 50,
        .icmp_echo_ignore_all = 0,
        .pmtu_expires_ms = 600000,
        .udp_rcvbuf_bytes = 212992,
    };
    ns_sctp_params_default(&p->sctp);
}
