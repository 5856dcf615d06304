/* nstack SCTP sockets: a thread-safe socket API over a stack runtime (the
 * calls and structures follow RFC 6458 with an ns_ prefix).
 *
 * A runtime (struct ns_rt) runs one SCTP engine on its own thread, the
 * stack thread; application threads call the functions below concurrently.
 * A socket is a small integer descriptor inside its runtime, so a closed or
 * unknown descriptor gives EBADF instead of touching freed memory.
 *
 * Errors: every call returns -1 (or NULL) with errno set, as POSIX sockets
 * do. Nothing here crashes on misuse: closed sockets (EBADF), the wrong
 * style (EOPNOTSUPP), bad lengths (EINVAL, EMSGSIZE), NULL buffers (EFAULT
 * or EINVAL).
 *
 * Readiness: ns_socket_fd() returns an eventfd that is readable while the
 * socket is readable (data, a notification, an error or end of file, or a
 * pending accept); put it in poll/epoll with POLLIN and never read it.
 * The writable side has no fd: ns_poll() returns NS_POLLOUT when a send
 * would not block (sends only block on the socket's own send buffer; the
 * stack thread hands messages to the engine as its window allows).
 */
#ifndef NSTACK_SOCKET_H
#define NSTACK_SOCKET_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "nstack/pkt.h"
#include "nstack/stack.h"
#include "nstack/types.h"

struct ns_rt;
struct ns_sctp_params;

/* ---- Runtime ----------------------------------------------------------- */

/* A packet leaving the engine (called on the stack thread; the callee owns
 * p; p->data is the SCTP common header). src.addr may be 0: the transport
 * picks the source. */
typedef void (*ns_rt_output_fn)(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                                const struct ns_sctp_addr *dst);
/* An extra fd (a device) became ready; runs on the stack thread. */
typedef void (*ns_rt_fd_fn)(struct ns_rt *rt, void *ctx, int fd, uint32_t events);

struct ns_rt_config {
    const struct ns_sctp_params *params; /* NULL = defaults */
    uint64_t seed;                       /* 0 = from the OS */
    ns_rt_output_fn output;              /* required: the transport */
    void *output_ctx;
    /* Ablation: a mutex per receive queue taken for every message enqueued
     * and dequeued, as Linux did before 2016 (see docs/sockets.md). */
    bool rcvq_lock;
};

/* Create a runtime and start its thread. NULL with errno set. */
NS_API struct ns_rt *ns_rt_new(const struct ns_rt_config *cfg);
/* A runtime over a stack instance (stack/stack.h): the thread runs the
 * stack's timers (ns_stack_poll) and its SCTP engine s->sctp, and takes
 * s->hooks.sctp_event. Devices: register their fds with ns_rt_add_fd and
 * feed frames from the callbacks (ns_stack_input on the stack thread), or
 * from other threads with ns_rt_input_frame. The embedder must not touch s
 * any more except through ns_rt_call; it frees s after ns_rt_free. */
NS_API struct ns_rt *ns_rt_new_stack(struct ns_stack *s, bool rcvq_lock);
NS_API struct ns_stack *ns_rt_stack(struct ns_rt *rt);
/* An Ethernet frame for the stack's interface ifindex (thread-safe; takes
 * p). Dropped without a stack. */
NS_API void ns_rt_input_frame(struct ns_rt *rt, uint32_t ifindex, struct ns_pkt *p);
/* Queue fn(rt, arg) for the stack thread without waiting. */
NS_API void ns_rt_post(struct ns_rt *rt, void (*fn)(struct ns_rt *rt, void *arg), void *arg);
/* Stop the thread and free everything, including open sockets (their
 * associations are freed without a graceful shutdown; over a stack they
 * are left to ns_stack_free). Application threads must be done with it. */
NS_API void ns_rt_free(struct ns_rt *rt);
/* A received SCTP packet for the engine (thread-safe; takes p). */
NS_API void ns_rt_input(struct ns_rt *rt, struct ns_pkt *p, const struct ns_sctp_addr *src,
                        const struct ns_sctp_addr *dst);
/* Watch fd (EPOLLIN etc. in events) on the stack thread. 0 or -1/errno. */
NS_API int ns_rt_add_fd(struct ns_rt *rt, int fd, uint32_t events, ns_rt_fd_fn fn, void *ctx);
NS_API int ns_rt_del_fd(struct ns_rt *rt, int fd);
/* Change the events watched on a registered fd. 0 or -1/errno. */
NS_API int ns_rt_mod_fd(struct ns_rt *rt, int fd, uint32_t events);
/* Embedder hook: fn runs on the stack thread at the end of every loop turn
 * (after fd callbacks, requests and the stack's timers), so it can send
 * what they produced (drain a device queue); it returns its own next
 * deadline in CLOCK_MONOTONIC microseconds (UINT64_MAX: none), which the
 * runtime folds into its timer. NULL removes it. */
typedef uint64_t (*ns_rt_idle_fn)(struct ns_rt *rt, void *ctx, uint64_t now);
NS_API void ns_rt_set_idle(struct ns_rt *rt, ns_rt_idle_fn fn, void *ctx);
/* Run fn(rt, arg) on the stack thread and wait for it (inline when already
 * on it). Lets an embedder touch the engine safely. */
NS_API void ns_rt_call(struct ns_rt *rt, void (*fn)(struct ns_rt *rt, void *arg), void *arg);
/* The engine (use only on the stack thread, e.g. inside ns_rt_call). */
NS_API struct ns_sctp *ns_rt_sctp(struct ns_rt *rt);
/* The ablation knob can be flipped while no socket is open. 0 or -1/EBUSY. */
NS_API int ns_rt_set_rcvq_lock(struct ns_rt *rt, bool on);

/* ---- Sockets ----------------------------------------------------------- */

enum ns_sock_style {
    NS_SOCK_STREAM = 1,    /* one-to-one */
    NS_SOCK_SEQPACKET = 2, /* one-to-many */
};

/* Flags for ns_recvmsg/ns_sendmsg (their own values, not the kernel's). */
#define NS_MSG_PEEK         0x01
#define NS_MSG_DONTWAIT     0x02
#define NS_MSG_EOR          0x04   /* out: the piece ends a message */
#define NS_MSG_NOTIFICATION 0x8000 /* out: the data is a notification */

NS_API int ns_socket(struct ns_rt *rt, int style);
/* addr: a struct sockaddr_in (INADDR_ANY allowed; port 0: ephemeral). */
NS_API int ns_bind(struct ns_rt *rt, int sd, const struct sockaddr *addr, socklen_t len);
/* STREAM: accept up to backlog pending associations; SEQPACKET: accept
 * associations on this socket (backlog > 0) or stop (backlog 0). */
NS_API int ns_listen(struct ns_rt *rt, int sd, int backlog);
/* STREAM only. Blocks unless the socket is non-blocking (EAGAIN). */
NS_API int ns_accept(struct ns_rt *rt, int sd, struct sockaddr *addr, socklen_t *len);
/* Blocking: waits for the handshake (0, or ECONNREFUSED/ETIMEDOUT/
 * ECONNRESET). Non-blocking: EINPROGRESS, readiness via ns_poll. */
NS_API int ns_connect(struct ns_rt *rt, int sd, const struct sockaddr *addr, socklen_t len);
/* Graceful shutdown of every association; the descriptor is gone. With
 * linger on and a 0 timeout (NS_SO_LINGER) the associations are aborted. */
NS_API int ns_close(struct ns_rt *rt, int sd);
/* SHUT_WR / SHUT_RDWR start the SCTP shutdown (STREAM); SHUT_RD only stops
 * reads. */
NS_API int ns_shutdown(struct ns_rt *rt, int sd, int how);
/* SEQPACKET: abort one association. */
NS_API int ns_abort(struct ns_rt *rt, int sd, uint32_t assoc_id);
NS_API int ns_set_nonblock(struct ns_rt *rt, int sd, bool on);
/* Readable eventfd (see above), valid until ns_close. */
NS_API int ns_socket_fd(struct ns_rt *rt, int sd);

#define NS_POLLIN  0x1
#define NS_POLLOUT 0x4
#define NS_POLLERR 0x8
#define NS_POLLHUP 0x10
/* Current readiness mask, never blocks; -1/EBADF. */
NS_API int ns_poll(struct ns_rt *rt, int sd);

/* RFC 6458 5.3.4 SCTP_SNDINFO */
#define NS_SCTP_UNORDERED 0x0400
#define NS_SCTP_EOF       0x0100 /* SEQPACKET: graceful shutdown of the association after it */
#define NS_SCTP_ABORT     0x0200 /* SEQPACKET: abort the association */
struct ns_sctp_sndinfo {
    uint16_t snd_sid;
    uint16_t snd_flags;
    uint32_t snd_ppid;
    uint32_t snd_context;
    uint32_t snd_assoc_id;
};
/* RFC 6458 5.3.5 SCTP_RCVINFO */
struct ns_sctp_rcvinfo {
    uint16_t rcv_sid;
    uint16_t rcv_ssn;
    uint16_t rcv_flags; /* NS_SCTP_UNORDERED */
    uint32_t rcv_ppid;
    uint32_t rcv_tsn;
    uint32_t rcv_cumtsn;
    uint32_t rcv_context;
    uint32_t rcv_assoc_id;
};

#define NS_SCTP_SENDV_NOINFO  0
#define NS_SCTP_SENDV_SNDINFO 1
#define NS_SCTP_RECVV_NOINFO  0
#define NS_SCTP_RECVV_RCVINFO 1
/* cmsg level/types for ns_sendmsg/ns_recvmsg */
#define NS_IPPROTO_SCTP 132
#define NS_SCTP_SNDINFO 2
#define NS_SCTP_RCVINFO 3

/* Send one message (the bytes are copied). STREAM: addrs NULL; SEQPACKET:
 * info's snd_assoc_id, or addrs (one sockaddr_in) naming the peer, which
 * sets up an association if there is none. Returns len or -1: EAGAIN
 * (send buffer full, non-blocking), EPIPE (shut down), ENOTCONN,
 * EMSGSIZE (above the message limit or the send buffer), EINVAL (stream,
 * flags, association), ECONNRESET (association lost). */
NS_API ssize_t ns_sctp_sendv(struct ns_rt *rt, int sd, const struct iovec *iov, int iovcnt,
                             const struct sockaddr *addrs, int addrcnt, const void *info,
                             socklen_t infolen, unsigned infotype, int flags);
/* Receive one message, or the next piece of one that does not fit (then
 * without NS_MSG_EOR in *msg_flags). info gets an ns_sctp_rcvinfo when
 * *infolen allows (*infotype NS_SCTP_RECVV_RCVINFO). from (may be NULL)
 * gets the peer's primary address. Returns the byte count, 0 at end of
 * file (STREAM, peer shut down and nothing left), or -1: EAGAIN,
 * ENOTCONN, ECONNRESET, EBADF, EINVAL. */
NS_API ssize_t ns_sctp_recvv(struct ns_rt *rt, int sd, const struct iovec *iov, int iovcnt,
                             struct sockaddr *from, socklen_t *fromlen, void *info,
                             socklen_t *infolen, unsigned *infotype, int *msg_flags, int flags);
/* msghdr versions: msg_control carries an NS_SCTP_SNDINFO / NS_SCTP_RCVINFO
 * cmsg at level NS_IPPROTO_SCTP; recvmsg sets msg->msg_flags. */
NS_API ssize_t ns_sendmsg(struct ns_rt *rt, int sd, const struct msghdr *msg, int flags);
NS_API ssize_t ns_recvmsg(struct ns_rt *rt, int sd, struct msghdr *msg, int flags);

/* ---- Notifications (RFC 6458 6.1), read with NS_MSG_NOTIFICATION --------- */

enum ns_sn_type {
    NS_SCTP_ASSOC_CHANGE = 0x8001,
    NS_SCTP_SHUTDOWN_EVENT = 0x8005,
    NS_SCTP_PARTIAL_DELIVERY_EVENT = 0x8006,
    NS_SCTP_SEND_FAILED_EVENT = 0x800e,
};
/* sac_state */
enum {
    NS_SCTP_COMM_UP = 0,
    NS_SCTP_COMM_LOST = 1,
    NS_SCTP_RESTART = 2,
    NS_SCTP_SHUTDOWN_COMP = 3,
    NS_SCTP_CANT_STR_ASSOC = 4,
};
struct ns_sctp_assoc_change {
    uint16_t sac_type, sac_flags;
    uint32_t sac_length;
    uint16_t sac_state, sac_error;
    uint16_t sac_outbound_streams, sac_inbound_streams;
    uint32_t sac_assoc_id;
};
struct ns_sctp_shutdown_event {
    uint16_t sse_type, sse_flags;
    uint32_t sse_length;
    uint32_t sse_assoc_id;
};
#define NS_SCTP_PARTIAL_DELIVERY_ABORTED 1
struct ns_sctp_pdapi_event {
    uint16_t pdapi_type, pdapi_flags;
    uint32_t pdapi_length;
    uint32_t pdapi_indication;
    uint32_t pdapi_stream, pdapi_seq;
    uint32_t pdapi_assoc_id;
};
#define NS_SCTP_DATA_UNSENT 0x1
#define NS_SCTP_DATA_SENT   0x2
struct ns_sctp_send_failed_event {
    uint16_t ssf_type, ssf_flags;
    uint32_t ssf_length;
    uint32_t ssf_error;
    struct ns_sctp_sndinfo ssfe_info;
    uint32_t ssf_assoc_id;
    /* the message's bytes are not kept */
};

/* ---- Socket options (level NS_IPPROTO_SCTP, or NS_SOL_SOCKET) ----------- */

#define NS_SOL_SOCKET 1
enum {
    NS_SO_RCVBUF = 8,  /* int bytes: bounds the socket backlog (with sndbuf) */
    NS_SO_SNDBUF = 7,  /* int bytes: messages queued in the socket */
    NS_SO_LINGER = 13, /* struct linger: {1, 0} makes ns_close abort */
};
enum {
    NS_SCTP_RTOINFO = 0,
    NS_SCTP_INITMSG = 2,
    NS_SCTP_NODELAY = 3,
    NS_SCTP_EVENTS_OPT = 11, /* struct ns_sctp_event_subscribe */
    NS_SCTP_PARTIAL_DELIVERY_POINT = 19,
    NS_SCTP_STATUS = 14, /* get only: struct ns_sctp_status */
};
struct ns_sctp_rtoinfo {
    uint32_t srto_assoc_id;
    uint32_t srto_initial, srto_max, srto_min; /* ms */
};
struct ns_sctp_initmsg {
    uint16_t sinit_num_ostreams, sinit_max_instreams;
    uint16_t sinit_max_attempts, sinit_max_init_timeo;
};
struct ns_sctp_event_subscribe {
    uint8_t sctp_data_io_event; /* accepted, rcvinfo is always available */
    uint8_t sctp_association_event;
    uint8_t sctp_shutdown_event;
    uint8_t sctp_partial_delivery_event;
    uint8_t sctp_send_failure_event;
};
struct ns_sctp_status {
    uint32_t sstat_assoc_id;
    int32_t sstat_state; /* enum ns_sctp_state */
    uint32_t sstat_rwnd;
    uint16_t sstat_unackdata, sstat_penddata;
    uint16_t sstat_instrms, sstat_outstrms;
};

NS_API int ns_setsockopt(struct ns_rt *rt, int sd, int level, int name, const void *val,
                         socklen_t len);
NS_API int ns_getsockopt(struct ns_rt *rt, int sd, int level, int name, void *val, socklen_t *len);

/* Counters of the socket layer (all sockets of a runtime). */
struct ns_sock_rt_stats {
    uint64_t delivered_direct;  /* deliveries spliced straight onto a receive queue */
    uint64_t delivered_backlog; /* deliveries put on a backlog (socket owned) */
    uint64_t backlog_full;      /* deliveries left in the engine: backlog bound reached */
    uint64_t msgs_freed;        /* consumed messages handed back to the engine */
    uint64_t requests;          /* requests run on the stack thread */
    uint64_t send_eagain;       /* engine send buffer full, message kept queued */
    uint64_t notif_dropped;     /* notifications not queued: allocation failed */
};
/* A snapshot (taken on the stack thread). */
NS_API void ns_rt_stats(struct ns_rt *rt, struct ns_sock_rt_stats *out);

#endif
