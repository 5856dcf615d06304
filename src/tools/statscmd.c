/* `nstack stats`: every counter group of the stack, the embedder's (device,
 * daemon) and the command engine's, grouped as nstat(8) does, or one JSON
 * object with -j; names after the command pick groups. */
#include <inttypes.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"

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

void ns_cmd_stats(struct ns_cmd_sess *sess, int argc, char *const *argv)
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
