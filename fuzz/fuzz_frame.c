/* One Ethernet frame into a stack that has every input path armed. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t now = 1000000;
    struct ns_stack *s = fz_stack_new(now);
    if (!s)
        return 0;
    ns_stack_input(s, 1, data, (uint32_t)size, now);
    ns_stack_poll(s, now);
    fz_drain(s);
    char buf[2048];
    while (fz_udp && ns_udp_recvfrom(fz_udp, buf, sizeof(buf), NULL, NULL) != -EAGAIN)
        ;
    ns_stack_free(s);
    return 0;
}
