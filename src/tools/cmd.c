/* Command sessions, dispatch, and the short commands: stats, sysctl, addr.
 * Output formats follow nstat-like grouping for stats, sysctl(8) for
 * sysctl and iproute2's `ip addr` for addr (see docs/cli.md). */
#include "tools/cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/ctl.h"
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
    s->hooks.icmp_event = on_icmp;
    s->hooks.ctx = env;
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
    if (env->s && env->s->hooks.ctx == env) {
        env->s->hooks.icmp_event = NULL;
        env->s->hooks.ctx = NULL;
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

/* ---- stats ---- */

NS_CTR_NAMES(cmd_ctr_names, NS_CMD_COUNTERS);

static size_t all_groups(struct ns_cmd_env *env, struct ns_ctr_group *g, size_t max)
{
    size_t n = ns_stack_counters(env->s, g, max);
    for (size_t i = 0; i < env->n_extra && n < max; i++)
        g[n++] = env->extra[i];
    if (n < max)
        g[n++] = NS_CTR_GROUP_NAMED("cmd", cmd_ctr_names, &env->stats);
    return n;
}

static void cmd_stats(struct ns_cmd_sess *sess, int argc, char *const *argv)
{
    struct ns_ctr_group g[24];
    size_t n = all_groups(sess->env, g, sizeof(g) / sizeof(g[0]));
    bool want[24] = {false};
    bool any_filter = false;
    for (int i = 1; i < argc; i++) {
        size_t k;
        for (k = 0; k < n; k++)
            if (strcmp(g[k].name, argv[i]) == 0)
                break;
        if (k == n) {
            struct ns_sbuf names;
            ns_sbuf_init(&names);
            for (k = 0; k < n; k++)
                ns_sbuf_printf(&names, "%s%s", k ? ", " : "", g[k].name);
            ns_cmd_errorf(sess, "stats: unknown group '%s' (groups: %s)", argv[i],
                          ns_sbuf_str(&names));
            ns_sbuf_free(&names);
            ns_cmd_finish(sess, NS_EXIT_USAGE);
            return;
        }
        want[k] = true;
        any_filter = true;
    }
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    bool json = sess->flags & NS_CTL_F_JSON;
    bool first = true;
    if (json)
        ns_sbuf_puts(&b, "{");
    for (size_t k = 0; k < n; k++) {
        if (any_filter && !want[k])
            continue;
        if (json) {
            if (!first)
                ns_sbuf_puts(&b, ",");
            ns_sbuf_json_str(&b, g[k].name);
            ns_sbuf_puts(&b, ":{");
            for (size_t i = 0; i < g[k].n; i++) {
                if (i)
                    ns_sbuf_puts(&b, ",");
                ns_sbuf_json_str(&b, g[k].names[i]);
                ns_sbuf_printf(&b, ":%" PRIu64, g[k].vals[i]);
            }
            ns_sbuf_puts(&b, "}");
        } else {
            ns_sbuf_printf(&b, "%s:\n", g[k].name);
            for (size_t i = 0; i < g[k].n; i++)
                ns_sbuf_printf(&b, "    %-24s %" PRIu64 "\n", g[k].names[i], g[k].vals[i]);
        }
        first = false;
    }
    if (json)
        ns_sbuf_puts(&b, "}\n");
    ns_cmd_put_sbuf(sess, 1, &b);
    ns_sbuf_free(&b);
    ns_cmd_finish(sess, b.oom ? NS_EXIT_FAIL : NS_EXIT_OK);
}

/* ---- sysctl ---- */

static const struct ns_sysctl_info *sysctl_info(const char *key)
{
    const struct ns_sysctl_info *in;
    for (size_t i = 0; (in = ns_sysctl_at(i)); i++)
        if (strcmp(in->key, key) == 0)
            return in;
    return NULL;
}

/* The shared core of `sysctl -w` and the daemon's --sysctl: 0, -ENOENT,
 * -EINVAL (bad syntax or value) or -ERANGE, with the message in err. */
static int sysctl_assign(struct ns_stack *s, const char *kv, uint64_t now, char *err, size_t len,
                         char *key_out, size_t key_len, uint32_t *val_out)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
        snprintf(err, len, "sysctl: '%s' must be of the form KEY=VALUE", kv);
        return -EINVAL;
    }
    char key[128];
    size_t kl = (size_t)(eq - kv);
    while (kl && kv[kl - 1] == ' ')
        kl--;
    if (kl >= sizeof(key))
        kl = sizeof(key) - 1;
    memcpy(key, kv, kl);
    key[kl] = '\0';
    const char *vs = eq + 1;
    while (*vs == ' ')
        vs++;
    const struct ns_sysctl_info *in = sysctl_info(key);
    if (!in) {
        snprintf(err, len, "sysctl: cannot stat %s: No such key", key);
        return -ENOENT;
    }
    uint32_t v;
    if (!ns_arg_u32(vs, 0, UINT32_MAX, &v)) {
        snprintf(err, len,
                 "sysctl: %s: invalid value '%s' (an integer in [%" PRIu32 ", %" PRIu32 "])", key,
                 vs, in->min, in->max);
        return -EINVAL;
    }
    int r = ns_sysctl_set(s, key, v, now);
    if (r == -ERANGE) {
        snprintf(err, len, "sysctl: %s: value %" PRIu32 " out of range [%" PRIu32 ", %" PRIu32 "]",
                 key, v, in->min, in->max);
        return r;
    }
    if (r == -EINVAL && strncmp(key, "sctp.rto_m", 10) == 0) {
        snprintf(err, len,
                 "sysctl: %s: value %" PRIu32 " conflicts with sctp.rto_min_ms <= sctp.rto_max_ms",
                 key, v);
        return r;
    }
    if (r < 0) {
        snprintf(err, len, "sysctl: %s: %s", key, strerror(-r));
        return r;
    }
    if (key_out)
        snprintf(key_out, key_len, "%s", key);
    if (val_out)
        *val_out = v;
    return 0;
}

int ns_cmd_sysctl_assign(struct ns_stack *s, const char *kv, uint64_t now, char *err, size_t errlen)
{
    return sysctl_assign(s, kv, now, err, errlen, NULL, 0, NULL) < 0 ? -1 : 0;
}

static void sysctl_line(struct ns_sbuf *b, bool json, bool values_only, bool *first,
                        const char *key, uint32_t v)
{
    if (json) {
        ns_sbuf_puts(b, *first ? "{" : ",");
        ns_sbuf_json_str(b, key);
        ns_sbuf_printf(b, ":%" PRIu32, v);
    } else if (values_only) {
        ns_sbuf_printf(b, "%" PRIu32 "\n", v);
    } else {
        ns_sbuf_printf(b, "%s = %" PRIu32 "\n", key, v);
    }
    *first = false;
}

static void cmd_sysctl(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    bool all = false, write = false, values_only = false;
    bool json = sess->flags & NS_CTL_F_JSON;
    int nkeys = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1]) {
            for (const char *p = a + 1; *p; p++) {
                if (*p == 'a' || *p == 'A')
                    all = true;
                else if (*p == 'w')
                    write = true;
                else if (*p == 'n')
                    values_only = true;
                else {
                    ns_cmd_errorf(sess,
                                  "sysctl: invalid option -- '%c' (see: nstack sysctl --help)", *p);
                    ns_cmd_finish(sess, NS_EXIT_USAGE);
                    return;
                }
            }
        } else {
            nkeys++;
        }
    }
    if (!all && nkeys == 0) {
        ns_cmd_errorf(sess, "sysctl: no key given (try: nstack sysctl -a)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    bool first = true;
    int status = NS_EXIT_OK;
    if (all) {
        const struct ns_sysctl_info *in;
        for (size_t i = 0; (in = ns_sysctl_at(i)); i++) {
            uint32_t v = 0;
            ns_sysctl_get(sess->env->s, in->key, &v);
            sysctl_line(&b, json, values_only, &first, in->key, v);
        }
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1])
            continue;
        char err[256];
        if (write || strchr(a, '=')) {
            char key[128];
            uint32_t v;
            if (sysctl_assign(sess->env->s, a, now, err, sizeof(err), key, sizeof(key), &v) < 0) {
                ns_cmd_errorf(sess, "%s", err);
                status = NS_EXIT_FAIL;
                continue;
            }
            sysctl_line(&b, json, values_only, &first, key, v);
        } else {
            uint32_t v;
            if (ns_sysctl_get(sess->env->s, a, &v) < 0) {
                ns_cmd_errorf(sess, "sysctl: cannot stat %s: No such key", a);
                status = NS_EXIT_FAIL;
                continue;
            }
            sysctl_line(&b, json, values_only, &first, a, v);
        }
    }
    if (json)
        ns_sbuf_puts(&b, first ? "{}\n" : "}\n");
    ns_cmd_put_sbuf(sess, 1, &b);
    ns_sbuf_free(&b);
    ns_cmd_finish(sess, status);
}

/* ---- addr ---- */

static void cmd_addr(struct ns_cmd_sess *sess, int argc, char *const *argv)
{
    struct ns_stack *s = sess->env->s;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "show") == 0 || strcmp(argv[i], "list") == 0)
            continue;
        if (strcmp(argv[i], "dev") == 0 && i + 1 < argc) {
            only = argv[++i];
            continue;
        }
        if (!only && ns_stack_iface_by_name(s, argv[i])) {
            only = argv[i];
            continue;
        }
        ns_cmd_errorf(sess, "addr: unexpected argument '%s' (see: nstack addr --help)", argv[i]);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (only && !ns_stack_iface_by_name(s, only)) {
        ns_cmd_errorf(sess, "addr: cannot find device \"%s\"", only);
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    bool json = sess->flags & NS_CTL_F_JSON;
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    if (json)
        ns_sbuf_puts(&b, "[");
    bool first = true;
    for (uint32_t i = 1; i <= s->link.n_ifaces; i++) {
        struct ns_iface *ifc = ns_stack_iface(s, i);
        if (only && strcmp(only, ifc->name) != 0)
            continue;
        char mac[18], a[16], brd[16];
        ns_mac_format(ifc->mac.b, mac);
        ns_ip_fmt(ifc->addr, a);
        bool has_brd = ifc->addr && ifc->plen < 31;
        uint32_t mask = ifc->plen ? ~0u << (32 - ifc->plen) : 0;
        ns_ip_fmt(ifc->addr | ~mask, brd);
        const char *state = ifc->up ? "UP" : "DOWN";
        if (json) {
            if (!first)
                ns_sbuf_puts(&b, ",");
            ns_sbuf_printf(&b, "{\"ifindex\":%" PRIu32 ",\"ifname\":", ifc->index);
            ns_sbuf_json_str(&b, ifc->name);
            ns_sbuf_printf(&b,
                           ",\"flags\":[\"BROADCAST\"%s],\"mtu\":%" PRIu32
                           ",\"operstate\":\"%s\",\"link_type\":\"ether\",\"address\":\"%s\","
                           "\"broadcast\":\"ff:ff:ff:ff:ff:ff\",\"addr_info\":[",
                           ifc->up ? ",\"UP\",\"LOWER_UP\"" : "", ifc->mtu, state, mac);
            if (ifc->addr) {
                ns_sbuf_printf(&b, "{\"family\":\"inet\",\"local\":\"%s\",\"prefixlen\":%u", a,
                               ifc->plen);
                if (has_brd)
                    ns_sbuf_printf(&b, ",\"broadcast\":\"%s\"", brd);
                ns_sbuf_puts(&b, ",\"scope\":\"global\",\"label\":");
                ns_sbuf_json_str(&b, ifc->name);
                ns_sbuf_puts(&b, "}");
            }
            ns_sbuf_puts(&b, "]}");
        } else {
            ns_sbuf_printf(&b, "%" PRIu32 ": %s: <BROADCAST%s> mtu %" PRIu32 " state %s\n",
                           ifc->index, ifc->name, ifc->up ? ",UP,LOWER_UP" : "", ifc->mtu, state);
            ns_sbuf_printf(&b, "    link/ether %s brd ff:ff:ff:ff:ff:ff\n", mac);
            if (ifc->addr) {
                ns_sbuf_printf(&b, "    inet %s/%u", a, ifc->plen);
                if (has_brd)
                    ns_sbuf_printf(&b, " brd %s", brd);
                ns_sbuf_printf(&b, " scope global %s\n", ifc->name);
            }
        }
        first = false;
    }
    if (json)
        ns_sbuf_puts(&b, "]\n");
    ns_cmd_put_sbuf(sess, 1, &b);
    ns_sbuf_free(&b);
    ns_cmd_finish(sess, NS_EXIT_OK);
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
        cmd_stats(sess, argc, argv);
    else if (strcmp(name, "sysctl") == 0)
        cmd_sysctl(sess, argc, argv, now);
    else if (strcmp(name, "addr") == 0)
        cmd_addr(sess, argc, argv);
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
