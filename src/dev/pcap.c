/* pcap savefile writer and device tracer. Format: the libpcap file header
 * (magic, version 2.4, thiszone, sigfigs, snaplen, linktype) and per-record
 * headers (seconds, micro- or nanoseconds, captured length, original
 * length), in host byte order as libpcap writes them; readers detect the
 * order from the magic. */
#include "dev/pcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/timer.h"

#define PCAP_BUF     (64 * 1024)
#define PCAP_REC_HDR 16

struct ns_pcap {
    int fd;
    int err; /* first write error, positive errno */
    bool nanosec;
    uint32_t snaplen;
    int64_t offset_us;
    uint64_t records;
    uint64_t dirty_since; /* `now` of the oldest unflushed record */
    uint32_t used;
    uint8_t buf[PCAP_BUF];
};

static int write_all(struct ns_pcap *pc, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t r = write(pc->fd, p, len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            pc->err = errno;
            return -pc->err;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

int ns_pcap_flush(struct ns_pcap *pc)
{
    if (pc->err)
        return -pc->err;
    int rc = pc->used ? write_all(pc, pc->buf, pc->used) : 0;
    pc->used = 0;
    pc->dirty_since = NS_TIME_NEVER;
    return rc;
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

struct ns_pcap *ns_pcap_open_opts(const char *path, const struct ns_pcap_opts *o)
{
    struct ns_pcap *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return NULL;
    pc->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (pc->fd < 0) {
        int e = errno;
        free(pc);
        errno = e;
        return NULL;
    }
    pc->nanosec = o && o->nanosec;
    pc->snaplen = o && o->snaplen ? o->snaplen : NS_PCAP_SNAPLEN;
    pc->offset_us = o ? o->wall_offset_us : 0;
    pc->dirty_since = NS_TIME_NEVER;
    uint8_t h[24];
    put32(h, pc->nanosec ? NS_PCAP_MAGIC_NS : NS_PCAP_MAGIC_US);
    uint16_t ver[2] = {2, 4};
    memcpy(h + 4, ver, 4);
    put32(h + 8, 0);  /* thiszone: timestamps are UTC */
    put32(h + 12, 0); /* sigfigs */
    put32(h + 16, pc->snaplen);
    put32(h + 20, NS_PCAP_LINKTYPE_ETHERNET);
    /* The header goes out at once, so even an empty capture is a valid file. */
    if (write_all(pc, h, sizeof(h)) < 0) {
        int e = pc->err;
        close(pc->fd);
        free(pc);
        errno = e;
        return NULL;
    }
    return pc;
}

struct ns_pcap *ns_pcap_open(const char *path)
{
    return ns_pcap_open_opts(path, NULL);
}

static void rec_header(struct ns_pcap *pc, uint8_t *h, uint32_t incl, uint32_t orig, uint64_t now)
{
    int64_t t = (int64_t)now + pc->offset_us;
    if (t < 0)
        t = 0;
    uint64_t us = (uint64_t)t;
    put32(h, (uint32_t)(us / 1000000));
    put32(h + 4, (uint32_t)(pc->nanosec ? us % 1000000 * 1000 : us % 1000000));
    put32(h + 8, incl);
    put32(h + 12, orig);
}

/* Append a record made of pieces; whole records only ever reach the file. */
static int add_record(struct ns_pcap *pc, const struct iovec *iov, int niov, uint32_t orig,
                      uint64_t now)
{
    if (pc->err)
        return -pc->err;
    uint32_t incl = orig < pc->snaplen ? orig : pc->snaplen;
    uint8_t h[PCAP_REC_HDR];
    rec_header(pc, h, incl, orig, now);
    if (pc->used + PCAP_REC_HDR + incl > PCAP_BUF && ns_pcap_flush(pc) < 0)
        return -pc->err;
    if (PCAP_REC_HDR + incl > PCAP_BUF) {
        /* Larger than the buffer (a big snaplen): straight to the file. */
        if (write_all(pc, h, sizeof(h)) < 0)
            return -pc->err;
        uint32_t left = incl;
        for (int i = 0; i < niov && left; i++) {
            size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
            if (write_all(pc, iov[i].iov_base, n) < 0)
                return -pc->err;
            left -= (uint32_t)n;
        }
    } else {
        memcpy(pc->buf + pc->used, h, sizeof(h));
        pc->used += PCAP_REC_HDR;
        uint32_t left = incl;
        for (int i = 0; i < niov && left; i++) {
            size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
            memcpy(pc->buf + pc->used, iov[i].iov_base, n);
            pc->used += (uint32_t)n;
            left -= (uint32_t)n;
        }
        if (pc->dirty_since == NS_TIME_NEVER)
            pc->dirty_since = now;
    }
    pc->records++;
    ns_pcap_poll(pc, now);
    return pc->err ? -pc->err : 0;
}

int ns_pcap_write(struct ns_pcap *pc, const struct ns_pkt *pkt, uint64_t now)
{
    struct iovec iov[NS_PKT_MAX_FRAGS + 1];
    int niov = ns_pkt_iov(pkt, iov, NS_PKT_MAX_FRAGS + 1);
    return add_record(pc, iov, niov, ns_pkt_len(pkt), now);
}

int ns_pcap_write_bytes(struct ns_pcap *pc, const void *data, uint32_t len, uint64_t now)
{
    struct iovec iov = {(void *)(uintptr_t)data, len};
    return add_record(pc, &iov, 1, len, now);
}

uint64_t ns_pcap_poll(struct ns_pcap *pc, uint64_t now)
{
    if (pc->dirty_since == NS_TIME_NEVER)
        return NS_TIME_NEVER;
    /* A clock that went backwards (a new simulation reusing the writer)
     * must not postpone the flush forever. */
    if (now >= pc->dirty_since + NS_PCAP_FLUSH_US || now < pc->dirty_since)
        ns_pcap_flush(pc);
    return pc->dirty_since == NS_TIME_NEVER ? NS_TIME_NEVER : pc->dirty_since + NS_PCAP_FLUSH_US;
}

int ns_pcap_close(struct ns_pcap *pc)
{
    if (!pc)
        return 0;
    int rc = ns_pcap_flush(pc);
    if (close(pc->fd) < 0 && rc == 0)
        rc = -errno;
    free(pc);
    return rc;
}

uint64_t ns_pcap_records(const struct ns_pcap *pc)
{
    return pc->records;
}

int64_t ns_pcap_wall_offset_us(uint64_t now)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wall = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    return wall - (int64_t)now;
}

/* --- tracer --- */

#define TRACE_BATCH 128 /* a daemon's whole transmit batch: runs stay whole */

struct tracer {
    struct ns_dev dev;
    struct ns_dev *inner;
    struct ns_pcap *pc;
};

static void mirror(struct tracer *t)
{
    t->dev.stats = t->inner->stats;
    t->dev.fd = t->inner->fd;
}

static int tr_recv(struct ns_dev *d, struct ns_pkt **pkts, int max, uint64_t now)
{
    struct tracer *t = (struct tracer *)d;
    int r = ns_dev_recv(t->inner, pkts, max, now);
    for (int i = 0; i < r; i++)
        ns_pcap_write(t->pc, pkts[i], now);
    mirror(t);
    ns_pcap_poll(t->pc, now);
    return r;
}

static int tr_send(struct ns_dev *d, struct ns_pkt **pkts, int n, uint64_t now)
{
    struct tracer *t = (struct tracer *)d;
    int done = 0;
    while (done < n) {
        int batch = n - done < TRACE_BATCH ? n - done : TRACE_BATCH;
        /* The inner device frees what it takes, so keep shallow copies that
         * hold references on the bytes, and record only what was taken. */
        struct ns_pkt snap[TRACE_BATCH];
        for (int i = 0; i < batch; i++) {
            snap[i] = *pkts[done + i];
            ns_buf_get(snap[i].buf);
            for (int f = 0; f < snap[i].nfrags; f++)
                ns_buf_get(snap[i].frags[f].buf);
        }
        int r = ns_dev_send(t->inner, pkts + done, batch, now);
        for (int i = 0; i < batch; i++) {
            if (i < r)
                ns_pcap_write(t->pc, &snap[i], now);
            ns_buf_put(snap[i].buf);
            for (int f = 0; f < snap[i].nfrags; f++)
                ns_buf_put(snap[i].frags[f].buf);
        }
        if (r < 0) {
            if (done == 0)
                done = r;
            break;
        }
        done += r;
        if (r < batch)
            break;
    }
    mirror(t);
    ns_pcap_poll(t->pc, now);
    return done;
}

static void tr_close(struct ns_dev *d)
{
    struct tracer *t = (struct tracer *)d;
    ns_dev_close(t->inner);
    ns_pcap_close(t->pc);
    free(t);
}

static const struct ns_dev_ops tracer_ops = {
    .recv = tr_recv,
    .send = tr_send,
    .close = tr_close,
};

struct ns_dev *ns_pcap_tracer_new(struct ns_dev *inner, struct ns_pcap *pc)
{
    struct tracer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->dev.ops = &tracer_ops;
    memcpy(t->dev.name, inner->name, sizeof(t->dev.name));
    t->dev.mac = inner->mac;
    t->dev.mtu = inner->mtu;
    t->dev.rx_burst = inner->rx_burst;
    t->dev.tx_csum_offload = inner->tx_csum_offload;
    t->inner = inner;
    t->pc = pc;
    mirror(t);
    return &t->dev;
}

struct ns_dev *ns_pcap_trace(struct ns_dev *inner, const char *path, const struct ns_pcap_opts *o,
                             char *err, size_t errlen)
{
    struct ns_pcap *pc = ns_pcap_open_opts(path, o);
    if (!pc) {
        snprintf(err, errlen, "cannot write capture %s: %s", path, strerror(errno));
        return NULL;
    }
    struct ns_dev *d = ns_pcap_tracer_new(inner, pc);
    if (!d) {
        ns_pcap_close(pc);
        snprintf(err, errlen, "capture %s: out of memory", path);
    }
    return d;
}

struct ns_pcap *ns_pcap_tracer_pcap(struct ns_dev *tracer)
{
    return tracer->ops == &tracer_ops ? ((struct tracer *)tracer)->pc : NULL;
}

struct ns_dev *ns_pcap_tracer_inner(struct ns_dev *tracer)
{
    return tracer->ops == &tracer_ops ? ((struct tracer *)tracer)->inner : NULL;
}

uint64_t ns_pcap_tracer_poll(struct ns_dev *tracer, uint64_t now)
{
    struct ns_pcap *pc = ns_pcap_tracer_pcap(tracer);
    return pc ? ns_pcap_poll(pc, now) : NS_TIME_NEVER;
}

int ns_pcap_capture(void *ctx, const void *frame, uint32_t len, uint64_t now)
{
    return ns_pcap_write_bytes(ctx, frame, len, now);
}
