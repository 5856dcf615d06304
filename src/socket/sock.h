/* Internals of the socket layer (include/nstack/socket.h is the API): the
 * runtime, sockets and the hand-offs between application threads and the
 * stack thread. See the locking model at the top of sock_internal.h, which
 * also lists the files of the socket layer. */
#ifndef NS_SOCKET_SOCK_H
#define NS_SOCKET_SOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/rng.h"
#include "core/timer.h"
#include "nstack/socket.h"
#include "sctp/sctp.h"

/* rmsg flag the engine never sets: a notification built by this layer
 * (struct ns_sock_notif), freed here rather than by the engine. */
#define NS_SOCK_RMSG_NOTIF 0x8000

struct ns_sock_notif {
    struct ns_sctp_rmsg m; /* m.len = bytes used in data */
    uint8_t data[sizeof(struct ns_sctp_send_failed_event)];
};

/* One outgoing message queued by an application thread. */
struct ns_sock_tx {
    struct ns_sock_tx *next;
    uint32_t assoc_id;        /* SEQPACKET: target; STREAM: 0 */
    struct ns_sctp_addr peer; /* SEQPACKET implicit setup: peer.addr != 0 */
    uint16_t peer_port;
    uint16_t sid, flags;
    uint32_t ppid, context, len;
    uint8_t data[];
};

enum ns_sock_state {
    NS_SS_IDLE = 0,
    NS_SS_LISTEN,
    NS_SS_CONNECTING,
    NS_SS_CONNECTED,
    NS_SS_CLOSED, /* association over (error or shutdown complete) */
};

struct ns_sock;

/* An association as the socket layer sees it (ns_sctp_assoc_user). Written
 * by the stack thread under the socket's slock; read by application
 * threads under slock. */
struct ns_sock_assoc {
    struct ns_sock_assoc *next;
    struct ns_sock *sock;
    struct ns_sctp_assoc *a; /* stack thread only */
    uint32_t id;
    uint16_t out_streams, in_streams;
    struct ns_sctp_addr peer;
    uint16_t peer_port;
    bool up, dead, released;
    bool pending;    /* delivered messages left in the engine (backlog full) */
    bool need_flush; /* stack thread: sends held with NS_SCTP_SEND_MORE */
    bool close_done; /* stack thread: close_assocs saw it */
    uint32_t taken;  /* stack thread: messages taken, not yet freed */
};

struct ns_sock {
    struct ns_rt *rt;
    int sd;
    int style;
    atomic_int refs;
    struct ns_sock *all_next, *all_prev;

    /* --- slock: short lock, and the ownership of the receive side. --- */
    pthread_mutex_t slock;
    pthread_cond_t wq; /* ownership released, data or state changed */
    bool owned;
    uint64_t gen; /* bumped on every delivery or state change (waiters) */
    /* Owned by the thread holding `owned`, or by the stack thread holding
     * slock on an unowned socket: no lock of its own. */
    struct ns_sctp_rmsgq rcvq;
    uint32_t rd_off; /* bytes of rcvq.head already read (the lobby) */
    /* Under slock. */
    struct ns_sctp_rmsgq backlog;
    struct ns_sctp_rmsgq done; /* consumed, to hand back (under ownership) */
    uint32_t npending;         /* associations with pending deliveries */
    bool pull_posted;
    bool fd_set; /* the eventfd counter is non-zero */
    int efd;
    /* Ablation lock, taken per message when rt->rcvq_lock. */
    pthread_mutex_t qlock;

    /* State, under slock. */
    enum ns_sock_state state;
    int err;       /* pending error for the next call (ECONNRESET...) */
    bool rd_shut;  /* SHUT_RD */
    bool wr_shut;  /* shutdown/close started */
    bool peer_eof; /* the peer shut down */
    bool closed;   /* ns_close ran */
    bool nonblock;
    struct ns_sock_assoc *assocs; /* STREAM: at most one */
    struct ns_sock *acceptq, *acceptq_tail, *accept_next;
    int n_accept, backlog_max;

    /* Options, under slock. */
    uint32_t rcvbuf, sndbuf;
    bool linger_abort;
    struct ns_sctp_event_subscribe ev;
    uint32_t pd_point;
    struct ns_sctp_initmsg initmsg;
    struct ns_sctp_rtoinfo rto;
    bool nodelay, nodelay_set;

    /* Binding (stack thread, set under slock). */
    struct ns_sctp_ep *ep;
    uint16_t port;
    uint32_t bind_addr;
    bool bound;

    /* --- send side: sndlock, never held with slock. --- */
    pthread_mutex_t sndlock;
    pthread_cond_t sndwq;
    struct ns_sock_tx *txq, *txq_tail;
    uint32_t tx_bytes;
    bool tx_posted;
    bool tx_blocked;    /* stack thread: the engine said EAGAIN */
    bool tx_dead;       /* no more sends: closed, shut down or reset */
    int tx_err;         /* errno for senders when tx_dead */
    bool shut_pending;  /* stack thread: SCTP shutdown once txq is empty */
    bool close_pending; /* stack thread: release associations once txq is empty */
};

struct ns_rt_req;
struct ns_rt_fdw;

struct ns_stack;

struct ns_rt {
    /* The engine and the timers the thread runs: its own (ns_rt_new) or
     * those of a stack instance (ns_rt_new_stack). */
    struct ns_sctp *sctp;
    struct ns_timers *tm;
    struct ns_stack *stack;
    struct ns_sctp own_sctp;
    struct ns_timers timers;
    struct ns_rng rng;
    ns_rt_output_fn output;
    void *output_ctx;
    atomic_bool rcvq_lock;

    pthread_t thread;
    pthread_t thread_id_copy;
    int epfd, evfd, tfd;
    atomic_bool stop;

    /* Requests from application threads (not the receive path). */
    pthread_mutex_t mu;
    pthread_cond_t done_cv;
    struct ns_rt_req *req, *req_tail;
    struct ns_sctp_rmsgq freeq; /* consumed messages, to ns_sctp_msg_free */
    bool kicked;

    struct ns_rt_fdw *fdws;
    ns_rt_idle_fn idle_fn; /* embedder hook, end of every loop turn */
    void *idle_ctx;
    uint64_t idle_next; /* its last deadline */

    /* Descriptor table. */
    pthread_rwlock_t tlock;
    struct ns_sock **tab;
    int tab_n;
    int n_open;

    struct ns_sctp_params params; /* defaults of new sockets (read-only) */
    struct ns_sock *all;          /* every socket not destroyed (under tlock) */

    struct ns_sock_rt_stats stats; /* stack thread */
};

/* runtime.c */
uint64_t ns_rt_now(void);
bool ns_rt_on_thread(const struct ns_rt *rt);
/* Consumed messages back to the stack thread (splices q). */
void ns_rt_give_back(struct ns_rt *rt, struct ns_sctp_rmsgq *q);

/* Tests: own (lock_sock) or release the socket from the calling thread, as
 * a reader stuck in recvmsg would. 0 or -1/EBADF. (sock_recv.c) */
int ns_sock_debug_own(struct ns_rt *rt, int sd, bool own);

/* Stack thread side: sock_deliver.c (events, consumed messages) and
 * sock_table.c (teardown). */
void ns_sock_on_event(struct ns_rt *rt, const struct ns_sctp_event *ev, uint64_t now);
void ns_sock_free_msgs(struct ns_rt *rt, struct ns_sctp_rmsgq *q, uint64_t now);
void ns_sock_rt_teardown(struct ns_rt *rt);

#endif
