/* `nstack addr [show] [dev NAME]`: the stack's interfaces and addresses in
 * iproute2's `ip addr` format, or its JSON with -j. */
#include <inttypes.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"

void ns_cmd_addr(struct ns_cmd_sess *sess, int argc, char *const *argv)
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
