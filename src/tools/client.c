/* The client side of `nstack COMMAND`: send argv to the daemon, copy its
 * output frames to stdout/stderr, feed it standard input when it asks, turn
 * the first ^C into an interrupt message (ping then prints its statistics,
 * as iputils does) and exit with the status the daemon reports. A second ^C
 * leaves at once. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/ctl.h"
#include "tools/main.h"

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* stdout closed (| head): nothing useful left to do */
        }
        p += w;
        n -= (size_t)w;
    }
}

static int connect_ctl(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* Sockets (*.sock) in dir; the first one's path goes to out. */
static int scan_dir(const char *dir, char *out, size_t outlen)
{
    DIR *d = opendir(dir);
    int found = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".sock") != 0)
            continue;
        if (found++ == 0 && snprintf(out, outlen, "%s/%s", dir, e->d_name) >= (int)outlen)
            found--; /* a name too long for a socket address is not one */
    }
    closedir(d);
    return found;
}

/* -C, else $NSTACK_CTL, else the only socket in /run/nstack and in the
 * directory of daemons that need no root (ns_ctl_user_dir: hosted mode
 * run by this user) taken together. */
static int resolve_ctl(const char *ctl_opt, char *path, size_t len, char *err, size_t errlen)
{
    const char *env = getenv("NSTACK_CTL");
    char udir[256];
    if ((ctl_opt && *ctl_opt) || (env && *env) || ns_ctl_user_dir(udir, sizeof(udir)) < 0 ||
        strcmp(udir, NS_CTL_DIR) == 0)
        return ns_ctl_resolve(ctl_opt, env, NS_CTL_DIR, path, len, err, errlen);
    char other[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int a = scan_dir(NS_CTL_DIR, path, len);
    int b = scan_dir(udir, other, sizeof(other));
    if (a + b == 1) {
        if (b)
            snprintf(path, len, "%s", other);
        return 0;
    }
    if (a + b == 0) {
        /* (The message may be cut short: it is only a message.) */
        if (snprintf(err, errlen,
                     "no daemon running (no socket in %s or %s); start one with: nstack daemon "
                     "--sctp-udp PORT, or as root: nstack daemon --dev tap:NAME --addr A.B.C.D/LEN",
                     NS_CTL_DIR, udir) < 0)
            err[0] = '\0';
    } else
        snprintf(err, errlen, "several daemons: choose one with -C PATH");
    return -1;
}

static int send_frame(int fd, struct ns_ctl_tx *tx, uint8_t type, const void *data, size_t n)
{
    int r = ns_ctl_tx_frame(tx, type, data, n);
    if (r == 0)
        r = ns_ctl_tx_flush(tx, fd);
    return r;
}

int ns_client_main(const char *ctl_opt, uint8_t flags, int argc, char **argv)
{
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char err[256];
    if (resolve_ctl(ctl_opt, path, sizeof(path), err, sizeof(err)) < 0) {
        fprintf(stderr, "nstack: %s\n", err);
        return 1;
    }
    if (argc > NS_CTL_MAX_ARGS) {
        fprintf(stderr, "nstack: too many arguments (at most %d)\n", NS_CTL_MAX_ARGS);
        return 2;
    }
    uint8_t *req = malloc(NS_CTL_MAX_PAYLOAD);
    if (!req) {
        fprintf(stderr, "nstack: out of memory\n");
        return 1;
    }
    int reqlen = ns_ctl_req_build(flags, argc, argv, req, NS_CTL_MAX_PAYLOAD);
    if (reqlen < 0) {
        free(req);
        fprintf(stderr, "nstack: arguments too long\n");
        return 2;
    }
    int fd = connect_ctl(path);
    if (fd < 0) {
        free(req);
        fprintf(stderr, "nstack: no daemon at %s (connect: %s)\n", path, strerror(-fd));
        return 1;
    }

    /* ^C becomes a message to the daemon instead of killing us. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

    struct ns_ctl_tx tx;
    ns_ctl_tx_init(&tx, 4 * NS_CTL_MAX_PAYLOAD);
    struct ns_ctl_rx rx;
    int status = -1;
    if (ns_ctl_rx_init(&rx) < 0) {
        fprintf(stderr, "nstack: out of memory\n");
        status = 1;
        goto out;
    }
    if (send_frame(fd, &tx, NS_CTL_REQ, req, (size_t)reqlen) < 0) {
        fprintf(stderr, "nstack: daemon at %s closed the connection\n", path);
        status = 1;
        goto out;
    }
    bool read_stdin = false, stdin_done = false;
    int interrupts = 0;
    uint8_t *inbuf = req; /* reused for standard input */
    while (status < 0) {
        struct pollfd pf[3] = {{.fd = fd, .events = POLLIN},
                               {.fd = sfd, .events = POLLIN},
                               {.fd = read_stdin && !stdin_done ? 0 : -1, .events = POLLIN}};
        if (poll(pf, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pf[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                interrupts++;
            if (interrupts >= 2) {
                status = 130;
                break;
            }
            send_frame(fd, &tx, NS_CTL_INTR, NULL, 0);
        }
        if (pf[2].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
            ssize_t n = read(0, inbuf, NS_CTL_MAX_PAYLOAD);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                stdin_done = true;
                send_frame(fd, &tx, NS_CTL_STDIN_EOF, NULL, 0);
            } else {
                send_frame(fd, &tx, NS_CTL_STDIN, inbuf, (size_t)n);
            }
        }
        if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t r = ns_ctl_rx_read(&rx, fd);
        if (r == -EINTR || r == -EAGAIN)
            continue;
        if (r <= 0) {
            fprintf(stderr, "nstack: connection to the daemon lost\n");
            status = 1;
            break;
        }
        struct ns_ctl_frame f;
        int k;
        while (status < 0 && (k = ns_ctl_rx_next(&rx, &f)) != 0) {
            if (k < 0) {
                fprintf(stderr, "nstack: bad message from the daemon (versions differ?)\n");
                status = 1;
                break;
            }
            switch (f.type) {
            case NS_CTL_STDOUT:
                write_all(1, f.data, f.len);
                break;
            case NS_CTL_STDERR:
                write_all(2, f.data, f.len);
                break;
            case NS_CTL_WANT_STDIN:
                read_stdin = true;
                break;
            case NS_CTL_EXIT:
                status = f.len == 1 ? f.data[0] : 1;
                break;
            default:
                fprintf(stderr, "nstack: unexpected message from the daemon\n");
                status = 1;
            }
        }
    }
out:
    if (status < 0)
        status = 1;
    ns_ctl_rx_free(&rx);
    ns_ctl_tx_free(&tx);
    free(req);
    if (sfd >= 0)
        close(sfd);
    close(fd);
    return status;
}
