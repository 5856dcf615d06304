/* The nstack binary: global options, then `daemon`, `simdemo`, or a command
 * run by a daemon over its control socket (see docs/cli.md). */
#include <stdio.h>
#include <string.h>

#include "tools/cmd.h"
#include "tools/ctl.h"
#include "tools/main.h"

int main(int argc, char **argv)
{
    const char *ctl = NULL;
    uint8_t flags = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(ns_cmd_usage_main, stdout);
            return 0;
        }
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        for (const char *p = a + 1; *p; p++) {
            if (*p == 'j') {
                flags |= NS_CTL_F_JSON;
            } else if (*p == 's') {
                flags |= NS_CTL_F_STATS;
            } else if (*p == 'C') {
                ctl = p[1] ? p + 1 : i + 1 < argc ? argv[++i] : NULL;
                if (!ctl) {
                    fprintf(stderr, "nstack: -C needs a socket path\n");
                    return 2;
                }
                break;
            } else {
                fprintf(stderr, "nstack: unknown option '-%c' (see: nstack --help)\n", *p);
                return 2;
            }
        }
    }
    if (i >= argc) {
        fputs(ns_cmd_usage_main, stderr);
        return 2;
    }
    const char *cmd = argv[i];
    if (strcmp(cmd, "daemon") == 0)
        return ns_daemon_main(argc - i, argv + i);
    if (strcmp(cmd, "simdemo") == 0)
        return ns_simdemo_main(argc - i, argv + i);
    if (strcmp(cmd, "help") == 0) {
        const char *u = i + 1 < argc ? ns_cmd_usage(argv[i + 1]) : NULL;
        fputs(u ? u : ns_cmd_usage_main, stdout);
        return 0;
    }
    if (!ns_cmd_known(cmd)) {
        fprintf(stderr,
                "nstack: unknown command '%s' (try: ping, neigh, stats, sysctl, addr, udp)\n", cmd);
        return 2;
    }
    if (ns_cmd_wants_help(argc - i, argv + i)) {
        fputs(ns_cmd_usage(cmd), stdout);
        return 0;
    }
    return ns_client_main(ctl, flags, argc - i, argv + i);
}
