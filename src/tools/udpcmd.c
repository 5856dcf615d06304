/* `nstack udp send|recv` and the daemon's udp-echo service (RFC 862 echo
 * over UDP), on the stack's UDP sockets (RFC 768). Socket readiness arrives
 * from inside the stack's input path, so readers only arm a due-now timer
 * there and do their work from the commands' timer run, never re-entering
 * the stack from its own callback. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"

#define UDP_MAX_PAYLOAD (65535 - 20 - 8)
#define UDP_RXBUF       65536

/* ---- send ---- */

struct udp_send {
    struct ns_cmd_sess *sess;
    uint32_t dst;
    uint16_t dport, sport;
    struct ns_sbuf data;
};

static bool send_opt(struct ns_cmd_sess *sess, void *arg, char opt, const char *val)
{
    struct udp_send *u = arg;
    if (opt == 'p' && ns_arg_port(val, &u->sport))
        return true;
    ns_cmd_errorf(sess, "udp send: bad source port '%s' (1-65535)", val);
    return false;
}

static void do_send(struct ns_cmd_sess *sess, struct udp_send *u, uint64_t now)
{
    struct ns_stack *s = sess->env->s;
    struct ns_udp_sock *sk = ns_udp_open(&s->ip);
    if (!sk) {
        ns_cmd_errorf(sess, "udp send: out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    int r = 0;
    if (u->sport && (r = ns_udp_bind(sk, 0, u->sport)) < 0) {
        ns_cmd_errorf(sess, "udp send: bind port %u: %s", u->sport, strerror(-r));
        ns_udp_close(sk);
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    ssize_t w =
        ns_udp_sendto(sk, ns_sbuf_str(&u->data), (uint32_t)u->data.len, u->dst, u->dport, now);
    ns_udp_close(sk);
    if (w < 0) {
        char a[16];
        ns_cmd_errorf(sess, "udp send: %s:%u: %s", ns_ip_fmt(u->dst, a), u->dport,
                      strerror((int)-w));
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    ns_cmd_finish(sess, NS_EXIT_OK);
}

static void send_input(struct ns_cmd_sess *sess, const void *data, size_t n, bool eof, uint64_t now)
{
    struct udp_send *u = sess->priv;
    if (u->data.len + n > UDP_MAX_PAYLOAD) {
        ns_cmd_errorf(sess, "udp send: message too long (at most %d bytes)", UDP_MAX_PAYLOAD);
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    ns_sbuf_add(&u->data, data, n);
    if (u->data.oom) {
        ns_cmd_errorf(sess, "udp send: out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    if (eof)
        do_send(sess, u, now);
}

static void send_interrupt(struct ns_cmd_sess *sess, uint64_t now)
{
    ns_cmd_finish(sess, NS_EXIT_FAIL);
}

static void free_send(struct udp_send *u);

static void send_release(struct ns_cmd_sess *sess)
{
    free_send(sess->priv);
}

static const struct ns_cmd_kind send_kind = {
    .name = "udp send",
    .interrupt = send_interrupt,
    .input = send_input,
    .release = send_release,
};

static void free_send(struct udp_send *u)
{
    ns_sbuf_free(&u->data);
    free(u);
}

static void udp_send(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct udp_send *u = calloc(1, sizeof(*u));
    if (!u) {
        ns_cmd_errorf(sess, "udp send: out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    u->sess = sess;
    ns_sbuf_init(&u->data);
    const struct ns_cmd_optspec spec = {.name = "udp send",
                                        .with_arg = "p",
                                        .flags = "",
                                        .verbatim_after = 2,
                                        .cb = send_opt,
                                        .arg = u};
    const char *pos[NS_CTL_MAX_ARGS];
    int npos = ns_cmd_getopt(sess, &spec, argc, argv, pos, NS_CTL_MAX_ARGS);
    int status = -1;
    if (npos < 0) {
        status = NS_EXIT_USAGE;
    } else if (npos < 2) {
        ns_cmd_errorf(sess, "udp send: DEST and PORT required (see: nstack udp --help)");
        status = NS_EXIT_USAGE;
    } else if (!ns_ip_parse_addr(pos[0], &u->dst)) {
        ns_cmd_errorf(sess, "bad address '%s'", pos[0]);
        status = NS_EXIT_USAGE;
    } else if (!ns_arg_port(pos[1], &u->dport)) {
        ns_cmd_errorf(sess, "udp send: bad port '%s' (1-65535)", pos[1]);
        status = NS_EXIT_USAGE;
    } else if (npos > 2) {
        /* TEXT from argv, words joined by single spaces as echo(1) does. */
        for (int i = 2; i < npos; i++) {
            if (i > 2)
                ns_sbuf_puts(&u->data, " ");
            ns_sbuf_puts(&u->data, pos[i]);
        }
        if (u->data.len > UDP_MAX_PAYLOAD) {
            ns_cmd_errorf(sess, "udp send: message too long (at most %d bytes)", UDP_MAX_PAYLOAD);
            status = NS_EXIT_FAIL;
        } else {
            do_send(sess, u, now);
            free_send(u);
            return;
        }
    }
    if (status >= 0) {
        free_send(u);
        ns_cmd_finish(sess, status);
        return;
    }
    /* No TEXT: the message is the client's standard input. */
    ns_cmd_make_long(sess, &send_kind, u);
    if (sess->out.want_input)
        sess->out.want_input(sess->out.ctx);
    else
        send_input(sess, NULL, 0, true, now);
}

/* ---- recv ---- */

struct udp_recv {
    struct ns_cmd_sess *sess;
    struct ns_udp_sock *sk;
    struct ns_timer ready, timeout;
    uint32_t count; /* 0 = until interrupted or timed out */
    uint32_t got;
    uint64_t wait_us;
    uint8_t *buf;
};

struct recv_opts {
    uint32_t count;
    uint64_t wait_us;
};

static bool recv_opt(struct ns_cmd_sess *sess, void *arg, char opt, const char *val)
{
    struct recv_opts *o = arg;
    if (opt == 'c') {
        if (ns_arg_u32(val, 1, UINT32_MAX, &o->count))
            return true;
        ns_cmd_errorf(sess, "udp recv: invalid count '%s' (1 or more)", val);
        return false;
    }
    if (ns_arg_seconds(val, &o->wait_us) && o->wait_us > 0)
        return true;
    ns_cmd_errorf(sess, "udp recv: invalid wait time '%s' (seconds, more than 0)", val);
    return false;
}

static void recv_end(struct udp_recv *u, bool timed_out)
{
    bool ok = u->count ? u->got >= u->count : u->got > 0;
    if (!ok && timed_out)
        ns_cmd_errorf(u->sess, "udp recv: timeout after %" PRIu32 " datagram%s", u->got,
                      u->got == 1 ? "" : "s");
    ns_cmd_finish(u->sess, ok ? NS_EXIT_OK : NS_EXIT_FAIL);
}

static void recv_drain(struct ns_timer *t, uint64_t now)
{
    struct udp_recv *u = NS_CONTAINER_OF(t, struct udp_recv, ready);
    for (;;) {
        uint32_t src;
        uint16_t sport;
        ssize_t n = ns_udp_recvfrom(u->sk, u->buf, UDP_RXBUF, &src, &sport);
        if (n == -EAGAIN)
            return;
        if (n < 0) {
            /* An ICMP error for something this socket never sent: report it
             * and keep listening. */
            ns_cmd_errorf(u->sess, "udp recv: %s", strerror((int)-n));
            continue;
        }
        char a[16];
        struct ns_sbuf b;
        ns_sbuf_init(&b);
        ns_sbuf_printf(&b, "from %s:%u len %zd: ", ns_ip_fmt(src, a), sport, n);
        ns_sbuf_escape(&b, u->buf, (size_t)n);
        ns_sbuf_puts(&b, "\n");
        ns_cmd_put_sbuf(u->sess, 1, &b);
        ns_sbuf_free(&b);
        u->got++;
        if (u->count && u->got >= u->count) {
            recv_end(u, false);
            return;
        }
    }
}

static void recv_timeout(struct ns_timer *t, uint64_t now)
{
    recv_end(NS_CONTAINER_OF(t, struct udp_recv, timeout), true);
}

static void recv_ready(void *ctx, struct ns_udp_sock *sk)
{
    struct udp_recv *u = ctx;
    if (!ns_timer_armed(&u->ready))
        ns_timer_arm(&u->sess->env->timers, &u->ready, 0);
}

static void recv_interrupt(struct ns_cmd_sess *sess, uint64_t now)
{
    recv_end(sess->priv, false);
}

static void recv_release(struct ns_cmd_sess *sess)
{
    struct udp_recv *u = sess->priv;
    ns_timer_cancel(&sess->env->timers, &u->ready);
    ns_timer_cancel(&sess->env->timers, &u->timeout);
    if (u->sk)
        ns_udp_close(u->sk);
    free(u->buf);
    free(u);
}

static const struct ns_cmd_kind recv_kind = {
    .name = "udp recv",
    .interrupt = recv_interrupt,
    .release = recv_release,
};

static void udp_recv(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct ns_cmd_env *env = sess->env;
    struct recv_opts o = {0};
    const struct ns_cmd_optspec spec = {
        .name = "udp recv", .with_arg = "cW", .flags = "", .cb = recv_opt, .arg = &o};
    const char *pos[1];
    int npos = ns_cmd_getopt(sess, &spec, argc, argv, pos, 1);
    if (npos < 0) {
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    uint16_t port;
    if (npos < 1) {
        ns_cmd_errorf(sess, "udp recv: PORT required (see: nstack udp --help)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!ns_arg_port(pos[0], &port)) {
        ns_cmd_errorf(sess, "udp recv: bad port '%s' (1-65535)", pos[0]);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    struct udp_recv *u = calloc(1, sizeof(*u));
    uint8_t *buf = malloc(UDP_RXBUF);
    struct ns_udp_sock *sk = u && buf ? ns_udp_open(&env->s->ip) : NULL;
    if (!sk) {
        free(u);
        free(buf);
        ns_cmd_errorf(sess, "udp recv: out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    int r = ns_udp_bind(sk, 0, port);
    if (r < 0) {
        ns_udp_close(sk);
        free(u);
        free(buf);
        ns_cmd_errorf(sess, "udp recv: bind port %u: %s", port, strerror(-r));
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    u->sess = sess;
    u->sk = sk;
    u->buf = buf;
    u->count = o.count;
    u->wait_us = o.wait_us;
    ns_timer_init(&u->ready, recv_drain);
    ns_timer_init(&u->timeout, recv_timeout);
    sk->on_ready = recv_ready;
    sk->ctx = u;
    ns_cmd_make_long(sess, &recv_kind, u);
    if (o.wait_us)
        ns_timer_arm(&env->timers, &u->timeout, now + o.wait_us);
}

void ns_cmd_udp(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "send") == 0)
        udp_send(sess, argc - 1, argv + 1, now);
    else if (strcmp(sub, "recv") == 0)
        udp_recv(sess, argc - 1, argv + 1, now);
    else {
        if (*sub)
            ns_cmd_errorf(sess, "udp: unknown subcommand '%s' (try: send, recv)", sub);
        else
            ns_cmd_errorf(sess, "udp: subcommand required (try: send, recv)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
    }
}

/* ---- udp-echo service ---- */

struct ns_cmd_echo {
    struct ns_cmd_echo *next;
    struct ns_cmd_env *env;
    struct ns_udp_sock *sk;
    struct ns_timer ready;
    uint8_t *buf;
};

static void echo_drain(struct ns_timer *t, uint64_t now)
{
    struct ns_cmd_echo *e = NS_CONTAINER_OF(t, struct ns_cmd_echo, ready);
    for (;;) {
        uint32_t src;
        uint16_t sport;
        ssize_t n = ns_udp_recvfrom(e->sk, e->buf, UDP_RXBUF, &src, &sport);
        if (n == -EAGAIN)
            return;
        if (n < 0) {
            e->env->stats.udp_echo_errors++;
            continue;
        }
        if (ns_udp_sendto(e->sk, e->buf, (uint32_t)n, src, sport, now) < 0)
            e->env->stats.udp_echo_errors++;
        else
            e->env->stats.udp_echo_datagrams++;
    }
}

static void echo_ready(void *ctx, struct ns_udp_sock *sk)
{
    struct ns_cmd_echo *e = ctx;
    if (!ns_timer_armed(&e->ready))
        ns_timer_arm(&e->env->timers, &e->ready, 0);
}

int ns_cmd_serve(struct ns_cmd_env *env, const char *spec, char *err, size_t errlen)
{
    uint16_t port;
    if (strncmp(spec, "udp-echo:", 9) != 0 || !ns_arg_port(spec + 9, &port)) {
        snprintf(err, errlen, "bad service '%s' (use: udp-echo:PORT)", spec);
        return -1;
    }
    struct ns_cmd_echo *e = calloc(1, sizeof(*e));
    uint8_t *buf = malloc(UDP_RXBUF);
    struct ns_udp_sock *sk = e && buf ? ns_udp_open(&env->s->ip) : NULL;
    int r = sk ? ns_udp_bind(sk, 0, port) : -ENOMEM;
    if (r < 0) {
        if (sk)
            ns_udp_close(sk);
        free(e);
        free(buf);
        snprintf(err, errlen, "udp-echo: bind port %u: %s", port, strerror(-r));
        return -1;
    }
    e->env = env;
    e->sk = sk;
    e->buf = buf;
    ns_timer_init(&e->ready, echo_drain);
    sk->on_ready = echo_ready;
    sk->ctx = e;
    e->next = env->echoes;
    env->echoes = e;
    return 0;
}

void ns_cmd_echo_free_all(struct ns_cmd_env *env)
{
    while (env->echoes) {
        struct ns_cmd_echo *e = env->echoes;
        env->echoes = e->next;
        ns_timer_cancel(&env->timers, &e->ready);
        ns_udp_close(e->sk);
        free(e->buf);
        free(e);
    }
}
