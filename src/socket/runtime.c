/* The stack runtime: one thread per stack instance that runs the SCTP
 * engine (RFC 9260) and its timers, fed by an epoll loop over an eventfd
 * (requests from application threads), a timerfd armed at the engine's next
 * deadline, and fds the embedder registers (devices). It is the only thread
 * that calls into the engine; the socket layer (sock_*.c) hands work to it
 * through the request queue below. This file reads the clock: it is the
 * embedder of the sans-I/O engine, not protocol code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "socket/sock.h"
#include "stack/stack.h"

struct ns_rt_req {
    struct ns_rt_req *next;
    void (*fn)(struct ns_rt *rt, void *arg);
    void *arg;
    bool heap; /* freed after running (posted); else a waiter is on it */
    bool done;
};

struct ns_rt_fdw {
    struct ns_rt_fdw *next;
    int fd;
    ns_rt_fd_fn fn;
    void *ctx;
};

struct rt_input {
    struct ns_pkt *p;
    struct ns_sctp_addr src, dst;
};

#define TAG_EVFD 1u
#define TAG_TFD  2u

uint64_t ns_rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool ns_rt_on_thread(const struct ns_rt *rt)
{
    return pthread_equal(pthread_self(), rt->thread_id_copy);
}

static void kick_locked(struct ns_rt *rt)
{
    if (!rt->kicked) {
        rt->kicked = true;
        uint64_t one = 1;
        ssize_t r = write(rt->evfd, &one, sizeof(one));
        (void)r; /* only fails when the counter is saturated: already readable */
    }
}

static void post_req(struct ns_rt *rt, struct ns_rt_req *r)
{
    pthread_mutex_lock(&rt->mu);
    r->next = NULL;
    if (rt->req_tail)
        rt->req_tail->next = r;
    else
        rt->req = r;
    rt->req_tail = r;
    kick_locked(rt);
    pthread_mutex_unlock(&rt->mu);
}

void ns_rt_post(struct ns_rt *rt, void (*fn)(struct ns_rt *rt, void *arg), void *arg)
{
    struct ns_rt_req *r = calloc(1, sizeof(*r));
    if (!r) {
        /* Keep the work: fall back to waiting for it. */
        ns_rt_call(rt, fn, arg);
        return;
    }
    r->fn = fn;
    r->arg = arg;
    r->heap = true;
    post_req(rt, r);
}

void ns_rt_call(struct ns_rt *rt, void (*fn)(struct ns_rt *rt, void *arg), void *arg)
{
    if (ns_rt_on_thread(rt)) {
        fn(rt, arg);
        return;
    }
    struct ns_rt_req r = {.fn = fn, .arg = arg};
    post_req(rt, &r);
    pthread_mutex_lock(&rt->mu);
    while (!r.done)
        pthread_cond_wait(&rt->done_cv, &rt->mu);
    pthread_mutex_unlock(&rt->mu);
}

void ns_rt_give_back(struct ns_rt *rt, struct ns_sctp_rmsgq *q)
{
    if (!q->head)
        return;
    pthread_mutex_lock(&rt->mu);
    ns_sctp_rmsgq_splice(&rt->freeq, q);
    kick_locked(rt);
    pthread_mutex_unlock(&rt->mu);
}

static void input_fn(struct ns_rt *rt, void *arg)
{
    struct rt_input *in = arg;
    ns_sctp_input(rt->sctp, in->p, &in->src, &in->dst, ns_rt_now());
    free(in);
}

void ns_rt_input(struct ns_rt *rt, struct ns_pkt *p, const struct ns_sctp_addr *src,
                 const struct ns_sctp_addr *dst)
{
    struct rt_input *in = malloc(sizeof(*in));
    if (!in) {
        ns_pkt_free(p); /* a lost packet: SCTP retransmits */
        return;
    }
    in->p = p;
    in->src = *src;
    in->dst = *dst;
    ns_rt_post(rt, input_fn, in);
}

struct rt_frame {
    struct ns_pkt *p;
    uint32_t ifindex;
};

static void frame_fn(struct ns_rt *rt, void *arg)
{
    struct rt_frame *f = arg;
    if (rt->stack)
        ns_stack_input_pkt(rt->stack, f->ifindex, f->p, ns_rt_now());
    else
        ns_pkt_free(f->p);
    free(f);
}

void ns_rt_input_frame(struct ns_rt *rt, uint32_t ifindex, struct ns_pkt *p)
{
    struct rt_frame *f = malloc(sizeof(*f));
    if (!f) {
        ns_pkt_free(p);
        return;
    }
    f->p = p;
    f->ifindex = ifindex;
    ns_rt_post(rt, frame_fn, f);
}

struct ns_sctp *ns_rt_sctp(struct ns_rt *rt)
{
    return rt->sctp;
}

/* ---- The loop ------------------------------------------------------------ */

static void arm_timer(struct ns_rt *rt)
{
    uint64_t next = ns_timers_next(rt->tm);
    if (rt->idle_next < next)
        next = rt->idle_next;
    struct itimerspec its = {0};
    if (next != NS_TIME_NEVER) {
        if (next == 0)
            next = 1; /* 0 would disarm */
        its.it_value.tv_sec = (time_t)(next / 1000000u);
        its.it_value.tv_nsec = (long)(next % 1000000u) * 1000;
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1;
    }
    timerfd_settime(rt->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void drain_requests(struct ns_rt *rt)
{
    for (;;) {
        pthread_mutex_lock(&rt->mu);
        struct ns_rt_req *r = rt->req;
        rt->req = rt->req_tail = NULL;
        struct ns_sctp_rmsgq fq;
        ns_sctp_rmsgq_init(&fq);
        ns_sctp_rmsgq_splice(&fq, &rt->freeq);
        rt->kicked = false;
        pthread_mutex_unlock(&rt->mu);
        if (!r && !fq.head)
            return;
        /* Frees first: a close posted after its messages were handed back
         * must find them freed before it releases the association. */
        ns_sock_free_msgs(rt, &fq, ns_rt_now());
        while (r) {
            struct ns_rt_req *next = r->next;
            if (atomic_load(&rt->stop)) {
                /* Torn down: ns_rt_free disposes of the rest. */
                pthread_mutex_lock(&rt->mu);
                struct ns_rt_req *last = r;
                while (last->next)
                    last = last->next;
                last->next = rt->req;
                if (!rt->req)
                    rt->req_tail = last;
                rt->req = r;
                pthread_mutex_unlock(&rt->mu);
                return;
            }
            rt->stats.requests++;
            r->fn(rt, r->arg);
            if (r->heap) {
                free(r);
            } else {
                pthread_mutex_lock(&rt->mu);
                r->done = true;
                pthread_cond_broadcast(&rt->done_cv);
                pthread_mutex_unlock(&rt->mu);
            }
            r = next;
        }
    }
}

static void *rt_main(void *arg)
{
    struct ns_rt *rt = arg;
    pthread_mutex_lock(&rt->mu);
    rt->thread_id_copy = pthread_self();
    pthread_cond_broadcast(&rt->done_cv);
    pthread_mutex_unlock(&rt->mu);

    struct epoll_event evs[16];
    while (!atomic_load(&rt->stop)) {
        arm_timer(rt);
        int n = epoll_wait(rt->epfd, evs, 16, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < n; i++) {
            uint64_t tag = evs[i].data.u64, v;
            if (tag == TAG_EVFD) {
                ssize_t r = read(rt->evfd, &v, sizeof(v));
                (void)r;
            } else if (tag == TAG_TFD) {
                ssize_t r = read(rt->tfd, &v, sizeof(v));
                (void)r;
            } else {
                struct ns_rt_fdw *w = (struct ns_rt_fdw *)(uintptr_t)tag;
                w->fn(rt, w->ctx, w->fd, evs[i].events);
            }
        }
        drain_requests(rt);
        if (rt->stack)
            ns_stack_poll(rt->stack, ns_rt_now());
        else
            ns_timers_run(rt->tm, ns_rt_now());
        /* Last, so the embedder sends what everything above produced. */
        if (rt->idle_fn)
            rt->idle_next = rt->idle_fn(rt, rt->idle_ctx, ns_rt_now());
    }
    return NULL;
}

static void rt_output(void *ctx, struct ns_pkt *p, const struct ns_sctp_addr *src,
                      const struct ns_sctp_addr *dst, uint64_t now)
{
    struct ns_rt *rt = ctx;
    (void)now;
    rt->output(rt->output_ctx, p, src, dst);
}

static void rt_event(void *ctx, const struct ns_sctp_event *ev, uint64_t now)
{
    ns_sock_on_event(ctx, ev, now);
}

static struct ns_rt *rt_alloc(bool rcvq_lock)
{
    struct ns_rt *rt = calloc(1, sizeof(*rt));
    if (!rt) {
        errno = ENOMEM;
        return NULL;
    }
    atomic_init(&rt->rcvq_lock, rcvq_lock);
    rt->idle_next = NS_TIME_NEVER;
    rt->epfd = rt->evfd = rt->tfd = -1;
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->done_cv, NULL);
    pthread_rwlock_init(&rt->tlock, NULL);
    ns_sctp_rmsgq_init(&rt->freeq);
    return rt;
}

static void rt_release(struct ns_rt *rt)
{
    if (rt->epfd >= 0)
        close(rt->epfd);
    if (rt->evfd >= 0)
        close(rt->evfd);
    if (rt->tfd >= 0)
        close(rt->tfd);
    if (!rt->stack) {
        ns_sctp_free(rt->sctp);
        ns_timers_free(rt->tm);
    }
    free(rt->tab);
    pthread_rwlock_destroy(&rt->tlock);
    pthread_cond_destroy(&rt->done_cv);
    pthread_mutex_destroy(&rt->mu);
    free(rt);
}

/* fds and the thread; on failure errno is set and the caller releases. */
static int rt_start(struct ns_rt *rt)
{
    rt->epfd = epoll_create1(EPOLL_CLOEXEC);
    rt->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    rt->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (rt->epfd < 0 || rt->evfd < 0 || rt->tfd < 0)
        return -1;
    struct epoll_event e = {.events = EPOLLIN, .data.u64 = TAG_EVFD};
    if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, rt->evfd, &e) != 0)
        return -1;
    e.data.u64 = TAG_TFD;
    if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, rt->tfd, &e) != 0)
        return -1;
    int err = pthread_create(&rt->thread, NULL, rt_main, rt);
    if (err) {
        errno = err;
        return -1;
    }
    pthread_mutex_lock(&rt->mu);
    while (!pthread_equal(rt->thread_id_copy, rt->thread))
        pthread_cond_wait(&rt->done_cv, &rt->mu);
    pthread_mutex_unlock(&rt->mu);
    return 0;
}

struct ns_rt *ns_rt_new(const struct ns_rt_config *cfg)
{
    if (!cfg || !cfg->output) {
        errno = EINVAL;
        return NULL;
    }
    struct ns_rt *rt = rt_alloc(cfg->rcvq_lock);
    if (!rt)
        return NULL;
    rt->output = cfg->output;
    rt->output_ctx = cfg->output_ctx;
    rt->sctp = &rt->own_sctp;
    rt->tm = &rt->timers;
    ns_timers_init(rt->tm);
    uint64_t seed = cfg->seed;
    if (!seed && getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
        seed = ns_rt_now();
    ns_rng_seed(&rt->rng, seed);
    struct ns_sctp_config sc = {
        .params = cfg->params,
        .timers = rt->tm,
        .rng = &rt->rng,
        .ops = {.output = rt_output, .event = rt_event, .ctx = rt},
    };
    if (cfg->params)
        rt->params = *cfg->params;
    else
        ns_sctp_params_default(&rt->params);
    int err = ns_sctp_init(rt->sctp, &sc, ns_rt_now());
    if (err) {
        ns_timers_free(rt->tm);
        rt->stack = (struct ns_stack *)1; /* nothing of the engine to free */
        rt_release(rt);
        errno = -err;
        return NULL;
    }
    if (rt_start(rt) != 0) {
        err = errno;
        rt_release(rt);
        errno = err;
        return NULL;
    }
    return rt;
}

struct ns_rt *ns_rt_new_stack(struct ns_stack *s, bool rcvq_lock)
{
    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    struct ns_rt *rt = rt_alloc(rcvq_lock);
    if (!rt)
        return NULL;
    rt->stack = s;
    rt->sctp = &s->sctp;
    rt->tm = &s->timers;
    rt->params = s->sctp.p;
    ns_stack_set_sctp_event(s, rt_event, rt);
    if (rt_start(rt) != 0) {
        int err = errno;
        ns_stack_set_sctp_event(s, NULL, NULL);
        rt_release(rt);
        errno = err;
        return NULL;
    }
    return rt;
}

struct ns_stack *ns_rt_stack(struct ns_rt *rt)
{
    return rt->stack;
}

static void stop_fn(struct ns_rt *rt, void *arg)
{
    (void)arg;
    ns_sock_rt_teardown(rt);
    atomic_store(&rt->stop, true);
}

void ns_rt_free(struct ns_rt *rt)
{
    if (!rt)
        return;
    ns_rt_call(rt, stop_fn, NULL);
    pthread_join(rt->thread, NULL);
    /* Requests posted after the stop (packets from a peer runtime). */
    struct ns_rt_req *r = rt->req;
    while (r) {
        struct ns_rt_req *next = r->next;
        if (r->fn == input_fn) {
            struct rt_input *in = r->arg;
            ns_pkt_free(in->p);
            free(in);
        } else if (r->fn == frame_fn) {
            struct rt_frame *f = r->arg;
            ns_pkt_free(f->p);
            free(f);
        }
        if (r->heap)
            free(r);
        r = next;
    }
    while (rt->fdws) {
        struct ns_rt_fdw *w = rt->fdws;
        rt->fdws = w->next;
        free(w);
    }
    if (rt->stack) {
        ns_stack_set_sctp_event(rt->stack, NULL, NULL);
    }
    rt_release(rt);
}

struct fd_op {
    int fd;
    uint32_t events;
    ns_rt_fd_fn fn;
    void *ctx;
    int ret, err;
};

static void add_fd_fn(struct ns_rt *rt, void *arg)
{
    struct fd_op *op = arg;
    struct ns_rt_fdw *w = calloc(1, sizeof(*w));
    if (!w) {
        op->ret = -1;
        op->err = ENOMEM;
        return;
    }
    *w = (struct ns_rt_fdw){rt->fdws, op->fd, op->fn, op->ctx};
    struct epoll_event e = {.events = op->events, .data.u64 = (uint64_t)(uintptr_t)w};
    if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, op->fd, &e) != 0) {
        op->ret = -1;
        op->err = errno;
        free(w);
        return;
    }
    rt->fdws = w;
}

static void del_fd_fn(struct ns_rt *rt, void *arg)
{
    struct fd_op *op = arg;
    for (struct ns_rt_fdw **pp = &rt->fdws; *pp; pp = &(*pp)->next) {
        if ((*pp)->fd == op->fd) {
            struct ns_rt_fdw *w = *pp;
            *pp = w->next;
            epoll_ctl(rt->epfd, EPOLL_CTL_DEL, op->fd, NULL);
            free(w);
            return;
        }
    }
    op->ret = -1;
    op->err = ENOENT;
}

int ns_rt_add_fd(struct ns_rt *rt, int fd, uint32_t events, ns_rt_fd_fn fn, void *ctx)
{
    if (!rt || fd < 0 || !fn) {
        errno = EINVAL;
        return -1;
    }
    struct fd_op op = {fd, events, fn, ctx, 0, 0};
    ns_rt_call(rt, add_fd_fn, &op);
    errno = op.err ? op.err : errno;
    return op.ret;
}

static void mod_fd_fn(struct ns_rt *rt, void *arg)
{
    struct fd_op *op = arg;
    for (struct ns_rt_fdw *w = rt->fdws; w; w = w->next) {
        if (w->fd == op->fd) {
            struct epoll_event e = {.events = op->events, .data.u64 = (uint64_t)(uintptr_t)w};
            if (epoll_ctl(rt->epfd, EPOLL_CTL_MOD, op->fd, &e) != 0) {
                op->ret = -1;
                op->err = errno;
            }
            return;
        }
    }
    op->ret = -1;
    op->err = ENOENT;
}

int ns_rt_mod_fd(struct ns_rt *rt, int fd, uint32_t events)
{
    if (!rt) {
        errno = EINVAL;
        return -1;
    }
    struct fd_op op = {.fd = fd, .events = events};
    ns_rt_call(rt, mod_fd_fn, &op);
    errno = op.err ? op.err : errno;
    return op.ret;
}

struct idle_op {
    ns_rt_idle_fn fn;
    void *ctx;
};

static void set_idle_fn(struct ns_rt *rt, void *arg)
{
    struct idle_op *op = arg;
    rt->idle_fn = op->fn;
    rt->idle_ctx = op->ctx;
    rt->idle_next = NS_TIME_NEVER;
    if (op->fn)
        rt->idle_next = op->fn(rt, op->ctx, ns_rt_now());
}

void ns_rt_set_idle(struct ns_rt *rt, ns_rt_idle_fn fn, void *ctx)
{
    struct idle_op op = {fn, ctx};
    ns_rt_call(rt, set_idle_fn, &op);
}

int ns_rt_del_fd(struct ns_rt *rt, int fd)
{
    if (!rt) {
        errno = EINVAL;
        return -1;
    }
    struct fd_op op = {.fd = fd};
    ns_rt_call(rt, del_fd_fn, &op);
    errno = op.err ? op.err : errno;
    return op.ret;
}

int ns_rt_set_rcvq_lock(struct ns_rt *rt, bool on)
{
    if (!rt) {
        errno = EINVAL;
        return -1;
    }
    pthread_rwlock_wrlock(&rt->tlock);
    bool busy = rt->all != NULL;
    if (!busy)
        atomic_store(&rt->rcvq_lock, on);
    pthread_rwlock_unlock(&rt->tlock);
    if (busy) {
        errno = EBUSY;
        return -1;
    }
    return 0;
}

static void stats_fn(struct ns_rt *rt, void *arg)
{
    *(struct ns_sock_rt_stats *)arg = rt->stats;
}

void ns_rt_stats(struct ns_rt *rt, struct ns_sock_rt_stats *out)
{
    ns_rt_call(rt, stats_fn, out);
}
