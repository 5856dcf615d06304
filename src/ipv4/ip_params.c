/* IPv4's tunables and Linux's defaults for them. */
#include "ipv4/ip_params.h"

void ns_ip_params_default(struct ns_ip_params *p)
{
    *p = (struct ns_ip_params){
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
}
