/* The control protocol's framing and socket-path rules (see ctl.h). */
#include "tools/ctl.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static bool known_type(uint8_t t)
{
    switch (t) {
    case NS_CTL_REQ:
    case NS_CTL_STDIN:
    case NS_CTL_STDIN_EOF:
    case NS_CTL_INTR:
    case NS_CTL_STDOUT:
    case NS_CTL_STDERR:
    case NS_CTL_EXIT:
    case NS_CTL_WANT_STDIN:
        return true;
    }
    return false;
}

int ns_ctl_decode(const uint8_t *buf, size_t len, struct ns_ctl_frame *f)
{
    if (len < 1)
        return 0;
    /* Reject an unknown type as soon as its byte is in, before waiting for
     * a length that may never come. */
    if (!known_type(buf[0]))
        return -EPROTO;
    if (len < NS_CTL_HDR)
        return 0;
    uint32_t n = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
    if (n > NS_CTL_MAX_PAYLOAD)
        return -EMSGSIZE;
    if (len - NS_CTL_HDR < n)
        return 0;
    f->type = buf[0];
    f->len = n;
    f->data = buf + NS_CTL_HDR;
    return (int)(NS_CTL_HDR + n);
}

void ns_ctl_put_hdr(uint8_t out[NS_CTL_HDR], uint8_t type, uint32_t n)
{
    out[0] = type;
    out[1] = (uint8_t)(n >> 24);
    out[2] = (uint8_t)(n >> 16);
    out[3] = (uint8_t)(n >> 8);
    out[4] = (uint8_t)n;
}

int ns_ctl_rx_init(struct ns_ctl_rx *rx)
{
    rx->off = rx->len = 0;
    rx->cap = NS_CTL_HDR + NS_CTL_MAX_PAYLOAD;
    rx->buf = malloc(rx->cap);
    return rx->buf ? 0 : -ENOMEM;
}

void ns_ctl_rx_free(struct ns_ctl_rx *rx)
{
    free(rx->buf);
    rx->buf = NULL;
    rx->off = rx->len = rx->cap = 0;
}

static void compact(struct ns_ctl_rx *rx)
{
    if (rx->off == 0)
        return;
    memmove(rx->buf, rx->buf + rx->off, rx->len - rx->off);
    rx->len -= rx->off;
    rx->off = 0;
}

size_t ns_ctl_rx_feed(struct ns_ctl_rx *rx, const void *data, size_t n)
{
    compact(rx);
    size_t room = rx->cap - rx->len;
    if (n > room)
        n = room;
    memcpy(rx->buf + rx->len, data, n);
    rx->len += n;
    return n;
}

ssize_t ns_ctl_rx_read(struct ns_ctl_rx *rx, int fd)
{
    compact(rx);
    if (rx->len == rx->cap)
        return -ENOBUFS;
    ssize_t r = read(fd, rx->buf + rx->len, rx->cap - rx->len);
    if (r < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    rx->len += (size_t)r;
    return r;
}

int ns_ctl_rx_next(struct ns_ctl_rx *rx, struct ns_ctl_frame *f)
{
    int r = ns_ctl_decode(rx->buf + rx->off, rx->len - rx->off, f);
    if (r <= 0)
        return r;
    rx->off += (size_t)r;
    return 1;
}

void ns_ctl_tx_init(struct ns_ctl_tx *tx, size_t limit)
{
    tx->buf = NULL;
    tx->off = tx->len = tx->cap = 0;
    tx->limit = limit;
}

void ns_ctl_tx_free(struct ns_ctl_tx *tx)
{
    free(tx->buf);
    ns_ctl_tx_init(tx, tx->limit);
}

static int tx_reserve(struct ns_ctl_tx *tx, size_t n)
{
    if (tx->off == tx->len)
        tx->off = tx->len = 0;
    if (tx->len - tx->off + n > tx->limit)
        return -ENOBUFS;
    if (tx->off && tx->len + n > tx->cap) {
        memmove(tx->buf, tx->buf + tx->off, tx->len - tx->off);
        tx->len -= tx->off;
        tx->off = 0;
    }
    if (tx->len + n <= tx->cap)
        return 0;
    size_t cap = tx->cap ? tx->cap : 4096;
    while (cap < tx->len + n)
        cap *= 2;
    uint8_t *b = realloc(tx->buf, cap);
    if (!b)
        return -ENOMEM;
    tx->buf = b;
    tx->cap = cap;
    return 0;
}

int ns_ctl_tx_frame(struct ns_ctl_tx *tx, uint8_t type, const void *data, size_t n)
{
    bool splittable = type == NS_CTL_STDOUT || type == NS_CTL_STDERR || type == NS_CTL_STDIN;
    if (!known_type(type))
        return -EPROTO;
    if (n > NS_CTL_MAX_PAYLOAD && !splittable)
        return -EMSGSIZE;
    size_t frames = n ? (n + NS_CTL_MAX_PAYLOAD - 1) / NS_CTL_MAX_PAYLOAD : 1;
    int r = tx_reserve(tx, n + frames * NS_CTL_HDR);
    if (r < 0)
        return r;
    const uint8_t *p = data;
    do {
        size_t chunk = n > NS_CTL_MAX_PAYLOAD ? NS_CTL_MAX_PAYLOAD : n;
        ns_ctl_put_hdr(tx->buf + tx->len, type, (uint32_t)chunk);
        tx->len += NS_CTL_HDR;
        if (chunk)
            memcpy(tx->buf + tx->len, p, chunk);
        tx->len += chunk;
        p += chunk;
        n -= chunk;
    } while (n);
    return 0;
}

int ns_ctl_tx_flush(struct ns_ctl_tx *tx, int fd)
{
    while (tx->off < tx->len) {
        ssize_t w = send(fd, tx->buf + tx->off, tx->len - tx->off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        }
        tx->off += (size_t)w;
    }
    tx->off = tx->len = 0;
    return 0;
}

int ns_ctl_req_build(uint8_t flags, int argc, char *const *argv, uint8_t *out, size_t cap)
{
    if (argc < 1 || argc > NS_CTL_MAX_ARGS)
        return -EINVAL;
    size_t n = 2;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    if (n > cap || n > NS_CTL_MAX_PAYLOAD)
        return -EMSGSIZE;
    out[0] = NS_CTL_VERSION;
    out[1] = flags;
    size_t at = 2;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]) + 1;
        memcpy(out + at, argv[i], l);
        at += l;
    }
    return (int)at;
}

int ns_ctl_req_parse(uint8_t *p, size_t len, uint8_t *flags, char **argv, int max)
{
    if (len < 3 || p[0] != NS_CTL_VERSION || p[len - 1] != '\0')
        return -EPROTO;
    *flags = p[1];
    int argc = 0;
    for (size_t at = 2; at < len;) {
        if (argc >= max)
            return -EPROTO;
        argv[argc++] = (char *)p + at;
        at += strlen((char *)p + at) + 1;
    }
    return argc;
}

static bool is_sock_name(const char *name)
{
    size_t l = strlen(name);
    return l > 5 && strcmp(name + l - 5, ".sock") == 0;
}

int ns_ctl_resolve(const char *opt, const char *env, const char *dir, char *out, size_t outlen,
                   char *err, size_t errlen)
{
    const char *pick = opt && *opt ? opt : env && *env ? env : NULL;
    if (pick) {
        if (strlen(pick) >= outlen || strlen(pick) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
            snprintf(err, errlen, "socket path too long: %s", pick);
            return -1;
        }
        snprintf(out, outlen, "%s", pick);
        return 0;
    }
    DIR *d = opendir(dir);
    int found = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!is_sock_name(e->d_name))
                continue;
            if (found++ == 0)
                snprintf(out, outlen, "%s/%s", dir, e->d_name);
        }
        closedir(d);
    }
    if (found == 1)
        return 0;
    if (found == 0)
        snprintf(err, errlen,
                 "no daemon running (no socket in %s); start one with: nstack daemon --dev "
                 "tap:NAME --addr A.B.C.D/LEN",
                 dir);
    else
        snprintf(err, errlen, "several daemons: choose one with -C PATH");
    return -1;
}

int ns_ctl_default_path(const char *dir, const char *devspec, char *out, size_t outlen)
{
    const char *colon = strchr(devspec, ':');
    const char *name = colon ? colon + 1 : devspec;
    /* Device options (tap:NAME,offload) are not part of the name. */
    int len = (int)strcspn(name, ",");
    if (!len || memchr(name, '/', (size_t)len))
        return -1;
    int n = snprintf(out, outlen, "%s/%.*s.sock", dir, len, name);
    if (n < 0 || (size_t)n >= outlen || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return -1;
    return 0;
}

int ns_ctl_user_dir(char *out, size_t outlen)
{
    uid_t uid = geteuid();
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (uid == 0)
        n = snprintf(out, outlen, "%s", NS_CTL_DIR);
    else if (xdg && xdg[0] == '/')
        n = snprintf(out, outlen, "%s/nstack", xdg);
    else
        n = snprintf(out, outlen, "/tmp/nstack-%lu", (unsigned long)uid);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}
