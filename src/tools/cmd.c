/* The command engine: the env (its timers, the ICMP hook), sessions and
 * their output, getopt-style option parsing for the command files, and
 * dispatch of argv to the command's file (ping.c, neighcmd.c, statscmd.c,
 * sysctlcmd.c, addrcmd.c, sctpcmd.c, perfcmd.c, udpcmd.c). Output formats
 * are documented in docs/cli.md. */
#include "tools/cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"

static void on_icmp(void *ctx, const struct ns_icmp_event *ev, uint64_t now)
{
    ns_cmd_ping_event(ctx, ev, now);
}

void ns_cmd_env_init(struct ns_cmd_env *env, struct ns_stack *s, uint16_t first_ping_id)
{
    memset(env, 0, sizeof(*env));
    env->s = s;
    ns_timers_init(&env->timers);
    env->next_ping_id = first_ping_id;
    ns_stack_set_icmp_event(s, on_icmp, env);
}

void ns_cmd_env_free(struct ns_cmd_env *env)
{
    while (env->sessions) {
        struct ns_cmd_sess *sess = env->sessions;
        /* Silently: the embedder is shutting down and owns the sessions. */
        sess->out.done = NULL;
        ns_cmd_finish(sess, NS_EXIT_FAIL);
    }
    ns_cmd_echo_free_all(env);
    ns_timers_free(&env->timers);
    if (env->s && env->s->ip.icmp_ctx == env) {
        ns_stack_set_icmp_event(env->s, NULL, NULL);
    }
}

uint64_t ns_cmd_poll(struct ns_cmd_env *env, uint64_t now)
{
    ns_timers_run(&env->timers, now);
    return ns_timers_next(&env->timers);
}

/* ---- sessions ---- */

void ns_cmd_write(struct ns_cmd_sess *sess, int stream, const char *data, size_t n)
{
    if (n && sess->out.write)
        sess->out.write(sess->out.ctx, stream, data, n);
}

void ns_cmd_put_sbuf(struct ns_cmd_sess *sess, int stream, const struct ns_sbuf *b)
{
    if (b->oom) {
        ns_cmd_write(sess, 2, "nstack: out of memory\n", 22);
        return;
    }
    ns_cmd_write(sess, stream, ns_sbuf_str(b), b->len);
}

static void vput(struct ns_cmd_sess *sess, int stream, bool error, const char *fmt, va_list ap)
{
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    if (error)
        ns_sbuf_puts(&b, "nstack: ");
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n > 0) {
        char *tmp = malloc((size_t)n + 1);
        if (tmp) {
            vsnprintf(tmp, (size_t)n + 1, fmt, ap);
            ns_sbuf_add(&b, tmp, (size_t)n);
            free(tmp);
        } else {
            b.oom = true;
        }
    }
    if (error)
        ns_sbuf_puts(&b, "\n");
    ns_cmd_put_sbuf(sess, stream, &b);
    ns_sbuf_free(&b);
}

void ns_cmd_printf(struct ns_cmd_sess *sess, int stream, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(sess, stream, false, fmt, ap);
    va_end(ap);
}

void ns_cmd_errorf(struct ns_cmd_sess *sess, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(sess, 2, true, fmt, ap);
    va_end(ap);
}

void ns_cmd_make_long(struct ns_cmd_sess *sess, const struct ns_cmd_kind *kind, void *priv)
{
    sess->kind = kind;
    sess->priv = priv;
    sess->next = sess->env->sessions;
    sess->env->sessions = sess;
    sess->listed = true;
}

static void unlist(struct ns_cmd_sess *sess)
{
    if (!sess->listed)
        return;
    for (struct ns_cmd_sess **pp = &sess->env->sessions; *pp; pp = &(*pp)->next) {
        if (*pp == sess) {
            *pp = sess->next;
            break;
        }
    }
    sess->listed = false;
    sess->next = NULL;
}

void ns_cmd_finish(struct ns_cmd_sess *sess, int status)
{
    if (sess->done)
        return;
    sess->done = true;
    sess->status = status;
    unlist(sess);
    if (sess->kind && sess->kind->release)
        sess->kind->release(sess);
    sess->priv = NULL;
    if (sess->out.done)
        sess->out.done(sess->out.ctx, status);
}

bool ns_cmd_done(const struct ns_cmd_sess *sess)
{
    return sess->done;
}

int ns_cmd_status(const struct ns_cmd_sess *sess)
{
    return sess->status;
}

void ns_cmd_interrupt(struct ns_cmd_sess *sess, uint64_t now)
{
    if (!sess->done && sess->kind && sess->kind->interrupt)
        sess->kind->interrupt(sess, now);
}

void ns_cmd_input(struct ns_cmd_sess *sess, const void *data, size_t n, bool eof, uint64_t now)
{
    if (!sess->done && sess->kind && sess->kind->input)
        sess->kind->input(sess, data, n, eof, now);
}

void ns_cmd_free(struct ns_cmd_sess *sess)
{
    if (!sess)
        return;
    if (!sess->done) {
        sess->out.done = NULL;
        ns_cmd_finish(sess, NS_EXIT_FAIL);
    }
    free(sess);
}

/* ---- option parsing ---- */

int ns_cmd_getopt(struct ns_cmd_sess *sess, const struct ns_cmd_optspec *spec, int argc,
                  char *const *argv, const char **pos, int max)
{
    int npos = 0;
    bool opts_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (spec->verbatim_after && npos >= spec->verbatim_after)
            opts_done = true;
        if (!opts_done && strcmp(a, "--") == 0) {
            opts_done = true;
            continue;
        }
        if (!opts_done && a[0] == '-' && a[1]) {
            for (const char *p = a + 1; *p; p++) {
                if (strchr(spec->with_arg, *p)) {
                    const char *v = p[1] ? p + 1 : i + 1 < argc ? argv[++i] : NULL;
                    if (!v) {
                        ns_cmd_errorf(sess, "%s: option requires an argument -- '%c'", spec->name,
                                      *p);
                        return -1;
                    }
                    if (!spec->cb(sess, spec->arg, *p, v))
                        return -1;
                    break;
                }
                if (strchr(spec->flags, *p)) {
                    if (!spec->cb(sess, spec->arg, *p, NULL))
                        return -1;
                    continue;
                }
                ns_cmd_errorf(sess, "%s: invalid option -- '%c' (see: nstack %s --help)",
                              spec->name, *p, spec->name);
                return -1;
            }
            continue;
        }
        if (npos >= max) {
            ns_cmd_errorf(sess, "%s: unexpected argument '%s' (see: nstack %s --help)", spec->name,
                          a, spec->name);
            return -1;
        }
        pos[npos++] = a;
    }
    return npos;
}

/* ---- dispatch ---- */

struct ns_cmd_sess *ns_cmd_start(struct ns_cmd_env *env, uint8_t flags, int argc, char *const *argv,
                                 const struct ns_cmd_out *out, uint64_t now)
{
    struct ns_cmd_sess *sess = calloc(1, sizeof(*sess));
    if (!sess)
        return NULL;
    sess->env = env;
    sess->out = *out;
    sess->flags = flags;
    env->stats.commands++;
    if (argc < 1) {
        env->stats.bad_requests++;
        ns_cmd_errorf(sess, "no command (try: ping, neigh, stats, sysctl, addr, udp)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return sess;
    }
    const char *name = argv[0];
    if (!ns_cmd_known(name)) {
        env->stats.bad_requests++;
        ns_cmd_errorf(sess, "unknown command '%s' (try: ping, neigh, stats, sysctl, addr, udp)",
                      name);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return sess;
    }
    if (ns_cmd_wants_help(argc, argv)) {
        const char *u = ns_cmd_usage(name);
        ns_cmd_write(sess, 1, u, strlen(u));
        ns_cmd_finish(sess, NS_EXIT_OK);
        return sess;
    }
    if (strcmp(name, "ping") == 0)
        ns_cmd_ping(sess, argc, argv, now);
    else if (strcmp(name, "neigh") == 0)
        ns_cmd_neigh(sess, argc, argv, now);
    else if (strcmp(name, "stats") == 0)
        ns_cmd_stats(sess, argc, argv);
    else if (strcmp(name, "sysctl") == 0)
        ns_cmd_sysctl(sess, argc, argv, now);
    else if (strcmp(name, "addr") == 0)
        ns_cmd_addr(sess, argc, argv);
    else if (strcmp(name, "sctp") == 0 && argc > 1 && strcmp(argv[1], "send") == 0)
        ns_cmd_sctp_send(sess, argc, argv, now);
    else if (strcmp(name, "sctp") == 0)
        ns_cmd_sctp(sess, argc, argv, now);
    else if (strcmp(name, "perf") == 0)
        ns_cmd_perf(sess, argc, argv, now);
    else
        ns_cmd_udp(sess, argc, argv, now);
    return sess;
}
