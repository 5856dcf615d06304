/* A sequence of frames with time gaps, so timers (ARP retransmits and
 * failure, reachable-time expiry, reassembly timeouts, GC) fire between
 * fuzzed inputs. Input: records of [gap_ms:u16][len:u16][frame:len]. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t now = 1000000;
    struct ns_stack *s = fz_stack_new(now);
    if (!s)
        return 0;
    size_t off = 0;
    char buf[2048];
    while (off + 4 <= size) {
        uint32_t gap_ms = (uint32_t)(data[off] << 8 | data[off + 1]);
        uint32_t len = (uint32_t)(data[off + 2] << 8 | data[off + 3]);
        off += 4;
        if (len > size - off)
            len = (uint32_t)(size - off);
        /* Advance through every deadline on the way, as the daemon would. */
        uint64_t until = now + gap_ms * 1000ULL;
        for (uint64_t next = ns_stack_next_deadline(s); next <= until;
             next = ns_stack_next_deadline(s)) {
            now = next > now ? next : now;
            ns_stack_poll(s, now);
            fz_drain(s);
        }
        now = until;
        ns_stack_input(s, 1, data + off, len, now);
        off += len;
        ns_stack_poll(s, now);
        fz_drain(s);
        while (fz_udp && ns_udp_recvfrom(fz_udp, buf, sizeof(buf), NULL, NULL) != -EAGAIN)
            ;
    }
    ns_stack_free(s);
    return 0;
}
