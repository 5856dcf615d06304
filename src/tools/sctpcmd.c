/* `nstack sctp [show [ID]]`: the SCTP associations of the stack (RFC 9260
 * section 14's TCB fields as ns_sctp_assoc_info exposes them), one block
 * per association with its paths and counters, or a JSON array with -j. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"

/* Our address on the association: the path's last-seen local address, or
 * the one the route to the peer would pick. */
static uint32_t local_addr(struct ns_stack *s, const struct ns_sctp_path_info *pi, uint64_t now)
{
    if (pi->local.addr)
        return pi->local.addr;
    struct ns_route rt;
    return ns_route_lookup(&s->ip, pi->addr.addr, now, &rt) ? rt.src : 0;
}

static void show_text(struct ns_sbuf *b, struct ns_stack *s, const struct ns_sctp_assoc *a,
                      const struct ns_sctp_assoc_info *in, uint64_t now)
{
    char l[16], p[16], x[16];
    const struct ns_sctp_path_info *pp = in->n_paths ? &in->paths[in->primary] : NULL;
    ns_sbuf_printf(b, "assoc %" PRIu32 " %s %s:%u -> %s:%u\n", in->id,
                   ns_sctp_state_name(in->state), ns_ip_fmt(pp ? local_addr(s, pp, now) : 0, l),
                   in->local_port, ns_ip_fmt(pp ? pp->addr.addr : 0, p), in->peer_port);
    ns_sbuf_printf(b, "  vtag local 0x%08" PRIx32 " peer 0x%08" PRIx32 " streams in %u out %u\n",
                   in->local_vtag, in->peer_vtag, in->in_streams, in->out_streams);
    ns_sbuf_printf(b,
                   "  cwnd %" PRIu32 " ssthresh %" PRIu32 " flight %" PRIu32 " outstanding %" PRIu32
                   " rwnd %" PRIu32 " peer_rwnd %" PRIu32 "\n",
                   in->cwnd, in->ssthresh, in->flight, in->outstanding_chunks, in->rwnd,
                   in->peer_rwnd);
    ns_sbuf_printf(b, "  srtt_us %" PRIu64 " rto_us %" PRIu64 " errors %" PRIu32 "\n", in->srtt_us,
                   in->rto_us, in->errors);
    ns_sbuf_printf(b, "  tsn next %" PRIu32 " cum_ack %" PRIu32 " peer_cum %" PRIu32 "\n",
                   in->next_tsn, in->cum_ack, in->peer_cum_tsn);
    ns_sbuf_printf(b, "  initial_tsn local %" PRIu32 " peer %" PRIu32 "\n", in->local_initial_tsn,
                   in->peer_initial_tsn);
    ns_sbuf_printf(b, "  sndbuf_used %" PRIu32 " queued_msgs %" PRIu32 " rcv_unread %" PRIu32 "\n",
                   in->sndbuf_used, in->queued_msgs, in->rcv_unread);
    for (unsigned i = 0; i < in->n_paths && i < NS_SCTP_MAX_PATHS; i++) {
        const struct ns_sctp_path_info *pi = &in->paths[i];
        ns_sbuf_printf(b,
                       "  path %s %s %s%s pmtu %" PRIu32 " cwnd %" PRIu32 " ssthresh %" PRIu32
                       " flight %" PRIu32 " errors %" PRIu32 " srtt_us %" PRIu64
                       " rttvar_us %" PRIu64 " rto_us %" PRIu64 " local %s",
                       ns_ip_fmt(pi->addr.addr, p), pi->active ? "active" : "inactive",
                       pi->confirmed ? "confirmed" : "unconfirmed", pi->primary ? " primary" : "",
                       pi->pmtu, pi->cwnd, pi->ssthresh, pi->flight, pi->errors, pi->srtt_us,
                       pi->rttvar_us, pi->rto_us, ns_ip_fmt(local_addr(s, pi, now), x));
        /* UDP encapsulation (RFC 6951): the peer's port, as last learned. */
        if (pi->addr.port)
            ns_sbuf_printf(b, " udp %u", pi->addr.port);
        ns_sbuf_puts(b, "\n");
    }
    struct ns_ctr_group g[8];
    size_t n = ns_sctp_assoc_counters(a, g, 8);
    for (size_t k = 0; k < n; k++) {
        /* The association's own group first, then the data path modules'. */
        if (k == 0)
            ns_sbuf_puts(b, "  counters:\n");
        else
            ns_sbuf_printf(b, "  %s counters:\n", g[k].name);
        for (size_t i = 0; i < g[k].n; i++)
            ns_sbuf_printf(b, "    %s %" PRIu64 "\n", g[k].names[i], g[k].vals[i]);
    }
}

static void json_ctrs(struct ns_sbuf *b, const struct ns_ctr_group *g)
{
    ns_sbuf_puts(b, "{");
    for (size_t i = 0; i < g->n; i++) {
        if (i)
            ns_sbuf_puts(b, ",");
        ns_sbuf_json_str(b, g->names[i]);
        ns_sbuf_printf(b, ":%" PRIu64, g->vals[i]);
    }
    ns_sbuf_puts(b, "}");
}

static void show_json(struct ns_sbuf *b, struct ns_stack *s, const struct ns_sctp_assoc *a,
                      const struct ns_sctp_assoc_info *in, uint64_t now)
{
    char l[16], p[16];
    const struct ns_sctp_path_info *pp = in->n_paths ? &in->paths[in->primary] : NULL;
    ns_sbuf_printf(b, "{\"id\":%" PRIu32 ",\"state\":", in->id);
    ns_sbuf_json_str(b, ns_sctp_state_name(in->state));
    ns_sbuf_printf(b,
                   ",\"local_port\":%u,\"peer_port\":%u,\"local_addr\":\"%s\","
                   "\"peer_addr\":\"%s\",\"local_vtag\":%" PRIu32 ",\"peer_vtag\":%" PRIu32
                   ",\"in_streams\":%u,\"out_streams\":%u,",
                   in->local_port, in->peer_port, ns_ip_fmt(pp ? local_addr(s, pp, now) : 0, l),
                   ns_ip_fmt(pp ? pp->addr.addr : 0, p), in->local_vtag, in->peer_vtag,
                   in->in_streams, in->out_streams);
    ns_sbuf_printf(b,
                   "\"cwnd\":%" PRIu32 ",\"ssthresh\":%" PRIu32 ",\"flight\":%" PRIu32
                   ",\"outstanding_chunks\":%" PRIu32 ",\"rwnd\":%" PRIu32 ",\"peer_rwnd\":%" PRIu32
                   ",\"srtt_us\":%" PRIu64 ",\"rto_us\":%" PRIu64 ",\"errors\":%" PRIu32 ",",
                   in->cwnd, in->ssthresh, in->flight, in->outstanding_chunks, in->rwnd,
                   in->peer_rwnd, in->srtt_us, in->rto_us, in->errors);
    ns_sbuf_printf(b,
                   "\"next_tsn\":%" PRIu32 ",\"cum_ack\":%" PRIu32 ",\"peer_cum_tsn\":%" PRIu32
                   ",\"local_initial_tsn\":%" PRIu32 ",\"peer_initial_tsn\":%" PRIu32
                   ",\"sndbuf_used\":%" PRIu32 ",\"queued_msgs\":%" PRIu32
                   ",\"rcv_unread\":%" PRIu32 ",\"paths\":[",
                   in->next_tsn, in->cum_ack, in->peer_cum_tsn, in->local_initial_tsn,
                   in->peer_initial_tsn, in->sndbuf_used, in->queued_msgs, in->rcv_unread);
    for (unsigned i = 0; i < in->n_paths && i < NS_SCTP_MAX_PATHS; i++) {
        const struct ns_sctp_path_info *pi = &in->paths[i];
        ns_sbuf_printf(b,
                       "%s{\"addr\":\"%s\",\"local\":\"%s\",\"active\":%s,\"confirmed\":%s,"
                       "\"primary\":%s,\"pmtu\":%" PRIu32 ",\"cwnd\":%" PRIu32
                       ",\"ssthresh\":%" PRIu32 ",\"flight\":%" PRIu32 ",\"errors\":%" PRIu32
                       ",\"srtt_us\":%" PRIu64 ",\"rttvar_us\":%" PRIu64 ",\"rto_us\":%" PRIu64,
                       i ? "," : "", ns_ip_fmt(pi->addr.addr, p),
                       ns_ip_fmt(local_addr(s, pi, now), l), pi->active ? "true" : "false",
                       pi->confirmed ? "true" : "false", pi->primary ? "true" : "false", pi->pmtu,
                       pi->cwnd, pi->ssthresh, pi->flight, pi->errors, pi->srtt_us, pi->rttvar_us,
                       pi->rto_us);
        if (pi->addr.port)
            ns_sbuf_printf(b, ",\"udp_port\":%u", pi->addr.port);
        ns_sbuf_puts(b, "}");
    }
    ns_sbuf_puts(b, "]");
    struct ns_ctr_group g[8];
    size_t n = ns_sctp_assoc_counters(a, g, 8);
    for (size_t k = 0; k < n; k++) {
        ns_sbuf_puts(b, ",");
        ns_sbuf_json_str(b, k == 0 ? "counters" : g[k].name);
        ns_sbuf_puts(b, ":");
        json_ctrs(b, &g[k]);
    }
    ns_sbuf_puts(b, "}");
}

void ns_cmd_sctp(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    struct ns_stack *s = sess->env->s;
    bool have_id = false;
    uint32_t id = 0;
    int i = 1;
    if (i < argc && strcmp(argv[i], "show") == 0)
        i++;
    if (i < argc) {
        if (!ns_arg_u32(argv[i], 1, UINT32_MAX, &id) || i + 1 < argc) {
            ns_cmd_errorf(sess, "sctp: unknown argument '%s' (usage: sctp [show [ID]])", argv[i]);
            ns_cmd_finish(sess, NS_EXIT_USAGE);
            return;
        }
        have_id = true;
    }
    if (have_id && !ns_sctp_assoc_by_id(&s->sctp, id)) {
        ns_cmd_errorf(sess, "sctp: no association %" PRIu32, id);
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    bool json = sess->flags & NS_CTL_F_JSON;
    struct ns_sbuf b;
    ns_sbuf_init(&b);
    if (json)
        ns_sbuf_puts(&b, "[");
    bool first = true;
    struct ns_sctp_assoc_info info;
    for (struct ns_sctp_assoc *a = ns_sctp_assoc_next(&s->sctp, NULL); a;
         a = ns_sctp_assoc_next(&s->sctp, a)) {
        if ((have_id && ns_sctp_assoc_id(a) != id) || ns_sctp_assoc_info(a, &info) < 0)
            continue;
        if (json) {
            if (!first)
                ns_sbuf_puts(&b, ",");
            show_json(&b, s, a, &info, now);
        } else {
            show_text(&b, s, a, &info, now);
        }
        first = false;
    }
    if (json)
        ns_sbuf_puts(&b, "]\n");
    ns_cmd_put_sbuf(sess, 1, &b);
    ns_sbuf_free(&b);
    ns_cmd_finish(sess, b.oom ? NS_EXIT_FAIL : NS_EXIT_OK);
}
