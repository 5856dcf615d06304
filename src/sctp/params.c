/* Default SCTP tunables: RFC 9260 section 16 (protocol parameters) where it
 * names a value, the comments of sctp/types.h otherwise. */
#include "sctp/types.h"

#include <string.h>

void ns_sctp_params_default(struct ns_sctp_params *p)
{
    memset(p, 0, sizeof(*p));
    p->rto_initial_ms = 1000;
    p->rto_min_ms = 1000;
    p->rto_max_ms = 60000;
    p->max_burst = 4;
    p->valid_cookie_life_ms = 60000;
    p->association_max_retrans = 10;
    p->path_max_retrans = 5;
    p->max_init_retransmits = 8;
    p->hb_interval_ms = 30000;
    p->sack_timeout_ms = 200;
    p->sack_freq = 2;
    p->rcvbuf_bytes = 212992;
    p->sndbuf_bytes = 212992;
    p->max_message_bytes = 262144;
    p->reasm_max_bytes = 4u * 1024 * 1024;
    p->out_streams = 10;
    p->max_in_streams = 65535;
    p->cookie_secret_life_ms = 60000;
    p->nodelay = 0;
    p->pd_point_bytes = 0;
    p->udp_port = 0;
    p->encap_port = 0;
}
