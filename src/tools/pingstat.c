/* Ping statistics in iputils' format (see pingstat.h). Written from the
 * observed output of iputils ping, not from its source. */
#include "tools/pingstat.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void ns_pingstat_init(struct ns_pingstat *st, bool timing)
{
    memset(st, 0, sizeof(*st));
    st->tmin = UINT64_MAX;
    st->timing = timing;
}

void ns_pingstat_ack(struct ns_pingstat *st, uint16_t seq)
{
    /* Sequence numbers are 16 bits on the wire; distances beyond half the
     * space are answers to requests from a previous wrap and are ignored. */
    uint16_t behind = (uint16_t)((uint16_t)st->ntransmitted - seq);
    if (behind < 0x8000 && (uint32_t)behind + 1 > st->pipesize)
        st->pipesize = (uint32_t)behind + 1;
}

void ns_pingstat_rtt(struct ns_pingstat *st, uint64_t rtt_us)
{
    st->tsum += rtt_us;
    st->tsum2 += rtt_us * rtt_us;
    if (rtt_us < st->tmin)
        st->tmin = rtt_us;
    if (rtt_us > st->tmax)
        st->tmax = rtt_us;
}

void ns_pingstat_fmt_time(uint64_t us, char out[32])
{
    /* The thresholds sit half a printed unit low so that a value which
     * rounds up to the next magnitude is printed with that magnitude's
     * precision (99.96 ms is "100", not "100.0"). */
    if (us >= 100000 - 50)
        snprintf(out, 32, "%" PRIu64, (us + 500) / 1000);
    else if (us >= 10000 - 5)
        snprintf(out, 32, "%" PRIu64 ".%01" PRIu64, (us + 50) / 1000, (us + 50) % 1000 / 100);
    else if (us >= 1000)
        snprintf(out, 32, "%" PRIu64 ".%02" PRIu64, (us + 5) / 1000, (us + 5) % 1000 / 10);
    else
        snprintf(out, 32, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
}

uint64_t ns_pingstat_isqrt(uint64_t v)
{
    /* Bit-by-bit method: exact floor, no floating point. */
    uint64_t res = 0, bit = 1ULL << 62;
    while (bit > v)
        bit >>= 2;
    while (bit) {
        if (v >= res + bit) {
            v -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    return res;
}

static void ms3(struct ns_sbuf *out, uint64_t us)
{
    ns_sbuf_printf(out, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
}

void ns_pingstat_summary(const struct ns_pingstat *st, const char *host, uint64_t elapsed_us,
                         struct ns_sbuf *out)
{
    ns_sbuf_printf(out, "\n--- %s ping statistics ---\n", host);
    ns_sbuf_printf(out, "%" PRIu64 " packets transmitted, %" PRIu64 " received", st->ntransmitted,
                   st->nreceived);
    if (st->nrepeats)
        ns_sbuf_printf(out, ", +%" PRIu64 " duplicates", st->nrepeats);
    if (st->nerrors)
        ns_sbuf_printf(out, ", +%" PRIu64 " errors", st->nerrors);
    if (st->ntransmitted) {
        /* iputils computes the loss in float and prints it with %g, which
         * gives "33.3333%" for 1 of 3 lost. */
        double lost = (double)((int64_t)st->ntransmitted - (int64_t)st->nreceived);
        float pct = (float)(lost * 100.0 / (double)st->ntransmitted);
        ns_sbuf_printf(out, ", %g%% packet loss, time %" PRIu64 "ms", (double)pct,
                       (elapsed_us + 500) / 1000);
    }
    ns_sbuf_puts(out, "\n");

    const char *sep = "";
    uint64_t total = st->nreceived + st->nrepeats;
    if (st->nreceived && st->timing && total) {
        uint64_t avg = st->tsum / total;
        int64_t var;
        if (st->tsum < INT32_MAX)
            var = (int64_t)((st->tsum2 - st->tsum * st->tsum / total) / total);
        else
            var = (int64_t)(st->tsum2 / total) - (int64_t)(avg * avg);
        uint64_t mdev = ns_pingstat_isqrt(var > 0 ? (uint64_t)var : 0);
        ns_sbuf_puts(out, "rtt min/avg/max/mdev = ");
        ms3(out, st->tmin);
        ns_sbuf_puts(out, "/");
        ms3(out, avg);
        ns_sbuf_puts(out, "/");
        ms3(out, st->tmax);
        ns_sbuf_puts(out, "/");
        ms3(out, mdev);
        ns_sbuf_puts(out, " ms");
        sep = ", ";
    }
    if (st->pipesize > 1) {
        ns_sbuf_printf(out, "%spipe %u", sep, st->pipesize);
        sep = ", ";
    }
    if (*sep)
        ns_sbuf_puts(out, "\n");
}

static const char *const unreach_desc[] = {
    "Destination Net Unreachable",
    "Destination Host Unreachable",
    "Destination Protocol Unreachable",
    "Destination Port Unreachable",
    "Frag needed and DF set",
    "Source Route Failed",
    "Destination Net Unknown",
    "Destination Host Unknown",
    "Source Host Isolated",
    "Destination Net Prohibited",
    "Destination Host Prohibited",
    "Destination Net Unreachable for Type of Service",
    "Destination Host Unreachable for Type of Service",
    "Packet filtered",
    "Precedence Violation",
    "Precedence Cutoff",
};

void ns_pingstat_icmp_desc(uint8_t type, uint8_t code, struct ns_sbuf *out)
{
    switch (type) {
    case 3:
        if (code < sizeof(unreach_desc) / sizeof(unreach_desc[0]))
            ns_sbuf_puts(out, unreach_desc[code]);
        else
            ns_sbuf_printf(out, "Dest Unreachable, Bad Code: %u", code);
        return;
    case 4:
        ns_sbuf_puts(out, "Source Quench");
        return;
    case 5:
        ns_sbuf_puts(out, "Redirect");
        return;
    case 11:
        if (code == 0)
            ns_sbuf_puts(out, "Time to live exceeded");
        else if (code == 1)
            ns_sbuf_puts(out, "Frag reassembly time exceeded");
        else
            ns_sbuf_printf(out, "Time exceeded, Bad Code: %u", code);
        return;
    case 12:
        ns_sbuf_puts(out, "Parameter problem");
        return;
    default:
        ns_sbuf_printf(out, "Bad ICMP type: %u", type);
    }
}
