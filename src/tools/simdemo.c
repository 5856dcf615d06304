/* `nstack simdemo`: two stack instances in one process joined by a memlink
 * (dev/memlink.h), 198.18.0.1 and 198.18.0.2, on a virtual clock advanced
 * from deadline to deadline, so it needs no root and runs instantly while
 * showing real protocol timing (ARP resolution on the first ping, the
 * link's delay in the RTTs). The same command code as the daemon runs the
 * pings and prints the neighbour tables. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dev/memlink.h"
#include "stack/stack.h"
#include "tools/cmd.h"
#include "tools/main.h"

#define SIM_DELAY_US  60 /* one-way propagation */
#define SIM_JITTER_US 40

struct simhost {
    const char *addr;
    struct ns_stack *s;
    struct ns_dev *dev;
    uint32_t ifindex;
    struct ns_cmd_env env;
};

struct simrun {
    bool done;
    int status;
};

static void sim_write(void *ctx, int stream, const char *data, size_t n)
{
    fwrite(data, 1, n, stream == 2 ? stderr : stdout);
}

static void sim_done(void *ctx, int status)
{
    struct simrun *r = ctx;
    r->done = true;
    r->status = status;
}

/* Move frames and run due timers on one host; true if anything happened. */
static bool sim_step(struct simhost *h, uint64_t now)
{
    bool busy = false;
    ns_stack_poll(h->s, now);
    ns_cmd_poll(&h->env, now);
    struct ns_pkt *pk[32];
    int n;
    while ((n = ns_dev_recv(h->dev, pk, 32, now)) > 0) {
        for (int i = 0; i < n; i++)
            ns_stack_input_pkt(h->s, h->ifindex, pk[i], now);
        busy = true;
    }
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(h->s, h->ifindex))) {
        if (ns_dev_send(h->dev, &p, 1, now) != 1)
            ns_pkt_free(p);
        busy = true;
    }
    return busy;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Advance virtual time until the command finishes (or nothing is left). */
static void sim_run(struct simhost *h, struct ns_memlink *link, struct simrun *r, uint64_t *now)
{
    for (int guard = 0; guard < 1000000 && !r->done; guard++) {
        /* Step both hosts every round: no short-circuit. */
        for (bool moved = true; moved;) {
            bool a = sim_step(&h[0], *now);
            bool b = sim_step(&h[1], *now);
            moved = a || b;
        }
        if (r->done)
            break;
        uint64_t next = ns_memlink_next_deadline(link);
        for (int i = 0; i < 2; i++) {
            next = min_u64(next, ns_stack_next_deadline(h[i].s));
            next = min_u64(next, ns_cmd_next_deadline(&h[i].env));
        }
        if (next == NS_TIME_NEVER)
            break;
        if (next > *now)
            *now = next;
    }
}

static int sim_cmd(struct simhost *h, int on, struct ns_memlink *link, uint64_t *now, uint8_t flags,
                   int argc, char **argv)
{
    printf("\n$ nstack");
    if (flags)
        printf(" -s");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("        # on %s\n", h[on].addr);
    fflush(stdout);
    struct simrun r = {0};
    const struct ns_cmd_out out = {.write = sim_write, .done = sim_done, .ctx = &r};
    struct ns_cmd_sess *sess = ns_cmd_start(&h[on].env, flags, argc, argv, &out, *now);
    if (!sess)
        return 1;
    sim_run(h, link, &r, now);
    if (!r.done)
        ns_cmd_interrupt(sess, *now);
    ns_cmd_free(sess);
    fflush(stdout);
    return r.status;
}

int ns_simdemo_main(int argc, char **argv)
{
    if (argc > 1) {
        fputs("Usage: nstack simdemo\n"
              "Two stacks (198.18.0.1, 198.18.0.2) over an in-process memlink on a virtual\n"
              "clock: pings both ways and both neighbour tables. Needs no root.\n",
              strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? stdout : stderr);
        return strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? 0 : 2;
    }
    struct ns_memlink_cfg cfg = {
        .seed = 1,
        .delay_us = SIM_DELAY_US,
        .jitter_us = SIM_JITTER_US,
        .name = {"sim0", "sim1"},
    };
    struct ns_memlink *link = ns_memlink_new(&cfg);
    if (!link) {
        fprintf(stderr, "nstack: simdemo: out of memory\n");
        return 1;
    }
    uint64_t now = 1 * NS_SEC;
    struct simhost h[2] = {{.addr = "198.18.0.1"}, {.addr = "198.18.0.2"}};
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        struct ns_stack_config sc = {.seed = 1000 + (uint64_t)i};
        h[i].dev = ns_memlink_end(link, i);
        h[i].s = ns_stack_new(&sc, now);
        uint32_t a;
        if (!h[i].s || !ns_ip_parse_addr(h[i].addr, &a)) {
            fprintf(stderr, "nstack: simdemo: out of memory\n");
            rc = 1;
            goto out;
        }
        int idx = ns_stack_add_iface(h[i].s, h[i].dev->name, &h[i].dev->mac, h[i].dev->mtu);
        if (idx < 0) {
            fprintf(stderr, "nstack: simdemo: interface: error %d\n", idx);
            rc = 1;
            goto out;
        }
        h[i].ifindex = (uint32_t)idx;
        ns_cmd_env_init(&h[i].env, h[i].s, (uint16_t)(0x5100 + i));
        ns_stack_iface_up(h[i].s, h[i].ifindex, now);
        ns_stack_set_addr(h[i].s, h[i].ifindex, a, 24, now);
    }
    printf("nstack simdemo\nmode: memlink (no root)\n");
    printf("two stacks in one process: %s (%s) <-> %s (%s), one-way delay %d us + up to %d us "
           "jitter, virtual clock\n",
           h[0].addr, h[0].dev->name, h[1].addr, h[1].dev->name, SIM_DELAY_US, SIM_JITTER_US);

    char *ping_b[] = {"ping", "-c", "3", "198.18.0.2"};
    char *ping_a[] = {"ping", "-c", "3", "198.18.0.1"};
    char *neigh[] = {"neigh", "show"};
    int st1 = sim_cmd(h, 0, link, &now, 0, 4, ping_b);
    int st2 = sim_cmd(h, 1, link, &now, 0, 4, ping_a);
    sim_cmd(h, 0, link, &now, 0, 2, neigh);
    sim_cmd(h, 1, link, &now, 0, 2, neigh);
    rc = st1 || st2 ? 1 : 0;
out:
    for (int i = 0; i < 2; i++) {
        if (h[i].s) {
            if (h[i].env.s)
                ns_cmd_env_free(&h[i].env);
            ns_stack_free(h[i].s);
        }
    }
    ns_memlink_free(link);
    return rc;
}
