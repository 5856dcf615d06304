/* `nstack ping`: an echo-request session (RFC 792 echo, as iputils ping(8)
 * behaves): the first request leaves at once, the next every -i seconds;
 * replies and errors come from the stack's icmp_event hook, routed by the
 * session's ICMP identifier so several pings run side by side. With -c the
 * session ends when every request is answered (reply or error) or -W
 * seconds after the last one; ^C ends it with the statistics block. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/pingstat.h"

#define PING_MAX_SIZE        (65535 - 20 - 8)
#define PING_MIN_INTERVAL_US 1000

struct ping {
    struct ns_cmd_sess *sess;
    struct ns_timer timer;
    uint32_t dst;
    char host[64];
    uint16_t id;
    uint32_t count; /* 0 = until interrupted */
    uint64_t interval_us;
    uint64_t wait_us;
    uint32_t size;
    bool quiet;
    bool sending; /* inside ns_icmp_echo_send: an event must not end the session */
    uint64_t start;
    uint64_t last_send; /* iputils' "time" runs from the first to the last request */
    uint64_t next_send; /* scheduled time of the next request */
    struct ns_pingstat st;
    uint8_t rcvd[65536 / 8]; /* sequence numbers answered, for (DUP!) */
};

struct ping_opts {
    uint32_t count, size;
    uint64_t interval_us, wait_us;
    bool quiet;
};

static bool ping_opt(struct ns_cmd_sess *sess, void *arg, char opt, const char *val)
{
    struct ping_opts *o = arg;
    switch (opt) {
    case 'c':
        if (!ns_arg_u32(val, 1, UINT32_MAX, &o->count)) {
            ns_cmd_errorf(sess, "ping: invalid count '%s' (1 or more)", val);
            return false;
        }
        return true;
    case 's':
        if (!ns_arg_u32(val, 0, PING_MAX_SIZE, &o->size)) {
            ns_cmd_errorf(sess, "ping: invalid packet size '%s' (0-%d)", val, PING_MAX_SIZE);
            return false;
        }
        return true;
    case 'i':
        if (!ns_arg_seconds(val, &o->interval_us) || o->interval_us < PING_MIN_INTERVAL_US) {
            ns_cmd_errorf(sess, "ping: invalid interval '%s' (seconds, at least 0.001)", val);
            return false;
        }
        return true;
    case 'W':
        if (!ns_arg_seconds(val, &o->wait_us) || o->wait_us == 0) {
            ns_cmd_errorf(sess, "ping: invalid wait time '%s' (seconds, more than 0)", val);
            return false;
        }
        return true;
    case 'q':
        o->quiet = true;
        return true;
    }
    return false;
}

static void ping_finish(struct ping *p, uint64_t now)
{
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    (void)now;
    uint64_t elapsed = p->last_send > p->start ? p->last_send - p->start : 0;
    ns_pingstat_summary(&p->st, p->host, elapsed, &b);
    ns_cmd_put_sbuf(p->sess, 1, &b);
    ns_sbuf_free(&b);
    ns_cmd_finish(p->sess, p->st.nreceived ? NS_EXIT_OK : NS_EXIT_FAIL);
}

static bool all_answered(const struct ping *p)
{
    return p->count && p->st.ntransmitted >= p->count &&
           p->st.nreceived + p->st.nerrors >= p->count;
}

static void send_one(struct ping *p, uint64_t now)
{
    struct ns_stack *s = p->sess->env->s;
    p->st.ntransmitted++;
    uint16_t seq = (uint16_t)p->st.ntransmitted;
    /* Clear the slot so a wrapped sequence number is not taken for a DUP. */
    p->rcvd[seq / 8] &= (uint8_t) ~(1u << (seq % 8));
    p->last_send = now;
    p->sending = true;
    int r = ns_icmp_echo_send(&s->ip, p->dst, p->id, seq, p->size, 0, now);
    p->sending = false;
    if (r < 0) {
        p->st.nerrors++;
        if (!p->quiet)
            ns_cmd_errorf(p->sess, "ping: sendmsg: %s", strerror(-r));
    }
}

/* Send the next request if one is due, then arm the timer for the next
 * request or, after the last one, for the end of the wait. */
static void ping_tick(struct ping *p, uint64_t now)
{
    struct ns_cmd_env *env = p->sess->env;
    if (p->count == 0 || p->st.ntransmitted < p->count) {
        send_one(p, now);
        if (all_answered(p)) {
            ping_finish(p, now);
            return;
        }
        p->next_send += p->interval_us;
        if (p->next_send < now)
            p->next_send = now;
        if (p->count && p->st.ntransmitted >= p->count)
            ns_timer_arm(&env->timers, &p->timer, now + p->wait_us);
        else
            ns_timer_arm(&env->timers, &p->timer, p->next_send);
        return;
    }
    ping_finish(p, now); /* the wait after the last request is over */
}

static void ping_timer(struct ns_timer *t, uint64_t now)
{
    ping_tick(NS_CONTAINER_OF(t, struct ping, timer), now);
}

static void ping_interrupt(struct ns_cmd_sess *sess, uint64_t now)
{
    ping_finish(sess->priv, now);
}

static void ping_release(struct ns_cmd_sess *sess)
{
    struct ping *p = sess->priv;
    ns_timer_cancel(&sess->env->timers, &p->timer);
    free(p);
}

static const struct ns_cmd_kind ping_kind = {
    .name = "ping",
    .interrupt = ping_interrupt,
    .release = ping_release,
};

static bool id_in_use(struct ns_cmd_env *env, uint16_t id)
{
    for (struct ns_cmd_sess *x = env->sessions; x; x = x->next)
        if (x->kind == &ping_kind && ((struct ping *)x->priv)->id == id)
            return true;
    return false;
}

void ns_cmd_ping(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct ns_cmd_env *env = sess->env;
    struct ping_opts o = {.size = 56, .interval_us = NS_SEC, .wait_us = 10 * NS_SEC};
    const struct ns_cmd_optspec spec = {
        .name = "ping", .with_arg = "cisW", .flags = "q", .cb = ping_opt, .arg = &o};
    const char *pos[1];
    int npos = ns_cmd_getopt(sess, &spec, argc, argv, pos, 1);
    if (npos < 0) {
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (npos == 0) {
        ns_cmd_errorf(sess, "ping: destination address required (see: nstack ping --help)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    uint32_t dst;
    if (!ns_ip_parse_addr(pos[0], &dst) || strlen(pos[0]) >= sizeof(((struct ping *)0)->host)) {
        ns_cmd_errorf(sess, "bad address '%s'", pos[0]);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    /* As iputils, fail before the banner when there is no route at all. */
    struct ns_route rt;
    if (!ns_route_lookup(&env->s->ip, dst, now, &rt)) {
        ns_cmd_errorf(sess, "ping: connect: Network is unreachable");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    struct ping *p = calloc(1, sizeof(*p));
    if (!p) {
        ns_cmd_errorf(sess, "ping: out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    p->sess = sess;
    p->dst = dst;
    strcpy(p->host, pos[0]);
    p->count = o.count;
    p->size = o.size;
    p->interval_us = o.interval_us;
    p->wait_us = o.wait_us;
    p->quiet = o.quiet;
    ns_timer_init(&p->timer, ping_timer);
    ns_pingstat_init(&p->st, o.size >= 8);
    for (int tries = 0; tries < 65536 && id_in_use(env, env->next_ping_id); tries++)
        env->next_ping_id++;
    p->id = env->next_ping_id++;
    env->stats.ping_sessions++;
    ns_cmd_make_long(sess, &ping_kind, p);

    char a[16];
    ns_cmd_printf(sess, 1, "PING %s (%s) %u(%u) bytes of data.\n", p->host, ns_ip_fmt(dst, a),
                  p->size, p->size + 28);
    p->start = now;
    p->next_send = now;
    ping_tick(p, now);
}

static struct ping *find_ping(struct ns_cmd_env *env, uint16_t id)
{
    for (struct ns_cmd_sess *x = env->sessions; x; x = x->next)
        if (x->kind == &ping_kind && ((struct ping *)x->priv)->id == id)
            return x->priv;
    return NULL;
}

void ns_cmd_ping_event(struct ns_cmd_env *env, const struct ns_icmp_event *ev, uint64_t now)
{
    struct ping *p = find_ping(env, ev->id);
    if (!p) {
        env->stats.icmp_events_unmatched++;
        return;
    }
    char from[16];
    ns_ip_fmt(ev->from, from);
    ns_pingstat_ack(&p->st, ev->seq);
    if (ev->kind == NS_ICMP_EV_ECHO_REPLY) {
        uint8_t bit = (uint8_t)(1u << (ev->seq % 8));
        bool dup = p->rcvd[ev->seq / 8] & bit;
        if (dup) {
            p->st.nrepeats++;
        } else {
            p->rcvd[ev->seq / 8] |= bit;
            p->st.nreceived++;
        }
        if (p->st.timing)
            ns_pingstat_rtt(&p->st, ev->rtt_us);
        if (!p->quiet) {
            char t[32] = "";
            if (p->st.timing)
                ns_pingstat_fmt_time(ev->rtt_us, t);
            ns_cmd_printf(p->sess, 1, "%u bytes from %s: icmp_seq=%u ttl=%u%s%s%s%s\n", ev->bytes,
                          from, ev->seq, ev->ttl, p->st.timing ? " time=" : "", t,
                          p->st.timing ? " ms" : "", dup ? " (DUP!)" : "");
        }
    } else {
        p->st.nerrors++;
        if (!p->quiet) {
            struct ns_sbuf b;
            ns_sbuf_init(&b);
            ns_sbuf_printf(&b, "From %s icmp_seq=%u ", from, ev->seq);
            ns_pingstat_icmp_desc(ev->type, ev->code, &b);
            ns_sbuf_puts(&b, "\n");
            ns_cmd_put_sbuf(p->sess, 1, &b);
            ns_sbuf_free(&b);
        }
    }
    if (all_answered(p) && !p->sending)
        ping_finish(p, now);
}
