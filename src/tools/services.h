/* SCTP services of the daemon (--serve discard|echo|perf:PORT) and the
 * bookkeeping of `nstack perf` runs: application threads that use only the
 * public socket API (include/nstack/socket.h) over the daemon's runtime.
 *
 * The perf exchange (docs/cli.md, "nstack perf"): the client sends data
 * messages with ppid NS_PERF_PPID_DATA on its streams; at the end it sends
 * one message "END <bytes> <msgs>" on stream 0, ordered, with ppid
 * NS_PERF_PPID_END. Once the server has received that many payload bytes
 * it answers on stream 0 with ppid NS_PERF_PPID_REPORT:
 * "REPORT <bytes> <msgs> <elapsed_us> <cpu_us> <ncpus> <rcvbuf>", elapsed
 * from the first data message to the last, cpu the server process's CPU
 * time over the same span.
 */
#ifndef NS_TOOLS_SERVICES_H
#define NS_TOOLS_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ns_rt;
struct ns_svc;
struct ns_ctr_group;

#define NS_PERF_DEFAULT_PORT 5001
#define NS_PERF_PPID_DATA    0u
#define NS_PERF_PPID_END     0x4e535045u /* "NSPE" */
#define NS_PERF_PPID_REPORT  0x4e535052u /* "NSPR" */

/* Counters of the services (group "services"; only rare events, so the
 * threads post them to the stack thread, the one writer):
 * echo_reassembled: messages echoed that were read in pieces;
 * echo_too_big: messages over 256 KiB, read to their end and not echoed;
 * echo_nomem: messages dropped for want of reassembly memory (or, without
 * memory for its state, the association aborted);
 * echo_send_waits: replies that found the send buffer full and waited;
 * echo_send_errors: replies the socket refused (association gone, or over
 * sysctl sctp.max_message_bytes). */
// clang-format off
#define NS_SVC_COUNTERS(X) \
    X(echo_reassembled) X(echo_too_big) X(echo_nomem) X(echo_send_waits) X(echo_send_errors)
// clang-format on

struct ns_svc *ns_svc_new(void);
/* A --serve spec this module runs (discard:, echo:, perf:). */
bool ns_svc_is_sctp(const char *spec);
/* Record a service; 0 or -1 with a reason in err. */
int ns_svc_add(struct ns_svc *svc, const char *spec, char *err, size_t errlen);
/* Bind and listen every recorded service on rt and start their threads. */
int ns_svc_start(struct ns_svc *svc, struct ns_rt *rt, char *err, size_t errlen);
struct ns_rt *ns_svc_rt(const struct ns_svc *svc);
/* The "services" counter group into g (at most max); the number of groups
 * written. Read it on the stack thread (as `nstack stats` does). */
size_t ns_svc_counters(struct ns_svc *svc, struct ns_ctr_group *g, size_t max);
/* Stop services, tell perf runs to end, and wait for every thread (the
 * runtime must still run: call before ns_rt_free). NULL is fine. */
void ns_svc_stop(struct ns_svc *svc);
bool ns_svc_stopping(struct ns_svc *svc);
void ns_svc_free(struct ns_svc *svc);

/* Perf runs: count live client threads so ns_svc_stop can wait for them. */
void ns_svc_job_begin(struct ns_svc *svc);
void ns_svc_job_end(struct ns_svc *svc);

/* Process CPU time and monotonic time, in microseconds. */
uint64_t ns_svc_cpu_us(void);
uint64_t ns_svc_mono_us(void);

#endif
