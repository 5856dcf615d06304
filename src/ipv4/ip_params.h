/* Tunables of IPv4, ICMP and UDP: Linux's /proc/sys/net/ipv4 names with
 * the unit appended (`nstack sysctl ipv4.*`). */
#ifndef NS_IPV4_IP_PARAMS_H
#define NS_IPV4_IP_PARAMS_H

#include <stdint.h>

struct ns_ip_params {
    uint32_t default_ttl;        /* 64 */
    uint32_t ipfrag_high_thresh; /* 4 MiB of reassembly memory */
    uint32_t ipfrag_time_ms;     /* 30000 */
    uint32_t ipfrag_max_frags;   /* 64 fragments per datagram */
    uint32_t icmp_ratelimit_ms;  /* 1000: min gap per destination for rate-limited types */
    uint32_t icmp_ratemask; /* 0x1818: dest unreach, source quench, time exceeded, param problem */
    uint32_t icmp_msgs_per_sec;    /* 1000: global token bucket */
    uint32_t icmp_msgs_burst;      /* 50 */
    uint32_t icmp_echo_ignore_all; /* 0 */
    uint32_t pmtu_expires_ms;      /* 600000 */
    uint32_t udp_rcvbuf_bytes;     /* 212992 */
};

/* Linux's defaults. */
void ns_ip_params_default(struct ns_ip_params *p);

#endif
