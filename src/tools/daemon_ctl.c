/* The daemon's control socket (ctl.h's protocol): its path and directory,
 * binding it (replacing a stale one), accepting clients, and each client
 * connection's I/O on the stack thread: requests into the command engine,
 * the command's output back as frames, ^C and standard input, and the
 * clients' last words when the daemon stops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nstack/socket.h"
#include "tools/cmd.h"
#include "tools/ctl.h"
#include "tools/daemon_priv.h"

#define MAX_CLIENTS      64
#define CLIENT_OUT_LIMIT (8u << 20) /* output a slow client may have queued */

/* ---- control connections ---- */

static void conn_update_events(struct daemon_conn *c)
{
    uint32_t ev = (c->closing ? 0 : EPOLLIN) | (ns_ctl_tx_pending(&c->tx) ? EPOLLOUT : 0);
    if (ev == c->events)
        return;
    if (ns_rt_mod_fd(c->d->rt, c->fd, ev) == 0)
        c->events = ev;
}

static void conn_queue(struct daemon_conn *c, uint8_t type, const void *data, size_t n)
{
    if (c->dead)
        return;
    int r = ns_ctl_tx_frame(&c->tx, type, data, n);
    if (r < 0) {
        /* The client stopped reading: give up on it rather than buffer
         * without bound. */
        c->d->stats.output_overflows++;
        c->dead = true;
    }
}

static void out_write(void *ctx, int stream, const char *data, size_t n)
{
    conn_queue(ctx, stream == 2 ? NS_CTL_STDERR : NS_CTL_STDOUT, data, n);
}

static void out_want_input(void *ctx)
{
    struct daemon_conn *c = ctx;
    c->want_input = true;
    conn_queue(c, NS_CTL_WANT_STDIN, NULL, 0);
}

static void out_done(void *ctx, int status)
{
    struct daemon_conn *c = ctx;
    uint8_t st = (uint8_t)status;
    conn_queue(c, NS_CTL_EXIT, &st, 1);
    c->closing = true;
}

static void conn_protocol_error(struct daemon_conn *c, const char *what)
{
    c->d->stats.bad_frames++;
    if (c->sess && !ns_cmd_done(c->sess)) {
        ns_cmd_free(c->sess);
        c->sess = NULL;
    }
    char msg[128];
    int n = snprintf(msg, sizeof(msg), "nstack: daemon: bad control message (%s)\n", what);
    conn_queue(c, NS_CTL_STDERR, msg, (size_t)n);
    out_done(c, 2);
}

static void conn_frame(struct daemon_conn *c, const struct ns_ctl_frame *f, uint64_t now)
{
    struct daemon *d = c->d;
    switch (f->type) {
    case NS_CTL_REQ: {
        if (c->req) {
            conn_protocol_error(c, "second request");
            return;
        }
        c->req = malloc(f->len ? f->len : 1);
        if (!c->req) {
            conn_protocol_error(c, "out of memory");
            return;
        }
        memcpy(c->req, f->data, f->len);
        char *argv[NS_CTL_MAX_ARGS];
        uint8_t flags;
        int argc = ns_ctl_req_parse(c->req, f->len, &flags, argv, NS_CTL_MAX_ARGS);
        if (argc < 0) {
            conn_protocol_error(c, "malformed request; client and daemon versions differ?");
            return;
        }
        d->stats.requests++;
        const struct ns_cmd_out out = {
            .write = out_write, .want_input = out_want_input, .done = out_done, .ctx = c};
        c->sess = ns_cmd_start(&d->env, flags, argc, argv, &out, now);
        if (!c->sess) {
            const char msg[] = "nstack: daemon: out of memory\n";
            conn_queue(c, NS_CTL_STDERR, msg, sizeof(msg) - 1);
            out_done(c, 1);
        }
        return;
    }
    case NS_CTL_STDIN:
    case NS_CTL_STDIN_EOF:
        if (!c->want_input || !c->sess) {
            conn_protocol_error(c, "input nobody asked for");
            return;
        }
        ns_cmd_input(c->sess, f->data, f->len, f->type == NS_CTL_STDIN_EOF, now);
        return;
    case NS_CTL_INTR:
        if (c->sess)
            ns_cmd_interrupt(c->sess, now);
        return;
    default:
        conn_protocol_error(c, "unexpected frame type");
        return;
    }
}

static void conn_input(struct daemon_conn *c, uint64_t now)
{
    ssize_t r = ns_ctl_rx_read(&c->rx, c->fd);
    if (r == -EAGAIN)
        return;
    if (r <= 0) {
        /* The client went away: a running command is cancelled. */
        c->dead = true;
        return;
    }
    struct ns_ctl_frame f;
    int k;
    while (!c->dead && !c->closing && (k = ns_ctl_rx_next(&c->rx, &f)) != 0) {
        if (k < 0) {
            conn_protocol_error(c, k == -EMSGSIZE ? "oversized frame" : "unknown frame type");
            return;
        }
        conn_frame(c, &f, now);
    }
}

static void conn_flush(struct daemon_conn *c)
{
    if (c->dead)
        return;
    if (ns_ctl_tx_pending(&c->tx)) {
        int r = ns_ctl_tx_flush(&c->tx, c->fd);
        if (r < 0 && r != -EAGAIN) {
            c->dead = true;
            return;
        }
    }
    if (c->closing && !ns_ctl_tx_pending(&c->tx)) {
        c->dead = true;
        return;
    }
    conn_update_events(c);
}

void daemon_conn_free(struct daemon_conn *c)
{
    ns_rt_del_fd(c->d->rt, c->fd);
    close(c->fd);
    ns_cmd_free(c->sess);
    ns_ctl_rx_free(&c->rx);
    ns_ctl_tx_free(&c->tx);
    free(c->req);
    free(c);
}

void daemon_flush_conns(struct daemon *d)
{
    for (struct daemon_conn *c = d->conns; c; c = c->next)
        conn_flush(c);
}

void daemon_reap_conns(struct daemon *d)
{
    for (struct daemon_conn **pp = &d->conns; *pp;) {
        struct daemon_conn *c = *pp;
        if (c->dead) {
            *pp = c->next;
            d->nconns--;
            daemon_conn_free(c);
        } else {
            pp = &c->next;
        }
    }
}

static void on_conn(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    struct daemon_conn *c = ctx;
    (void)rt;
    (void)fd;
    if (!c->dead && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        conn_input(c, daemon_mono_us());
}

static void accept_clients(struct daemon *d)
{
    for (;;) {
        int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (d->nconns >= MAX_CLIENTS || d->shutting) {
            d->stats.clients_refused++;
            static const char msg[] = "nstack: daemon: too many clients\n";
            uint8_t fr[NS_CTL_HDR + sizeof(msg) - 1 + NS_CTL_HDR + 1];
            ns_ctl_put_hdr(fr, NS_CTL_STDERR, sizeof(msg) - 1);
            memcpy(fr + NS_CTL_HDR, msg, sizeof(msg) - 1);
            ns_ctl_put_hdr(fr + NS_CTL_HDR + sizeof(msg) - 1, NS_CTL_EXIT, 1);
            fr[sizeof(fr) - 1] = 1;
            ssize_t w = send(fd, fr, sizeof(fr), MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(fd);
            continue;
        }
        struct daemon_conn *c = calloc(1, sizeof(*c));
        if (!c || ns_ctl_rx_init(&c->rx) < 0) {
            free(c);
            close(fd);
            continue;
        }
        c->d = d;
        c->fd = fd;
        ns_ctl_tx_init(&c->tx, CLIENT_OUT_LIMIT);
        c->events = EPOLLIN;
        if (ns_rt_add_fd(d->rt, fd, EPOLLIN, on_conn, c) < 0) {
            ns_ctl_rx_free(&c->rx);
            free(c);
            close(fd);
            continue;
        }
        c->next = d->conns;
        d->conns = c;
        d->nconns++;
        d->stats.clients++;
    }
}

void daemon_on_listen(struct ns_rt *rt, void *ctx, int fd, uint32_t events)
{
    (void)rt;
    (void)fd;
    (void)events;
    accept_clients(ctx);
}

/* Tell running commands' clients that the daemon is going away: ping gets
 * its statistics block, anything else a message. Best effort. */
void daemon_shutdown_clients(struct daemon *d, uint64_t now)
{
    for (struct daemon_conn *c = d->conns; c; c = c->next) {
        if (c->dead || !c->sess || ns_cmd_done(c->sess))
            continue;
        ns_cmd_interrupt(c->sess, now);
        if (!ns_cmd_done(c->sess)) {
            const char msg[] = "nstack: daemon shutting down\n";
            conn_queue(c, NS_CTL_STDERR, msg, sizeof(msg) - 1);
            ns_cmd_free(c->sess);
            c->sess = NULL;
            out_done(c, 1);
        }
    }
    daemon_pump(d);
    daemon_flush_conns(d);
}

/* ---- the listening socket and its path ---- */

static bool is_socket(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Bind the control socket, replacing a stale one nobody answers on. */
int daemon_ctl_listen(struct daemon *d, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->ctl_path);
    d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d->lfd < 0) {
        snprintf(err, errlen, "socket(AF_UNIX): %s", strerror(errno));
        return -1;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if (bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
            break;
        int e = errno;
        if (e != EADDRINUSE || attempt == 1) {
            snprintf(err, errlen, "cannot bind %s: %s", d->ctl_path, strerror(e));
            return -1;
        }
        if (!is_socket(d->ctl_path)) {
            snprintf(err, errlen, "%s exists and is not a socket", d->ctl_path);
            return -1;
        }
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (probe >= 0)
            close(probe);
        if (live) {
            snprintf(err, errlen, "another daemon is running on %s", d->ctl_path);
            return -1;
        }
        unlink(d->ctl_path); /* stale: its daemon is gone */
    }
    d->ctl_bound = true;
    struct stat st;
    if (stat(d->ctl_path, &st) == 0)
        d->ctl_ino = st.st_ino;
    /* Commands change the stack's state: only root (or the group) may. */
    chmod(d->ctl_path, 0660);
    if (listen(d->lfd, 16) < 0) {
        snprintf(err, errlen, "listen %s: %s", d->ctl_path, strerror(errno));
        return -1;
    }
    return 0;
}

void daemon_ctl_unlink(struct daemon *d)
{
    struct stat st;
    /* Only our own socket: a successor may have replaced it. */
    if (d->ctl_bound && stat(d->ctl_path, &st) == 0 && st.st_ino == d->ctl_ino)
        unlink(d->ctl_path);
    d->ctl_bound = false;
}

/* A directory for sockets that only we may use: create it, or accept an
 * existing one only if it is ours and not a symlink (/tmp is shared). */
static int user_dir_ready(const char *dir)
{
    if (strcmp(dir, NS_CTL_DIR) == 0) {
        if (mkdir(dir, 0755) == 0)
            chmod(dir, 0755); /* whatever the umask: clients must find sockets */
        else if (errno != EEXIST)
            return -errno;
        return 0;
    }
    /* $XDG_RUNTIME_DIR/nstack: the parent exists and is the user's. */
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (lstat(dir, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return -EPERM;
    return 0;
}

int daemon_ctl_setup_path(struct daemon *d, const struct daemon_opts *o, uint16_t udp_port)
{
    const char *env_ctl = getenv("NSTACK_CTL");
    if (o->ctl || (env_ctl && *env_ctl)) {
        const char *p = o->ctl ? o->ctl : env_ctl;
        if (strlen(p) >= sizeof(d->ctl_path)) {
            fprintf(stderr, "nstack: daemon: socket path too long: %s\n", p);
            return 2;
        }
        snprintf(d->ctl_path, sizeof(d->ctl_path), "%s", p);
        return 0;
    }
    if (o->sctp_udp) {
        char dir[200];
        if (ns_ctl_user_dir(dir, sizeof(dir)) < 0) {
            fprintf(stderr, "nstack: daemon: socket directory name too long (use --ctl)\n");
            return 2;
        }
        int r = user_dir_ready(dir);
        if (r < 0) {
            fprintf(stderr, "nstack: daemon: cannot use %s: %s (use --ctl)\n", dir, strerror(-r));
            return 1;
        }
        int n = snprintf(d->ctl_path, sizeof(d->ctl_path), "%s/udp-%u.sock", dir, udp_port);
        if (n < 0 || (size_t)n >= sizeof(d->ctl_path)) {
            fprintf(stderr, "nstack: daemon: socket path too long (use --ctl)\n");
            return 2;
        }
        return 0;
    }
    if (ns_ctl_default_path(NS_CTL_DIR, o->dev, d->ctl_path, sizeof(d->ctl_path)) < 0) {
        fprintf(stderr,
                "nstack: daemon: no interface name in '%s' (use tap:NAME or "
                "afpacket:IFNAME)\n",
                o->dev);
        return 2;
    }
    if (mkdir(NS_CTL_DIR, 0755) == 0) {
        chmod(NS_CTL_DIR, 0755); /* whatever the umask: clients must find sockets */
    } else if (errno != EEXIST) {
        fprintf(stderr, "nstack: daemon: cannot create %s: %s\n", NS_CTL_DIR, strerror(errno));
        return 1;
    }
    return 0;
}
