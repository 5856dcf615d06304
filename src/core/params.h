/* Tunables of one stack instance, as `nstack sysctl` shows them.
 * Names and defaults follow Linux (/proc/sys/net/ipv4/neigh/default and
 * /proc/sys/net/ipv4); times carry their unit in the name. */
#ifndef NS_CORE_PARAMS_H
#define NS_CORE_PARAMS_H

#include <stdint.h>

#include "sctp/types.h"

struct ns_neigh_params {
    uint32_t mcast_probes;              /* 3 */
    uint32_t ucast_probes;              /* 3 */
    uint32_t app_probes;                /* 0: no user-space resolver */
    uint32_t mcast_reprobes;            /* 0 */
    uint32_t retrans_time_ms;           /* 1000 */
    uint32_t retrans_floor_ms;          /* 500: first retransmit >= max(retrans, floor) */
    uint32_t base_reachable_time_ms;    /* 30000 */
    uint32_t delay_first_probe_time_ms; /* 5000 */
    uint32_t gc_stale_time_ms;          /* 60000 */
    uint32_t locktime_ms;               /* 1000 */
    uint32_t unres_qlen_bytes;          /* 212992 (SK_WMEM_MAX) */
    uint32_t gc_thresh1;                /* 128 */
    uint32_t gc_thresh2;                /* 512 */
    uint32_t gc_thresh3;                /* 1024 */
    uint32_t gc_interval_ms;            /* 30000 */
    uint32_t immediate_probe;           /* 1; 0 = old behaviour: first probe one tick later */
    uint32_t tick_ms;                   /* 10 (HZ=100), only used with immediate_probe=0 */
};

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

struct ns_params {
    struct ns_neigh_params neigh;
    struct ns_ip_params ip;
    /* `sctp.*` keys; struct and defaults live with the engine (sctp/types.h,
     * ns_sctp_params_default). */
    struct ns_sctp_params sctp;
};

void ns_params_default(struct ns_params *p);

#endif
