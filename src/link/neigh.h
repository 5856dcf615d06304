/* The neighbour engine: a protocol-independent table of (interface, network
 * address) -> link address with Linux's NUD state machine. ARP is its IPv4
 * resolver (link/arp.c); an NDP resolver could plug into the same ops.
 *
 * Behaviour follows Linux net/core/neighbour.c:
 *  - Sending to a NONE/FAILED entry moves it to INCOMPLETE, queues the packet
 *    and solicits at once from the sending path (neigh.immediate_probe=1),
 *    then every max(retrans_time, retrans_floor) until mcast_probes (+
 *    app_probes) are spent, then FAILED: queued packets are handed to
 *    ops->error_report in order. With neigh.immediate_probe=0 the first
 *    solicit waits one tick_ms (Linux before 2011).
 *  - REACHABLE ages to STALE after reachable_time (random in
 *    [0.5, 1.5) x base_reachable_time, redrawn every 300 s); sending to STALE
 *    moves it to DELAY; DELAY becomes REACHABLE if confirmed within
 *    delay_first_probe_time, else PROBE with ucast_probes unicast solicits
 *    (then mcast_reprobes broadcast ones) max(retrans_time, retrans_floor)
 *    apart, then FAILED.
 *  - Updates respect locktime, PERMANENT and NOARP entries are changed only
 *    by the administrator (NS_NEIGH_UPDATE_ADMIN).
 *  - Garbage collection: gc_thresh1/2/3 and gc_stale_time; a full table makes
 *    creation fail with table_fulls counted (-ENOBUFS). The thresholds count
 *    gc_entries (PERMANENT/NOARP entries are exempt), gc_thresh1 all entries.
 * The engine is sans-I/O: it sends nothing itself, it calls ops. The ops may
 * call back into the table (send, delete): the engine holds the entry
 * (refcnt) across each call and detaches a queue before draining it.
 * updated/confirmed/used compare with wrap-safe arithmetic: "never
 * confirmed" is stored as now - 2 x base_reachable_time, which may wrap
 * below zero early in virtual time. docs/neighbour.md has the whole story.
 */
#ifndef NS_LINK_NEIGH_H
#define NS_LINK_NEIGH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "core/rng.h"
#include "core/timer.h"

/* Linux's NUD_* values, so `-j` output and tests read the same. */
enum ns_nud {
    NS_NUD_NONE = 0x00,
    NS_NUD_INCOMPLETE = 0x01,
    NS_NUD_REACHABLE = 0x02,
    NS_NUD_STALE = 0x04,
    NS_NUD_DELAY = 0x08,
    NS_NUD_PROBE = 0x10,
    NS_NUD_FAILED = 0x20,
    NS_NUD_NOARP = 0x40,
    NS_NUD_PERMANENT = 0x80,
};
#define NS_NUD_IN_TIMER (NS_NUD_INCOMPLETE | NS_NUD_REACHABLE | NS_NUD_DELAY | NS_NUD_PROBE)
#define NS_NUD_VALID                                                                               \
    (NS_NUD_PERMANENT | NS_NUD_NOARP | NS_NUD_REACHABLE | NS_NUD_PROBE | NS_NUD_STALE |            \
     NS_NUD_DELAY)
#define NS_NUD_CONNECTED (NS_NUD_PERMANENT | NS_NUD_NOARP | NS_NUD_REACHABLE)

/* neigh_update flags, as Linux's NEIGH_UPDATE_F_*. */
#define NS_NEIGH_UPDATE_OVERRIDE      0x1 /* may replace a different lladdr */
#define NS_NEIGH_UPDATE_WEAK_OVERRIDE 0x2 /* different lladdr: only mark STALE */
#define NS_NEIGH_UPDATE_ADMIN         0x4 /* operator: may touch PERMANENT/NOARP */

#define NS_NEIGH_MAX_KEY    16
#define NS_NEIGH_MAX_LLADDR 8

/* Counters as Linux's per-table statistics (ip -s ntable / arp_cache). */
/* clang-format off */
#define NS_NEIGH_COUNTERS(X)                                                                \
    X(allocs) X(destroys) X(hash_grows) X(res_failed) X(lookups) X(hits)                    \
    X(rcv_probes_mcast) X(rcv_probes_ucast) X(periodic_gc_runs) X(forced_gc_runs)           \
    X(unres_discards) X(table_fulls) X(probes_sent_mcast) X(probes_sent_ucast) X(nomem)
/* clang-format on */

/* Tunables of a neighbour table: Linux's /proc/sys/net/ipv4/neigh/default
 * names, the unit appended (`nstack sysctl neigh.default.*`). */
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

/* Linux's defaults. */
void ns_neigh_params_default(struct ns_neigh_params *p);

struct ns_neigh_stats {
    NS_NEIGH_COUNTERS(NS_CTR_FIELD)
};

struct ns_neigh_table;

struct ns_neigh {
    struct ns_neigh *hnext;             /* hash chain */
    struct ns_neigh *gc_prev, *gc_next; /* list of gc-able (non-permanent) entries */
    struct ns_neigh_table *tbl;
    uint32_t ifindex;
    uint8_t key[NS_NEIGH_MAX_KEY];
    uint8_t lladdr[NS_NEIGH_MAX_LLADDR];
    uint8_t state; /* enum ns_nud */
    bool dead;
    uint32_t probes;    /* solicits sent in this INCOMPLETE/PROBE phase */
    uint64_t updated;   /* last state or lladdr change */
    uint64_t confirmed; /* last proof of reachability */
    uint64_t used;      /* last time a packet went through it */
    uint32_t refcnt;    /* held by callers beyond the table (0 = table only) */
    bool on_gc;         /* linked on the table's gc list */
    struct ns_timer timer;
    struct ns_pktq arp_queue; /* packets waiting for resolution */
};

struct ns_neigh_ops {
    /* Send one solicitation. dst_lladdr NULL: broadcast/multicast; else a
     * unicast probe to that cached address. `skb` is the oldest queued
     * packet (may be NULL): the resolver may take its source address. */
    void (*solicit)(void *ctx, struct ns_neigh *n, const uint8_t *dst_lladdr,
                    const struct ns_pkt *skb, uint64_t now);
    /* Transmit a packet to a resolved neighbour (adds the link header).
     * Takes ownership of pkt. */
    void (*output)(void *ctx, struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now);
    /* A queued packet is dropped because resolution failed: tell its sender
     * (ICMP host unreachable, socket error). Takes ownership of pkt. */
    void (*error_report)(void *ctx, struct ns_neigh *n, struct ns_pkt *pkt, uint64_t now);
};

struct ns_neigh_table {
    const char *id; /* "arp_cache" */
    uint8_t key_len;
    uint8_t lladdr_len;
    const struct ns_neigh_params *parms;
    struct ns_timers *timers;
    struct ns_rng *rng;
    const struct ns_neigh_ops *ops;
    void *ctx;

    struct ns_neigh **buckets;
    uint32_t hash_mask;                 /* buckets - 1, a power of two */
    uint64_t hash_key[2];               /* SipHash key drawn from rng at init */
    uint32_t entries;                   /* all entries */
    uint32_t gc_entries;                /* entries on the gc list */
    struct ns_neigh *gc_head, *gc_tail; /* oldest first */
    uint64_t last_flush;                /* last forced gc */
    uint64_t last_rand;                 /* last reachable_time draw */
    uint64_t reachable_time_us;         /* current random reachable time */
    uint32_t reach_base_ms;             /* base_reachable_time_ms it was drawn from */
    struct ns_timer gc_timer;
    struct ns_neigh_stats stats;
};

int ns_neigh_table_init(struct ns_neigh_table *tbl, const char *id, uint8_t key_len,
                        uint8_t lladdr_len, const struct ns_neigh_params *parms,
                        struct ns_timers *timers, struct ns_rng *rng,
                        const struct ns_neigh_ops *ops, void *ctx, uint64_t now);
void ns_neigh_table_free(struct ns_neigh_table *tbl);

/* Look up without creating; counts lookups/hits. */
struct ns_neigh *ns_neigh_lookup(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key);
/* Look up or create (state NONE). NULL with *err = -ENOBUFS on a full table
 * (table_fulls counted) or -ENOMEM. */
struct ns_neigh *ns_neigh_create(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                                 uint64_t now, int *err);

/* Send pkt to key on ifindex: transmit now if the entry is usable, else queue
 * it (bounded by unres_qlen_bytes and by unres_qlen_bytes / 64 packets; the
 * oldest is dropped and counted as unres_discards) and start or continue
 * resolution. Takes ownership of pkt. Returns 0 when sent, queued or handed
 * to error_report (mcast_probes + app_probes == 0 fails at once),
 * -ENOBUFS/-ENOMEM when no entry could be made (pkt freed). */
int ns_neigh_output(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                    struct ns_pkt *pkt, uint64_t now);

/* Linux neigh_update(): move n to new_state with lladdr (NULL keeps the
 * current one) under the NS_NEIGH_UPDATE_* rules; flushes the queue when the
 * entry becomes valid (through DELAY when the new state is STALE). An update
 * refused for a different lladdr without OVERRIDE returns 0 and changes
 * nothing but `confirmed` (for a CONNECTED new state, as Linux). Returns 0;
 * -EPERM when PERMANENT/NOARP is touched (or set) without ADMIN; -EINVAL
 * for a value that is not one state, or no lladdr for an entry that has
 * none; -ENOENT for a deleted entry. */
int ns_neigh_update(struct ns_neigh *n, const uint8_t *lladdr, uint8_t new_state, uint32_t flags,
                    uint64_t now);

/* Upper-layer proof of reachability (a SACK or TCP ACK for new data):
 * confirmed = now, and a STALE, DELAY or PROBE entry becomes REACHABLE at
 * once. Unknown and unresolved entries are left alone. */
void ns_neigh_confirm(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key, uint64_t now);

/* Administrative operations (`nstack neigh add|change|replace|del|flush`).
 * admin_set is `ip neigh replace`: creates if needed, then updates with
 * ADMIN|OVERRIDE; state must be PERMANENT, NOARP, REACHABLE or STALE
 * (-EINVAL otherwise; an entry it created is removed again on error).
 * admin_del returns -ENOENT when absent. Removal discards queued packets
 * (counted as unres_discards, no error_report). */
int ns_neigh_admin_set(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key,
                       const uint8_t *lladdr, uint8_t state, uint64_t now);
int ns_neigh_admin_del(struct ns_neigh_table *tbl, uint32_t ifindex, const void *key, uint64_t now);
/* Remove every entry on ifindex (0 = all) whose state is in `states`
 * (flush uses everything but PERMANENT and NOARP). Returns the count. */
unsigned ns_neigh_flush(struct ns_neigh_table *tbl, uint32_t ifindex, uint8_t states, uint64_t now);

/* Visit every entry (hash order). fn must not change the table. */
typedef void (*ns_neigh_visit_fn)(void *arg, const struct ns_neigh *n);
void ns_neigh_foreach(struct ns_neigh_table *tbl, ns_neigh_visit_fn fn, void *arg);

/* "REACHABLE", "STALE", ... as `ip neigh` prints them. */
const char *ns_nud_name(uint8_t state);
/* Parse a state name (case-insensitive, "permanent", "noarp", "reachable",
 * "stale", "delay", "probe", "failed", "incomplete", "none"); -1 if unknown. */
int ns_nud_parse(const char *name);

#endif
