/* Interoperability with usrsctp over raw IPv4 (SCTP as IP protocol 132, no
 * encapsulation) between two network namespaces the test creates:
 *
 *   namespace A: veth end VA, 198.18.7.1/24, usrsctp (raw IPv4 sockets)
 *   namespace B: veth end VB, no kernel address, nstack 198.18.7.2/24 on
 *                AF_PACKET (ARP, IPv4 and SCTP of its own)
 *
 * usrsctp_init(0, ...) opens raw IPPROTO_SCTP sockets instead of a UDP
 * one. A network namespace is per thread: the main thread enters A, starts
 * usrsctp there (its sockets and threads stay in A), then enters B, where
 * it opens the AF_PACKET device and starts nstack's loop threads. This
 * kernel has no SCTP module; with usrsctp's raw socket open in A the
 * kernel there does not answer SCTP packets with protocol unreachable.
 *
 * Cleanup: a child forked before anything else waits on a pipe and removes
 * both namespaces (and with them the veth pair) when the test process ends
 * in any way, SIGKILL included.
 *
 * Scenarios (interop_common.h): set-up from each side, graceful shutdown
 * from each side, ABORT from each side, INIT collision (held and racing),
 * heartbeats for 3 s and for 30 s, 10,000 messages plus one of 1 MiB each
 * way; every one captured on nstack's device and checked with tshark.
 * Arguments select scenarios by name, as in interop_usrsctp_udp.c.
 *
 * Exit 77 (skip) when not root or when the namespaces cannot be made.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "interop_common.h"

static char g_nsa[32], g_nsb[32], g_va[16];

static int sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "failed (%d): %s\n", rc, cmd);
    return rc;
}

/* The reaper: removes the namespaces once the write end of the pipe
 * closes, i.e. when this process is gone however it ended. */
static int start_reaper(void)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        close(p[1]);
        char c;
        while (read(p[0], &c, 1) != 0 && errno == EINTR)
            ;
        char cmd[160];
        snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null",
                 g_nsa, g_nsb);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    /* Kept open (not close-on-exec-safe to tshark, which is harmless:
     * tshark ends before we do). */
    return 0;
}

static int make_namespaces(void)
{
    unsigned pid = (unsigned)getpid() % 10000000u;
    snprintf(g_nsa, sizeof(g_nsa), "nsiura%u", pid);
    snprintf(g_nsb, sizeof(g_nsb), "nsiurb%u", pid);
    snprintf(g_va, sizeof(g_va), "viua%u", pid);
    snprintf(g_ifname, sizeof(g_ifname), "viub%u", pid);
    if (start_reaper() < 0)
        return -1;
    if (sh("ip netns add %s", g_nsa) || sh("ip netns add %s", g_nsb))
        return -1;
    for (int i = 0; i < 2; i++) {
        const char *n = i ? g_nsb : g_nsa;
        /* No IPv6 chatter (router solicitations, DAD) in the captures. */
        if (sh("ip netns exec %s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
               "net.ipv6.conf.default.disable_ipv6=1",
               n) ||
            sh("ip -n %s link set lo up", n))
            return -1;
    }
    if (sh("ip link add %s type veth peer name %s", g_va, g_ifname) ||
        sh("ip link set %s netns %s", g_va, g_nsa) ||
        sh("ip link set %s netns %s", g_ifname, g_nsb) ||
        sh("ip -n %s addr add 198.18.7.1/24 dev %s", g_nsa, g_va) ||
        sh("ip -n %s link set %s up", g_nsa, g_va) ||
        sh("ip -n %s link set %s up", g_nsb, g_ifname))
        return -1;
    return 0;
}

static int enter_ns(const char *name)
{
    char path[96];
    snprintf(path, sizeof(path), "/run/netns/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    int rc = setns(fd, CLONE_NEWNET);
    if (rc < 0)
        perror("setns");
    close(fd);
    return rc;
}

/* Linux (6.x) does not count a packet for a raw socket whose receive
 * buffer is full as delivered: with no SCTP module it then answers it
 * with ICMP protocol unreachable, which nstack takes as an ABORT (RFC 9260
 * App. C, ICMP7). usrsctp asks for a small buffer on its raw socket, and a
 * burst of a few hundred full-sized packets overflows it, so give it one
 * big enough for everything its receive window lets us send
 * (SO_RCVBUFFORCE: root, above net.core.rmem_max). Returns how many
 * sockets were enlarged. */
static int enlarge_raw_sctp_buffers(void)
{
    int n = 0;
    for (int fd = 3; fd < 1024; fd++) {
        int dom = 0, type = 0, proto = 0;
        socklen_t l = sizeof(int);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) < 0)
            continue;
        l = sizeof(int);
        (void)getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
        l = sizeof(int);
        (void)getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l);
        if (type != SOCK_RAW || proto != IPPROTO_SCTP || (dom != AF_INET && dom != AF_INET6))
            continue;
        int size = 16 << 20;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) == 0)
            n++;
    }
    return n;
}

static int group_teardown(void **state)
{
    for (int i = 0; i < 100 && usrsctp_finish() != 0; i++)
        sleep_ms(100);
    return 0;
}

int main(int argc, char **argv)
{
    if (getenv("NS_INTEROP_SKIP"))
        return 77;
    if (geteuid() != 0) {
        fprintf(stderr, "needs root (namespaces, raw sockets): skipped\n");
        return 77;
    }
    g_mode = MODE_RAW;
    g_n_msgs = 10000;
    g_us_addr = 0xc6120701u; /* 198.18.7.1 */
    g_ns_addr = 0xc6120702u; /* 198.18.7.2 */
    if (make_namespaces() < 0) {
        fprintf(stderr, "cannot make the namespaces and the veth pair: skipped\n");
        return 77;
    }
    snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/nstack_interop_XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    g_have_tshark = system("command -v tshark >/dev/null 2>&1") == 0;
    fprintf(stderr, "namespaces %s (usrsctp, %s 198.18.7.1) and %s (nstack, %s 198.18.7.2)\n",
            g_nsa, g_va, g_nsb, g_ifname);
    fprintf(stderr, "captures in %s\n", g_tmpdir);

    /* usrsctp's raw sockets and threads in A, everything else in B. */
    if (enter_ns(g_nsa) < 0)
        return 1;
    usrsctp_init(0, NULL, NULL);
    fprintf(stderr, "usrsctp raw sockets with 16 MiB receive buffers: %d\n",
            enlarge_raw_sctp_buffers());
    if (enter_ns(g_nsb) < 0)
        return 1;

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nstack_connects),
        cmocka_unit_test(test_usrsctp_connects),
        cmocka_unit_test(test_abort_from_nstack),
        cmocka_unit_test(test_abort_from_usrsctp),
        cmocka_unit_test(test_heartbeats_3s),
        cmocka_unit_test(test_init_collision_held),
        cmocka_unit_test(test_init_collision_race),
        cmocka_unit_test(test_bulk_nstack_to_usrsctp),
        cmocka_unit_test(test_bulk_usrsctp_to_nstack),
        cmocka_unit_test(test_heartbeats_30s),
    };
    int rc =
        run_selected(tests, sizeof(tests) / sizeof(tests[0]), argc, argv, NULL, group_teardown);
    if (rmdir(g_tmpdir) < 0)
        fprintf(stderr, "captures kept in %s\n", g_tmpdir);
    return rc;
}
