/* Test support: two stack instances (stack/stack.h), each run by a socket
 * runtime (ns_rt_new_stack), joined by an in-process Ethernet wire: frames
 * an interface queues are handed to the other stack's thread. SCTP then
 * runs over the real IPv4 path (ARP, routing, protocol 132).
 * Addresses: a 198.18.2.1/24, b 198.18.2.2/24, interface "eth0" (ifindex 1). */
#ifndef NS_TESTS_STACK_PAIR_H
#define NS_TESTS_STACK_PAIR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "nstack/socket.h"
#include "stack/stack.h"

#define STP_IP_A 0xc6120201u /* 198.18.2.1 */
#define STP_IP_B 0xc6120202u /* 198.18.2.2 */

struct stp;
struct stp_side {
    struct stp *pair;
    int idx;
    struct ns_stack *s;
    struct ns_rt *rt;
    atomic_bool drain_posted;
};

struct stp {
    struct stp_side side[2];
    pthread_mutex_t mu; /* guards alive and the peer runtime pointers */
    bool alive;
    atomic_ulong frames;
};

/* 0 or -1. */
int stp_init(struct stp *p, bool rcvq_lock);
void stp_free(struct stp *p);

#endif
