/* Usage texts of `nstack` and its commands, shared by the client (which
 * answers --help without a daemon) and the daemon. */
#include <string.h>

#include "tools/cmd.h"

const char ns_cmd_usage_main[] =
    "Usage: nstack [-C PATH] [-j] [-s] COMMAND [ARGS...]\n"
    "       nstack daemon --dev tap:NAME|afpacket:IFNAME --addr A.B.C.D/LEN [OPTIONS]\n"
    "       nstack simdemo\n"
    "\n"
    "Commands (run by the daemon that owns the stack):\n"
    "  ping [-c N] [-i SEC] [-s SIZE] [-W SEC] [-q] DEST   echo requests, iputils format\n"
    "  neigh show|add|replace|change|del|flush ...           the ARP table, ip-neigh format\n"
    "  stats [GROUP...]                                      protocol counters\n"
    "  sysctl KEY... | -w KEY=VALUE... | -a                  tunables\n"
    "  addr                                                  interfaces, ip-addr format\n"
    "  udp send [-p SPORT] DEST PORT [TEXT] | udp recv PORT [-c N] [-W SEC]\n"
    "  sctp [show [ID]] | sctp send HOST PORT TEXT           SCTP associations; a message\n"
    "  perf -H HOST [-p PORT] [-l SECS] [-m SIZE] [-n N] [-u] [-D SEC]  SCTP_STREAM test\n"
    "\n"
    "Global options:\n"
    "  -C PATH   control socket (default: $NSTACK_CTL, else the only socket in /run/nstack)\n"
    "  -j        JSON output (neigh, stats, sysctl, addr, sctp)\n"
    "  -s        more detail (neigh show: ref/used/probes; neigh flush: a summary)\n"
    "  -h, --help  this text; nstack COMMAND --help for a command\n";

static const char usage_ping[] =
    "Usage: nstack ping [-c N] [-i SEC] [-s SIZE] [-W SEC] [-q] DEST\n"
    "  -c N      stop after N echo requests (default: until ^C)\n"
    "  -i SEC    interval between requests (default 1, at least 0.001)\n"
    "  -s SIZE   payload bytes (default 56, 0-65507)\n"
    "  -W SEC    wait for replies after the last request (default 10)\n"
    "  -q        only the first line and the statistics\n"
    "Exit status: 0 if any reply came back, 1 if none, 2 on other errors.\n";

static const char usage_neigh[] =
    "Usage: nstack [-j] [-s] neigh [show] [dev DEV] [to ADDR[/LEN]] [nud STATE|all]...\n"
    "       nstack neigh add|replace|change ADDR lladdr MAC [dev DEV]\n"
    "                    [nud permanent|noarp|reachable|stale]      (default: permanent)\n"
    "       nstack neigh del ADDR [dev DEV]\n"
    "       nstack [-s] neigh flush [dev DEV] [to ADDR[/LEN]] [nud STATE]\n"
    "Without nud, show hides NOARP and NONE entries and flush spares PERMANENT and NOARP\n"
    "ones, as ip-neighbour(8). dev may be omitted when the stack has one interface.\n";

static const char usage_stats[] = "Usage: nstack [-j] stats [GROUP...]\n"
                                  "Counters of every layer (eth, arp, arp_cache, ip, icmp, udp),\n"
                                  "of the device and of the daemon itself.\n";

static const char usage_sysctl[] = "Usage: nstack [-j] sysctl [-n] KEY...\n"
                                   "       nstack sysctl -w KEY=VALUE...\n"
                                   "       nstack [-j] sysctl -a\n"
                                   "Prints \"KEY = VALUE\" as sysctl(8); -n prints values only.\n";

static const char usage_addr[] = "Usage: nstack [-j] addr [show] [dev DEV]\n"
                                 "Interfaces with state, MAC, address and MTU, as ip-address(8).\n";

static const char usage_udp[] =
    "Usage: nstack udp send [-p SPORT] DEST PORT [TEXT...]\n"
    "       nstack udp recv PORT [-c N] [-W SEC]\n"
    "send: one datagram of TEXT (words joined by spaces), or of standard input\n"
    "      (at most 65507 bytes) when TEXT is absent.\n"
    "recv: prints \"from A.B.C.D:PORT len N: TEXT\" per datagram (non-printable bytes\n"
    "      escaped); ends after N datagrams, after SEC seconds, or on ^C. Exit status\n"
    "      0 if N datagrams (or, without -c, at least one) arrived, else 1.\n";

static const char usage_sctp[] =
    "Usage: nstack [-j] sctp [show [ID]]\n"
    "       nstack sctp send [-i SID] [-P PPID] [-W SEC] HOST PORT TEXT...\n"
    "       nstack sctp send [-i SID] [-P PPID] [-W SEC] -m SIZE HOST PORT\n"
    "show: the SCTP associations (or association ID): state, addresses and ports,\n"
    "streams, congestion and receive windows, RTT/RTO, TSNs, one line per path, and\n"
    "counters.\n"
    "send: one message of TEXT (words joined by spaces) on stream SID (default 0) with\n"
    "ppid PPID (default 0) over a new association, then prints each message that comes\n"
    "back within SEC seconds (default 1) as \"reply stream S ppid P len N: TEXT\".\n"
    "-m SIZE: SIZE bytes of a pattern instead of TEXT (at most 1048576); each reply is\n"
    "checked byte for byte (\"same as sent\" or \"differs from byte K\", exit 1).\n"
    "HOST:UDPPORT: SCTP over UDP encapsulation to that port (RFC 6951); it stays the\n"
    "stack's port for HOST. Without it: sysctl sctp.encap_port (0 = raw IP).\n";

static const char usage_perf[] =
    "Usage: nstack perf -H HOST [-p PORT] [-l SECS] [-m MSGSIZE] [-n STREAMS] [-u] [-k]\n"
    "                   [-D INTERVAL] [-S SNDBUF] [-s RCVBUF]\n"
    "netperf's SCTP_STREAM test against a daemon's --serve perf:PORT service: the\n"
    "daemon sends MSGSIZE-byte messages to HOST:PORT as fast as it can for SECS and\n"
    "prints netperf's table (throughput as the server received it, CPU utilization\n"
    "and service demand of both daemon processes) and the message rate.\n"
    "  -H HOST[:UDPPORT]  the server; UDPPORT: its UDP encapsulation port (RFC 6951),\n"
    "              which stays the stack's port for HOST (default: sysctl\n"
    "              sctp.encap_port; 0 = raw IP, 9899 in hosted mode)\n"
    "  -p PORT     server port (default 5001)\n"
    "  -l SECS     test length (default 10)\n"
    "  -m MSGSIZE  message size in bytes (default 1024, at most 1048576; above 262144\n"
    "              the daemon needs --sysctl sctp.max_message_bytes=MSGSIZE)\n"
    "  -n STREAMS  outbound streams asked for; those granted are used in turn\n"
    "              (default 1)\n"
    "  -u          unordered delivery\n"
    "  -k          the peer is a plain sink (tsctp, --serve discard): no report;\n"
    "              sender-side figures once the shutdown shows all data acknowledged\n"
    "  -D SEC      interim results every SEC seconds\n"
    "  -S SNDBUF   the sending socket's SO_SNDBUF\n"
    "  -s RCVBUF   the sending socket's SO_RCVBUF\n"
    "^C ends the test early and prints the table for the time so far.\n";

static const struct {
    const char *name;
    const char *usage;
} cmds[] = {
    {"ping", usage_ping}, {"neigh", usage_neigh}, {"stats", usage_stats}, {"sysctl", usage_sysctl},
    {"addr", usage_addr}, {"udp", usage_udp},     {"sctp", usage_sctp},   {"perf", usage_perf},
};

bool ns_cmd_known(const char *name)
{
    return ns_cmd_usage(name) != NULL;
}

const char *ns_cmd_usage(const char *name)
{
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(cmds[i].name, name) == 0)
            return cmds[i].usage;
    return NULL;
}

bool ns_cmd_wants_help(int argc, char *const *argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0))
        return true;
    /* udp send's TEXT is data: only "udp send --help" asks for help. */
    bool send = argc > 1 && strcmp(argv[0], "udp") == 0 && strcmp(argv[1], "send") == 0;
    for (int i = 1; i < argc; i++) {
        if (send && i > 2)
            break;
        if (strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}
