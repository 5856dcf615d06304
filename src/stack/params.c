/* The stack's tunables: every layer's defaults. */
#include "stack/params.h"

#include <string.h>

void ns_params_default(struct ns_params *p)
{
    memset(p, 0, sizeof(*p));
    ns_neigh_params_default(&p->neigh);
    ns_ip_params_default(&p->ip);
    ns_sctp_params_default(&p->sctp);
}
