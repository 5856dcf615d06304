/* pcap writer and tracer (dev/pcap.h): file and record headers read back
 * byte by byte, timestamps, snaplen, flush policy, tracer semantics, and
 * tshark's opinion of the files when it is installed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/timer.h"
#include "dev/memlink.h"
#include "dev/pcap.h"

static char dir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof(dir), "/tmp/nstest_pcap.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *path_of(const char *name)
{
    static char p[128];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static long file_size(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return (long)sb.st_size;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

struct rec {
    uint32_t sec, frac, incl, orig;
    const uint8_t *data;
};

/* Parse a whole file: checks the header, returns the record count. */
static int parse(const uint8_t *b, size_t len, uint32_t magic, uint32_t snaplen, struct rec *out,
                 int max)
{
    assert_true(len >= 24);
    assert_int_equal(rd32(b), magic);
    uint16_t ver[2];
    memcpy(ver, b + 4, 4);
    assert_int_equal(ver[0], 2);
    assert_int_equal(ver[1], 4);
    assert_int_equal(rd32(b + 8), 0);
    assert_int_equal(rd32(b + 12), 0);
    assert_int_equal(rd32(b + 16), snaplen);
    assert_int_equal(rd32(b + 20), 1);
    size_t off = 24;
    int n = 0;
    while (off < len) {
        assert_true(off + 16 <= len);
        struct rec r = {rd32(b + off), rd32(b + off + 4), rd32(b + off + 8), rd32(b + off + 12),
                        b + off + 16};
        assert_true(off + 16 + r.incl <= len);
        if (n < max)
            out[n] = r;
        n++;
        off += 16 + r.incl;
    }
    assert_int_equal(off, len);
    return n;
}

/* tshark -r path: exit status 0 and one line per frame. -1 if absent. */
static int tshark_count(const char *path)
{
    if (access("/usr/bin/tshark", X_OK) != 0)
        return -1;
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "/usr/bin/tshark -n -r '%s' 2>/dev/null", path);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    int lines = 0, c, last = '\n';
    while ((c = fgetc(f)) != EOF) {
        if (c == '\n')
            lines++;
        last = c;
    }
    if (last != '\n')
        lines++;
    int st = pclose(f);
    assert_int_equal(st, 0);
    return lines;
}

static void fill_frame(uint8_t *f, uint32_t len, uint8_t tag)
{
    memset(f, 0, len);
    memset(f, 0xff, 6);
    const uint8_t src[6] = {0x02, 0, 0, 0, 0, 0x01};
    memcpy(f + 6, src, 6);
    f[12] = 0x88;
    f[13] = 0xb5; /* IEEE local experimental: tshark shows it as such */
    for (uint32_t i = 14; i < len; i++)
        f[i] = (uint8_t)(tag + i);
}

static void test_write_read_back(void **st)
{
    (void)st;
    const char *p = path_of("basic.pcap");
    struct ns_pcap *pc = ns_pcap_open(p);
    assert_non_null(pc);
    uint8_t f1[60], f2[98];
    fill_frame(f1, sizeof(f1), 1);
    fill_frame(f2, sizeof(f2), 2);
    assert_int_equal(ns_pcap_write_bytes(pc, f1, sizeof(f1), 1500000), 0);
    /* A packet with a head and two fragments is recorded flat. */
    struct ns_pkt *pk = ns_pkt_alloc(NS_PKT_HEADROOM, 14);
    memcpy(ns_pkt_put(pk, 14), f2, 14);
    struct ns_buf *b = ns_buf_alloc(84);
    memcpy(b->data, f2 + 14, 84);
    assert_true(ns_pkt_add_frag(pk, b, 0, 41));
    assert_true(ns_pkt_add_frag(pk, b, 41, 43));
    assert_int_equal(ns_pcap_write(pc, pk, 2000001), 0);
    assert_int_equal(ns_pcap_records(pc), 2);
    ns_pkt_free(pk);
    ns_buf_put(b);
    assert_int_equal(ns_pcap_close(pc), 0);

    size_t len;
    uint8_t *buf = slurp(p, &len);
    struct rec r[4];
    assert_int_equal(parse(buf, len, NS_PCAP_MAGIC_US, 65535, r, 4), 2);
    assert_int_equal(len, 24 + 16 + 60 + 16 + 98);
    assert_int_equal(r[0].sec, 1);
    assert_int_equal(r[0].frac, 500000);
    assert_int_equal(r[0].incl, 60);
    assert_int_equal(r[0].orig, 60);
    assert_memory_equal(r[0].data, f1, 60);
    assert_int_equal(r[1].sec, 2);
    assert_int_equal(r[1].frac, 1);
    assert_int_equal(r[1].incl, 98);
    assert_memory_equal(r[1].data, f2, 98);
    free(buf);
    int n = tshark_count(p);
    if (n >= 0)
        assert_int_equal(n, 2);
}

static void test_empty_file_valid(void **st)
{
    (void)st;
    const char *p = path_of("empty.pcap");
    struct ns_pcap *pc = ns_pcap_open(p);
    assert_non_null(pc);
    /* The header is on disk before any record or close. */
    assert_int_equal(file_size(p), 24);
    assert_int_equal(ns_pcap_close(pc), 0);
    int n = tshark_count(p);
    if (n >= 0)
        assert_int_equal(n, 0);
}

static void test_nanosec_offset_snaplen(void **st)
{
    (void)st;
    const char *p = path_of("ns.pcap");
    struct ns_pcap_opts o = {
        .nanosec = true, .snaplen = 100, .wall_offset_us = 1700000000LL * 1000000};
    struct ns_pcap *pc = ns_pcap_open_opts(p, &o);
    assert_non_null(pc);
    uint8_t f[200];
    fill_frame(f, sizeof(f), 3);
    assert_int_equal(ns_pcap_write_bytes(pc, f, 200, 1234567), 0);
    assert_int_equal(ns_pcap_write_bytes(pc, f, 64, 1234568), 0);
    assert_int_equal(ns_pcap_close(pc), 0);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    struct rec r[2];
    assert_int_equal(parse(buf, len, NS_PCAP_MAGIC_NS, 100, r, 2), 2);
    assert_int_equal(r[0].sec, 1700000001);
    assert_int_equal(r[0].frac, 234567000);
    assert_int_equal(r[0].incl, 100);
    assert_int_equal(r[0].orig, 200);
    assert_memory_equal(r[0].data, f, 100);
    assert_int_equal(r[1].incl, 64);
    assert_int_equal(r[1].frac, 234568000);
    free(buf);
    int n = tshark_count(p);
    if (n >= 0)
        assert_int_equal(n, 2);

    /* A negative offset larger than now clamps to the epoch. */
    struct ns_pcap_opts neg = {.wall_offset_us = -5000000};
    pc = ns_pcap_open_opts(p, &neg);
    ns_pcap_write_bytes(pc, f, 60, 1000000);
    ns_pcap_write_bytes(pc, f, 60, 6000001);
    assert_int_equal(ns_pcap_close(pc), 0);
    buf = slurp(p, &len);
    assert_int_equal(parse(buf, len, NS_PCAP_MAGIC_US, 65535, r, 2), 2);
    assert_int_equal(r[0].sec, 0);
    assert_int_equal(r[0].frac, 0);
    assert_int_equal(r[1].sec, 1);
    assert_int_equal(r[1].frac, 1);
    free(buf);
}

static void test_wall_offset(void **st)
{
    (void)st;
    /* Now + offset is the current wall-clock time (after 2020). */
    int64_t off = ns_pcap_wall_offset_us(5 * NS_SEC);
    assert_true(off + 5 * (int64_t)NS_SEC > 1577836800LL * 1000000);
}

static void test_flush_policy(void **st)
{
    (void)st;
    const char *p = path_of("flush.pcap");
    struct ns_pcap *pc = ns_pcap_open(p);
    uint8_t f[60];
    fill_frame(f, 60, 4);
    assert_int_equal(ns_pcap_poll(pc, 0), NS_TIME_NEVER);
    ns_pcap_write_bytes(pc, f, 60, 10 * NS_SEC);
    assert_int_equal(file_size(p), 24); /* buffered */
    assert_int_equal(ns_pcap_poll(pc, 10 * NS_SEC + 999999), 11 * NS_SEC);
    assert_int_equal(file_size(p), 24);
    ns_pcap_write_bytes(pc, f, 60, 10 * NS_SEC + 999999);
    assert_int_equal(file_size(p), 24);
    /* A second after the oldest buffered record: out it goes. */
    assert_int_equal(ns_pcap_poll(pc, 11 * NS_SEC), NS_TIME_NEVER);
    assert_int_equal(file_size(p), 24 + 2 * 76);
    /* A write more than a second after the buffered one flushes both. */
    ns_pcap_write_bytes(pc, f, 60, 20 * NS_SEC);
    assert_int_equal(file_size(p), 24 + 2 * 76);
    ns_pcap_write_bytes(pc, f, 60, 21 * NS_SEC);
    assert_int_equal(file_size(p), 24 + 4 * 76);
    ns_pcap_write_bytes(pc, f, 60, 21 * NS_SEC);
    assert_int_equal(ns_pcap_flush(pc), 0);
    assert_int_equal(file_size(p), 24 + 5 * 76);
    assert_int_equal(ns_pcap_poll(pc, 0), NS_TIME_NEVER);
    /* Many records at one instant: the buffer spills whole records only. */
    for (int i = 0; i < 3000; i++) {
        ns_pcap_write_bytes(pc, f, 60, 30 * NS_SEC);
        assert_int_equal((file_size(p) - 24) % 76, 0);
    }
    assert_true(file_size(p) > 24 + 5 * 76); /* spilled without any flush */
    assert_int_equal(ns_pcap_close(pc), 0);
    assert_int_equal(file_size(p), 24 + 3005 * 76);
    int n = tshark_count(p);
    if (n >= 0)
        assert_int_equal(n, 3005);
}

static void test_record_larger_than_buffer(void **st)
{
    (void)st;
    const char *p = path_of("big.pcap");
    struct ns_pcap_opts o = {.snaplen = 262144};
    struct ns_pcap *pc = ns_pcap_open_opts(p, &o);
    uint32_t big = 100000;
    uint8_t *f = malloc(big);
    fill_frame(f, big, 5);
    uint8_t small[60];
    fill_frame(small, 60, 6);
    ns_pcap_write_bytes(pc, small, 60, 1);
    ns_pcap_write_bytes(pc, f, big, 2);
    ns_pcap_write_bytes(pc, small, 60, 3);
    assert_int_equal(ns_pcap_close(pc), 0);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    struct rec r[3];
    assert_int_equal(parse(buf, len, NS_PCAP_MAGIC_US, 262144, r, 3), 3);
    assert_int_equal(r[0].frac, 1);
    assert_int_equal(r[1].frac, 2);
    assert_int_equal(r[1].incl, big);
    assert_memory_equal(r[1].data, f, big);
    assert_int_equal(r[2].frac, 3);
    free(buf);
    free(f);
}

static void test_open_errors(void **st)
{
    (void)st;
    errno = 0;
    assert_null(ns_pcap_open("/nonexistent-nstack-dir/x.pcap"));
    assert_int_equal(errno, ENOENT);
    if (access("/dev/full", W_OK) == 0) {
        errno = 0;
        assert_null(ns_pcap_open("/dev/full"));
        assert_int_equal(errno, ENOSPC);
    }
    struct ns_memlink *l = ns_memlink_new(NULL);
    char err[128];
    assert_null(ns_pcap_trace(ns_memlink_end(l, 0), "/nonexistent-nstack-dir/x.pcap", NULL, err,
                              sizeof(err)));
    assert_string_equal(err, "cannot write capture /nonexistent-nstack-dir/x.pcap: No such file "
                             "or directory");
    ns_memlink_free(l);
}

static struct ns_pkt *mkframe(uint8_t tag, uint32_t len)
{
    struct ns_pkt *p = ns_pkt_alloc(NS_PKT_HEADROOM, len);
    fill_frame(ns_pkt_put(p, len), len, tag);
    return p;
}

static void test_tracer_memlink(void **st)
{
    (void)st;
    const char *p = path_of("trace.pcap");
    struct ns_memlink_cfg c = {.seed = 1, .delay_us = 250};
    struct ns_memlink *l = ns_memlink_new(&c);
    char err[128];
    struct ns_dev *t = ns_pcap_trace(ns_memlink_end(l, 0), p, NULL, err, sizeof(err));
    assert_non_null(t);
    struct ns_dev *b = ns_memlink_end(l, 1);
    assert_string_equal(t->name, "ml0");
    assert_int_equal(t->mtu, 1500);
    assert_int_equal(t->fd, -1);
    assert_ptr_equal(ns_pcap_tracer_inner(t), ns_memlink_end(l, 0));
    assert_non_null(ns_pcap_tracer_pcap(t));
    assert_null(ns_pcap_tracer_pcap(b));

    struct ns_pkt *out[2] = {mkframe(1, 60), mkframe(2, 70)};
    assert_int_equal(ns_dev_send(t, out, 2, 1000), 2);
    struct ns_pkt *back = mkframe(3, 80);
    assert_int_equal(ns_dev_send(b, &back, 1, 1100), 1);
    struct ns_pkt *got[4];
    assert_int_equal(ns_dev_recv(t, got, 4, 1349), 0);
    assert_int_equal(ns_dev_recv(t, got, 4, 1350), 1);
    ns_pkt_free(got[0]);
    assert_int_equal(t->stats.tx_frames, 2);
    assert_int_equal(t->stats.rx_frames, 1);
    ns_dev_close(t); /* closes the inner end and the file */
    ns_memlink_free(l);

    size_t len;
    uint8_t *buf = slurp(p, &len);
    struct rec r[4];
    assert_int_equal(parse(buf, len, NS_PCAP_MAGIC_US, 65535, r, 4), 3);
    assert_int_equal(r[0].frac, 1000);
    assert_int_equal(r[0].incl, 60);
    assert_int_equal(r[1].frac, 1000);
    assert_int_equal(r[1].incl, 70);
    assert_int_equal(r[2].frac, 1350);
    assert_int_equal(r[2].incl, 80);
    uint8_t want[80];
    fill_frame(want, 80, 3);
    assert_memory_equal(r[2].data, want, 80);
    free(buf);
    int n = tshark_count(p);
    if (n >= 0)
        assert_int_equal(n, 3);
}

/* A device that accepts only `room` frames per call. */
struct stingy {
    struct ns_dev dev;
    int room;
    int closed;
};
static int stingy_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    struct stingy *s = (struct stingy *)d;
    int k = n < s->room ? n : s->room;
    for (int i = 0; i < k; i++)
        ns_pkt_free(pkts[i]);
    return k;
}
static int stingy_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    return -EIO;
}
static void stingy_close(struct ns_dev *d)
{
    ((struct stingy *)d)->closed++;
}
static const struct ns_dev_ops stingy_ops = {stingy_recv, stingy_send, stingy_close};

static void test_tracer_records_only_taken(void **st)
{
    (void)st;
    const char *p = path_of("stingy.pcap");
    struct stingy s = {.dev = {.ops = &stingy_ops, .fd = 5, .mtu = 1400}, .room = 1};
    struct ns_pcap *pc = ns_pcap_open(p);
    struct ns_dev *t = ns_pcap_tracer_new(&s.dev, pc);
    assert_int_equal(t->fd, 5);
    assert_int_equal(t->mtu, 1400);
    struct ns_pkt *q[3] = {mkframe(1, 60), mkframe(2, 61), mkframe(3, 62)};
    assert_int_equal(ns_dev_send(t, q, 3, 10), 1);
    /* The caller still owns q[1], q[2]: retry later. */
    s.room = 5;
    assert_int_equal(ns_dev_send(t, q + 1, 2, 20), 2);
    struct ns_pkt *got[2];
    assert_int_equal(ns_dev_recv(t, got, 2, 30), -EIO);
    ns_dev_close(t);
    assert_int_equal(s.closed, 1);
    size_t len;
    uint8_t *buf = slurp(p, &len);
    struct rec r[4];
    assert_int_equal(parse(buf, len, NS_PCAP_MAGIC_US, 65535, r, 4), 3);
    assert_int_equal(r[0].incl, 60);
    assert_int_equal(r[0].frac, 10);
    assert_int_equal(r[1].incl, 61);
    assert_int_equal(r[1].frac, 20);
    assert_int_equal(r[2].incl, 62);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read_back),
        cmocka_unit_test(test_empty_file_valid),
        cmocka_unit_test(test_nanosec_offset_snaplen),
        cmocka_unit_test(test_wall_offset),
        cmocka_unit_test(test_flush_policy),
        cmocka_unit_test(test_record_larger_than_buffer),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_tracer_memlink),
        cmocka_unit_test(test_tracer_records_only_taken),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
