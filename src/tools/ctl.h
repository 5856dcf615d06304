/* The control protocol between `nstack COMMAND` and `nstack daemon`, over
 * an AF_UNIX stream socket.
 *
 * Every message is a frame: a type byte, a 32-bit big-endian payload length,
 * and the payload (at most NS_CTL_MAX_PAYLOAD bytes, so a reader needs one
 * fixed buffer and a hostile peer cannot make it grow). The client sends one
 * REQ (protocol version, global flags, argv), then optionally STDIN data,
 * STDIN_EOF (only after the daemon asked with WANT_STDIN) and INTR (the user
 * pressed ^C). The daemon answers with STDOUT/STDERR text in any number of
 * frames and ends with EXIT carrying the status byte, then closes.
 */
#ifndef NS_TOOLS_CTL_H
#define NS_TOOLS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NS_CTL_VERSION     1
#define NS_CTL_HDR         5
#define NS_CTL_MAX_PAYLOAD 65536
#define NS_CTL_MAX_ARGS    128
#define NS_CTL_DIR         "/run/nstack"

enum ns_ctl_type {
    /* client -> daemon */
    NS_CTL_REQ = 0x01,
    NS_CTL_STDIN = 0x02,
    NS_CTL_STDIN_EOF = 0x03,
    NS_CTL_INTR = 0x04,
    /* daemon -> client */
    NS_CTL_STDOUT = 0x11,
    NS_CTL_STDERR = 0x12,
    NS_CTL_EXIT = 0x13,
    NS_CTL_WANT_STDIN = 0x14,
};

/* Global flags carried in REQ. */
#define NS_CTL_F_JSON  0x01 /* -j */
#define NS_CTL_F_STATS 0x02 /* -s */

struct ns_ctl_frame {
    uint8_t type;
    uint32_t len;
    const uint8_t *data; /* valid until the next read/feed on the same rx */
};

/* Decode one frame from buf. Returns the bytes it occupies (> 0), 0 if buf
 * holds only part of it, -EMSGSIZE for a length above the maximum, -EPROTO
 * for an unknown type. */
int ns_ctl_decode(const uint8_t *buf, size_t len, struct ns_ctl_frame *f);
/* Write a frame header for a payload of n bytes. */
void ns_ctl_put_hdr(uint8_t out[NS_CTL_HDR], uint8_t type, uint32_t n);

/* Receive side: a fixed buffer of one maximal frame. */
struct ns_ctl_rx {
    uint8_t *buf;
    size_t off, len, cap; /* unconsumed bytes are buf[off, len) */
};

int ns_ctl_rx_init(struct ns_ctl_rx *rx);
void ns_ctl_rx_free(struct ns_ctl_rx *rx);
/* Append up to n bytes (fewer when the buffer is full); returns the count. */
size_t ns_ctl_rx_feed(struct ns_ctl_rx *rx, const void *data, size_t n);
/* One read(2) into the buffer: > 0 bytes read, 0 end of stream, -errno
 * (-EAGAIN when nothing waits, -ENOBUFS if a full buffer holds no frame,
 * which cannot happen once ns_ctl_rx_next has rejected oversized ones). */
ssize_t ns_ctl_rx_read(struct ns_ctl_rx *rx, int fd);
/* The next complete frame: 1 (f filled), 0 (need more), or a decode error.
 * After an error the stream is unusable. */
int ns_ctl_rx_next(struct ns_ctl_rx *rx, struct ns_ctl_frame *f);

/* Send side: frames queued in a buffer bounded by `limit` bytes, flushed
 * without blocking. */
struct ns_ctl_tx {
    uint8_t *buf;
    size_t off, len, cap, limit;
};

void ns_ctl_tx_init(struct ns_ctl_tx *tx, size_t limit);
void ns_ctl_tx_free(struct ns_ctl_tx *tx);
/* Queue a frame. Text and stdin payloads longer than the maximum are split
 * over several frames; other types must fit (-EMSGSIZE). -ENOBUFS when the
 * queue would exceed its limit (nothing is queued), -ENOMEM. */
int ns_ctl_tx_frame(struct ns_ctl_tx *tx, uint8_t type, const void *data, size_t n);
/* Write queued bytes to a socket: 0 when all are out, -EAGAIN when some
 * remain, other -errno on failure (the peer went away: -EPIPE...). */
int ns_ctl_tx_flush(struct ns_ctl_tx *tx, int fd);
static inline bool ns_ctl_tx_pending(const struct ns_ctl_tx *tx)
{
    return tx->len > tx->off;
}

/* REQ payload: version, flags, then each argument NUL-terminated. */
int ns_ctl_req_build(uint8_t flags, int argc, char *const *argv, uint8_t *out, size_t cap);
/* Parse a REQ payload in place (argv points into p). Returns argc (>= 1) or
 * -EPROTO (bad version, no argument, missing terminator, too many). */
int ns_ctl_req_parse(uint8_t *p, size_t len, uint8_t *flags, char **argv, int max);

/* The socket a client talks to: opt (-C), else env ($NSTACK_CTL), else the
 * only *.sock in dir. 0, or -1 with a one-line reason in err. */
int ns_ctl_resolve(const char *opt, const char *env, const char *dir, char *out, size_t outlen,
                   char *err, size_t errlen);
/* The daemon's default socket for a device spec: DIR/NAME.sock where NAME
 * follows "tap:" or "afpacket:". -1 if the spec has no usable name. */
int ns_ctl_default_path(const char *dir, const char *devspec, char *out, size_t outlen);
/* The directory of sockets of daemons that need no root (hosted mode),
 * where clients look too: NS_CTL_DIR for root, else $XDG_RUNTIME_DIR/nstack,
 * else /tmp/nstack-UID. -1 if it does not fit. */
int ns_ctl_user_dir(char *out, size_t outlen);

#endif
