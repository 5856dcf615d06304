/* The daemon's control input: bytes from a client socket are framed
 * (tools/ctl.c), REQ payloads parsed into argv, and each argv run through
 * the command engine against a live stack, as the daemon does. Commands get
 * a second of virtual time, then an interrupt, so none can hang the target. */
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd.h"
#include "tools/ctl.h"

static void out_write(void *ctx, int stream, const char *data, size_t n)
{
    (void)ctx;
    (void)stream;
    (void)data;
    (void)n;
}

static void out_done(void *ctx, int status)
{
    (void)status;
    *(int *)ctx = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t now = 1000000;
    struct ns_stack_config cfg = {.seed = 7};
    struct ns_stack *s = ns_stack_new(&cfg, now);
    if (!s)
        return 0;
    struct ns_mac mac = {{0x02, 0, 0, 0, 0, 0x02}};
    int idx = ns_stack_add_iface(s, "fz0", &mac, 1500);
    ns_stack_set_addr(s, (uint32_t)idx, 0xc6120002u, 24, now);
    ns_stack_iface_up(s, (uint32_t)idx, now);
    struct ns_cmd_env env;
    ns_cmd_env_init(&env, s, 1);
    struct ns_ctl_rx rx;
    if (ns_ctl_rx_init(&rx) < 0) {
        ns_cmd_env_free(&env);
        ns_stack_free(s);
        return 0;
    }
    size_t off = 0;
    while (off < size) {
        off += ns_ctl_rx_feed(&rx, data + off, size - off);
        struct ns_ctl_frame f;
        int r;
        while ((r = ns_ctl_rx_next(&rx, &f)) == 1) {
            if (f.type != NS_CTL_REQ)
                continue;
            uint8_t payload[NS_CTL_MAX_PAYLOAD];
            memcpy(payload, f.data, f.len);
            uint8_t flags;
            char *argv[NS_CTL_MAX_ARGS];
            int argc = ns_ctl_req_parse(payload, f.len, &flags, argv, NS_CTL_MAX_ARGS);
            if (argc < 1)
                continue;
            int done = 0;
            const struct ns_cmd_out out = {.write = out_write, .done = out_done, .ctx = &done};
            struct ns_cmd_sess *sess = ns_cmd_start(&env, flags, argc, argv, &out, now);
            if (!sess)
                continue;
            uint64_t until = now + 1000000;
            while (!done && now < until) {
                uint64_t next = ns_stack_next_deadline(s);
                uint64_t c = ns_cmd_next_deadline(&env);
                next = c < next ? c : next;
                now = next < until ? next : until;
                ns_stack_poll(s, now);
                ns_cmd_poll(&env, now);
                struct ns_pkt *p;
                while ((p = ns_stack_tx_pop(s, (uint32_t)idx)))
                    ns_pkt_free(p);
            }
            if (!done)
                ns_cmd_interrupt(sess, now);
            ns_cmd_free(sess);
        }
        if (r < 0)
            break;
    }
    ns_ctl_rx_free(&rx);
    ns_cmd_env_free(&env);
    ns_stack_free(s);
    return 0;
}
