/* The descriptor table and the sockets' lifetime: a new socket with the
 * runtime's defaults, its descriptor, the free when the last reference goes
 * (sock_put, sock_internal.h), and the runtime's teardown, which frees every
 * socket whatever its references. RFC 6458 3.1.1 and 4.1.1 (socket(): here
 * the descriptor is a small integer inside its runtime; a closed or unknown
 * one gives EBADF).
 * Locking: the model at the top of sock_internal.h. tlock guards the table and
 * the list of all sockets. */
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "socket/sock_internal.h"

/* ---- References and the descriptor table --------------------------------- */

static void sock_free_raw(struct ns_sock *s)
{
    /* Engine messages were handed back by close; notifications are ours. */
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(&s->rcvq)))
        free(m);
    while ((m = ns_sctp_rmsgq_pop(&s->backlog)))
        free(m);
    while (s->txq) {
        struct ns_sock_tx *t = s->txq;
        s->txq = t->next;
        tx_free(t);
    }
    close(s->efd);
    pthread_mutex_destroy(&s->slock);
    pthread_mutex_destroy(&s->qlock);
    pthread_mutex_destroy(&s->sndlock);
    pthread_cond_destroy(&s->wq);
    pthread_cond_destroy(&s->sndwq);
    free(s);
}

void ns_sock_destroy(struct ns_sock *s)
{
    struct ns_rt *rt = s->rt;
    pthread_rwlock_wrlock(&rt->tlock);
    if (s->all_prev)
        s->all_prev->all_next = s->all_next;
    else
        rt->all = s->all_next;
    if (s->all_next)
        s->all_next->all_prev = s->all_prev;
    pthread_rwlock_unlock(&rt->tlock);
    sock_free_raw(s);
}

struct ns_sock *ns_sock_alloc(struct ns_rt *rt, int style)
{
    struct ns_sock *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->efd < 0) {
        free(s);
        return NULL;
    }
    s->rt = rt;
    s->sd = -1;
    s->style = style;
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->slock, NULL);
    pthread_mutex_init(&s->qlock, NULL);
    pthread_mutex_init(&s->sndlock, NULL);
    pthread_cond_init(&s->wq, NULL);
    pthread_cond_init(&s->sndwq, NULL);
    ns_sctp_rmsgq_init(&s->rcvq);
    ns_sctp_rmsgq_init(&s->backlog);
    ns_sctp_rmsgq_init(&s->done);
    s->rcvbuf = rt->params.rcvbuf_bytes;
    s->sndbuf = rt->params.sndbuf_bytes;
    s->pd_point = rt->params.pd_point_bytes;
    s->initmsg.sinit_num_ostreams = (uint16_t)rt->params.out_streams;
    s->initmsg.sinit_max_instreams = (uint16_t)rt->params.max_in_streams;
    s->initmsg.sinit_max_attempts = (uint16_t)rt->params.max_init_retransmits;
    s->rto.srto_initial = rt->params.rto_initial_ms;
    s->rto.srto_max = rt->params.rto_max_ms;
    s->rto.srto_min = rt->params.rto_min_ms;
    s->nodelay = rt->params.nodelay != 0;
    pthread_rwlock_wrlock(&rt->tlock);
    s->all_next = rt->all;
    if (rt->all)
        rt->all->all_prev = s;
    rt->all = s;
    pthread_rwlock_unlock(&rt->tlock);
    return s;
}

/* Give s a descriptor (takes the caller's reference for the table). */
int ns_sock_install(struct ns_rt *rt, struct ns_sock *s)
{
    pthread_rwlock_wrlock(&rt->tlock);
    int sd = -1;
    for (int i = 0; i < rt->tab_n; i++) {
        if (!rt->tab[i]) {
            sd = i;
            break;
        }
    }
    if (sd < 0) {
        int n = rt->tab_n ? 2 * rt->tab_n : 16;
        struct ns_sock **t = realloc(rt->tab, (size_t)n * sizeof(*t));
        if (!t) {
            pthread_rwlock_unlock(&rt->tlock);
            return -1;
        }
        memset(t + rt->tab_n, 0, (size_t)(n - rt->tab_n) * sizeof(*t));
        sd = rt->tab_n;
        rt->tab = t;
        rt->tab_n = n;
    }
    rt->tab[sd] = s;
    s->sd = sd;
    rt->n_open++;
    pthread_rwlock_unlock(&rt->tlock);
    return sd;
}

/* ---- Teardown ------------------------------------------------------------- */

static void purge_engine_msgs(struct ns_rt *rt, struct ns_sctp_rmsgq *q, uint64_t now)
{
    struct ns_sctp_rmsg *m;
    while ((m = ns_sctp_rmsgq_pop(q))) {
        if (m->flags & NS_SOCK_RMSG_NOTIF) {
            free(m);
            continue;
        }
        struct ns_sctp_assoc *a = ns_sctp_assoc_by_id(rt->sctp, m->assoc_id);
        if (a)
            ns_sctp_msg_free(a, m, now);
    }
}

void ns_sock_rt_teardown(struct ns_rt *rt)
{
    uint64_t now = ns_rt_now();
    pthread_mutex_lock(&rt->mu);
    struct ns_sctp_rmsgq fq;
    ns_sctp_rmsgq_init(&fq);
    ns_sctp_rmsgq_splice(&fq, &rt->freeq);
    pthread_mutex_unlock(&rt->mu);
    purge_engine_msgs(rt, &fq, now);
    /* The application has stopped using the runtime: free every socket
     * whatever its references, after giving the engine its messages. */
    pthread_rwlock_wrlock(&rt->tlock);
    struct ns_sock *all = rt->all;
    rt->all = NULL;
    for (int i = 0; i < rt->tab_n; i++)
        rt->tab[i] = NULL;
    rt->n_open = 0;
    pthread_rwlock_unlock(&rt->tlock);
    for (struct ns_sock *s = all; s; s = s->all_next) {
        purge_engine_msgs(rt, &s->rcvq, now);
        purge_engine_msgs(rt, &s->backlog, now);
        purge_engine_msgs(rt, &s->done, now);
    }
    while (all) {
        struct ns_sock *s = all;
        all = s->all_next;
        while (s->assocs) {
            struct ns_sock_assoc *w = s->assocs;
            s->assocs = w->next;
            ns_sctp_assoc_set_user(w->a, NULL);
            /* A stack outlives its runtime: end the association there. */
            if (rt->stack)
                ns_sctp_assoc_release(w->a, now);
            free(w);
        }
        if (s->ep) {
            ns_sctp_ep_set_user(s->ep, NULL);
            if (rt->stack)
                ns_sctp_ep_close(s->ep);
        }
        sock_free_raw(s);
    }
}
