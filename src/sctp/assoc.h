/* Internals of the SCTP engine shared by its files (not for the socket
 * layer: use sctp.h). What lives where:
 *
 *   sctp.c           instance, lookup tables, deferred events, packet input,
 *                    verification tag dispatch, out-of-the-blue replies (8.4)
 *   endpoint.c       endpoints, the stateless INIT -> INIT ACK reply and the
 *                    COOKIE ECHO that creates an association (5.1)
 *   assoc.c          association objects, life cycle, chunk dispatch, ABORT
 *                    and ERROR, the user API, info and counters
 *   assoc_state.c    the state setter (every transition, counted and checked
 *                    against RFC 9260's state diagram) and the debug-build
 *                    consistency checks
 *   assoc_handshake.c  connect, INIT / INIT ACK / COOKIE ECHO / COOKIE ACK,
 *                    T1 timers, collisions and restarts (5.1, 5.2)
 *   assoc_shutdown.c graceful shutdown, T2 and T5 (9.2)
 *   assoc_data.c     the output routine (bundling, Nagle, Max.Burst), DATA
 *                    receive, SACK send/receive, delayed SACK, T3 (6, 7)
 *   path.c           paths, failover, heartbeats, PMTU (8.1-8.3, 5.4)
 */
#ifndef NS_SCTP_ASSOC_H
#define NS_SCTP_ASSOC_H

#include <stddef.h>

#include "sctp/chunk.h"
#include "sctp/cookie.h"
#include "sctp/retx.h"
#include "sctp/sctp.h"
#include "sctp/sendq.h"
#include "sctp/tsnmap.h"

#define NS_SCTP_CONTAINER(ptr, type, field) ((type *)((char *)(ptr)-offsetof(type, field)))

struct ns_sctp_ep {
    struct ns_sctp *s;
    struct ns_sctp_ep *next;
    uint16_t port;
    bool listening;
    bool closed;
    uint32_t refs; /* associations pointing here */
    uint8_t n_addrs;
    struct ns_sctp_addr addrs[NS_SCTP_MAX_LOCAL_ADDRS];
    void *user;
};

struct ns_sctp_path {
    struct ns_sctp_assoc *a;
    struct ns_sctp_path *hnext; /* instance path hash chain */
    bool hashed;
    uint8_t idx;
    struct ns_sctp_addr addr;  /* the peer's */
    struct ns_sctp_addr local; /* ours, addr 0 = let the transport choose */
    bool active;
    bool confirmed;
    uint32_t errors; /* path error counter (8.2) */
    uint32_t pmtu;
    struct ns_sctp_cc cc;
    struct ns_timer t3;
    uint64_t t3_started_at; /* when t3 was last started (6.1 A: SACKs since) */
    struct ns_timer hb;
    uint64_t hb_nonce;
    uint64_t hb_sent_at;
    bool hb_outstanding;
    bool data_since_hb; /* DATA went here since the heartbeat timer was armed */
};

/* Control chunks owed to the peer, written at the front of the next packet
 * the output routine builds. */
#define PEND_COOKIE_ACK      0x01
#define PEND_SACK            0x02
#define PEND_SHUTDOWN        0x04
#define PEND_SHUTDOWN_ACK    0x08
#define PEND_BAD_SID         0x10 /* ERROR with Invalid Stream Identifier causes */
#define PEND_COOKIE_WHILE_SD 0x20 /* ERROR Cookie Received While Shutting Down */

#define NS_SCTP_MAX_BAD_SIDS 8

struct ns_sctp_assoc {
    struct ns_sctp *s;
    struct ns_sctp_ep *ep;
    struct ns_sctp_assoc *next, *prev; /* instance list */
    struct ns_sctp_assoc *id_next;     /* id hash chain */
    struct ns_sctp_assoc *dead_next;
    uint32_t id;
    enum ns_sctp_state state; /* changed only by assoc_set_state */
    const char *state_why;    /* the rule of the last change (debugging) */
    bool released;
    bool on_dead;
    void *user;

    struct ns_sctp_params p;
    uint16_t lport, pport;
    uint32_t my_vtag, peer_vtag;
    uint32_t my_itsn, peer_itsn;
    uint16_t req_os, req_mis; /* what our INIT / INIT ACK offered */
    uint16_t out_streams, in_streams;

    struct ns_sctp_path paths[NS_SCTP_MAX_PATHS];
    uint8_t n_paths;
    uint8_t primary;
    uint8_t rtx_path; /* where retransmissions go after a T3 (failover) */
    uint8_t rx_path;  /* source of the last packet with DATA (SACK destination) */
    uint8_t ctl_path; /* source of the last packet (where replies go) */
    uint32_t errors;  /* association error counter (8.1) */

    /* Handshake (assoc_handshake.c). */
    struct ns_timer t1;
    uint64_t t1_rto;
    uint32_t t1_count;
    uint32_t stale_count;
    uint32_t preservative_ms;
    uint8_t *cookie; /* from the INIT ACK, echoed until COOKIE ACK */
    uint16_t cookie_len;
    uint64_t cookie_sent_at;
    bool cookie_first;  /* the next COOKIE ECHO is the first: DATA may ride along */
    uint8_t *err_unrec; /* ERROR (Unrecognized Parameters) to bundle with COOKIE ECHO */
    uint16_t err_unrec_len;

    /* Shutdown (assoc_shutdown.c). */
    bool shutdown_req;
    struct ns_timer t2;
    struct ns_timer t5;

    /* Data (assoc_data.c). */
    bool sq_ready; /* sendq set up (from connect on, so data can be queued early) */
    bool tx_ready; /* retx set up */
    uint32_t last_next_tsn, last_cum_ack; /* retx's, kept for info once it is gone */
    bool rx_ready;                        /* tsnmap and reasm set up */
    struct ns_sctp_sendq sq;
    struct ns_sctp_retx rx;
    struct ns_sctp_tsnmap map;
    struct ns_sctp_reasm ra;
    struct ns_timer sack_timer;
    uint32_t pend; /* PEND_* */
    uint16_t bad_sids[NS_SCTP_MAX_BAD_SIDS];
    uint8_t n_bad_sids;
    bool fast_rtx;                /* send one packet of fast retransmissions at once */
    bool t3_rtx;                  /* T3 expired: one packet of retransmissions only (E3) */
    bool want_writable;           /* a send got -EAGAIN */
    uint32_t want_space;          /* ... needing this much free buffer */
    uint64_t last_sack_at;        /* zero-window probes do not count as errors while SACKs come */
    struct ns_sctp_rmsg *stamped; /* last ready message given our assoc id */

    struct ns_sctp_assoc_stats stats;
};

static inline bool assoc_can_data(const struct ns_sctp_assoc *a)
{
    return a->state == NS_SCTP_ESTABLISHED || a->state == NS_SCTP_SHUTDOWN_PENDING ||
           a->state == NS_SCTP_SHUTDOWN_RECEIVED;
}

/* ---- assoc_state.c ---------------------------------------------------- */

/* Every state change goes through here. why is a short static string
 * naming the RFC 9260 rule ("5.1 C: INIT ACK"). Counted (the association's
 * and the instance's state_changes); debug builds abort on a transition the
 * state diagram does not allow (assoc_state.c lists them). */
void assoc_set_state(struct ns_sctp_assoc *a, enum ns_sctp_state st, const char *why);
/* Debug builds: abort with a diagnostic if an association, or the instance
 * and all its associations, are inconsistent (state vs timers, tags, the
 * retransmission queue's counts, path indices and hashing, list and hash
 * counts: dcsctp's IsConsistent). sctp_leave runs sctp_check when the
 * outermost entry point returns; O(associations + paths). Nothing with
 * NDEBUG. */
#ifndef NDEBUG
void assoc_check(const struct ns_sctp_assoc *a);
void sctp_check(struct ns_sctp *s);
#else
static inline void assoc_check(const struct ns_sctp_assoc *a)
{
    (void)a;
}
static inline void sctp_check(struct ns_sctp *s)
{
    (void)s;
}
#endif

/* ---- sctp.c ---------------------------------------------------------- */

/* Every entry point brackets its work with enter/leave; the outermost
 * leave delivers the queued events and frees released dead associations. */
void sctp_enter(struct ns_sctp *s);
void sctp_leave(struct ns_sctp *s, uint64_t now);
struct ns_sctp_event *sctp_event_new(struct ns_sctp *s, struct ns_sctp_assoc *a,
                                     enum ns_sctp_event_type type);
void sctp_emit(struct ns_sctp *s, struct ns_pkt *p, const struct ns_sctp_addr *src,
               const struct ns_sctp_addr *dst, uint64_t now);
uint32_t sctp_rand32_nonzero(struct ns_sctp *s);
bool sctp_path_hash_add(struct ns_sctp *s, struct ns_sctp_path *pa);
void sctp_path_hash_del(struct ns_sctp *s, struct ns_sctp_path *pa);
struct ns_sctp_path *sctp_path_lookup(struct ns_sctp *s, uint16_t lport, uint16_t pport,
                                      const struct ns_sctp_addr *peer);
bool sctp_id_add(struct ns_sctp *s, struct ns_sctp_assoc *a);
void sctp_id_del(struct ns_sctp *s, struct ns_sctp_assoc *a);
/* A lone reply chunk outside any association (ABORT, SHUTDOWN COMPLETE,
 * ERROR): type, flags, vtag, optional causes written by fn (in an optional
 * section: causes that do not fit are all left out, the chunk still goes). */
typedef void (*sctp_causes_fn)(struct ns_sctp_writer *w, const void *arg);
void sctp_send_lone(struct ns_sctp *s, uint16_t sport, uint16_t dport, uint32_t vtag, uint8_t type,
                    uint8_t flags, sctp_causes_fn fn, const void *arg,
                    const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now);

/* ---- endpoint.c ---------------------------------------------------- */

struct ns_sctp_ep *ep_lookup(struct ns_sctp *s, uint16_t port, const struct ns_sctp_addr *local);
void ep_put(struct ns_sctp_ep *ep);
/* Answer an INIT with a stateless INIT ACK. tmpl, when not NULL, carries
 * the local tag, initial TSN and tie-tags an existing association chose
 * (5.2.1, 5.2.2); otherwise fresh ones are drawn. */
struct ns_sctp_cookie_tcb;
void ep_send_init_ack(struct ns_sctp *s, struct ns_sctp_ep *ep, const struct ns_sctp_common *hdr,
                      const struct ns_sctp_init_view *iv, const struct ns_sctp_init_params *ip,
                      const struct ns_sctp_cookie_tcb *tmpl, const struct ns_sctp_addr *src,
                      const struct ns_sctp_addr *dst, uint64_t now);
/* Validate an INIT: false when it was dropped or answered with an ABORT
 * (counted). ip is filled when it returns true. */
bool ep_init_check(struct ns_sctp *s, const struct ns_sctp_common *hdr,
                   const struct ns_sctp_chunk *c, struct ns_sctp_init_view *iv,
                   struct ns_sctp_init_params *ip, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst, uint64_t now);
/* Handle a packet whose first chunk is COOKIE ECHO and which matches no
 * association (5.1.5): may create one and process the rest of the packet. */
void ep_cookie_echo(struct ns_sctp *s, struct ns_sctp_ep *ep, struct ns_sctp_reader *r,
                    const struct ns_sctp_chunk *c, const struct ns_sctp_addr *src,
                    const struct ns_sctp_addr *dst, uint64_t now);
/* Cookie verification shared with the existing-TCB case: returns
 * NS_SCTP_COOKIE_OK/STALE with tcb filled, or INVALID (counted). */
enum ns_sctp_cookie_res ep_cookie_open(struct ns_sctp *s, const struct ns_sctp_common *hdr,
                                       const struct ns_sctp_chunk *c,
                                       struct ns_sctp_cookie_tcb *tcb, uint32_t *staleness,
                                       uint64_t now);
void ep_send_stale(struct ns_sctp *s, const struct ns_sctp_common *hdr,
                   const struct ns_sctp_cookie_tcb *tcb, uint32_t staleness,
                   const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now);

/* ---- assoc.c --------------------------------------------------------- */

struct ns_sctp_assoc *assoc_alloc(struct ns_sctp *s, struct ns_sctp_ep *ep, uint16_t pport);
void assoc_destroy(struct ns_sctp_assoc *a); /* the final free */
/* Set up sendq/retx (ours) and tsnmap/reasm (the peer's). false: ENOMEM. */
bool assoc_setup_tx(struct ns_sctp_assoc *a, uint32_t peer_rwnd, uint64_t now);
bool assoc_setup_rx(struct ns_sctp_assoc *a);
/* End the association: CLOSED, timers off, unhashed, SEND_FAILED for data
 * never acknowledged, PARTIAL_DELIVERY_ABORTED if one was running, then the
 * event ev (COMM_LOST, CANT_STR_ASSOC, SHUTDOWN_COMPLETE). */
struct ns_sctp_event *assoc_close(struct ns_sctp_assoc *a, enum ns_sctp_event_type ev,
                                  enum ns_sctp_reason why, uint16_t cause, uint64_t now);
/* The peer ended it (its ABORT, or an ICMP that counts as one): counted,
 * then CANT_STR_ASSOC during setup, COMM_LOST after, with cause code. */
struct ns_sctp_event *assoc_peer_abort(struct ns_sctp_assoc *a, uint16_t code, uint64_t now);
/* Restart (5.2.4 A): drop what the old peer instance had sent us and will
 * never complete, keeping messages already delivered to the user. */
void assoc_reset_rx(struct ns_sctp_assoc *a);
/* Report and drop all data not yet acknowledged (close and restart). */
void assoc_fail_data(struct ns_sctp_assoc *a);
/* Send an ABORT (with cause code/value when code != 0) to the peer. */
void assoc_send_abort(struct ns_sctp_assoc *a, uint16_t code, const void *v, uint16_t vlen,
                      uint64_t now);
/* Abort for a protocol reason: ABORT with cause, then COMM_LOST. */
void assoc_abort_protocol(struct ns_sctp_assoc *a, uint16_t code, const void *v, uint16_t vlen,
                          uint64_t now);
/* Process the chunks of a packet accepted for a (after the tag checks). */
void assoc_process(struct ns_sctp_assoc *a, struct ns_sctp_reader *r, struct ns_sctp_path *pa,
                   uint64_t now);
/* Association error counter went up: true if the association died. */
bool assoc_error(struct ns_sctp_assoc *a, uint64_t now);
/* Enter ESTABLISHED (why: the rule, as for assoc_set_state): COMM_UP,
 * heartbeats, a shutdown requested meanwhile. */
void assoc_established(struct ns_sctp_assoc *a, const char *why, uint64_t now);
void assoc_stamp_ready(struct ns_sctp_assoc *a);
/* Start a packet to path pa with the peer's tag; the writer latches
 * (chunk.h): write the chunk, check once. */
bool assoc_wr_start(struct ns_sctp_assoc *a, struct ns_sctp_writer *w, struct ns_sctp_path *pa);
void assoc_wr_send(struct ns_sctp_assoc *a, struct ns_sctp_writer *w, struct ns_sctp_path *pa,
                   uint64_t now);

/* ---- assoc_handshake.c ---------------------------------------------- */

void hs_timers_init(struct ns_sctp_assoc *a);
/* Handlers named after their rule (as Linux's sm_statetable.c): INIT ACK
 * in COOKIE-WAIT (5.1 C), COOKIE ACK in COOKIE-ECHOED (5.1 E). */
void hs_5_1c_init_ack(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c,
                      struct ns_sctp_path *pa, uint64_t now);
void hs_5_1e_cookie_ack(struct ns_sctp_assoc *a, uint64_t now);
/* INIT for an existing association (5.2.1, 5.2.2). */
void hs_init_existing(struct ns_sctp_assoc *a, const struct ns_sctp_common *hdr,
                      const struct ns_sctp_chunk *c, const struct ns_sctp_addr *src,
                      const struct ns_sctp_addr *dst, uint64_t now);
/* A verified COOKIE ECHO (res OK or STALE) for an existing association
 * (5.2.4, table 2): true if the rest of the packet is to be processed. */
bool hs_cookie_existing(struct ns_sctp_assoc *a, const struct ns_sctp_common *hdr,
                        const struct ns_sctp_cookie_tcb *tcb, enum ns_sctp_cookie_res res,
                        uint32_t staleness, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst, uint64_t now);
/* Stale Cookie ERROR in COOKIE-ECHOED (5.2.6). */
void hs_5_2_6_stale_cookie(struct ns_sctp_assoc *a, uint32_t staleness_us, uint64_t now);
/* Fill the paths and tags of a from a verified cookie (new association). */
bool hs_from_cookie(struct ns_sctp_assoc *a, const struct ns_sctp_cookie_tcb *tcb,
                    const struct ns_sctp_addr *src, const struct ns_sctp_addr *dst, uint64_t now);
/* Write a pending COOKIE ECHO (and its ERROR) into w. */
bool hs_write_cookie_echo(struct ns_sctp_assoc *a, struct ns_sctp_writer *w);

/* ---- assoc_shutdown.c ------------------------------------------------ */

void sd_timers_init(struct ns_sctp_assoc *a);
/* Data was acknowledged or the user asked: move the shutdown on. */
void sd_progress(struct ns_sctp_assoc *a, uint64_t now);
/* SHUTDOWN, SHUTDOWN ACK, SHUTDOWN COMPLETE received (9.2). */
void sd_9_2_shutdown(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now);
void sd_9_2_shutdown_ack(struct ns_sctp_assoc *a, uint64_t now);
void sd_9_2_shutdown_complete(struct ns_sctp_assoc *a, uint64_t now);
/* DATA arrived in SHUTDOWN-SENT: answer with SHUTDOWN, restart T2. */
void sd_data_in_shutdown_sent(struct ns_sctp_assoc *a, uint64_t now);
uint32_t sd_cum_tsn(const struct ns_sctp_assoc *a);

/* ---- assoc_data.c ----------------------------------------------------- */

void data_timers_init(struct ns_sctp_assoc *a);
/* Build and send packets: pending control chunks, retransmissions, new
 * data as cwnd, rwnd, Max.Burst and the Nagle rule allow. */
void data_output(struct ns_sctp_assoc *a, uint64_t now);
/* One DATA chunk of the packet being processed; false if the association
 * died (No User Data abort). */
bool data_rx(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now);
/* After the last chunk of a packet that carried DATA. */
void data_rx_done(struct ns_sctp_assoc *a, uint64_t now);
void data_rx_sack(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now);
/* Apply a cumulative ack without gap blocks (SHUTDOWN). */
void data_cum_ack(struct ns_sctp_assoc *a, uint32_t cum, uint64_t now);
void data_t3_arm(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now);
void data_t3_fire(struct ns_timer *t, uint64_t now);
void data_stop_timers(struct ns_sctp_assoc *a);
/* Write a SACK now into w (returns false if it did not fit). */
bool data_write_sack(struct ns_sctp_assoc *a, struct ns_sctp_writer *w, struct ns_sctp_path *pa);

/* ---- path.c ------------------------------------------------------------ */

/* Add a path (or return the existing one); NULL if the table is full. */
struct ns_sctp_path *path_add(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer,
                              const struct ns_sctp_addr *local, bool confirmed, uint64_t now);
struct ns_sctp_path *path_find(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer);
void path_init_cc(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint32_t peer_rwnd,
                  uint64_t now);
/* Where new data goes: the primary if active, else an active confirmed
 * path, else the primary anyway. */
struct ns_sctp_path *path_data(struct ns_sctp_assoc *a);
/* An active confirmed path other than not (NULL if none). */
struct ns_sctp_path *path_alternate(struct ns_sctp_assoc *a, const struct ns_sctp_path * not );
/* Path error counter went up: may make the path inactive. */
void path_error(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now);
/* Data sent to pa was acknowledged, or a HEARTBEAT ACK came: reset. */
void path_ok(struct ns_sctp_assoc *a, struct ns_sctp_path *pa, uint64_t now);
void path_hb_start(struct ns_sctp_assoc *a, uint64_t now);
void path_stop_timers(struct ns_sctp_assoc *a);
void path_unhash_all(struct ns_sctp_assoc *a);
void path_rx_heartbeat(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c,
                       struct ns_sctp_path *pa, uint64_t now);
void path_rx_heartbeat_ack(struct ns_sctp_assoc *a, const struct ns_sctp_chunk *c, uint64_t now);

#endif
