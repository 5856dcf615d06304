/* Ping statistics and iputils' number formatting, kept apart from the
 * session logic so the arithmetic can be tested with exact strings.
 *
 * Reproduces the observable behaviour of iputils ping (ping_common.c):
 * reply times printed with 3/2/1/0 decimals by magnitude, the summary block
 * with "+N duplicates", "+N errors", "%g%% packet loss" computed in float,
 * "time Nms", avg and mdev in integer microseconds over replies and
 * duplicates, mdev = isqrt(mean of squares - square of mean), and "pipe N"
 * (the most echo requests outstanding when an answer came back). */
#ifndef NS_TOOLS_PINGSTAT_H
#define NS_TOOLS_PINGSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/text.h"

struct ns_pingstat {
    uint64_t ntransmitted, nreceived, nrepeats, nerrors;
    uint64_t tmin, tmax, tsum, tsum2; /* microseconds, over replies and dups */
    uint32_t pipesize;
    bool timing; /* payload carries a timestamp */
};

void ns_pingstat_init(struct ns_pingstat *st, bool timing);
/* An answer (reply or error) for seq came back: updates pipesize. Call it
 * after ntransmitted counts every request sent so far. */
void ns_pingstat_ack(struct ns_pingstat *st, uint16_t seq);
/* One round-trip time sample (replies and duplicates alike). */
void ns_pingstat_rtt(struct ns_pingstat *st, uint64_t rtt_us);

/* A reply's time as iputils prints it after "time=" (without " ms"). */
void ns_pingstat_fmt_time(uint64_t us, char out[32]);
/* Integer square root (floor). */
uint64_t ns_pingstat_isqrt(uint64_t v);
/* The block from the blank line before "--- HOST ping statistics ---" to
 * the end, with the run's elapsed time. */
void ns_pingstat_summary(const struct ns_pingstat *st, const char *host, uint64_t elapsed_us,
                         struct ns_sbuf *out);
/* iputils' words for an ICMP error ("Destination Host Unreachable"). */
void ns_pingstat_icmp_desc(uint8_t type, uint8_t code, struct ns_sbuf *out);

#endif
