/* The commands `nstack` runs inside a stack's thread: ping, neigh, stats,
 * sysctl, addr, udp. Like the protocol cores this layer is sans-I/O: a
 * command is started with its argv and `now`, writes text through callbacks,
 * and long commands (ping, udp recv) are state machines driven by timers on
 * the env's own timer heap and by stack events. The daemon wires the
 * callbacks to a control connection; simdemo and the unit tests to buffers.
 */
#ifndef NS_TOOLS_CMD_H
#define NS_TOOLS_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/timer.h"

struct ns_stack;
struct ns_cmd_sess;
struct ns_cmd_echo;
struct ns_svc;

/* Where a command's output goes. stream is 1 (stdout) or 2 (stderr). */
struct ns_cmd_out {
    void (*write)(void *ctx, int stream, const char *data, size_t n);
    /* The command reads standard input: deliver it with ns_cmd_input().
     * NULL: the command sees empty input at once. */
    void (*want_input)(void *ctx);
    /* Called exactly once, when the command ends; the session stays valid
     * until ns_cmd_free(). */
    void (*done)(void *ctx, int status);
    void *ctx;
};

// clang-format off
#define NS_CMD_COUNTERS(X) \
    X(commands) X(bad_requests) X(ping_sessions) X(icmp_events_unmatched)                       \
    X(udp_echo_datagrams) X(udp_echo_errors)
// clang-format on

struct ns_cmd_stats {
    NS_CMD_COUNTERS(NS_CTR_FIELD)
};

#define NS_CMD_MAX_EXTRA 4

struct ns_cmd_env {
    struct ns_stack *s;
    struct ns_timers timers;      /* the commands' timers, separate from the stack's */
    struct ns_cmd_sess *sessions; /* running commands */
    struct ns_cmd_echo *echoes;   /* --serve udp-echo services */
    /* The daemon's socket runtime and SCTP services (`nstack perf` runs an
     * application thread on it); NULL elsewhere. */
    struct ns_svc *svc;
    uint16_t next_ping_id;
    /* Counter groups the embedder adds to `nstack stats` (device, control). */
    struct ns_ctr_group extra[NS_CMD_MAX_EXTRA];
    size_t n_extra;
    struct ns_cmd_stats stats;
};

/* Takes over the stack's ICMP event hook (ping replies and errors). */
void ns_cmd_env_init(struct ns_cmd_env *env, struct ns_stack *s, uint16_t first_ping_id);
/* Stops services and any command still running (without calling done). */
void ns_cmd_env_free(struct ns_cmd_env *env);
/* Run the commands' due timers; returns their next deadline. */
uint64_t ns_cmd_poll(struct ns_cmd_env *env, uint64_t now);
static inline uint64_t ns_cmd_next_deadline(const struct ns_cmd_env *env)
{
    return ns_timers_next(&env->timers);
}

/* Run argv (argv[0] is the command name; flags are NS_CTL_F_*). Returns the
 * session, possibly already done (done() has then been called), or NULL if
 * memory ran out. */
struct ns_cmd_sess *ns_cmd_start(struct ns_cmd_env *env, uint8_t flags, int argc, char *const *argv,
                                 const struct ns_cmd_out *out, uint64_t now);
/* ^C from the user: ping prints its statistics and ends, udp recv ends. */
void ns_cmd_interrupt(struct ns_cmd_sess *sess, uint64_t now);
/* Standard input for a command that asked for it; eof ends it. */
void ns_cmd_input(struct ns_cmd_sess *sess, const void *data, size_t n, bool eof, uint64_t now);
bool ns_cmd_done(const struct ns_cmd_sess *sess);
int ns_cmd_status(const struct ns_cmd_sess *sess);
/* Release a session; a running one is cancelled silently (client gone). */
void ns_cmd_free(struct ns_cmd_sess *sess);

/* Daemon options shared with the commands. 0, or -1 with a reason in err. */
int ns_cmd_serve(struct ns_cmd_env *env, const char *spec, char *err, size_t errlen);
int ns_cmd_sysctl_assign(struct ns_stack *s, const char *key_eq_value, uint64_t now, char *err,
                         size_t errlen);

/* Command names and their usage text (NULL for an unknown command). */
bool ns_cmd_known(const char *name);
const char *ns_cmd_usage(const char *name);
extern const char ns_cmd_usage_main[];
/* argv asks for help: "--help"/"-h" anywhere, or "help" as the subcommand
 * of neigh/udp. */
bool ns_cmd_wants_help(int argc, char *const *argv);

#endif
