/* Entry points of the nstack binary's modes. Each returns the process exit
 * status. */
#ifndef NS_TOOLS_MAIN_H
#define NS_TOOLS_MAIN_H

#include <stdint.h>

/* `nstack daemon ...`: argv[0] is "daemon". */
int ns_daemon_main(int argc, char **argv);
/* `nstack [-C PATH] [-j] [-s] COMMAND ...`: run COMMAND in the daemon. */
int ns_client_main(const char *ctl_opt, uint8_t flags, int argc, char **argv);
/* `nstack simdemo`: two stacks over a memlink, no root. */
int ns_simdemo_main(int argc, char **argv);

#endif
