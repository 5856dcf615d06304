/* The SCTP engine's public API (RFC 9260; events after RFC 6458 section 6).
 *
 * One struct ns_sctp per stack instance holds the endpoints, associations,
 * cookie secret and stack-wide counters. It is sans-I/O: the embedder hands
 * it received SCTP packets (common header + chunks) with their source and
 * destination transport addresses and `now`; packets leave through
 * ops.output, events through ops.event; its timers live on the ns_timers
 * the embedder passes in (run them with ns_timers_run, read the deadline
 * with ns_timers_next). Nothing here knows about IPv4, UDP or threads, so
 * the same engine runs over IPv4 (protocol 132), UDP encapsulation (RFC
 * 6951: the peer's encapsulation port is ns_sctp_addr.port) or a transport
 * the application supplies.
 *
 * Callbacks:
 *  - ops.output and ops.path_confirm are called synchronously, in the
 *    middle of processing. They may only take the packet / note the
 *    confirmation: they must not call any ns_sctp_* function.
 *  - ops.event is deferred: events are queued and delivered at the end of
 *    the outermost entry point (ns_sctp_input, a timer callback, or any API
 *    call below), once the engine's state is consistent. The event callback
 *    may call any API function, including ns_sctp_assoc_release() on the
 *    association the event is about; events queued meanwhile are delivered
 *    in the same loop. Events of an association that was released are
 *    dropped.
 *
 * Lifetime: an association handle (from ns_sctp_connect, or from the
 * COMM_UP event of a listening endpoint) stays valid until the user calls
 * ns_sctp_assoc_release(), even after the association closed (its state is
 * then NS_SCTP_CLOSED and the API returns -ENOTCONN). Releasing a live
 * association starts a graceful shutdown; the engine frees it when done.
 * Messages taken with ns_sctp_recv_take() must be freed with
 * ns_sctp_msg_free() before the association is released.
 *
 * One thread at a time may call into an instance.
 */
#ifndef NS_SCTP_SCTP_H
#define NS_SCTP_SCTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/pkt.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sctp/cc.h"
#include "sctp/cookie.h"
#include "sctp/reasm.h"
#include "sctp/types.h"

struct ns_sctp_ep;
struct ns_sctp_assoc;
struct ns_sctp_path;

#define NS_SCTP_MAX_LOCAL_ADDRS 8
/* Default SCTP packet size: a 1500-byte IPv4 MTU minus the IPv4 (20) and
 * UDP (8) headers, so the same default also fits UDP encapsulation. */
#define NS_SCTP_DEFAULT_PMTU 1472u
#define NS_SCTP_MIN_PMTU     512u
/* RFC 9260 6: the least a_rwnd an INIT or INIT ACK may advertise. */
#define NS_SCTP_MIN_RWND 1500u
/* Longest User-Initiated Abort reason kept in a COMM_LOST event. */
#define NS_SCTP_EV_INFO_MAX 64

enum ns_sctp_state {
    NS_SCTP_CLOSED = 0,
    NS_SCTP_COOKIE_WAIT,
    NS_SCTP_COOKIE_ECHOED,
    NS_SCTP_ESTABLISHED,
    NS_SCTP_SHUTDOWN_PENDING,
    NS_SCTP_SHUTDOWN_SENT,
    NS_SCTP_SHUTDOWN_RECEIVED,
    NS_SCTP_SHUTDOWN_ACK_SENT,
};
const char *ns_sctp_state_name(enum ns_sctp_state st);

enum ns_sctp_event_type {
    /* SCTP_ASSOC_CHANGE states (RFC 6458 section 6.1.1). */
    NS_SCTP_EV_COMM_UP,           /* established; streams set */
    NS_SCTP_EV_COMM_LOST,         /* ended abnormally; reason/cause set */
    NS_SCTP_EV_RESTART,           /* the peer restarted (RFC 9260 5.2.4 A); streams set */
    NS_SCTP_EV_SHUTDOWN_COMPLETE, /* graceful end */
    NS_SCTP_EV_CANT_STR_ASSOC,    /* the handshake failed; reason/cause set */
    /* SCTP_SHUTDOWN_EVENT: the peer sent SHUTDOWN, no more data will come. */
    NS_SCTP_EV_SHUTDOWN,
    /* One per message never acknowledged when the association died or
     * restarted (SCTP_SEND_FAILED_EVENT). */
    NS_SCTP_EV_SEND_FAILED,
    /* A partially delivered message will not be completed. */
    NS_SCTP_EV_PARTIAL_DELIVERY_ABORTED,
    /* Wake-ups for the socket layer. */
    NS_SCTP_EV_DATA_READY, /* the delivery queue became non-empty (ns_sctp_recv_take) */
    NS_SCTP_EV_WRITABLE,   /* send buffer space after a send got -EAGAIN */
    /* SCTP_PEER_ADDR_CHANGE: a path became (un)reachable or was confirmed. */
    NS_SCTP_EV_PEER_ADDR_CHANGE,
};
const char *ns_sctp_event_name(enum ns_sctp_event_type t);

/* Why an association ended (COMM_LOST, CANT_STR_ASSOC). */
enum ns_sctp_reason {
    NS_SCTP_R_NONE = 0,
    NS_SCTP_R_PEER_ABORT,     /* an ABORT came in; ev.cause is its first cause */
    NS_SCTP_R_USER_ABORT,     /* ns_sctp_abort() */
    NS_SCTP_R_MAX_RETRANS,    /* Association.Max.Retrans exceeded (8.1) */
    NS_SCTP_R_INIT_TIMEOUT,   /* Max.Init.Retransmits of INIT or COOKIE ECHO */
    NS_SCTP_R_SHUTDOWN_GUARD, /* T5-shutdown-guard expired */
    NS_SCTP_R_PROTOCOL,       /* we aborted a misbehaving peer (cause in ev.cause) */
    NS_SCTP_R_NOMEM,
};

/* SEND_FAILED flags */
#define NS_SCTP_SF_UNSENT 0x1 /* never transmitted */
#define NS_SCTP_SF_SENT   0x2 /* transmitted at least in part, not acknowledged */

/* PEER_ADDR_CHANGE states */
enum ns_sctp_addr_state {
    NS_SCTP_ADDR_AVAILABLE,
    NS_SCTP_ADDR_UNREACHABLE,
    NS_SCTP_ADDR_CONFIRMED,
};

struct ns_sctp_event {
    enum ns_sctp_event_type type;
    struct ns_sctp_assoc *assoc;
    uint32_t assoc_id;
    enum ns_sctp_reason reason; /* COMM_LOST, CANT_STR_ASSOC */
    uint16_t cause;             /* error cause code involved, 0 if none */
    uint16_t info_len;          /* User-Initiated Abort reason of a peer ABORT */
    uint8_t info[NS_SCTP_EV_INFO_MAX];
    uint16_t in_streams, out_streams; /* COMM_UP, RESTART */
    /* SEND_FAILED */
    uint32_t context, ppid, len;
    uint16_t sid;
    uint16_t flags; /* NS_SCTP_SF_* */
    /* PEER_ADDR_CHANGE */
    struct ns_sctp_addr addr;
    enum ns_sctp_addr_state addr_state;
};

struct ns_sctp_ops {
    /* A packet to transmit from src to dst (src.addr 0: the transport picks
     * the source). p->data is the SCTP common header, the checksum is
     * filled. The callee owns p. */
    void (*output)(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst, uint64_t now);
    void (*event)(void *ctx, const struct ns_sctp_event *ev, uint64_t now);
    /* A SACK acknowledged new data sent to dst: the path works (the
     * neighbour engine's ns_neigh_confirm hook). May be NULL. */
    void (*path_confirm)(void *ctx, const struct ns_sctp_addr *dst, uint64_t now);
    void *ctx;
};

/* Stack-wide counters. */
#define NS_SCTP_COUNTERS(X)                                                                        \
    X(rx_packets)                /* packets handed to ns_sctp_input */                             \
    X(tx_packets)                /* packets handed to ops.output */                                \
    X(rx_bad_csum)               /* dropped: CRC32c mismatch */                                    \
    X(rx_malformed)              /* dropped: common header or chunk chain invalid */               \
    X(rx_bad_bundling)           /* dropped: INIT/INIT ACK/SHUTDOWN COMPLETE not alone */          \
    X(rx_bad_vtag)               /* dropped: verification tag rules (8.5, 8.5.1) */                \
    X(rx_ootb)                   /* out-of-the-blue packets (8.4) */                               \
    X(rx_no_endpoint)            /* no endpoint on the destination port/address */                 \
    X(tx_ootb_abort)             /* ABORTs sent in reply to OOTB packets */                        \
    X(tx_ootb_shutdown_complete) /* SHUTDOWN COMPLETE (T) sent for OOTB SHUTDOWN ACK */            \
    X(rx_init)                   /* INIT chunks received */                                        \
    X(rx_init_bad)               /* INITs dropped or answered with ABORT as invalid */             \
    X(tx_init_ack)               /* INIT ACKs sent (stateless) */                                  \
    X(rx_cookie_echo)            /* COOKIE ECHO chunks received */                                 \
    X(cookie_bad)                /* cookies failing MAC, size, ports or vtag */                    \
    X(cookie_stale)              /* stale cookies answered with a Stale Cookie ERROR */            \
    X(cookie_unmatched)          /* cookies for an existing TCB silently discarded (5.2.4 C) */    \
    X(cookie_collision)          /* cookies with our tag and a new peer tag (5.2.4 B) */           \
    X(cookie_duplicate)          /* cookies matching both tags of a TCB (5.2.4 D) */               \
    X(active_opens)              /* ns_sctp_connect calls */                                       \
    X(passive_opens)             /* associations created from a COOKIE ECHO */                     \
    X(established)               /* associations that reached ESTABLISHED */                       \
    X(restarts)                  /* peer restarts (5.2.4 A) */                                     \
    X(collisions)                /* INITs answered in COOKIE-WAIT/COOKIE-ECHOED (5.2.1) */         \
    X(aborts_rx)                 /* associations ended by a received ABORT */                      \
    X(aborts_tx)                 /* ABORT chunks sent for an association */                        \
    X(comm_lost)                 /* COMM_LOST events */                                            \
    X(cant_start)                /* CANT_STR_ASSOC events */                                       \
    X(shutdowns)                 /* SHUTDOWN_COMPLETE events */                                    \
    X(events)                    /* events delivered */                                            \
    X(nomem)                     /* allocation failures */                                         \
    X(state_changes)             /* association state transitions (all associations) */

struct ns_sctp_stats {
    NS_SCTP_COUNTERS(NS_CTR_FIELD)
};

/* Per-association counters (ns_sctp_assoc_info, `nstack sctp show`). */
#define NS_SCTP_ASSOC_COUNTERS(X)                                                                  \
    X(rx_packets)         /* packets delivered to this association */                              \
    X(tx_packets)         /* packets sent */                                                       \
    X(rx_chunks)          /* chunks received (all types) */                                        \
    X(tx_chunks)          /* chunks sent (all types) */                                            \
    X(rx_data)            /* DATA chunks received */                                               \
    X(tx_data)            /* new DATA chunks sent */                                               \
    X(rx_sacks)           /* SACKs received */                                                     \
    X(tx_sacks)           /* SACKs sent */                                                         \
    X(retransmissions)    /* DATA chunks retransmitted */                                          \
    X(fast_retransmits)   /* DATA chunks marked by fast retransmit */                              \
    X(t3_timeouts)        /* T3-rtx expiries */                                                    \
    X(t1_timeouts)        /* T1-init / T1-cookie expiries */                                       \
    X(t2_timeouts)        /* T2-shutdown expiries */                                               \
    X(hb_sent)            /* HEARTBEATs sent */                                                    \
    X(hb_acked)           /* HEARTBEAT ACKs accepted */                                            \
    X(hb_timeouts)        /* HEARTBEATs left unanswered */                                         \
    X(hb_rx)              /* HEARTBEATs answered */                                                \
    X(path_failures)      /* paths that went inactive */                                           \
    X(drop_bad_vtag)      /* packets dropped by the verification tag rules */                      \
    X(drop_state)         /* chunks ignored: not valid in the current state */                     \
    X(drop_bad_chunk)     /* chunks ignored: malformed value */                                    \
    X(drop_unknown_chunk) /* unrecognized chunks skipped or stopping the packet */                 \
    X(drop_dup_tsn)       /* duplicate DATA */                                                     \
    X(drop_out_window)    /* DATA beyond the TSN map window */                                     \
    X(drop_zero_window)   /* DATA dropped: receive window closed (6.2) */                          \
    X(drop_nomem)         /* DATA refused by reassembly memory bounds */                           \
    X(drop_invalid_data)  /* DATA inconsistent with earlier fragments / SSNs */                    \
    X(drop_bad_sid)       /* DATA for a stream that does not exist */                              \
    X(drop_bad_sack)      /* SACKs ignored (stale) */                                              \
    X(drop_bad_hb_ack)    /* HEARTBEAT ACKs with unknown path or nonce */                          \
    X(tx_errors)          /* ERROR chunks sent */                                                  \
    X(rx_errors)          /* ERROR chunks received */                                              \
    X(encap_port_changes) /* a path's UDP encapsulation port followed the peer (RFC 6951 5.4) */   \
    X(state_changes)      /* state transitions (RFC 9260 section 4) */

struct ns_sctp_assoc_stats {
    NS_SCTP_ASSOC_COUNTERS(NS_CTR_FIELD)
};

struct ns_sctp_config {
    const struct ns_sctp_params *params; /* NULL = ns_sctp_params_default */
    struct ns_timers *timers;            /* required */
    struct ns_rng *rng;                  /* required: tags, TSNs, nonces, jitter */
    uint32_t default_pmtu;               /* SCTP bytes per packet; 0 = NS_SCTP_DEFAULT_PMTU */
    /* Draw the cookie secret from rng instead of the OS (tests and
     * simulations that must replay byte for byte). */
    bool cookie_secret_from_rng;
    struct ns_sctp_ops ops;
};

/* The per-stack instance. Fields are private to src/sctp. */
struct ns_sctp {
    struct ns_sctp_params p;
    struct ns_timers *timers;
    struct ns_rng *rng;
    struct ns_sctp_ops ops;
    uint32_t default_pmtu;
    struct ns_sctp_cookie_ctx cookie;

    struct ns_sctp_ep *eps;
    struct ns_sctp_assoc *assocs; /* every association not yet freed */
    uint32_t n_assocs;

    /* (local port, peer port, peer address) -> path, chained. */
    struct ns_sctp_path **path_hash;
    uint32_t path_hash_mask;
    uint32_t n_paths_hashed;
    /* assoc id -> association, chained. */
    struct ns_sctp_assoc **id_hash;
    uint32_t id_hash_mask;
    uint32_t next_id;

    /* Deferred events (ring) and associations to free, both drained when
     * the outermost entry point returns. */
    struct ns_sctp_event *evq;
    uint32_t ev_head, ev_n, ev_cap;
    uint32_t depth;
    struct ns_sctp_assoc *dead;
    bool batching; /* between ns_sctp_batch_begin and _end */

    /* Scratch for the gap blocks of a received SACK. */
    uint16_t (*gaps)[2];
    /* Buffer of the packet being processed: received DATA references it
     * instead of being copied. */
    struct ns_buf *rx_buf;

    struct ns_sctp_stats stats;
};

/* ---- Instance ------------------------------------------------------- */

/* 0, -EINVAL (no timers/rng) or -ENOMEM. */
int ns_sctp_init(struct ns_sctp *s, const struct ns_sctp_config *cfg, uint64_t now);
/* Frees everything, including associations the user did not release (no
 * events are sent and no packets leave). */
void ns_sctp_free(struct ns_sctp *s);

/* A received packet: p->data is the SCTP common header (frags allowed).
 * Takes ownership of p. src is the peer's transport address, dst ours. */
/* A batch of received packets (what one read of the device or one
 * recvmmsg returned): between begin and end, ns_sctp_input processes and
 * answers each packet at once, but the events wait for ns_sctp_batch_end,
 * so a burst of DATA wakes the application once. Output is not deferred:
 * holding the SACKs to the end of a batch was measured to cost throughput
 * (the sender then sends in bursts, one window per batch: bench/README.md).
 * Nesting is not supported; end without begin does nothing. */
void ns_sctp_batch_begin(struct ns_sctp *s);
void ns_sctp_batch_end(struct ns_sctp *s, uint64_t now);
void ns_sctp_input(struct ns_sctp *s, struct ns_pkt *p, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst, uint64_t now);

/* Replace the tunables (sysctl `sctp.*`): new associations take them; the
 * cookie secret's rotation period applies from the next rotation. */
void ns_sctp_set_params(struct ns_sctp *s, const struct ns_sctp_params *p);

/* Stack-wide counters as one group (returns the number of groups filled). */
size_t ns_sctp_counters(const struct ns_sctp *s, struct ns_ctr_group *out, size_t max);

/* ---- Endpoints ----------------------------------------------------- */

/* An endpoint on a local port (0: an unused ephemeral port is picked) with
 * a set of local addresses (n 0: any address; the INIT/INIT ACK then lists
 * none and the peer uses the packet's source). *err (may be NULL) gets
 * -EADDRINUSE, -EINVAL or -ENOMEM on failure. */
struct ns_sctp_ep *ns_sctp_ep_new(struct ns_sctp *s, uint16_t port,
                                  const struct ns_sctp_addr *addrs, unsigned n, int *err);
/* Accept associations (INITs get INIT ACKs) or not (INITs get ABORTs). */
void ns_sctp_ep_listen(struct ns_sctp_ep *ep, bool on);
uint16_t ns_sctp_ep_port(const struct ns_sctp_ep *ep);
/* Stop accepting; the endpoint goes away once its last association is
 * freed. Its associations are left alone (release them). */
void ns_sctp_ep_close(struct ns_sctp_ep *ep);
void ns_sctp_ep_set_user(struct ns_sctp_ep *ep, void *user);
void *ns_sctp_ep_user(const struct ns_sctp_ep *ep);

/* ---- Associations --------------------------------------------------- */

/* Start the four-way handshake to peer_port at peers[0] (the other
 * addresses are extra paths of the peer, confirmed by heartbeat). Data may
 * be queued at once; it goes out with the COOKIE ECHO or after COMM_UP.
 * NULL with *err = -EINVAL, -EISCONN (already associated with that peer)
 * or -ENOMEM. */
struct ns_sctp_assoc *ns_sctp_connect(struct ns_sctp_ep *ep, const struct ns_sctp_addr *peers,
                                      unsigned n_peers, uint16_t peer_port, uint64_t now, int *err);
uint32_t ns_sctp_assoc_id(const struct ns_sctp_assoc *a);
struct ns_sctp_assoc *ns_sctp_assoc_by_id(struct ns_sctp *s, uint32_t id);
enum ns_sctp_state ns_sctp_assoc_state(const struct ns_sctp_assoc *a);
struct ns_sctp_ep *ns_sctp_assoc_ep(const struct ns_sctp_assoc *a);
void ns_sctp_assoc_set_user(struct ns_sctp_assoc *a, void *user);
void *ns_sctp_assoc_user(const struct ns_sctp_assoc *a);
/* Every association of the instance (live and closed-unreleased), for
 * `nstack sctp show`: pass NULL for the first. */
struct ns_sctp_assoc *ns_sctp_assoc_next(struct ns_sctp *s, struct ns_sctp_assoc *prev);

/* send flags (NS_SCTP_SEND_UNORDERED comes from sendq.h) */
#define NS_SCTP_SEND_MORE 0x100 /* more sends follow at once: queue, do not transmit yet */

/* Queue one message (the bytes are copied once). Returns 0, -EINVAL (sid
 * outside the outbound streams, len 0), -EMSGSIZE (len above
 * max_message_bytes), -EAGAIN (send buffer full: a WRITABLE event follows
 * when space frees up), -EPIPE (shutdown requested or in progress),
 * -ENOTCONN (closed) or -ENOMEM. context comes back in SEND_FAILED. */
int ns_sctp_send(struct ns_sctp_assoc *a, uint16_t sid, uint32_t ppid, uint32_t flags,
                 const void *data, uint32_t len, uint32_t context, uint64_t now);
/* ns_sctp_send without the copy: the message is len bytes at b->data +
 * off, which must stay unchanged; the engine takes its own reference to b
 * on success (the caller keeps its own). */
int ns_sctp_send_buf(struct ns_sctp_assoc *a, uint16_t sid, uint32_t ppid, uint32_t flags,
                     struct ns_buf *b, uint32_t off, uint32_t len, uint32_t context, uint64_t now);
/* Transmit what NS_SCTP_SEND_MORE held back. */
void ns_sctp_flush(struct ns_sctp_assoc *a, uint64_t now);
/* Free send buffer bytes. */
uint32_t ns_sctp_send_space(const struct ns_sctp_assoc *a);

/* Splice every delivered message (complete messages, and partial-delivery
 * pieces without NS_SCTP_RMSG_EOR) onto dst in O(1). Each carries its
 * rcvinfo: sid, ssn, ppid, tsn, flags, assoc_id. */
void ns_sctp_recv_take(struct ns_sctp_assoc *a, struct ns_sctp_rmsgq *dst);
/* The application is done with a taken message: the receive window
 * reopens (a window-update SACK goes out when worthwhile). */
void ns_sctp_msg_free(struct ns_sctp_assoc *a, struct ns_sctp_rmsg *m, uint64_t now);

/* Graceful shutdown (9.2): queued data is still delivered. 0, -ENOTCONN. */
int ns_sctp_shutdown(struct ns_sctp_assoc *a, uint64_t now);
/* Abortive close with a User-Initiated Abort cause carrying reason (may be
 * NULL/0). Queued and unacknowledged data is reported in SEND_FAILED. */
int ns_sctp_abort(struct ns_sctp_assoc *a, const void *reason, uint16_t len, uint64_t now);
/* The user is done with the handle (see the lifetime rules above). */
void ns_sctp_assoc_release(struct ns_sctp_assoc *a, uint64_t now);

/* Path MTU (SCTP bytes per packet, >= NS_SCTP_MIN_PMTU) of the path to
 * peer, e.g. from an ICMP fragmentation-needed. 0, -ENOENT, -EINVAL. */
int ns_sctp_set_pmtu(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer, uint32_t pmtu);
/* Choose the primary path. 0, -ENOENT. */
int ns_sctp_set_primary(struct ns_sctp_assoc *a, const struct ns_sctp_addr *peer);

/* ---- ICMP (RFC 9260 Appendix C, RFC 6951 5.6) ------------------------ */

/* What an ICMP error (or a host socket's IP_RECVERR report) tells about a
 * packet we sent. The transport maps ICMP types to these: protocol
 * unreachable (ICMP8), and for UDP encapsulation also a port unreachable
 * about the peer's encapsulation port (RFC 6951 5.6); fragmentation
 * needed (RFC 1191). Everything else is the transport's to ignore. */
enum ns_sctp_icmp_kind {
    NS_SCTP_ICMP_PROT_UNREACH,
    NS_SCTP_ICMP_FRAG_NEEDED,
};

/* What ns_sctp_icmp_error did, for the caller's counters. */
enum ns_sctp_icmp_verdict {
    NS_SCTP_ICMP_NO_ASSOC,     /* no association on those ports with that peer */
    NS_SCTP_ICMP_BAD_TAG,      /* one exists, but the quote is not ours (ICMP5/ICMP6) */
    NS_SCTP_ICMP_WRONG_PORT,   /* verified, but the path does not use that encap port */
    NS_SCTP_ICMP_ABORTED,      /* protocol unreachable: ended as by the peer's ABORT */
    NS_SCTP_ICMP_PMTU_LOWERED, /* fragmentation needed: the path MTU went down */
    NS_SCTP_ICMP_IGNORED,      /* verified, nothing to change (MTU not lower, too short) */
};

/* An ICMP error quoting an SCTP packet we sent to peer (peer.port: the
 * UDP encapsulation port the datagram went to, 0 straight over IP).
 * sctp/len: the quoted SCTP packet from its common header on (len >= 8;
 * 20 to identify a quoted INIT, whose tag is 0). pmtu (FRAG_NEEDED): the
 * SCTP bytes the next hop can carry, the transport's headers already
 * taken off (0: unknown or not even that). The quoted tag must be the one
 * we send to that peer, or a zero tag must quote the INIT of an
 * association still in COOKIE-WAIT with its initiate tag (Appendix C,
 * ICMP5/ICMP6), and the path to peer must use peer.port. Then protocol
 * unreachable ends the association in any state as the peer's ABORT would
 * (COMM_LOST or CANT_STR_ASSOC, reason NS_SCTP_R_PEER_ABORT), and
 * fragmentation needed lowers the path MTU (never raises it), to at least
 * NS_SCTP_MIN_PMTU. */
enum ns_sctp_icmp_verdict ns_sctp_icmp_error(struct ns_sctp *s, const struct ns_sctp_addr *peer,
                                             const uint8_t *sctp, uint32_t len,
                                             enum ns_sctp_icmp_kind kind, uint32_t pmtu,
                                             uint64_t now);

struct ns_sctp_path_info {
    struct ns_sctp_addr addr;  /* the peer's */
    struct ns_sctp_addr local; /* ours as last seen on this path (addr 0 = any) */
    bool active, confirmed, primary;
    uint32_t pmtu, cwnd, ssthresh, flight, errors;
    uint64_t srtt_us, rttvar_us, rto_us;
};

struct ns_sctp_assoc_info {
    uint32_t id;
    enum ns_sctp_state state;
    uint16_t local_port, peer_port;
    uint32_t local_vtag, peer_vtag;
    uint16_t in_streams, out_streams;
    uint32_t rwnd;      /* our current receive window */
    uint32_t peer_rwnd; /* the peer's, as tracked by 6.2.1 */
    uint32_t flight;    /* payload bytes in flight */
    uint32_t outstanding_chunks;
    uint32_t cwnd, ssthresh; /* of the primary path */
    uint64_t srtt_us, rto_us;
    uint32_t local_initial_tsn, peer_initial_tsn;
    uint32_t next_tsn;     /* TSN of our next new DATA chunk */
    uint32_t cum_ack;      /* the peer's cumulative ack of our data */
    uint32_t peer_cum_tsn; /* our cumulative TSN of the peer's data */
    uint32_t sndbuf_used, queued_msgs, rcv_unread;
    uint32_t errors; /* association error counter (8.1) */
    uint8_t n_paths, primary;
    struct ns_sctp_path_info paths[NS_SCTP_MAX_PATHS];
    struct ns_sctp_assoc_stats stats;
};

int ns_sctp_assoc_info(const struct ns_sctp_assoc *a, struct ns_sctp_assoc_info *out);
/* The association's counter groups (its own, then the data path modules':
 * retx, sendq, tsnmap, reasm). Returns the number filled. */
size_t ns_sctp_assoc_counters(const struct ns_sctp_assoc *a, struct ns_ctr_group *out, size_t max);

#endif
