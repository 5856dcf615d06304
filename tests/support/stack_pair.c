/* Two stacks on an in-process wire, each on its own runtime thread. */
#include "stack_pair.h"

#include <string.h>

#include "socket/sock.h"

static void drain_fn(struct ns_rt *rt, void *arg)
{
    struct stp_side *sd = arg;
    struct stp *p = sd->pair;
    (void)rt;
    atomic_store(&sd->drain_posted, false);
    struct ns_pkt *pkt;
    while ((pkt = ns_stack_tx_pop(sd->s, 1))) {
        atomic_fetch_add(&p->frames, 1);
        pthread_mutex_lock(&p->mu);
        struct ns_rt *peer = p->alive ? p->side[!sd->idx].rt : NULL;
        if (peer)
            ns_rt_input_frame(peer, 1, pkt);
        pthread_mutex_unlock(&p->mu);
        if (!peer)
            ns_pkt_free(pkt);
    }
}

/* Called inside stack processing: only schedule the drain. */
static void tx_ready(void *ctx, uint32_t ifindex)
{
    struct stp_side *sd = ctx;
    (void)ifindex;
    if (sd->rt && !atomic_exchange(&sd->drain_posted, true))
        ns_rt_post(sd->rt, drain_fn, sd);
}

int stp_init(struct stp *p, bool rcvq_lock)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    uint32_t ips[2] = {STP_IP_A, STP_IP_B};
    for (int i = 0; i < 2; i++) {
        struct stp_side *sd = &p->side[i];
        sd->pair = p;
        sd->idx = i;
        struct ns_stack_config cfg = {.seed = 100u + (uint64_t)i};
        uint64_t now = ns_rt_now();
        sd->s = ns_stack_new(&cfg, now);
        if (!sd->s)
            return -1;
        ns_stack_set_tx_ready(sd->s, tx_ready, sd);
        struct ns_mac mac = {{0x02, 0, 0, 0, 0, (uint8_t)(i + 1)}};
        int idx = ns_stack_add_iface(sd->s, "eth0", &mac, 1500);
        if (idx != 1 || ns_stack_set_addr(sd->s, 1, ips[i], 24, now) != 0 ||
            ns_stack_iface_up(sd->s, 1, now) != 0)
            return -1;
    }
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < 2; i++)
        p->side[i].rt = ns_rt_new_stack(p->side[i].s, rcvq_lock);
    p->alive = p->side[0].rt && p->side[1].rt;
    pthread_mutex_unlock(&p->mu);
    if (!p->alive)
        return -1;
    /* Frames queued before the runtimes existed (gratuitous ARP). */
    for (int i = 0; i < 2; i++) {
        atomic_store(&p->side[i].drain_posted, true);
        ns_rt_post(p->side[i].rt, drain_fn, &p->side[i]);
    }
    return 0;
}

void stp_free(struct stp *p)
{
    pthread_mutex_lock(&p->mu);
    p->alive = false;
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < 2; i++) {
        ns_rt_free(p->side[i].rt);
        p->side[i].rt = NULL;
    }
    for (int i = 0; i < 2; i++)
        ns_stack_free(p->side[i].s);
    pthread_mutex_destroy(&p->mu);
}
