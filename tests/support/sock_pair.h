/* Test support: two socket runtimes (include/nstack/socket.h) joined in
 * process. Each runtime's engine output is handed to the other runtime as
 * an input packet, so the two stack threads talk through their request
 * queues with no devices. Optional seeded loss exercises retransmission.
 *
 *   struct skp p;
 *   skp_init(&p, NULL, NULL, false);
 *   ... sockets on p.a (198.18.0.1) and p.b (198.18.1.1) ...
 *   skp_free(&p);
 */
#ifndef NS_TESTS_SOCK_PAIR_H
#define NS_TESTS_SOCK_PAIR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nstack/socket.h"
#include "sctp/sctp.h"

#define SKP_IP_A 0xc6120001u /* 198.18.0.1 */
#define SKP_IP_B 0xc6120101u /* 198.18.1.1 */

struct skp;
struct skp_side {
    struct skp *pair;
    int idx;
};

struct skp {
    struct ns_rt *a, *b;
    pthread_mutex_t mu;
    bool alive;
    uint32_t loss_ppm; /* packets dropped per million (both ways) */
    uint64_t rng;
    uint64_t packets, dropped;
    struct skp_side side[2];
};

/* pa/pb: engine params of each side (NULL = defaults). 0 or -1. */
int skp_init(struct skp *p, const struct ns_sctp_params *pa, const struct ns_sctp_params *pb,
             bool rcvq_lock);
void skp_free(struct skp *p);
/* sockaddr_in for ip (host order) and port. */
struct sockaddr_in skp_sin(uint32_t ip, uint16_t port);

#endif
