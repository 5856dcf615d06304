/* `nstack sysctl`: the stack's tunables read and set in sysctl(8)'s format
 * (-a, -w, -n, KEY=VALUE), or as a JSON object with -j; and the KEY=VALUE
 * parser the daemon's --sysctl shares. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"

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

void ns_cmd_sysctl(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
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
