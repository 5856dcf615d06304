/* Two socket runtimes joined in process (see sock_pair.h). */
#include "sock_pair.h"

#include <arpa/inet.h>
#include <string.h>

#include "core/pkt.h"

static void out_fn(void *ctx, struct ns_pkt *pkt, const struct ns_sctp_addr *src,
                   const struct ns_sctp_addr *dst)
{
    struct skp_side *sd = ctx;
    struct skp *p = sd->pair;
    struct ns_sctp_addr s = *src;
    if (s.addr == 0)
        s.addr = sd->idx == 0 ? SKP_IP_A : SKP_IP_B;
    pthread_mutex_lock(&p->mu);
    p->packets++;
    bool drop = !p->alive;
    if (!drop && p->loss_ppm) {
        p->rng = p->rng * 6364136223846793005ull + 1442695040888963407ull;
        drop = (uint32_t)((p->rng >> 33) % 1000000u) < p->loss_ppm;
        p->dropped += drop;
    }
    if (drop) {
        pthread_mutex_unlock(&p->mu);
        ns_pkt_free(pkt);
        return;
    }
    ns_rt_input(sd->idx == 0 ? p->b : p->a, pkt, &s, dst);
    pthread_mutex_unlock(&p->mu);
}

int skp_init(struct skp *p, const struct ns_sctp_params *pa, const struct ns_sctp_params *pb,
             bool rcvq_lock)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    p->rng = 12345;
    p->side[0] = (struct skp_side){p, 0};
    p->side[1] = (struct skp_side){p, 1};
    struct ns_rt_config ca = {pa, 1, out_fn, &p->side[0], rcvq_lock};
    struct ns_rt_config cb = {pb, 2, out_fn, &p->side[1], rcvq_lock};
    /* Hold mu so no packet crosses before both exist. */
    pthread_mutex_lock(&p->mu);
    p->a = ns_rt_new(&ca);
    p->b = ns_rt_new(&cb);
    p->alive = p->a && p->b;
    pthread_mutex_unlock(&p->mu);
    if (!p->alive) {
        ns_rt_free(p->a);
        ns_rt_free(p->b);
        return -1;
    }
    return 0;
}

void skp_free(struct skp *p)
{
    pthread_mutex_lock(&p->mu);
    p->alive = false;
    pthread_mutex_unlock(&p->mu);
    ns_rt_free(p->a);
    ns_rt_free(p->b);
    pthread_mutex_destroy(&p->mu);
}

struct sockaddr_in skp_sin(uint32_t ip, uint16_t port)
{
    struct sockaddr_in s;
    memset(&s, 0, sizeof(s));
    s.sin_family = AF_INET;
    s.sin_addr.s_addr = htonl(ip);
    s.sin_port = htons(port);
    return s;
}
