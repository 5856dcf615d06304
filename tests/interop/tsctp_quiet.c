/* LD_PRELOAD shim for usrsctp's example programs (tsctp): the packaged
 * tsctp turns on every usrsctp debug category right after usrsctp_init
 * (usrsctp_sysctl_set_sctp_debug_on(0xffffffff)) and then prints a line
 * to stdout for nearly every packet and timer, which bounds its throughput
 * by that printing. Preloading this makes the call a no-op, so tsctp runs
 * as a quiet usrsctp application would. */
#include <stdint.h>

int usrsctp_sysctl_set_sctp_debug_on(uint32_t value);

int usrsctp_sysctl_set_sctp_debug_on(uint32_t value)
{
    (void)value;
    return 0;
}
