/* `nstack neigh`: the neighbour table as iproute2's `ip neigh` shows and
 * edits it (ip-neighbour(8)): the same keywords (to, dev, lladdr, nud), the
 * same line format and JSON keys, NOARP and NONE entries hidden unless asked
 * for with `nud`, flush sparing PERMANENT and NOARP entries. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"

/* iproute2 filters NONE entries with a ninth bit next to the NUD flags. */
#define NUD_F_NONE 0x100
#define NUD_F_ALL  0x1ff

struct nent {
    uint32_t ifindex;
    uint32_t addr; /* host order */
    uint8_t lladdr[NS_ETH_ALEN];
    uint8_t state;
    uint32_t probes, refcnt;
    uint64_t used, confirmed, updated;
};

struct nlist {
    struct nent *v;
    size_t n, cap;
    bool oom;
};

static uint32_t key_to_addr(const uint8_t *k)
{
    return (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
}

static void addr_to_key(uint32_t a, uint8_t k[4])
{
    k[0] = (uint8_t)(a >> 24);
    k[1] = (uint8_t)(a >> 16);
    k[2] = (uint8_t)(a >> 8);
    k[3] = (uint8_t)a;
}

static void visit(void *arg, const struct ns_neigh *n)
{
    struct nlist *l = arg;
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct nent *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->oom = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    struct nent *e = &l->v[l->n++];
    e->ifindex = n->ifindex;
    e->addr = key_to_addr(n->key);
    memcpy(e->lladdr, n->lladdr, NS_ETH_ALEN);
    e->state = n->state;
    e->probes = n->probes;
    e->refcnt = n->refcnt;
    e->used = n->used;
    e->confirmed = n->confirmed;
    e->updated = n->updated;
}

static int cmp_nent(const void *a, const void *b)
{
    const struct nent *x = a, *y = b;
    if (x->ifindex != y->ifindex)
        return x->ifindex < y->ifindex ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every entry, sorted by interface then address so output is stable. */
static bool collect(struct ns_stack *s, struct nlist *l)
{
    memset(l, 0, sizeof(*l));
    ns_neigh_foreach(&s->arp.tbl, visit, l);
    if (l->oom) {
        free(l->v);
        return false;
    }
    if (l->n > 1)
        qsort(l->v, l->n, sizeof(l->v[0]), cmp_nent);
    return true;
}

struct nfilter {
    uint32_t ifindex; /* 0 = any */
    uint32_t addr;
    uint8_t plen; /* 0 with addr 0 = any */
    bool have_to;
    uint32_t states; /* NUD bits plus NUD_F_NONE */
    bool have_nud;
    bool have_lladdr;
    struct ns_mac lladdr;
    const char *dst_str;
};

static bool filter_match(const struct nfilter *f, const struct nent *e)
{
    if (f->ifindex && e->ifindex != f->ifindex)
        return false;
    if (f->have_to) {
        uint32_t mask = f->plen ? ~0u << (32 - f->plen) : 0;
        if ((e->addr & mask) != (f->addr & mask))
            return false;
    }
    if (e->state == NS_NUD_NONE)
        return f->states & NUD_F_NONE;
    return f->states & e->state;
}

static uint64_t ago_s(uint64_t now, uint64_t t)
{
    return t && t < now ? (now - t) / NS_SEC : 0;
}

static void print_entry(struct ns_sbuf *b, struct ns_stack *s, const struct nent *e, bool json,
                        bool stats, bool first, uint64_t now)
{
    char dst[16], mac[18];
    ns_ip_fmt(e->addr, dst);
    ns_mac_format(e->lladdr, mac);
    struct ns_iface *ifc = ns_stack_iface(s, e->ifindex);
    const char *dev = ifc ? ifc->name : "?";
    /* Linux reports the link address only while it is valid. */
    bool show_ll = e->state & NS_NUD_VALID;
    if (json) {
        ns_sbuf_puts(b, first ? "{" : ",{");
        ns_sbuf_printf(b, "\"dst\":\"%s\",\"dev\":", dst);
        ns_sbuf_json_str(b, dev);
        if (show_ll)
            ns_sbuf_printf(b, ",\"lladdr\":\"%s\"", mac);
        if (stats)
            ns_sbuf_printf(b,
                           ",\"refcnt\":%" PRIu32 ",\"used\":%" PRIu64 ",\"confirmed\":%" PRIu64
                           ",\"updated\":%" PRIu64 ",\"probes\":%" PRIu32,
                           e->refcnt, ago_s(now, e->used), ago_s(now, e->confirmed),
                           ago_s(now, e->updated), e->probes);
        ns_sbuf_puts(b, ",\"state\":[");
        if (e->state)
            ns_sbuf_printf(b, "\"%s\"", ns_nud_name(e->state));
        ns_sbuf_puts(b, "]}");
        return;
    }
    ns_sbuf_printf(b, "%s dev %s", dst, dev);
    if (show_ll)
        ns_sbuf_printf(b, " lladdr %s", mac);
    if (stats)
        ns_sbuf_printf(b,
                       " ref %" PRIu32 " used %" PRIu64 "/%" PRIu64 "/%" PRIu64 " probes %" PRIu32,
                       e->refcnt, ago_s(now, e->used), ago_s(now, e->confirmed),
                       ago_s(now, e->updated), e->probes);
    if (e->state)
        ns_sbuf_printf(b, " %s", ns_nud_name(e->state));
    ns_sbuf_puts(b, "\n");
}

/* Parse ip-neighbour(8) keywords. `op` names the subcommand for messages.
 * Returns false after printing an error and finishing sess. */
static bool parse_args(struct ns_cmd_sess *sess, const char *op, int argc, char *const *argv,
                       bool allow_prefix, bool allow_lladdr, struct nfilter *f)
{
    struct ns_stack *s = sess->env->s;
    for (int i = 0; i < argc; i++) {
        const char *k = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool kw = strcmp(k, "dev") == 0 || strcmp(k, "to") == 0 || strcmp(k, "nud") == 0 ||
                  (allow_lladdr && strcmp(k, "lladdr") == 0);
        if (kw && !v) {
            ns_cmd_errorf(sess, "neigh %s: '%s' needs an argument (see: nstack neigh --help)", op,
                          k);
            ns_cmd_finish(sess, NS_EXIT_USAGE);
            return false;
        }
        if (strcmp(k, "dev") == 0) {
            struct ns_iface *ifc = ns_stack_iface_by_name(s, v);
            if (!ifc) {
                ns_cmd_errorf(sess, "neigh %s: cannot find device \"%s\"", op, v);
                ns_cmd_finish(sess, NS_EXIT_FAIL);
                return false;
            }
            f->ifindex = ifc->index;
            i++;
        } else if (strcmp(k, "nud") == 0) {
            int st;
            if (strcmp(v, "all") == 0)
                st = NUD_F_ALL;
            else if ((st = ns_nud_parse(v)) == 0)
                st = NUD_F_NONE;
            if (st < 0) {
                ns_cmd_errorf(sess, "neigh %s: bad nud state '%s'", op, v);
                ns_cmd_finish(sess, NS_EXIT_USAGE);
                return false;
            }
            f->states = f->have_nud ? f->states | (uint32_t)st : (uint32_t)st;
            f->have_nud = true;
            i++;
        } else if (allow_lladdr && strcmp(k, "lladdr") == 0) {
            if (!ns_mac_parse(v, &f->lladdr)) {
                ns_cmd_errorf(sess, "neigh %s: bad lladdr '%s'", op, v);
                ns_cmd_finish(sess, NS_EXIT_USAGE);
                return false;
            }
            f->have_lladdr = true;
            i++;
        } else {
            const char *a = k;
            if (strcmp(k, "to") == 0)
                a = argv[++i];
            if (f->have_to) {
                ns_cmd_errorf(sess, "neigh %s: unexpected argument '%s' (see: nstack neigh --help)",
                              op, a);
                ns_cmd_finish(sess, NS_EXIT_USAGE);
                return false;
            }
            bool ok = allow_prefix ? ns_ip_parse_prefix(a, &f->addr, &f->plen)
                                   : ns_ip_parse_addr(a, &f->addr);
            if (!ok) {
                ns_cmd_errorf(sess, "bad address '%s'", a);
                ns_cmd_finish(sess, NS_EXIT_USAGE);
                return false;
            }
            if (!allow_prefix)
                f->plen = 32;
            f->have_to = true;
            f->dst_str = a;
        }
    }
    return true;
}

static void neigh_show(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct ns_stack *s = sess->env->s;
    struct nfilter f = {.states = 0xff & ~NS_NUD_NOARP};
    if (!parse_args(sess, "show", argc, argv, true, false, &f))
        return;
    struct nlist l;
    if (!collect(s, &l)) {
        ns_cmd_errorf(sess, "neigh show: out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    bool json = sess->flags & NS_CTL_F_JSON, stats = sess->flags & NS_CTL_F_STATS;
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    if (json)
        ns_sbuf_puts(&b, "[");
    bool first = true;
    for (size_t i = 0; i < l.n; i++) {
        if (!filter_match(&f, &l.v[i]))
            continue;
        print_entry(&b, s, &l.v[i], json, stats, first, now);
        first = false;
    }
    if (json)
        ns_sbuf_puts(&b, "]\n");
    free(l.v);
    ns_cmd_put_sbuf(sess, 1, &b);
    ns_sbuf_free(&b);
    ns_cmd_finish(sess, NS_EXIT_OK);
}

/* The interface for add/del when dev is omitted: the only one there is. */
static bool default_dev(struct ns_cmd_sess *sess, const char *op, struct nfilter *f)
{
    if (f->ifindex)
        return true;
    if (sess->env->s->link.n_ifaces == 1) {
        f->ifindex = 1;
        return true;
    }
    ns_cmd_errorf(sess, "neigh %s: dev is required", op);
    ns_cmd_finish(sess, NS_EXIT_USAGE);
    return false;
}

static const struct nent *find(const struct nlist *l, uint32_t ifindex, uint32_t addr)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].ifindex == ifindex && l->v[i].addr == addr)
            return &l->v[i];
    return NULL;
}

static void neigh_set(struct ns_cmd_sess *sess, const char *op, int argc, char *const *argv,
                      uint64_t now)
{
    struct ns_stack *s = sess->env->s;
    struct nfilter f = {0};
    if (!parse_args(sess, op, argc, argv, false, true, &f))
        return;
    if (!f.have_to) {
        ns_cmd_errorf(sess, "neigh %s: destination address required (see: nstack neigh --help)",
                      op);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!default_dev(sess, op, &f))
        return;
    uint8_t state = NS_NUD_PERMANENT;
    if (f.have_nud) {
        if (f.states != NS_NUD_PERMANENT && f.states != NS_NUD_NOARP &&
            f.states != NS_NUD_REACHABLE && f.states != NS_NUD_STALE) {
            ns_cmd_errorf(sess, "neigh %s: nud must be permanent, noarp, reachable or stale", op);
            ns_cmd_finish(sess, NS_EXIT_USAGE);
            return;
        }
        state = (uint8_t)f.states;
    }
    struct nlist l;
    if (!collect(s, &l)) {
        ns_cmd_errorf(sess, "neigh %s: out of memory", op);
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    const struct nent *cur = find(&l, f.ifindex, f.addr);
    int status = NS_EXIT_OK;
    if (strcmp(op, "add") == 0 && cur) {
        ns_cmd_errorf(sess, "neigh add %s: entry exists (use: nstack neigh replace)", f.dst_str);
        status = NS_EXIT_USAGE;
    } else if (strcmp(op, "change") == 0 && !cur) {
        ns_cmd_errorf(sess, "neigh change %s: no such entry", f.dst_str);
        status = NS_EXIT_USAGE;
    } else if (!f.have_lladdr && !(cur && (cur->state & NS_NUD_VALID))) {
        ns_cmd_errorf(sess, "neigh %s %s: lladdr is required", op, f.dst_str);
        status = NS_EXIT_USAGE;
    } else {
        uint8_t key[4], ll[NS_ETH_ALEN];
        addr_to_key(f.addr, key);
        memcpy(ll, f.have_lladdr ? f.lladdr.b : cur->lladdr, NS_ETH_ALEN);
        int r = ns_neigh_admin_set(&s->arp.tbl, f.ifindex, key, ll, state, now);
        if (r < 0) {
            ns_cmd_errorf(sess, "neigh %s %s: %s", op, f.dst_str, strerror(-r));
            status = NS_EXIT_USAGE;
        }
    }
    free(l.v);
    ns_cmd_finish(sess, status);
}

static void neigh_del(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct nfilter f = {0};
    if (!parse_args(sess, "del", argc, argv, false, false, &f))
        return;
    if (!f.have_to) {
        ns_cmd_errorf(sess, "neigh del: destination address required (see: nstack neigh --help)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!default_dev(sess, "del", &f))
        return;
    uint8_t key[4];
    addr_to_key(f.addr, key);
    int r = ns_neigh_admin_del(&sess->env->s->arp.tbl, f.ifindex, key, now);
    if (r == -ENOENT) {
        ns_cmd_errorf(sess, "neigh del %s: no such entry", f.dst_str);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (r < 0) {
        ns_cmd_errorf(sess, "neigh del %s: %s", f.dst_str, strerror(-r));
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    ns_cmd_finish(sess, NS_EXIT_OK);
}

static void neigh_flush(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct ns_stack *s = sess->env->s;
    const uint8_t spared = NS_NUD_PERMANENT | NS_NUD_NOARP;
    struct nfilter f = {.states = (uint8_t)~spared};
    if (!parse_args(sess, "flush", argc, argv, true, false, &f))
        return;
    unsigned n = 0;
    if (!f.have_to && !f.have_nud) {
        n = ns_neigh_flush(&s->arp.tbl, f.ifindex, (uint8_t)~spared, now);
    } else {
        struct nlist l;
        if (!collect(s, &l)) {
            ns_cmd_errorf(sess, "neigh flush: out of memory");
            ns_cmd_finish(sess, NS_EXIT_FAIL);
            return;
        }
        for (size_t i = 0; i < l.n; i++) {
            if (!filter_match(&f, &l.v[i]))
                continue;
            uint8_t key[4];
            addr_to_key(l.v[i].addr, key);
            if (ns_neigh_admin_del(&s->arp.tbl, l.v[i].ifindex, key, now) == 0)
                n++;
        }
        free(l.v);
    }
    if (sess->flags & NS_CTL_F_STATS) {
        if (n)
            ns_cmd_printf(sess, 1,
                          "\n*** Round 1, deleting %u entries ***\n"
                          "*** Flush is complete after 1 round ***\n",
                          n);
        else
            ns_cmd_printf(sess, 1, "Nothing to flush.\n");
    }
    ns_cmd_finish(sess, NS_EXIT_OK);
}

void ns_cmd_neigh(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    const char *sub = argc > 1 ? argv[1] : "show";
    int rest = argc > 1 ? argc - 2 : 0;
    char *const *rv = argv + 2;
    if (strcmp(sub, "show") == 0 || strcmp(sub, "list") == 0 || strcmp(sub, "ls") == 0)
        neigh_show(sess, rest, rv, now);
    else if (strcmp(sub, "add") == 0 || strcmp(sub, "replace") == 0 || strcmp(sub, "change") == 0)
        neigh_set(sess, sub, rest, rv, now);
    else if (strcmp(sub, "del") == 0 || strcmp(sub, "delete") == 0)
        neigh_del(sess, rest, rv, now);
    else if (strcmp(sub, "flush") == 0)
        neigh_flush(sess, rest, rv, now);
    else if (strcmp(sub, "dev") == 0 || strcmp(sub, "to") == 0 || strcmp(sub, "nud") == 0)
        neigh_show(sess, argc - 1, argv + 1, now);
    else {
        ns_cmd_errorf(sess,
                      "neigh: unknown subcommand '%s' (try: show, add, replace, change, del, "
                      "flush)",
                      sub);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
    }
}
