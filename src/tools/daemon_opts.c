/* `nstack daemon`'s command line: the usage text (--help) and the option
 * parser that fills struct daemon_opts (daemon_priv.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/daemon_priv.h"
#include "tools/text.h"

/* How long a stop waits for SCTP shutdowns before aborting what is left. */
#define DEFAULT_STOP_TIMEOUT_US 3000000u

static const char usage_daemon[] =
    "Usage: nstack daemon --dev tap:NAME|afpacket:IFNAME --addr A.B.C.D/LEN [OPTIONS]\n"
    "       nstack daemon --sctp-udp [ADDR:]PORT [OPTIONS]   (hosted mode: no root, no TAP)\n"
    "  --sctp-udp [ADDR:]PORT  SCTP over UDP (RFC 6951) on a host UDP socket bound to\n"
    "                        ADDR:PORT (ADDR default 0.0.0.0; an empty PORT is 9899);\n"
    "                        peers' port: sysctl sctp.encap_port (default 9899 here)\n"
    "  --sctp-encap PORT     with --dev: also SCTP over nstack's own UDP, on PORT and\n"
    "                        to PORT (sysctls sctp.udp_port and sctp.encap_port)\n"
    "  --gw A.B.C.D          default gateway\n"
    "  --mac MAC             the stack's MAC (default: derived from the interface name)\n"
    "  --mtu N               MTU (default: the interface's)\n"
    "  --ctl PATH            control socket (default: $NSTACK_CTL, else /run/nstack/NAME.sock;\n"
    "                        hosted: DIR/udp-PORT.sock, DIR /run/nstack for root, else\n"
    "                        $XDG_RUNTIME_DIR/nstack, else /tmp/nstack-UID)\n"
    "  --pcap FILE           record every frame in and out (hosted: every datagram)\n"
    "  --no-offload          hosted: no UDP GSO/GRO, so tcpdump on the host sees each\n"
    "                        datagram as sent (slower)\n"
    "  --sysctl KEY=VALUE    set a tunable at start (repeatable)\n"
    "  --serve SERVICE:PORT  run a service (repeatable): udp-echo, and over SCTP\n"
    "                        discard, echo, perf (the server of `nstack perf`)\n"
    "  --rcvq-lock           ablation: a lock per SCTP receive queue operation\n"
    "  --seed N              random seed (default: from the OS)\n"
    "  --stop-timeout SECS   on SIGINT/SIGTERM, time for SCTP associations to shut down\n"
    "                        gracefully before the rest are aborted (default 3; 0: abort)\n"
    "Runs in the foreground until SIGINT or SIGTERM; a second signal stops at once.\n";

static int take_value(int argc, char **argv, int *i, const char *name, const char **out)
{
    const char *a = argv[*i];
    size_t l = strlen(name);
    if (strncmp(a, name, l) != 0)
        return 0;
    if (a[l] == '=') {
        *out = a + l + 1;
        return 1;
    }
    if (a[l] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "nstack: daemon: %s needs a value\n", name);
        return -1;
    }
    *out = argv[++*i];
    return 1;
}

int daemon_parse_opts(int argc, char **argv, struct daemon_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->stop_timeout_us = DEFAULT_STOP_TIMEOUT_US;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_daemon, stdout);
            return 1;
        }
#define OPT(name, field)                                                                           \
    if ((r = take_value(argc, argv, &i, name, &v)) < 0)                                            \
        return -1;                                                                                 \
    if (r) {                                                                                       \
        field;                                                                                     \
        continue;                                                                                  \
    }
        OPT("--dev", o->dev = v)
        OPT("--addr", o->addr = v)
        OPT("--gw", o->gw = v)
        OPT("--mac", o->mac = v)
        OPT("--ctl", o->ctl = v)
        OPT("--pcap", o->pcap = v)
        OPT("--sctp-udp", o->sctp_udp = v)
        OPT("--sctp-encap", o->sctp_encap = v)
        OPT(
            "--mtu", if (!ns_arg_u32(v, 68, 65535, &o->mtu)) {
                fprintf(stderr, "nstack: daemon: bad --mtu '%s' (68-65535)\n", v);
                return -1;
            })
        OPT("--seed", {
            uint32_t hi;
            if (!ns_arg_u32(v, 1, UINT32_MAX, &hi)) {
                fprintf(stderr, "nstack: daemon: bad --seed '%s' (1-4294967295)\n", v);
                return -1;
            }
            o->seed = hi;
        })
        OPT("--stop-timeout", {
            if (!ns_arg_seconds(v, &o->stop_timeout_us) || o->stop_timeout_us > 3600000000u) {
                fprintf(stderr, "nstack: daemon: bad --stop-timeout '%s' (0-3600 seconds)\n", v);
                return -1;
            }
        })
        OPT("--sysctl", {
            if (o->nsysctl == DAEMON_MAX_SYSCTL) {
                fprintf(stderr, "nstack: daemon: too many --sysctl\n");
                return -1;
            }
            o->sysctl[o->nsysctl++] = v;
        })
        OPT("--serve", {
            if (o->nserve == DAEMON_MAX_SERVE) {
                fprintf(stderr, "nstack: daemon: too many --serve\n");
                return -1;
            }
            o->serve[o->nserve++] = v;
        })
#undef OPT
        if (strcmp(argv[i], "--rcvq-lock") == 0) {
            o->rcvq_lock = true;
            continue;
        }
        if (strcmp(argv[i], "--no-offload") == 0) {
            o->no_offload = true;
            continue;
        }
        fprintf(stderr, "nstack: daemon: unknown option '%s' (see: nstack daemon --help)\n",
                argv[i]);
        return -1;
    }
    if (o->sctp_udp) {
        if (o->dev || o->addr || o->gw || o->mac || o->mtu || o->sctp_encap) {
            fprintf(stderr, "nstack: daemon: --sctp-udp runs without a device: no --dev, --addr, "
                            "--gw, --mac, --mtu or --sctp-encap\n");
            return -1;
        }
        return 0;
    }
    if (o->no_offload) {
        fprintf(stderr, "nstack: daemon: --no-offload goes with --sctp-udp (a TAP's offload is "
                        "--dev tap:NAME,offload)\n");
        return -1;
    }
    if (!o->dev || !o->addr) {
        fprintf(stderr, "nstack: daemon: --dev and --addr (or --sctp-udp) are required (see: "
                        "nstack daemon --help)\n");
        return -1;
    }
    return 0;
}
