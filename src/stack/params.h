/* The tunables of one stack instance, as `nstack sysctl` shows them: each
 * layer owns its own (link/neigh.h, ipv4/ip_params.h, sctp/types.h) and
 * the stack composes them. */
#ifndef NS_STACK_PARAMS_H
#define NS_STACK_PARAMS_H

#include "ipv4/ip_params.h"
#include "link/neigh.h"
#include "sctp/types.h"

struct ns_params {
    struct ns_neigh_params neigh;
    struct ns_ip_params ip;
    /* `sctp.*` keys; struct and defaults live with the engine (sctp/types.h,
     * ns_sctp_params_default). */
    struct ns_sctp_params sctp;
};

/* Every layer's defaults (Linux's). */
void ns_params_default(struct ns_params *p);

#endif
