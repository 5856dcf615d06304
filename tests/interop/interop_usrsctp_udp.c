/* Interoperability with usrsctp over UDP encapsulation (RFC 6951) on
 * 127.0.0.1, in one process.
 *
 * usrsctp runs with its own threads on UDP port P1 (one SOCK_SEQPACKET
 * socket per scenario, upcall API). nstack's sans-I/O engine runs on a
 * udp_host transport on UDP port P2, driven by a loop thread of this test
 * (interop_common.h has the scenarios). Each scenario gets a fresh nstack
 * instance (its own params) and a fresh usrsctp socket, and captures the
 * datagrams nstack sends or receives to a pcap, which tshark then checks
 * (no malformed packet, no bad CRC32c, handshake and shutdown chunk
 * sequences).
 *
 * Arguments select scenarios by name (substrings); CMake registers groups
 * of them as separate ctests so that `ctest -j` runs them side by side.
 * NS_INTEROP_MSGS sets the bulk message count (default 100000).
 *
 * Exit 77 (skip) when usrsctp cannot start.
 */
#include "interop_common.h"

/* ---- Setup --------------------------------------------------------------- */

static uint16_t free_udp_port(void)
{
    struct ns_rng r;
    ns_rng_seed(&r, ns_rng_os_seed());
    for (int i = 0; i < 100; i++) {
        uint16_t port = (uint16_t)(20000 + ns_rng_below(&r, 20000));
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
        int ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        close(fd);
        if (ok)
            return port;
    }
    return 0;
}

static int group_setup(void **state)
{
    usrsctp_init(g_p1, NULL, NULL);
    /* usrsctp leaves the CRC32c out on loopback by default; RFC 6951
     * keeps it, and nstack checks it. */
    usrsctp_sysctl_set_sctp_no_csum_on_loopback(0);
    /* As root usrsctp also opens raw IPPROTO_SCTP sockets on every
     * address: keep it from answering other programs' kernel SCTP
     * packets with out-of-the-blue ABORTs. */
    usrsctp_sysctl_set_sctp_blackhole(2);
    return 0;
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
    g_mode = MODE_UDP;
    g_n_msgs = 100000;
    if (getenv("NS_INTEROP_MSGS"))
        g_n_msgs = (uint32_t)strtoul(getenv("NS_INTEROP_MSGS"), NULL, 0);
    if (g_n_msgs < 4 || g_n_msgs > N_MSGS) {
        fprintf(stderr, "NS_INTEROP_MSGS: 4 .. %u\n", N_MSGS);
        return 1;
    }
    /* usrsctp binds its UDP encapsulation socket to this port on every
     * address (it has no option for 127.0.0.1 alone). */
    g_p1 = free_udp_port();
    if (!g_p1) {
        fprintf(stderr, "no free UDP port for usrsctp: skipped\n");
        return 77;
    }
    snprintf(g_tmpdir, sizeof(g_tmpdir), "/tmp/nstack_interop_XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    g_have_tshark = system("command -v tshark >/dev/null 2>&1") == 0;
    fprintf(stderr, "captures in %s\n", g_tmpdir);
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
    int rc = run_selected(tests, sizeof(tests) / sizeof(tests[0]), argc, argv, group_setup,
                          group_teardown);
    /* Captures of failed scenarios stay for inspection. */
    if (rmdir(g_tmpdir) < 0)
        fprintf(stderr, "captures kept in %s\n", g_tmpdir);
    return rc;
}
