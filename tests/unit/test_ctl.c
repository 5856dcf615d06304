/* The nstack tools (src/tools): the control protocol's framing (partial
 * reads, oversized frames, unknown types, splitting, the request payload,
 * socket-path resolution), the text and argument helpers, iputils' time
 * formatting and statistics arithmetic with exact strings, and every
 * command run against two real stack instances joined by a scripted wire
 * on a virtual clock: exact ping output (ARP on the first request, RTTs,
 * DUP!, errors, timeouts, ^C, concurrent sessions), neigh in iproute2's
 * formats, sysctl, stats, addr, udp send/recv and the echo service.
 *
 * The tools are not part of the library, so their sources (all but the
 * process entry points) are compiled into this test directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/tools/addrcmd.c"
#include "../../src/tools/cmd.c"
#include "../../src/tools/ctl.c"
#include "../../src/tools/neighcmd.c"
#include "../../src/tools/ping.c"
#include "../../src/tools/perfcmd.c"
#include "../../src/tools/pingstat.c"
#include "../../src/tools/sctpcmd.c"
#include "../../src/tools/services.c"
#include "../../src/tools/statscmd.c"
#include "../../src/tools/sysctlcmd.c"
#include "../../src/tools/text.c"
#include "../../src/tools/udpcmd.c"
#include "../../src/tools/usage.c"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* ------------------------------------------------------------------ */
/* framing                                                             */

static void test_frame_roundtrip_bytewise(void **st)
{
    (void)st;
    struct ns_ctl_tx tx;
    ns_ctl_tx_init(&tx, 1 << 20);
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_STDOUT, "hello\n", 6), 0);
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_WANT_STDIN, NULL, 0), 0);
    uint8_t status = 3;
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_EXIT, &status, 1), 0);
    assert_int_equal(tx.len, (5 + 6) + 5 + (5 + 1));
    /* The exact wire bytes of the first frame: type, big-endian length. */
    const uint8_t head[] = {NS_CTL_STDOUT, 0, 0, 0, 6, 'h', 'e', 'l', 'l', 'o', '\n'};
    assert_memory_equal(tx.buf, head, sizeof(head));

    struct ns_ctl_rx rx;
    assert_int_equal(ns_ctl_rx_init(&rx), 0);
    struct ns_ctl_frame f;
    int got = 0;
    /* One byte at a time: every prefix is "need more" until a frame ends. */
    for (size_t i = 0; i < tx.len; i++) {
        assert_int_equal(ns_ctl_rx_feed(&rx, tx.buf + i, 1), 1);
        int r;
        while ((r = ns_ctl_rx_next(&rx, &f)) == 1) {
            if (got == 0) {
                assert_int_equal(i, 10);
                assert_int_equal(f.type, NS_CTL_STDOUT);
                assert_int_equal(f.len, 6);
                assert_memory_equal(f.data, "hello\n", 6);
            } else if (got == 1) {
                assert_int_equal(i, 15);
                assert_int_equal(f.type, NS_CTL_WANT_STDIN);
                assert_int_equal(f.len, 0);
            } else {
                assert_int_equal(i, 21);
                assert_int_equal(f.type, NS_CTL_EXIT);
                assert_int_equal(f.len, 1);
                assert_int_equal(f.data[0], 3);
            }
            got++;
        }
        assert_int_equal(r, 0);
    }
    assert_int_equal(got, 3);
    ns_ctl_rx_free(&rx);
    ns_ctl_tx_free(&tx);
}

static void test_frame_oversized_rejected(void **st)
{
    (void)st;
    struct ns_ctl_frame f;
    uint8_t h[NS_CTL_HDR];
    ns_ctl_put_hdr(h, NS_CTL_STDIN, NS_CTL_MAX_PAYLOAD + 1);
    /* Rejected from the header alone, without waiting for the payload. */
    assert_int_equal(ns_ctl_decode(h, sizeof(h), &f), -EMSGSIZE);
    ns_ctl_put_hdr(h, NS_CTL_STDIN, 0xffffffffu);
    assert_int_equal(ns_ctl_decode(h, sizeof(h), &f), -EMSGSIZE);

    /* Exactly the maximum is fine, and fills the receive buffer exactly. */
    struct ns_ctl_tx tx;
    ns_ctl_tx_init(&tx, 1 << 20);
    uint8_t *big = calloc(1, NS_CTL_MAX_PAYLOAD);
    assert_non_null(big);
    big[NS_CTL_MAX_PAYLOAD - 1] = 0x5a;
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_STDIN, big, NS_CTL_MAX_PAYLOAD), 0);
    assert_int_equal(tx.len, NS_CTL_HDR + NS_CTL_MAX_PAYLOAD);
    struct ns_ctl_rx rx;
    assert_int_equal(ns_ctl_rx_init(&rx), 0);
    assert_int_equal(ns_ctl_rx_feed(&rx, tx.buf, tx.len), tx.len);
    assert_int_equal(ns_ctl_rx_next(&rx, &f), 1);
    assert_int_equal(f.len, NS_CTL_MAX_PAYLOAD);
    assert_int_equal(f.data[NS_CTL_MAX_PAYLOAD - 1], 0x5a);

    /* A stream with an oversized header after a good frame. */
    ns_ctl_tx_free(&tx);
    ns_ctl_tx_init(&tx, 1 << 20);
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_INTR, NULL, 0), 0);
    ns_ctl_put_hdr(h, NS_CTL_STDIN, NS_CTL_MAX_PAYLOAD + 1);
    assert_int_equal(ns_ctl_rx_feed(&rx, tx.buf, tx.len), tx.len);
    assert_int_equal(ns_ctl_rx_feed(&rx, h, sizeof(h)), sizeof(h));
    assert_int_equal(ns_ctl_rx_next(&rx, &f), 1);
    assert_int_equal(f.type, NS_CTL_INTR);
    assert_int_equal(ns_ctl_rx_next(&rx, &f), -EMSGSIZE);

    /* Non-text frames that do not fit are refused at the sender. */
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_EXIT, big, NS_CTL_MAX_PAYLOAD + 1), -EMSGSIZE);
    free(big);
    ns_ctl_rx_free(&rx);
    ns_ctl_tx_free(&tx);
}

static void test_frame_unknown_type(void **st)
{
    (void)st;
    struct ns_ctl_frame f;
    const uint8_t bad[] = {0x7f};
    /* Known at the first byte: no need to wait for a length. */
    assert_int_equal(ns_ctl_decode(bad, 1, &f), -EPROTO);
    const uint8_t zero[] = {0x00, 0, 0, 0, 0};
    assert_int_equal(ns_ctl_decode(zero, sizeof(zero), &f), -EPROTO);
    assert_int_equal(ns_ctl_decode(zero, 0, &f), 0);
    struct ns_ctl_tx tx;
    ns_ctl_tx_init(&tx, 1024);
    assert_int_equal(ns_ctl_tx_frame(&tx, 0x7f, "x", 1), -EPROTO);
    assert_int_equal(tx.len, 0);
    ns_ctl_tx_free(&tx);
}

static void test_frame_split_and_limit(void **st)
{
    (void)st;
    size_t n = 2 * NS_CTL_MAX_PAYLOAD + 10;
    char *text = malloc(n);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        text[i] = (char)('a' + i % 26);
    struct ns_ctl_tx tx;
    ns_ctl_tx_init(&tx, 1 << 20);
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_STDOUT, text, n), 0);
    assert_int_equal(tx.len, n + 3 * NS_CTL_HDR);
    struct ns_ctl_rx rx;
    assert_int_equal(ns_ctl_rx_init(&rx), 0);
    size_t at = 0, off = 0;
    const uint32_t want[] = {NS_CTL_MAX_PAYLOAD, NS_CTL_MAX_PAYLOAD, 10};
    int k = 0;
    while (off < tx.len) {
        /* Feed in odd-sized chunks, as partial reads would deliver. */
        size_t chunk = tx.len - off < 7777 ? tx.len - off : 7777;
        off += ns_ctl_rx_feed(&rx, tx.buf + off, chunk);
        struct ns_ctl_frame f;
        while (ns_ctl_rx_next(&rx, &f) == 1) {
            assert_true(k < 3);
            assert_int_equal(f.type, NS_CTL_STDOUT);
            assert_int_equal(f.len, want[k]);
            assert_memory_equal(f.data, text + at, f.len);
            at += f.len;
            k++;
        }
    }
    assert_int_equal(k, 3);
    assert_int_equal(at, n);
    /* The queue limit: nothing is queued past it. */
    struct ns_ctl_tx small;
    ns_ctl_tx_init(&small, 100);
    assert_int_equal(ns_ctl_tx_frame(&small, NS_CTL_STDOUT, text, 95), 0);
    assert_int_equal(ns_ctl_tx_frame(&small, NS_CTL_STDOUT, text, 1), -ENOBUFS);
    assert_int_equal(small.len, 100);
    ns_ctl_tx_free(&small);
    ns_ctl_tx_free(&tx);
    ns_ctl_rx_free(&rx);
    free(text);
}

static void test_frame_socket_partial_io(void **st)
{
    (void)st;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    int sz = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    size_t n = 300000;
    char *text = malloc(n);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        text[i] = (char)(i * 7);
    struct ns_ctl_tx tx;
    ns_ctl_tx_init(&tx, 1 << 20);
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_STDERR, text, n), 0);
    struct ns_ctl_rx rx;
    assert_int_equal(ns_ctl_rx_init(&rx), 0);
    /* The socket takes only part of it: flush reports -EAGAIN and keeps
     * the rest; reading in between lets it finish. */
    assert_int_equal(ns_ctl_tx_flush(&tx, sv[0]), -EAGAIN);
    assert_true(ns_ctl_tx_pending(&tx));
    size_t got = 0;
    int guard = 0;
    while (got < n && guard++ < 100000) {
        ssize_t r = ns_ctl_rx_read(&rx, sv[1]);
        assert_true(r > 0 || r == -EAGAIN);
        struct ns_ctl_frame f;
        while (ns_ctl_rx_next(&rx, &f) == 1) {
            assert_int_equal(f.type, NS_CTL_STDERR);
            assert_memory_equal(f.data, text + got, f.len);
            got += f.len;
        }
        int fr = ns_ctl_tx_flush(&tx, sv[0]);
        assert_true(fr == 0 || fr == -EAGAIN);
    }
    assert_int_equal(got, n);
    assert_false(ns_ctl_tx_pending(&tx));
    /* End of stream. */
    close(sv[0]);
    assert_int_equal(ns_ctl_rx_read(&rx, sv[1]), 0);
    /* A peer that went away: the write fails (no SIGPIPE). */
    assert_int_equal(ns_ctl_tx_frame(&tx, NS_CTL_STDOUT, "x", 1), 0);
    close(sv[1]);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    assert_int_equal(ns_ctl_tx_flush(&tx, sv[0]), -EPIPE);
    close(sv[0]);
    ns_ctl_tx_free(&tx);
    ns_ctl_rx_free(&rx);
    free(text);
}

static void test_request_payload(void **st)
{
    (void)st;
    char *argv[] = {"udp", "send", "198.18.0.1", "7", ""};
    uint8_t buf[256];
    int n = ns_ctl_req_build(NS_CTL_F_JSON | NS_CTL_F_STATS, 5, argv, buf, sizeof(buf));
    assert_int_equal(n, 2 + 4 + 5 + 11 + 2 + 1);
    assert_int_equal(buf[0], NS_CTL_VERSION);
    char *out[8];
    uint8_t flags = 0;
    assert_int_equal(ns_ctl_req_parse(buf, (size_t)n, &flags, out, 8), 5);
    assert_int_equal(flags, NS_CTL_F_JSON | NS_CTL_F_STATS);
    for (int i = 0; i < 5; i++)
        assert_string_equal(out[i], argv[i]);
    /* Too many arguments for the receiver. */
    assert_int_equal(ns_ctl_req_parse(buf, (size_t)n, &flags, out, 4), -EPROTO);
    /* Dropping the empty last argument leaves a valid request of four. */
    assert_int_equal(ns_ctl_req_parse(buf, (size_t)n - 1, &flags, out, 8), 4);
    /* Missing terminator, wrong version, nothing at all. */
    assert_int_equal(ns_ctl_req_parse(buf, (size_t)n - 2, &flags, out, 8), -EPROTO);
    buf[0] = NS_CTL_VERSION + 1;
    assert_int_equal(ns_ctl_req_parse(buf, (size_t)n, &flags, out, 8), -EPROTO);
    uint8_t empty[2] = {NS_CTL_VERSION, 0};
    assert_int_equal(ns_ctl_req_parse(empty, 2, &flags, out, 8), -EPROTO);
    assert_int_equal(ns_ctl_req_build(0, 5, argv, buf, 10), -EMSGSIZE);
}

static void test_socket_resolution(void **st)
{
    (void)st;
    char dir[] = "/tmp/nstack-test-ctl.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[108], err[256], p[200];
    /* -C wins over the environment, which wins over the directory. */
    assert_int_equal(
        ns_ctl_resolve("/x/a.sock", "/y/b.sock", dir, out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "/x/a.sock");
    assert_int_equal(ns_ctl_resolve(NULL, "/y/b.sock", dir, out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "/y/b.sock");
    assert_int_equal(ns_ctl_resolve(NULL, "", dir, out, sizeof(out), err, sizeof(err)), -1);
    char want[300];
    snprintf(want, sizeof(want),
             "no daemon running (no socket in %s); start one with: nstack daemon --dev "
             "tap:NAME --addr A.B.C.D/LEN",
             dir);
    assert_string_equal(err, want);
    /* Only *.sock names count. */
    snprintf(p, sizeof(p), "%s/notes.txt", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(p, sizeof(p), "%s/tap0.sock", dir);
    f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(ns_ctl_resolve(NULL, NULL, dir, out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, p);
    char p2[200];
    snprintf(p2, sizeof(p2), "%s/tap1.sock", dir);
    f = fopen(p2, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(ns_ctl_resolve(NULL, NULL, dir, out, sizeof(out), err, sizeof(err)), -1);
    assert_string_equal(err, "several daemons: choose one with -C PATH");
    unlink(p2);
    unlink(p);
    snprintf(p, sizeof(p), "%s/notes.txt", dir);
    unlink(p);
    rmdir(dir);

    assert_int_equal(ns_ctl_default_path("/run/nstack", "tap:tap0", out, sizeof(out)), 0);
    assert_string_equal(out, "/run/nstack/tap0.sock");
    assert_int_equal(ns_ctl_default_path("/run/nstack", "afpacket:veth1", out, sizeof(out)), 0);
    assert_string_equal(out, "/run/nstack/veth1.sock");
    assert_int_equal(ns_ctl_default_path("/run/nstack", "tap:", out, sizeof(out)), -1);
    assert_int_equal(ns_ctl_default_path("/run/nstack", "tap:a/b", out, sizeof(out)), -1);
    /* Device options are not part of the name. */
    assert_int_equal(ns_ctl_default_path("/run/nstack", "tap:tap0,offload", out, sizeof(out)), 0);
    assert_string_equal(out, "/run/nstack/tap0.sock");
    assert_int_equal(ns_ctl_default_path("/run/nstack", "tap:,offload", out, sizeof(out)), -1);
}

/* ------------------------------------------------------------------ */
/* text and arguments                                                  */

static void test_text_helpers(void **st)
{
    (void)st;
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    assert_string_equal(ns_sbuf_str(&b), "");
    ns_sbuf_printf(&b, "%d-%s", 42, "x");
    ns_sbuf_json_str(&b, "a\"b\\c\n\x01");
    assert_string_equal(ns_sbuf_str(&b), "42-x\"a\\\"b\\\\c\\n\\u0001\"");
    ns_sbuf_reset(&b);
    const uint8_t raw[] = {'h', 'i', 0, '\n', '\\', 0xff, '\t', '~'};
    ns_sbuf_escape(&b, raw, sizeof(raw));
    assert_string_equal(ns_sbuf_str(&b), "hi\\x00\\n\\\\\\xff\\t~");
    /* Growth across the initial capacity. */
    ns_sbuf_reset(&b);
    for (int i = 0; i < 1000; i++)
        ns_sbuf_puts(&b, "0123456789");
    assert_int_equal(b.len, 10000);
    assert_int_equal(strlen(ns_sbuf_str(&b)), 10000);
    ns_sbuf_free(&b);
}

static void test_arg_parsing(void **st)
{
    (void)st;
    uint32_t v;
    assert_true(ns_arg_u32("500", 1, 1000, &v));
    assert_int_equal(v, 500);
    assert_true(ns_arg_u32("0x1818", 0, UINT32_MAX, &v));
    assert_int_equal(v, 0x1818);
    assert_true(ns_arg_u32("4294967295", 0, UINT32_MAX, &v));
    assert_false(ns_arg_u32("4294967296", 0, UINT32_MAX, &v));
    assert_false(ns_arg_u32("0", 1, 10, &v));
    assert_false(ns_arg_u32("11", 1, 10, &v));
    assert_false(ns_arg_u32("-1", 0, 10, &v));
    assert_false(ns_arg_u32("5x", 0, 10, &v));
    assert_false(ns_arg_u32("", 0, 10, &v));
    assert_false(ns_arg_u32("0x", 0, 10, &v));
    uint64_t us;
    assert_true(ns_arg_seconds("0.2", &us));
    assert_int_equal(us, 200000);
    assert_true(ns_arg_seconds(".5", &us));
    assert_int_equal(us, 500000);
    assert_true(ns_arg_seconds("2", &us));
    assert_int_equal(us, 2000000);
    assert_true(ns_arg_seconds("0.0015", &us));
    assert_int_equal(us, 1500);
    assert_true(ns_arg_seconds("1.0000019", &us)); /* beyond microseconds: truncated */
    assert_int_equal(us, 1000001);
    assert_false(ns_arg_seconds("", &us));
    assert_false(ns_arg_seconds(".", &us));
    assert_false(ns_arg_seconds("1e3", &us));
    assert_false(ns_arg_seconds("-1", &us));
    assert_false(ns_arg_seconds("99999999", &us));
    uint16_t port;
    assert_true(ns_arg_port("65535", &port));
    assert_int_equal(port, 65535);
    assert_false(ns_arg_port("0", &port));
    assert_false(ns_arg_port("65536", &port));
}

static void test_help_detection(void **st)
{
    (void)st;
    char *a[] = {"ping", "--help"};
    assert_true(ns_cmd_wants_help(2, a));
    char *b[] = {"neigh", "help"};
    assert_true(ns_cmd_wants_help(2, b));
    char *c[] = {"udp", "send", "198.18.0.1", "7", "--help"};
    assert_false(ns_cmd_wants_help(5, c)); /* TEXT, not an option */
    char *d[] = {"udp", "send", "--help"};
    assert_true(ns_cmd_wants_help(3, d));
    char *e[] = {"ping", "-c", "1", "198.18.0.1"};
    assert_false(ns_cmd_wants_help(4, e));
    assert_true(ns_cmd_known("sysctl"));
    assert_false(ns_cmd_known("daemon"));
    assert_non_null(strstr(ns_cmd_usage("ping"), "Usage: nstack ping"));
}

/* ------------------------------------------------------------------ */
/* iputils formatting and statistics                                   */

static const char *fmt_time(uint64_t us)
{
    static char out[32];
    ns_pingstat_fmt_time(us, out);
    return out;
}

static void test_time_format(void **st)
{
    (void)st;
    assert_string_equal(fmt_time(152), "0.152");
    assert_string_equal(fmt_time(9910), "9.91");
    assert_string_equal(fmt_time(12300), "12.3");
    assert_string_equal(fmt_time(152000), "152");
    assert_string_equal(fmt_time(0), "0.000");
    assert_string_equal(fmt_time(999), "0.999");
    assert_string_equal(fmt_time(1000), "1.00");
    assert_string_equal(fmt_time(1004), "1.00");
    assert_string_equal(fmt_time(1005), "1.01");
    assert_string_equal(fmt_time(9994), "9.99");
    assert_string_equal(fmt_time(9995), "10.0"); /* rounds into the next magnitude */
    assert_string_equal(fmt_time(99949), "99.9");
    assert_string_equal(fmt_time(99950), "100");
    assert_string_equal(fmt_time(1234567), "1235");
}

static void test_isqrt(void **st)
{
    (void)st;
    assert_int_equal(ns_pingstat_isqrt(0), 0);
    assert_int_equal(ns_pingstat_isqrt(1), 1);
    assert_int_equal(ns_pingstat_isqrt(1800), 42);
    assert_int_equal(ns_pingstat_isqrt(1849), 43);
    assert_int_equal(ns_pingstat_isqrt(1848), 42);
    assert_int_equal(ns_pingstat_isqrt(UINT64_MAX), 4294967295ULL);
}

static char *summary(const struct ns_pingstat *s, const char *host, uint64_t elapsed)
{
    static char out[1024];
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    ns_pingstat_summary(s, host, elapsed, &b);
    snprintf(out, sizeof(out), "%s", ns_sbuf_str(&b));
    ns_sbuf_free(&b);
    return out;
}

static void test_stats_block(void **st)
{
    (void)st;
    struct ns_pingstat s;
    ns_pingstat_init(&s, true);
    /* RTTs 152, 61, 63 us: avg 276/3 = 92, var (30794 - 276^2/3)/3 = 1800,
     * mdev isqrt(1800) = 42. */
    const uint64_t rtt[] = {152, 61, 63};
    for (int i = 0; i < 3; i++) {
        s.ntransmitted++;
        ns_pingstat_ack(&s, (uint16_t)(i + 1));
        s.nreceived++;
        ns_pingstat_rtt(&s, rtt[i]);
    }
    assert_string_equal(summary(&s, "198.18.0.1", 2003400),
                        "\n--- 198.18.0.1 ping statistics ---\n"
                        "3 packets transmitted, 3 received, 0% packet loss, time 2003ms\n"
                        "rtt min/avg/max/mdev = 0.061/0.092/0.152/0.042 ms\n");

    /* Errors only: no rtt line; every error came back after all three were
     * sent, so three were in flight ("pipe 3", as iputils reports). */
    ns_pingstat_init(&s, true);
    s.ntransmitted = 3;
    for (uint16_t q = 1; q <= 3; q++) {
        ns_pingstat_ack(&s, q);
        s.nerrors++;
    }
    assert_string_equal(summary(&s, "198.18.0.9", 2041000),
                        "\n--- 198.18.0.9 ping statistics ---\n"
                        "3 packets transmitted, 0 received, +3 errors, 100% packet loss, time "
                        "2041ms\n"
                        "pipe 3\n");

    /* Loss in float with %g, duplicates counted in the averages. */
    ns_pingstat_init(&s, true);
    s.ntransmitted = 3;
    ns_pingstat_ack(&s, 3);
    s.nreceived = 2;
    s.nrepeats = 1;
    ns_pingstat_rtt(&s, 1000);
    ns_pingstat_rtt(&s, 2000);
    ns_pingstat_rtt(&s, 3000);
    assert_string_equal(summary(&s, "h", 2999),
                        "\n--- h ping statistics ---\n"
                        "3 packets transmitted, 2 received, +1 duplicates, 33.3333% packet loss, "
                        "time 3ms\n"
                        "rtt min/avg/max/mdev = 1.000/2.000/3.000/0.816 ms\n");

    /* Nothing back and no errors: two lines only. */
    ns_pingstat_init(&s, true);
    s.ntransmitted = 2;
    assert_string_equal(summary(&s, "h", 3000000),
                        "\n--- h ping statistics ---\n"
                        "2 packets transmitted, 0 received, 100% packet loss, time 3000ms\n");

    /* No timestamps (-s below 8): replies but no rtt line. */
    ns_pingstat_init(&s, false);
    s.ntransmitted = 1;
    s.nreceived = 1;
    ns_pingstat_ack(&s, 1);
    assert_string_equal(summary(&s, "h", 0),
                        "\n--- h ping statistics ---\n"
                        "1 packets transmitted, 1 received, 0% packet loss, time 0ms\n");

    /* pipe with replies: appended to the rtt line. */
    ns_pingstat_init(&s, true);
    s.ntransmitted = 2;
    ns_pingstat_ack(&s, 1);
    s.nreceived = 1;
    ns_pingstat_rtt(&s, 1500000);
    assert_string_equal(summary(&s, "h", 2000000),
                        "\n--- h ping statistics ---\n"
                        "2 packets transmitted, 1 received, 50% packet loss, time 2000ms\n"
                        "rtt min/avg/max/mdev = 1500.000/1500.000/1500.000/0.000 ms, pipe 2\n");
}

static void test_icmp_descriptions(void **st)
{
    (void)st;
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    ns_pingstat_icmp_desc(3, 1, &b);
    assert_string_equal(ns_sbuf_str(&b), "Destination Host Unreachable");
    ns_sbuf_reset(&b);
    ns_pingstat_icmp_desc(3, 3, &b);
    assert_string_equal(ns_sbuf_str(&b), "Destination Port Unreachable");
    ns_sbuf_reset(&b);
    ns_pingstat_icmp_desc(11, 0, &b);
    assert_string_equal(ns_sbuf_str(&b), "Time to live exceeded");
    ns_sbuf_reset(&b);
    ns_pingstat_icmp_desc(3, 99, &b);
    assert_string_equal(ns_sbuf_str(&b), "Dest Unreachable, Bad Code: 99");
    ns_sbuf_free(&b);
}

/* ------------------------------------------------------------------ */
/* two stacks on a scripted wire                                       */

struct flight {
    struct ns_pkt *p;
    int to;
    uint64_t at;
};

struct host {
    struct ns_stack *s;
    uint32_t ifindex;
    struct ns_cmd_env env;
};

struct world {
    struct host h[2];
    uint64_t now;
    uint64_t delay[2]; /* one-way delay of frames sent by h[i] */
    bool dup_ipv4_from_b;
    struct flight q[512];
    int nq;
    uint64_t frames[2]; /* frames sent by h[i] */
};

static const struct ns_mac mac_a = {{0x02, 0, 0, 0, 0, 0x0a}};
static const struct ns_mac mac_b = {{0x02, 0, 0, 0, 0, 0x0b}};

static void world_init(struct world *w)
{
    memset(w, 0, sizeof(*w));
    w->now = 10 * NS_SEC;
    const struct ns_mac *macs[2] = {&mac_a, &mac_b};
    const char *names[2] = {"a0", "b0"};
    for (int i = 0; i < 2; i++) {
        struct ns_stack_config cfg = {.seed = 11 + (uint64_t)i};
        struct host *h = &w->h[i];
        h->s = ns_stack_new(&cfg, w->now);
        assert_non_null(h->s);
        int idx = ns_stack_add_iface(h->s, names[i], macs[i], 1500);
        assert_true(idx > 0);
        h->ifindex = (uint32_t)idx;
        ns_cmd_env_init(&h->env, h->s, (uint16_t)(0x4100 + i));
        ns_stack_iface_up(h->s, h->ifindex, w->now);
        ns_stack_set_addr(h->s, h->ifindex, IP(198, 18, 0, 1 + (uint32_t)i), 24, w->now);
    }
}

static void world_free(struct world *w)
{
    for (int i = 0; i < w->nq; i++)
        ns_pkt_free(w->q[i].p);
    for (int i = 0; i < 2; i++) {
        ns_cmd_env_free(&w->h[i].env);
        ns_stack_free(w->h[i].s);
    }
}

static uint16_t eth_type(const struct ns_pkt *p)
{
    uint8_t h[14];
    assert_true(ns_pkt_copy_out(p, 0, h, 14));
    return (uint16_t)(h[12] << 8 | h[13]);
}

/* Everything that can happen at w->now, until nothing moves. */
static void world_pump(struct world *w)
{
    bool busy = true;
    while (busy) {
        busy = false;
        for (int i = 0; i < 2; i++) {
            ns_stack_poll(w->h[i].s, w->now);
            ns_cmd_poll(&w->h[i].env, w->now);
        }
        for (int i = 0; i < w->nq;) {
            if (w->q[i].at > w->now) {
                i++;
                continue;
            }
            struct flight f = w->q[i];
            memmove(&w->q[i], &w->q[i + 1], (size_t)(w->nq - i - 1) * sizeof(w->q[0]));
            w->nq--;
            ns_stack_input_pkt(w->h[f.to].s, w->h[f.to].ifindex, f.p, w->now);
            busy = true;
        }
        for (int i = 0; i < 2; i++) {
            struct ns_pkt *p;
            while ((p = ns_stack_tx_pop(w->h[i].s, w->h[i].ifindex))) {
                assert_true(w->nq < 510);
                w->frames[i]++;
                bool dup = i == 1 && w->dup_ipv4_from_b && eth_type(p) == NS_ETHERTYPE_IPV4;
                if (dup)
                    w->q[w->nq++] = (struct flight){ns_pkt_copy(p), 1 - i, w->now + w->delay[i]};
                w->q[w->nq++] = (struct flight){p, 1 - i, w->now + w->delay[i]};
                busy = true;
            }
        }
    }
}

static uint64_t world_next(const struct world *w)
{
    uint64_t n = NS_TIME_NEVER;
    for (int i = 0; i < 2; i++) {
        uint64_t a = ns_stack_next_deadline(w->h[i].s), b = ns_cmd_next_deadline(&w->h[i].env);
        n = a < n ? a : n;
        n = b < n ? b : n;
    }
    for (int i = 0; i < w->nq; i++)
        n = w->q[i].at < n ? w->q[i].at : n;
    return n;
}

/* Run until *stop or time `until`, jumping from deadline to deadline. */
static void world_run(struct world *w, uint64_t until, const bool *stop)
{
    for (;;) {
        world_pump(w);
        if (stop && *stop)
            return;
        uint64_t n = world_next(w);
        if (n > until) {
            w->now = until;
            world_pump(w);
            return;
        }
        if (n > w->now)
            w->now = n;
    }
}

struct cap {
    struct ns_sbuf out, err;
    bool done, want_input;
    int status;
    uint64_t done_at;
    struct world *w;
};

static void cap_write(void *ctx, int stream, const char *d, size_t n)
{
    struct cap *c = ctx;
    ns_sbuf_add(stream == 2 ? &c->err : &c->out, d, n);
}

static void cap_want(void *ctx)
{
    ((struct cap *)ctx)->want_input = true;
}

static void cap_done(void *ctx, int status)
{
    struct cap *c = ctx;
    assert_false(c->done); /* exactly once */
    c->done = true;
    c->status = status;
    c->done_at = c->w ? c->w->now : 0;
}

static void cap_init(struct cap *c, struct world *w)
{
    memset(c, 0, sizeof(*c));
    ns_sbuf_init(&c->out);
    ns_sbuf_init(&c->err);
    c->w = w;
}

static void cap_free(struct cap *c)
{
    ns_sbuf_free(&c->out);
    ns_sbuf_free(&c->err);
}

/* Start a command on host `on` from a space-separated line. */
static struct ns_cmd_sess *start(struct world *w, int on, uint8_t flags, const char *line,
                                 struct cap *c)
{
    static char buf[1024];
    char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof(buf), "%s", line);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
        argv[argc++] = t;
    cap_init(c, w);
    const struct ns_cmd_out out = {
        .write = cap_write, .want_input = cap_want, .done = cap_done, .ctx = c};
    struct ns_cmd_sess *s = ns_cmd_start(&w->h[on].env, flags, argc, argv, &out, w->now);
    assert_non_null(s);
    return s;
}

/* Run a short command to completion; returns its status. */
static int run(struct world *w, int on, uint8_t flags, const char *line, struct cap *c)
{
    struct ns_cmd_sess *s = start(w, on, flags, line, c);
    world_run(w, w->now + 60 * NS_SEC, &c->done);
    assert_true(c->done);
    ns_cmd_free(s);
    return c->status;
}

static void settle(struct world *w)
{
    world_run(w, w->now + 1000, NULL); /* the gratuitous ARPs */
}

static void test_ping_exact_output(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    w.delay[1] = 152; /* B's frames take 152 us */
    uint64_t t0 = w.now;
    struct cap c;
    struct ns_cmd_sess *s = start(&w, 0, 0, "ping -c 3 198.18.0.2", &c);
    /* The first request is sent from the command itself: the ARP request it
     * triggers is already queued, before any timer or poll. */
    struct ns_pkt *arp = ns_stack_tx_pop(w.h[0].s, w.h[0].ifindex);
    assert_non_null(arp);
    uint8_t f[42];
    assert_true(ns_pkt_copy_out(arp, 0, f, sizeof(f)));
    const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_memory_equal(f, bcast, 6);
    assert_int_equal(f[12] << 8 | f[13], NS_ETHERTYPE_ARP);
    assert_int_equal(f[20] << 8 | f[21], NS_ARPOP_REQUEST);
    const uint8_t tpa[4] = {198, 18, 0, 2};
    assert_memory_equal(f + 38, tpa, 4);
    assert_null(ns_stack_tx_pop(w.h[0].s, w.h[0].ifindex));
    w.q[w.nq++] = (struct flight){arp, 1, w.now};

    world_run(&w, w.now + 60 * NS_SEC, &c.done);
    assert_true(c.done);
    assert_int_equal(c.status, 0);
    /* seq 1 waited for ARP (two of B's 152 us trips), the others one. */
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n"
                        "64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=0.304 ms\n"
                        "64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=0.152 ms\n"
                        "64 bytes from 198.18.0.2: icmp_seq=3 ttl=64 time=0.152 ms\n"
                        "\n--- 198.18.0.2 ping statistics ---\n"
                        "3 packets transmitted, 3 received, 0% packet loss, time 2000ms\n"
                        "rtt min/avg/max/mdev = 0.152/0.202/0.304/0.071 ms\n");
    assert_string_equal(ns_sbuf_str(&c.err), "");
    /* Ends with the last reply, 2 s + 152 us after the first request. */
    assert_int_equal(c.done_at - t0, 2 * NS_SEC + 152);
    assert_int_equal(w.h[0].env.stats.ping_sessions, 1);
    assert_null(w.h[0].env.sessions);
    ns_cmd_free(s);
    cap_free(&c);

    /* -q, -s, -i: header and summary only; 1000 bytes -> "1000(1028)". */
    s = start(&w, 0, 0, "ping -q -c2 -i 0.5 -s 1000 198.18.0.2", &c);
    world_run(&w, w.now + 60 * NS_SEC, &c.done);
    assert_int_equal(c.status, 0);
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.2 (198.18.0.2) 1000(1028) bytes of data.\n"
                        "\n--- 198.18.0.2 ping statistics ---\n"
                        "2 packets transmitted, 2 received, 0% packet loss, time 500ms\n"
                        "rtt min/avg/max/mdev = 0.152/0.152/0.152/0.000 ms\n");
    ns_cmd_free(s);
    cap_free(&c);

    /* -s 4: no timestamp, so no time= and no rtt line. */
    s = start(&w, 0, 0, "ping -c 1 -s 4 198.18.0.2", &c);
    world_run(&w, w.now + 60 * NS_SEC, &c.done);
    assert_int_equal(c.status, 0);
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.2 (198.18.0.2) 4(32) bytes of data.\n"
                        "12 bytes from 198.18.0.2: icmp_seq=1 ttl=64\n"
                        "\n--- 198.18.0.2 ping statistics ---\n"
                        "1 packets transmitted, 1 received, 0% packet loss, time 0ms\n");
    ns_cmd_free(s);
    cap_free(&c);
    world_free(&w);
}

static void test_ping_unreachable_and_timeout(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    uint64_t t0 = w.now;
    struct cap c;
    /* Nobody owns .99: three ARP requests 1 s apart, then FAILED and the
     * local Destination Host Unreachable, as Linux reports it. */
    assert_int_equal(run(&w, 0, 0, "ping -c 1 -W 6 198.18.0.99", &c), 1);
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.99 (198.18.0.99) 56(84) bytes of data.\n"
                        "From 198.18.0.1 icmp_seq=1 Destination Host Unreachable\n"
                        "\n--- 198.18.0.99 ping statistics ---\n"
                        "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time "
                        "0ms\n");
    assert_int_equal(c.done_at - t0, 3 * NS_SEC);
    cap_free(&c);
    /* Two requests queued behind one failing resolution: both errors come
     * back together at 3 s, with two requests outstanding ("pipe 2"). */
    t0 = w.now;
    assert_int_equal(run(&w, 0, 0, "ping -c 2 -W 6 198.18.0.98", &c), 1);
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.98 (198.18.0.98) 56(84) bytes of data.\n"
                        "From 198.18.0.1 icmp_seq=1 Destination Host Unreachable\n"
                        "From 198.18.0.1 icmp_seq=2 Destination Host Unreachable\n"
                        "\n--- 198.18.0.98 ping statistics ---\n"
                        "2 packets transmitted, 0 received, +2 errors, 100% packet loss, time "
                        "1000ms\n"
                        "pipe 2\n");
    assert_int_equal(c.done_at - t0, 3 * NS_SEC);
    cap_free(&c);
    struct cap n;
    assert_int_equal(run(&w, 0, 0, "neigh show to 198.18.0.99", &n), 0);
    assert_string_equal(ns_sbuf_str(&n.out), "198.18.0.99 dev a0 FAILED\n");
    cap_free(&n);

    /* B stops answering echoes: -c 2 -i 1 -W 2 ends 2 s after the last
     * request, exit 1, no rtt line. */
    assert_int_equal(run(&w, 1, 0, "sysctl -w ipv4.icmp_echo_ignore_all=1", &n), 0);
    cap_free(&n);
    t0 = w.now;
    assert_int_equal(run(&w, 0, 0, "ping -c 2 -W 2 198.18.0.2", &c), 1);
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n"
                        "\n--- 198.18.0.2 ping statistics ---\n"
                        "2 packets transmitted, 0 received, 100% packet loss, time 1000ms\n");
    assert_int_equal(c.done_at - t0, 3 * NS_SEC);
    cap_free(&c);
    world_free(&w);
}

static void test_ping_interrupt_dup_concurrent(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    w.delay[1] = 1000;
    /* Without -c, until ^C: two sessions side by side on different ids. */
    struct cap c1, c2;
    struct ns_cmd_sess *s1 = start(&w, 0, 0, "ping 198.18.0.2", &c1);
    struct ns_cmd_sess *s2 = start(&w, 0, 0, "ping -i 0.25 198.18.0.2", &c2);
    world_run(&w, w.now + 2 * NS_SEC + 500 * NS_MS, NULL);
    assert_false(c1.done);
    assert_false(c2.done);
    ns_cmd_interrupt(s1, w.now);
    assert_true(c1.done);
    assert_int_equal(c1.status, 0);
    /* Requests at 0, 1 and 2 s; replies 2 ms (ARP) and 1 ms later. */
    assert_string_equal(ns_sbuf_str(&c1.out),
                        "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n"
                        "64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=2.00 ms\n"
                        "64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=1.00 ms\n"
                        "64 bytes from 198.18.0.2: icmp_seq=3 ttl=64 time=1.00 ms\n"
                        "\n--- 198.18.0.2 ping statistics ---\n"
                        "3 packets transmitted, 3 received, 0% packet loss, time 2000ms\n"
                        "rtt min/avg/max/mdev = 1.000/1.333/2.000/0.471 ms\n");
    ns_cmd_interrupt(s2, w.now);
    assert_true(c2.done);
    /* 0, 0.25, ... 2.5 s: 11 requests, the last one still in flight. */
    assert_non_null(strstr(ns_sbuf_str(&c2.out), "icmp_seq=10 ttl=64 time=1.00 ms\n"));
    assert_null(strstr(ns_sbuf_str(&c2.out), "icmp_seq=11 "));
    assert_non_null(strstr(ns_sbuf_str(&c2.out),
                           "11 packets transmitted, 10 received, 9.09091% packet loss, "
                           "time 2500ms\n"));
    assert_int_equal(w.h[0].env.stats.ping_sessions, 2);
    ns_cmd_free(s1);
    ns_cmd_free(s2);
    cap_free(&c1);
    cap_free(&c2);
    /* The late reply to seq 11 finds no session: counted, nothing printed. */
    world_run(&w, w.now + 10 * NS_MS, NULL);
    assert_int_equal(w.h[0].env.stats.icmp_events_unmatched, 1);

    /* Every IPv4 frame from B arrives twice: (DUP!) and +N duplicates. */
    w.dup_ipv4_from_b = true;
    struct cap c;
    assert_int_equal(run(&w, 0, 0, "ping -c 2 198.18.0.2", &c), 0);
    assert_string_equal(ns_sbuf_str(&c.out),
                        "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n"
                        "64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=1.00 ms\n"
                        "64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=1.00 ms (DUP!)\n"
                        "64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=1.00 ms\n"
                        "\n--- 198.18.0.2 ping statistics ---\n"
                        "2 packets transmitted, 2 received, +1 duplicates, 0% packet loss, "
                        "time 1000ms\n"
                        "rtt min/avg/max/mdev = 1.000/1.000/1.000/0.000 ms\n");
    cap_free(&c);
    world_free(&w);
}

static void test_ping_argument_errors(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    struct cap c;
    const struct {
        const char *line;
        int status;
        const char *err;
    } cases[] = {
        {"ping 198.18.0.300", 2, "nstack: bad address '198.18.0.300'\n"},
        {"ping -c 0 198.18.0.2", 2, "nstack: ping: invalid count '0' (1 or more)\n"},
        {"ping -i 0.0001 198.18.0.2", 2,
         "nstack: ping: invalid interval '0.0001' (seconds, at least 0.001)\n"},
        {"ping -s 65508 198.18.0.2", 2, "nstack: ping: invalid packet size '65508' (0-65507)\n"},
        {"ping -x 198.18.0.2", 2,
         "nstack: ping: invalid option -- 'x' (see: nstack ping --help)\n"},
        {"ping -c", 2, "nstack: ping: option requires an argument -- 'c'\n"},
        {"ping", 2, "nstack: ping: destination address required (see: nstack ping --help)\n"},
        {"ping 10.1.2.3", 2, "nstack: ping: connect: Network is unreachable\n"},
        {"pong", 2,
         "nstack: unknown command 'pong' (try: ping, neigh, stats, sysctl, addr, udp)\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(run(&w, 0, 0, cases[i].line, &c), cases[i].status);
        assert_string_equal(ns_sbuf_str(&c.err), cases[i].err);
        assert_string_equal(ns_sbuf_str(&c.out), "");
        cap_free(&c);
    }
    assert_int_equal(w.h[0].env.stats.bad_requests, 1);
    assert_int_equal(run(&w, 0, 0, "ping --help", &c), 0);
    assert_string_equal(ns_sbuf_str(&c.out), usage_ping);
    cap_free(&c);
    world_free(&w);
}

/* Run a command and compare status, stdout and stderr exactly. */
#define CHECK(w, on, flags, line, st_, out_, err_)                                                 \
    do {                                                                                           \
        struct cap c_;                                                                             \
        assert_int_equal(run(w, on, flags, line, &c_), st_);                                       \
        assert_string_equal(ns_sbuf_str(&c_.out), out_);                                           \
        assert_string_equal(ns_sbuf_str(&c_.err), err_);                                           \
        cap_free(&c_);                                                                             \
    } while (0)

static void test_neigh_commands(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    CHECK(&w, 0, 0, "neigh show", 0, "", "");
    struct cap c;
    assert_int_equal(run(&w, 0, 0, "ping -c 1 198.18.0.2", &c), 0);
    cap_free(&c);
    w.now += 2 * NS_SEC;
    CHECK(&w, 0, 0, "neigh show", 0, "198.18.0.2 dev a0 lladdr 02:00:00:00:00:0b REACHABLE\n", "");
    CHECK(&w, 0, 0, "neigh", 0, "198.18.0.2 dev a0 lladdr 02:00:00:00:00:0b REACHABLE\n", "");
    CHECK(&w, 0, NS_CTL_F_JSON, "neigh show", 0,
          "[{\"dst\":\"198.18.0.2\",\"dev\":\"a0\",\"lladdr\":\"02:00:00:00:00:0b\","
          "\"state\":[\"REACHABLE\"]}]\n",
          "");
    /* -s: iproute2's ref / used/confirmed/updated (seconds ago) / probes. */
    CHECK(&w, 0, NS_CTL_F_STATS, "neigh show", 0,
          "198.18.0.2 dev a0 lladdr 02:00:00:00:00:0b ref 0 used 2/2/2 probes 1 REACHABLE\n", "");
    CHECK(&w, 0, NS_CTL_F_JSON | NS_CTL_F_STATS, "neigh show", 0,
          "[{\"dst\":\"198.18.0.2\",\"dev\":\"a0\",\"lladdr\":\"02:00:00:00:00:0b\",\"refcnt\":0,"
          "\"used\":2,\"confirmed\":2,\"updated\":2,\"probes\":1,\"state\":[\"REACHABLE\"]}]\n",
          "");

    /* add (permanent by default), add again, replace, change. */
    CHECK(&w, 0, 0, "neigh add 198.18.0.9 lladdr 02:00:00:00:00:09 dev a0", 0, "", "");
    CHECK(&w, 0, 0, "neigh show", 0,
          "198.18.0.2 dev a0 lladdr 02:00:00:00:00:0b REACHABLE\n"
          "198.18.0.9 dev a0 lladdr 02:00:00:00:00:09 PERMANENT\n",
          "");
    CHECK(&w, 0, 0, "neigh add 198.18.0.9 lladdr 02:00:00:00:00:99 dev a0", 2, "",
          "nstack: neigh add 198.18.0.9: entry exists (use: nstack neigh replace)\n");
    CHECK(&w, 0, 0, "neigh replace 198.18.0.9 lladdr 02:00:00:00:00:99 dev a0 nud stale", 0, "",
          "");
    CHECK(&w, 0, 0, "neigh show to 198.18.0.9", 0,
          "198.18.0.9 dev a0 lladdr 02:00:00:00:00:99 STALE\n", "");
    CHECK(&w, 0, 0, "neigh change 198.18.0.10 lladdr 02:00:00:00:00:10 dev a0", 2, "",
          "nstack: neigh change 198.18.0.10: no such entry\n");
    /* dev may be omitted with a single interface; NOARP is hidden unless
     * asked for, as ip neigh does. */
    CHECK(&w, 0, 0, "neigh add 198.18.0.11 lladdr 02:00:00:00:00:11 nud noarp", 0, "", "");
    CHECK(&w, 0, 0, "neigh add 198.18.0.12 lladdr 02:00:00:00:00:12", 0, "", "");
    CHECK(&w, 0, 0, "neigh show nud noarp", 0,
          "198.18.0.11 dev a0 lladdr 02:00:00:00:00:11 NOARP\n", "");
    CHECK(&w, 0, 0, "neigh show nud permanent nud stale", 0,
          "198.18.0.9 dev a0 lladdr 02:00:00:00:00:99 STALE\n"
          "198.18.0.12 dev a0 lladdr 02:00:00:00:00:12 PERMANENT\n",
          "");
    CHECK(&w, 0, 0, "neigh show to 198.18.0.8/29 dev a0", 0,
          "198.18.0.9 dev a0 lladdr 02:00:00:00:00:99 STALE\n"
          "198.18.0.12 dev a0 lladdr 02:00:00:00:00:12 PERMANENT\n",
          "");
    CHECK(&w, 0, 0, "neigh show 10.0.0.0/8", 0, "", "");

    /* flush spares PERMANENT and NOARP. */
    CHECK(&w, 0, NS_CTL_F_STATS, "neigh flush dev a0", 0,
          "\n*** Round 1, deleting 2 entries ***\n*** Flush is complete after 1 round ***\n", "");
    CHECK(&w, 0, 0, "neigh show nud all", 0,
          "198.18.0.11 dev a0 lladdr 02:00:00:00:00:11 NOARP\n"
          "198.18.0.12 dev a0 lladdr 02:00:00:00:00:12 PERMANENT\n",
          "");
    CHECK(&w, 0, NS_CTL_F_STATS, "neigh flush", 0, "Nothing to flush.\n", "");
    CHECK(&w, 0, 0, "neigh del 198.18.0.12 dev a0", 0, "", "");
    CHECK(&w, 0, 0, "neigh del 198.18.0.12 dev a0", 2, "",
          "nstack: neigh del 198.18.0.12: no such entry\n");
    /* flush to ADDR only touches that entry. */
    assert_int_equal(run(&w, 0, 0, "ping -c 1 198.18.0.2", &c), 0);
    cap_free(&c);
    CHECK(&w, 0, 0, "neigh add 198.18.0.13 lladdr 02:00:00:00:00:13 nud reachable", 0, "", "");
    CHECK(&w, 0, 0, "neigh flush to 198.18.0.2", 0, "", "");
    CHECK(&w, 0, 0, "neigh show", 0, "198.18.0.13 dev a0 lladdr 02:00:00:00:00:13 REACHABLE\n", "");

    /* Errors. */
    CHECK(&w, 0, 0, "neigh show dev nope", 1, "",
          "nstack: neigh show: cannot find device \"nope\"\n");
    CHECK(&w, 0, 0, "neigh add 1.2.3 lladdr 02:00:00:00:00:01", 2, "",
          "nstack: bad address '1.2.3'\n");
    CHECK(&w, 0, 0, "neigh add 198.18.0.20 lladdr zz", 2, "",
          "nstack: neigh add: bad lladdr 'zz'\n");
    CHECK(&w, 0, 0, "neigh add 198.18.0.20", 2, "",
          "nstack: neigh add 198.18.0.20: lladdr is required\n");
    CHECK(&w, 0, 0, "neigh add 198.18.0.20 lladdr 02:00:00:00:00:20 nud delay", 2, "",
          "nstack: neigh add: nud must be permanent, noarp, reachable or stale\n");
    CHECK(&w, 0, 0, "neigh show nud bogus", 2, "", "nstack: neigh show: bad nud state 'bogus'\n");
    CHECK(&w, 0, 0, "neigh show dev", 2, "",
          "nstack: neigh show: 'dev' needs an argument (see: nstack neigh --help)\n");
    CHECK(&w, 0, 0, "neigh frob", 2, "",
          "nstack: neigh: unknown subcommand 'frob' (try: show, add, replace, change, del, "
          "flush)\n");
    CHECK(&w, 0, 0, "neigh help", 0, usage_neigh, "");
    world_free(&w);
}

static void test_sysctl_commands(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    CHECK(&w, 0, 0, "sysctl neigh.default.retrans_time_ms", 0,
          "neigh.default.retrans_time_ms = 1000\n", "");
    CHECK(&w, 0, 0, "sysctl -w neigh.default.retrans_time_ms=500", 0,
          "neigh.default.retrans_time_ms = 500\n", "");
    assert_int_equal(w.h[0].s->params.neigh.retrans_time_ms, 500);
    CHECK(&w, 0, 0, "sysctl -n neigh.default.retrans_time_ms ipv4.ip_default_ttl", 0, "500\n64\n",
          "");
    CHECK(&w, 0, NS_CTL_F_JSON, "sysctl neigh.default.retrans_time_ms", 0,
          "{\"neigh.default.retrans_time_ms\":500}\n", "");
    CHECK(&w, 0, 0, "sysctl nope", 1, "", "nstack: sysctl: cannot stat nope: No such key\n");
    CHECK(&w, 0, 0, "sysctl -w ipv4.ip_default_ttl=0", 1, "",
          "nstack: sysctl: ipv4.ip_default_ttl: value 0 out of range [1, 255]\n");
    CHECK(&w, 0, 0, "sysctl -w ipv4.ip_default_ttl=abc", 1, "",
          "nstack: sysctl: ipv4.ip_default_ttl: invalid value 'abc' (an integer in [1, 255])\n");
    CHECK(&w, 0, 0, "sysctl -w ipv4.ip_default_ttl", 1, "",
          "nstack: sysctl: 'ipv4.ip_default_ttl' must be of the form KEY=VALUE\n");
    CHECK(&w, 0, 0, "sysctl", 2, "", "nstack: sysctl: no key given (try: nstack sysctl -a)\n");
    assert_int_equal(w.h[0].s->params.ip.default_ttl, 64);

    /* -a lists every key in order. */
    struct cap c;
    assert_int_equal(run(&w, 0, 0, "sysctl -a", &c), 0);
    struct ns_sbuf want;
    ns_sbuf_init(&want);
    const struct ns_sysctl_info *in;
    for (size_t i = 0; (in = ns_sysctl_at(i)); i++) {
        uint32_t v;
        assert_int_equal(ns_sysctl_get(w.h[0].s, in->key, &v), 0);
        ns_sbuf_printf(&want, "%s = %u\n", in->key, v);
    }
    assert_string_equal(ns_sbuf_str(&c.out), ns_sbuf_str(&want));
    assert_non_null(strstr(ns_sbuf_str(&c.out), "\nneigh.default.retrans_time_ms = 500\n"));
    ns_sbuf_free(&want);
    cap_free(&c);
    assert_int_equal(run(&w, 0, NS_CTL_F_JSON, "sysctl -a", &c), 0);
    assert_memory_equal(ns_sbuf_str(&c.out), "{\"neigh.default.mcast_probes\":3,", 31);
    assert_non_null(strstr(ns_sbuf_str(&c.out), ",\"ipv4.ip_default_ttl\":64,"));
    assert_string_equal(ns_sbuf_str(&c.out) + c.out.len - 2, "}\n");
    cap_free(&c);

    /* The daemon's --sysctl path. */
    char err[256];
    assert_int_equal(
        ns_cmd_sysctl_assign(w.h[0].s, "neigh.default.mcast_probes=2", w.now, err, sizeof(err)), 0);
    assert_int_equal(w.h[0].s->params.neigh.mcast_probes, 2);
    assert_int_equal(ns_cmd_sysctl_assign(w.h[0].s, "neigh.bogus=2", w.now, err, sizeof(err)), -1);
    assert_string_equal(err, "sysctl: cannot stat neigh.bogus: No such key");

    /* The tunables act: 2 probes 500 ms apart, so failure after 1 s. */
    uint64_t t0 = w.now;
    assert_int_equal(run(&w, 0, 0, "ping -c 1 198.18.0.77", &c), 1);
    assert_int_equal(c.done_at - t0, 1 * NS_SEC);
    assert_non_null(strstr(ns_sbuf_str(&c.out), "time 0ms\n"));
    cap_free(&c);
    world_free(&w);
}

static void test_stats_and_addr(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    struct cap c;
    assert_int_equal(run(&w, 0, 0, "ping -c 1 198.18.0.2", &c), 0);
    cap_free(&c);
    assert_int_equal(run(&w, 0, 0, "stats", &c), 0);
    const char *o = ns_sbuf_str(&c.out);
    /* Every group, names as the X-macros spell them, values exact. */
    char line[128];
    snprintf(line, sizeof(line), "    %-24s %" PRIu64 "\n", "rx_frames",
             w.h[0].s->link.eth_stats.rx_frames);
    assert_memory_equal(o, "eth:\n", 5);
    assert_memory_equal(o + 5, line, strlen(line));
    snprintf(line, sizeof(line), "icmp:\n    %-24s %" PRIu64 "\n", "in_msgs",
             w.h[0].s->ip.icmp_stats.in_msgs);
    assert_non_null(strstr(o, line));
    assert_int_equal(w.h[0].s->ip.icmp_stats.in_echo_reps, 1);
    assert_non_null(strstr(o, "\n    in_echo_reps             1\n"));
    assert_non_null(strstr(o, "\narp_cache:\n    allocs "));
    assert_non_null(strstr(o, "\ncmd:\n    commands                 2\n"));
    assert_non_null(strstr(o, "\n    ping_sessions            1\n"));
    cap_free(&c);
    CHECK(&w, 0, 0, "stats cmd", 0,
          "cmd:\n"
          "    commands                 3\n"
          "    bad_requests             0\n"
          "    ping_sessions            1\n"
          "    icmp_events_unmatched    0\n"
          "    udp_echo_datagrams       0\n"
          "    udp_echo_errors          0\n",
          "");
    CHECK(&w, 0, NS_CTL_F_JSON, "stats cmd", 0,
          "{\"cmd\":{\"commands\":4,\"bad_requests\":0,\"ping_sessions\":1,"
          "\"icmp_events_unmatched\":0,\"udp_echo_datagrams\":0,\"udp_echo_errors\":0}}\n",
          "");
    assert_int_equal(run(&w, 0, NS_CTL_F_JSON, "stats", &c), 0);
    assert_memory_equal(ns_sbuf_str(&c.out), "{\"eth\":{\"rx_frames\":", 20);
    assert_non_null(strstr(ns_sbuf_str(&c.out), "},\"arp\":{\"rx\":"));
    assert_non_null(strstr(ns_sbuf_str(&c.out), "\"in_echo_reps\":1,"));
    cap_free(&c);
    assert_int_equal(run(&w, 0, 0, "stats nope", &c), 2);
    assert_string_equal(ns_sbuf_str(&c.err),
                        "nstack: stats: unknown group 'nope' (groups: eth, arp, arp_cache, ip, "
                        "icmp, udp, sctp, sctp_glue, sctp_udp, gauges, cmd)\n");
    cap_free(&c);

    CHECK(&w, 0, 0, "addr", 0,
          "1: a0: <BROADCAST,UP,LOWER_UP> mtu 1500 state UP\n"
          "    link/ether 02:00:00:00:00:0a brd ff:ff:ff:ff:ff:ff\n"
          "    inet 198.18.0.1/24 brd 198.18.0.255 scope global a0\n",
          "");
    CHECK(&w, 1, NS_CTL_F_JSON, "addr show", 0,
          "[{\"ifindex\":1,\"ifname\":\"b0\",\"flags\":[\"BROADCAST\",\"UP\",\"LOWER_UP\"],"
          "\"mtu\":1500,\"operstate\":\"UP\",\"link_type\":\"ether\",\"address\":"
          "\"02:00:00:00:00:0b\",\"broadcast\":\"ff:ff:ff:ff:ff:ff\",\"addr_info\":[{\"family\":"
          "\"inet\",\"local\":\"198.18.0.2\",\"prefixlen\":24,\"broadcast\":\"198.18.0.255\","
          "\"scope\":\"global\",\"label\":\"b0\"}]}]\n",
          "");
    CHECK(&w, 0, 0, "addr dev nope", 1, "", "nstack: addr: cannot find device \"nope\"\n");
    world_free(&w);
}

static void test_udp_commands(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    w.delay[0] = w.delay[1] = 100;
    /* A receiver on B for two datagrams. */
    struct cap r;
    struct ns_cmd_sess *rs = start(&w, 1, 0, "udp recv 5000 -c 2 -W 5", &r);
    assert_false(r.done);
    /* TEXT from argv, words joined by spaces; an option-looking word after
     * DEST PORT is text. */
    CHECK(&w, 0, 0, "udp send -p 4000 198.18.0.2 5000 hello -x world", 0, "", "");
    world_run(&w, w.now + 10 * NS_MS, NULL);
    assert_string_equal(ns_sbuf_str(&r.out), "from 198.18.0.1:4000 len 14: hello -x world\n");
    assert_false(r.done);
    /* Standard input when TEXT is absent, delivered in pieces. */
    struct cap s;
    struct ns_cmd_sess *ss = start(&w, 0, 0, "udp send -p 4001 198.18.0.2 5000", &s);
    assert_true(s.want_input);
    assert_false(s.done);
    ns_cmd_input(ss, "a\0b", 3, false, w.now);
    ns_cmd_input(ss, "\n\xfe", 2, false, w.now);
    assert_false(s.done);
    ns_cmd_input(ss, NULL, 0, true, w.now);
    assert_true(s.done);
    assert_int_equal(s.status, 0);
    ns_cmd_free(ss);
    cap_free(&s);
    world_run(&w, w.now + 10 * NS_MS, &r.done);
    assert_true(r.done);
    assert_int_equal(r.status, 0);
    assert_string_equal(ns_sbuf_str(&r.out), "from 198.18.0.1:4000 len 14: hello -x world\n"
                                             "from 198.18.0.1:4001 len 5: a\\x00b\\n\\xfe\n");
    ns_cmd_free(rs);
    cap_free(&r);

    /* Timeout: exit 1 with a message; the port is free again afterwards. */
    uint64_t t0 = w.now;
    assert_int_equal(run(&w, 1, 0, "udp recv 5000 -W 1.5", &r), 1);
    assert_string_equal(ns_sbuf_str(&r.err), "nstack: udp recv: timeout after 0 datagrams\n");
    assert_int_equal(r.done_at - t0, 1500 * NS_MS);
    cap_free(&r);
    /* Port in use. */
    rs = start(&w, 1, 0, "udp recv 5001", &r);
    CHECK(&w, 1, 0, "udp recv 5001", 1, "",
          "nstack: udp recv: bind port 5001: Address already in use\n");
    /* ^C: without -c, one datagram is success. */
    CHECK(&w, 0, 0, "udp send -p 4002 198.18.0.2 5001 x", 0, "", "");
    world_run(&w, w.now + 10 * NS_MS, NULL);
    ns_cmd_interrupt(rs, w.now);
    assert_true(r.done);
    assert_int_equal(r.status, 0);
    assert_string_equal(ns_sbuf_str(&r.out), "from 198.18.0.1:4002 len 1: x\n");
    ns_cmd_free(rs);
    cap_free(&r);

    /* The echo service on B. */
    char err[128];
    assert_int_equal(ns_cmd_serve(&w.h[1].env, "udp-echo:7", err, sizeof(err)), 0);
    assert_int_equal(ns_cmd_serve(&w.h[1].env, "udp-echo:7", err, sizeof(err)), -1);
    assert_string_equal(err, "udp-echo: bind port 7: Address already in use");
    assert_int_equal(ns_cmd_serve(&w.h[1].env, "tcp-echo:7", err, sizeof(err)), -1);
    assert_string_equal(err, "bad service 'tcp-echo:7' (use: udp-echo:PORT)");
    struct ns_udp_sock *sk = ns_udp_open(&w.h[0].s->ip);
    assert_non_null(sk);
    assert_int_equal(ns_udp_bind(sk, 0, 4003), 0);
    assert_int_equal(ns_udp_sendto(sk, "ping!", 5, IP(198, 18, 0, 2), 7, w.now), 5);
    world_run(&w, w.now + 10 * NS_MS, NULL);
    char buf[16];
    uint32_t from;
    uint16_t fport;
    assert_int_equal(ns_udp_recvfrom(sk, buf, sizeof(buf), &from, &fport), 5);
    assert_memory_equal(buf, "ping!", 5);
    assert_int_equal(from, IP(198, 18, 0, 2));
    assert_int_equal(fport, 7);
    assert_int_equal(w.h[1].env.stats.udp_echo_datagrams, 1);
    ns_udp_close(sk);
    /* The CLI's sender cannot share the receiver's port, as on Linux. */
    rs = start(&w, 0, 0, "udp recv 4003 -c 1", &r);
    CHECK(&w, 0, 0, "udp send -p 4003 198.18.0.2 7 ping!", 1, "",
          "nstack: udp send: bind port 4003: Address already in use\n");
    ns_cmd_free(rs);
    cap_free(&r);

    /* Errors. */
    CHECK(&w, 0, 0, "udp send 198.18.0.2 0 x", 2, "", "nstack: udp send: bad port '0' (1-65535)\n");
    CHECK(&w, 0, 0, "udp send 198.18.0 7 x", 2, "", "nstack: bad address '198.18.0'\n");
    CHECK(&w, 0, 0, "udp send 198.18.0.2", 2, "",
          "nstack: udp send: DEST and PORT required (see: nstack udp --help)\n");
    CHECK(&w, 0, 0, "udp send 10.9.9.9 7 x", 1, "",
          "nstack: udp send: 10.9.9.9:7: Network is unreachable\n");
    CHECK(&w, 0, 0, "udp", 2, "", "nstack: udp: subcommand required (try: send, recv)\n");
    CHECK(&w, 0, 0, "udp recv", 2, "",
          "nstack: udp recv: PORT required (see: nstack udp --help)\n");
    ss = start(&w, 0, 0, "udp send 198.18.0.2 7", &s);
    char *big = calloc(1, 65508);
    assert_non_null(big);
    ns_cmd_input(ss, big, 65000, false, w.now);
    assert_false(s.done);
    ns_cmd_input(ss, big, 508, false, w.now);
    assert_true(s.done);
    assert_int_equal(s.status, 1);
    assert_string_equal(ns_sbuf_str(&s.err),
                        "nstack: udp send: message too long (at most 65507 bytes)\n");
    free(big);
    ns_cmd_free(ss);
    cap_free(&s);
    world_free(&w);
}

static void test_cancel_and_teardown(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    /* The client goes away mid-ping: the session is cancelled silently,
     * its timer is gone, later replies are unmatched. */
    struct cap c;
    struct ns_cmd_sess *s = start(&w, 0, 0, "ping 198.18.0.2", &c);
    world_run(&w, w.now + 1500 * NS_MS, NULL);
    assert_non_null(w.h[0].env.sessions);
    ns_cmd_free(s);
    assert_false(c.done);
    assert_null(w.h[0].env.sessions);
    assert_int_equal(ns_cmd_next_deadline(&w.h[0].env), NS_TIME_NEVER);
    cap_free(&c);
    /* A receiver still running when the env goes: freed without done(). */
    s = start(&w, 1, 0, "udp recv 9000", &c);
    char err[64];
    assert_int_equal(ns_cmd_serve(&w.h[1].env, "udp-echo:9", err, sizeof(err)), 0);
    ns_cmd_env_free(&w.h[1].env);
    assert_false(c.done);
    ns_cmd_free(s);
    cap_free(&c);
    ns_cmd_env_init(&w.h[1].env, w.h[1].s, 1); /* for world_free */
    world_free(&w);
}

/* perf and sctp send: argument errors, and no socket runtime outside the
 * daemon (the engine here has none); the service specs. */
static void test_perf_and_services_args(void **st)
{
    (void)st;
    struct world w;
    world_init(&w);
    settle(&w);
    static const struct {
        const char *line;
        int status;
        const char *err;
    } cases[] = {
        {"perf", 2, "nstack: perf: -H HOST required (see: nstack perf --help)\n"},
        {"perf -H 1.2.3", 2, "nstack: bad address '1.2.3'\n"},
        {"perf -H 198.18.0.2 -m 0", 2, "nstack: perf: bad -m '0' (see: nstack perf --help)\n"},
        {"perf -H 198.18.0.2 -l 0", 2, "nstack: perf: bad -l '0' (see: nstack perf --help)\n"},
        {"perf -H 198.18.0.2 -p 70000", 2,
         "nstack: perf: bad -p '70000' (see: nstack perf --help)\n"},
        {"perf -H 198.18.0.2", 1,
         "nstack: perf: this stack has no socket runtime (run it in the daemon)\n"},
        {"perf 198.18.0.2 -u -n 4", 1,
         "nstack: perf: this stack has no socket runtime (run it in the daemon)\n"},
        {"sctp send 198.18.0.2 7", 2,
         "nstack: sctp send: HOST PORT TEXT required (see: nstack sctp --help)\n"},
        {"sctp send 198.18.0.2 0 x", 2, "nstack: sctp send: bad port '0' (1-65535)\n"},
        {"sctp send -W x 198.18.0.2 7 x", 2,
         "nstack: sctp send: bad -W 'x' (see: nstack sctp --help)\n"},
        {"sctp send 198.18.0.2 7 hi", 1,
         "nstack: sctp send: this stack has no socket runtime (run it in the daemon)\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cap c;
        int status = run(&w, 0, 0, cases[i].line, &c);
        if (status != cases[i].status || strcmp(ns_sbuf_str(&c.err), cases[i].err) != 0)
            fail_msg("'%s': status %d err '%s'", cases[i].line, status, ns_sbuf_str(&c.err));
        assert_string_equal(ns_sbuf_str(&c.out), "");
        cap_free(&c);
    }
    char *const help[] = {"perf", "--help"};
    assert_true(ns_cmd_wants_help(2, help));
    assert_non_null(strstr(ns_cmd_usage("perf"), "-H HOST"));

    struct ns_svc *svc = ns_svc_new();
    assert_non_null(svc);
    char err[128];
    assert_true(ns_svc_is_sctp("perf:5001"));
    assert_true(ns_svc_is_sctp("echo:7"));
    assert_false(ns_svc_is_sctp("udp-echo:7"));
    assert_int_equal(ns_svc_add(svc, "discard:9", err, sizeof(err)), 0);
    assert_int_equal(ns_svc_add(svc, "echo:0", err, sizeof(err)), -1);
    assert_string_equal(err, "bad service 'echo:0' (use: echo:PORT)");
    assert_int_equal(ns_svc_add(svc, "chargen:19", err, sizeof(err)), -1);
    assert_null(ns_svc_rt(svc));
    assert_false(ns_svc_stopping(svc));
    ns_svc_stop(svc); /* never started: nothing to join */
    assert_true(ns_svc_stopping(svc));
    ns_svc_free(svc);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_roundtrip_bytewise),
        cmocka_unit_test(test_frame_oversized_rejected),
        cmocka_unit_test(test_frame_unknown_type),
        cmocka_unit_test(test_frame_split_and_limit),
        cmocka_unit_test(test_frame_socket_partial_io),
        cmocka_unit_test(test_request_payload),
        cmocka_unit_test(test_socket_resolution),
        cmocka_unit_test(test_text_helpers),
        cmocka_unit_test(test_arg_parsing),
        cmocka_unit_test(test_help_detection),
        cmocka_unit_test(test_time_format),
        cmocka_unit_test(test_isqrt),
        cmocka_unit_test(test_stats_block),
        cmocka_unit_test(test_icmp_descriptions),
        cmocka_unit_test(test_ping_exact_output),
        cmocka_unit_test(test_ping_unreachable_and_timeout),
        cmocka_unit_test(test_ping_interrupt_dup_concurrent),
        cmocka_unit_test(test_ping_argument_errors),
        cmocka_unit_test(test_neigh_commands),
        cmocka_unit_test(test_sysctl_commands),
        cmocka_unit_test(test_stats_and_addr),
        cmocka_unit_test(test_udp_commands),
        cmocka_unit_test(test_cancel_and_teardown),
        cmocka_unit_test(test_perf_and_services_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
