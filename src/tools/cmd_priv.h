/* Internals shared by the command files (cmd.c and the per-command files:
 * ping.c, neighcmd.c, statscmd.c, sysctlcmd.c, addrcmd.c, perfcmd.c,
 * sctpcmd.c, udpcmd.c). */
#ifndef NS_TOOLS_CMD_PRIV_H
#define NS_TOOLS_CMD_PRIV_H

#include <stddef.h>

#include "ipv4/icmp.h"
#include "tools/cmd.h"
#include "tools/text.h"

struct ns_rt;

#define NS_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Exit statuses: usage errors as iputils/iproute2 use them. */
#define NS_EXIT_OK    0
#define NS_EXIT_FAIL  1
#define NS_EXIT_USAGE 2

struct ns_cmd_kind {
    const char *name;
    void (*interrupt)(struct ns_cmd_sess *sess, uint64_t now);
    void (*input)(struct ns_cmd_sess *sess, const void *data, size_t n, bool eof, uint64_t now);
    /* Release the command's resources; called once when it ends. */
    void (*release)(struct ns_cmd_sess *sess);
};

struct ns_cmd_sess {
    struct ns_cmd_env *env;
    struct ns_cmd_sess *next; /* env->sessions while running */
    struct ns_cmd_out out;
    uint8_t flags;
    bool done;
    bool listed;
    int status;
    const struct ns_cmd_kind *kind;
    void *priv;
};

void ns_cmd_write(struct ns_cmd_sess *sess, int stream, const char *data, size_t n);
void ns_cmd_printf(struct ns_cmd_sess *sess, int stream, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "nstack: ..." on stderr. */
void ns_cmd_errorf(struct ns_cmd_sess *sess, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ns_cmd_put_sbuf(struct ns_cmd_sess *sess, int stream, const struct ns_sbuf *b);
/* End the command: releases it and reports status (once). */
void ns_cmd_finish(struct ns_cmd_sess *sess, int status);
/* Make a long-running command: it joins env->sessions with kind and priv. */
void ns_cmd_make_long(struct ns_cmd_sess *sess, const struct ns_cmd_kind *kind, void *priv);

/* Command entry points: each either finishes sess or makes it long. */
void ns_cmd_ping(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_ping_event(struct ns_cmd_env *env, const struct ns_icmp_event *ev, uint64_t now);
void ns_cmd_udp(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_stats(struct ns_cmd_sess *sess, int argc, char *const *argv);
void ns_cmd_sysctl(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_addr(struct ns_cmd_sess *sess, int argc, char *const *argv);
void ns_cmd_neigh(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_sctp(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_sctp_send(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_perf(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now);
void ns_cmd_echo_free_all(struct ns_cmd_env *env);

/* Sending over SCTP from an application thread (perfcmd.c; `nstack perf`
 * and `nstack sctp send` use them). -m's largest message: */
#define NS_CMD_SCTP_MAX_MSG (1u << 20)
/* Raise SO_SNDBUF so that one message of msgsize bytes fits. */
void ns_cmd_sctp_fit_sndbuf(struct ns_rt *rt, int sd, uint32_t msgsize);
/* false (after printing why) if size exceeds sysctl sctp.max_message_bytes. */
bool ns_cmd_sctp_msg_fits(struct ns_cmd_sess *sess, const char *what, uint32_t size);
/* "WHAT: send HOST port PORT: ERROR", with how to lift the limit for EMSGSIZE. */
void ns_cmd_sctp_send_errorf(struct ns_cmd_sess *sess, const char *what, uint32_t dst,
                             uint16_t port, int err, uint32_t size);
/* HOST or HOST:UDPPORT (the UDP port becomes HOST's encapsulation port);
 * false after printing an error. */
bool ns_cmd_sctp_parse_host(struct ns_cmd_sess *sess, const char *what, const char *v,
                            uint32_t *dst);

/* Options in the style of getopt: "-c3", "-c 3", flags grouped ("-qc3"),
 * "--" ends options, options may follow positionals. Once `verbatim_after`
 * positionals are seen (0: never) the rest are positionals as they are
 * (udp send's TEXT). cb gets each option letter with its value (NULL for
 * flags) and returns false after printing an error. */
typedef bool (*ns_cmd_opt_fn)(struct ns_cmd_sess *sess, void *arg, char opt, const char *val);
struct ns_cmd_optspec {
    const char *name;     /* for messages: "ping", "udp recv" */
    const char *with_arg; /* option letters taking a value */
    const char *flags;    /* option letters without */
    int verbatim_after;
    ns_cmd_opt_fn cb;
    void *arg;
};
/* Returns the number of positionals stored in pos (at most max), or -1
 * after printing an error. */
int ns_cmd_getopt(struct ns_cmd_sess *sess, const struct ns_cmd_optspec *spec, int argc,
                  char *const *argv, const char **pos, int max);

#endif
