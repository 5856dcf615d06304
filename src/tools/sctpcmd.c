/* `nstack sctp [show [ID]]`: the SCTP associations of the stack (RFC 9260
 * section 14's TCB fields as ns_sctp_assoc_info exposes them), one block
 * per association with its paths and counters, or a JSON array with -j.
 * `nstack sctp send`: one message from an application thread on the
 * daemon's socket runtime (one-to-one style, RFC 6458 section 4), and the
 * replies that come back within a wait. */
#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nstack/socket.h"
#include "stack/stack.h"
#include "tools/cmd_priv.h"
#include "tools/ctl.h"
#include "tools/services.h"

/* ---- `nstack sctp [show [ID]]` ---- */

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

/* ---- `nstack sctp send`: one message, and the replies within a wait ---- */

/* Replies are gathered piece by piece up to their end (a message above the
 * partial delivery point comes in several reads); beyond this much the
 * rest of a reply is counted but not kept. */
#define SSEND_MAX_REPLY (4u << 20)
#define SSEND_READ      65536u

struct ssend_job {
    struct ns_cmd_sess *sess; /* stack thread; NULL once the session is gone */
    struct ns_svc *svc;
    struct ns_rt *rt;
    uint32_t dst;
    uint16_t port, sid;
    uint32_t ppid;
    uint64_t wait_us;
    uint32_t size; /* -m: a pattern message of this many bytes instead of TEXT */
    struct ns_sbuf text, out;
    pthread_t thread;
    atomic_bool stop;
    bool thread_done;
    int err;
    const char *err_what;
    unsigned replies, mismatches;
};

static void ssend_job_free(struct ssend_job *j)
{
    ns_sbuf_free(&j->text);
    ns_sbuf_free(&j->out);
    free(j);
}

/* -m's message: byte i is i mod 251. A prime period makes a piece echoed
 * at the wrong place (or alone, as a whole message) differ from what was
 * sent unless it is shifted by a multiple of 251. */
static uint8_t ssend_pattern(size_t i)
{
    return (uint8_t)(i % 251u);
}

/* The first byte where a reply differs from the -m message, or len when it
 * is the message (a shorter or longer reply differs at the shorter end). */
static size_t ssend_diff(const uint8_t *p, size_t len, size_t kept, uint32_t size)
{
    size_t n = kept < size ? kept : size;
    for (size_t i = 0; i < n; i++)
        if (p[i] != ssend_pattern(i))
            return i;
    return len == size ? len : n;
}

static void ssend_done_fn(struct ns_rt *rt, void *arg)
{
    struct ssend_job *j = arg;
    (void)rt;
    pthread_join(j->thread, NULL);
    j->thread_done = true;
    ns_svc_job_end(j->svc);
    if (!j->sess) {
        ssend_job_free(j);
        return;
    }
    ns_cmd_put_sbuf(j->sess, 1, &j->out);
    if (j->err && strcmp(j->err_what, "send") == 0) {
        ns_cmd_sctp_send_errorf(j->sess, "sctp send", j->dst, j->port, j->err,
                                j->size ? j->size : (uint32_t)j->text.len);
    } else if (j->err) {
        char b[16];
        ns_cmd_errorf(j->sess, "sctp send: %s %s port %u: %s", j->err_what, ns_ip_fmt(j->dst, b),
                      j->port, strerror(j->err));
    } else if (j->mismatches) {
        ns_cmd_errorf(j->sess, "sctp send: %u of %u replies differ from the message", j->mismatches,
                      j->replies);
    }
    ns_cmd_finish(j->sess, j->err || j->mismatches ? NS_EXIT_FAIL : NS_EXIT_OK);
}

/* One whole reply (or as much of it as was kept): a line of output. */
static void ssend_reply(struct ssend_job *j, const struct ns_sctp_rcvinfo *ri, const uint8_t *p,
                        size_t len, size_t kept)
{
    ns_sbuf_printf(&j->out, "reply stream %u ppid %" PRIu32 " len %zu: ", ri->rcv_sid, ri->rcv_ppid,
                   len);
    j->replies++;
    if (!j->size) {
        ns_sbuf_escape(&j->out, p, kept);
        ns_sbuf_puts(&j->out, kept < len ? "...\n" : "\n");
        return;
    }
    size_t d = ssend_diff(p, len, kept, j->size);
    if (d == len) {
        ns_sbuf_puts(&j->out, "same as sent\n");
        return;
    }
    ns_sbuf_printf(&j->out, "differs from byte %zu\n", d);
    j->mismatches++;
}

static void *ssend_main(void *arg)
{
    struct ssend_job *j = arg;
    struct ns_rt *rt = j->rt;
    size_t cap = SSEND_MAX_REPLY + SSEND_READ;
    uint8_t *buf = malloc(cap);
    uint8_t *msg = NULL;
    size_t msglen = j->size ? j->size : j->text.len;
    if (buf && j->size && (msg = malloc(j->size)) != NULL)
        for (size_t i = 0; i < j->size; i++)
            msg[i] = ssend_pattern(i);
    int sd = buf && (!j->size || msg) ? ns_socket(rt, NS_SOCK_STREAM) : -1;
    if (sd < 0) {
        j->err = buf && (!j->size || msg) ? errno : ENOMEM;
        j->err_what = "socket";
        goto out;
    }
    struct ns_sctp_initmsg im = {.sinit_num_ostreams = (uint16_t)(j->sid + 1),
                                 .sinit_max_instreams = 16,
                                 .sinit_max_attempts = 4,
                                 .sinit_max_init_timeo = 2000};
    ns_setsockopt(rt, sd, NS_IPPROTO_SCTP, NS_SCTP_INITMSG, &im, sizeof(im));
    ns_cmd_sctp_fit_sndbuf(rt, sd, (uint32_t)msglen);
    struct sockaddr_in sin = {
        .sin_family = AF_INET, .sin_port = htons(j->port), .sin_addr.s_addr = htonl(j->dst)};
    if (ns_connect(rt, sd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
        j->err = errno;
        j->err_what = "connect";
        goto out;
    }
    struct ns_sctp_sndinfo si = {.snd_sid = j->sid, .snd_ppid = j->ppid};
    struct iovec iov = {msg ? (void *)msg : (void *)ns_sbuf_str(&j->text), msglen};
    if (ns_sctp_sendv(rt, sd, &iov, 1, NULL, 0, &si, sizeof(si), NS_SCTP_SENDV_SNDINFO, 0) < 0) {
        j->err = errno;
        j->err_what = "send";
        goto out;
    }
    ns_set_nonblock(rt, sd, true);
    int efd = ns_socket_fd(rt, sd);
    uint64_t until = ns_svc_mono_us() + j->wait_us;
    size_t len = 0; /* of the reply so far; at most cap - SSEND_READ of it kept */
    while (!atomic_load(&j->stop) && !ns_svc_stopping(j->svc) && ns_svc_mono_us() < until) {
        struct ns_sctp_rcvinfo ri;
        socklen_t il = sizeof(ri);
        unsigned it = 0;
        int fl = 0;
        size_t kept = len < SSEND_MAX_REPLY ? len : SSEND_MAX_REPLY;
        struct iovec riov = {buf + kept, SSEND_READ};
        ssize_t n =
            ns_sctp_recvv(rt, sd, &riov, 1, NULL, NULL, &ri, &il, &it, &fl, NS_MSG_DONTWAIT);
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pf = {.fd = efd, .events = POLLIN};
            poll(&pf, 1, 50);
            continue;
        }
        if (n <= 0)
            break; /* the peer shut down or went away: nothing more comes */
        if (fl & NS_MSG_NOTIFICATION)
            continue;
        if (it != NS_SCTP_RECVV_RCVINFO)
            memset(&ri, 0, sizeof(ri));
        len += (size_t)n;
        if (!(fl & NS_MSG_EOR))
            continue; /* one-to-one: the next read continues this message */
        kept = len < SSEND_MAX_REPLY ? len : SSEND_MAX_REPLY;
        ssend_reply(j, &ri, buf, len, kept);
        len = 0;
    }
out:
    if (sd >= 0)
        ns_close(rt, sd);
    free(msg);
    free(buf);
    ns_rt_post(rt, ssend_done_fn, j);
    return NULL;
}

static void ssend_interrupt(struct ns_cmd_sess *sess, uint64_t now)
{
    struct ssend_job *j = sess->priv;
    (void)now;
    atomic_store(&j->stop, true);
}

static void ssend_release(struct ns_cmd_sess *sess)
{
    struct ssend_job *j = sess->priv;
    j->sess = NULL;
    atomic_store(&j->stop, true);
    if (j->thread_done)
        ssend_job_free(j);
}

static const struct ns_cmd_kind ssend_kind = {
    .name = "sctp send",
    .interrupt = ssend_interrupt,
    .release = ssend_release,
};

struct ssend_opts {
    uint32_t sid, ppid, size;
    uint64_t wait_us;
};

static bool ssend_opt(struct ns_cmd_sess *sess, void *arg, char opt, const char *val)
{
    struct ssend_opts *o = arg;
    bool ok = true;
    if (opt == 'i')
        ok = ns_arg_u32(val, 0, 65534, &o->sid);
    else if (opt == 'P')
        ok = ns_arg_u32(val, 0, UINT32_MAX, &o->ppid);
    else if (opt == 'W')
        ok = ns_arg_seconds(val, &o->wait_us);
    else if (opt == 'm')
        ok = ns_arg_u32(val, 1, NS_CMD_SCTP_MAX_MSG, &o->size);
    if (!ok)
        ns_cmd_errorf(sess, "sctp send: bad -%c '%s' (see: nstack sctp --help)", opt, val);
    return ok;
}

void ns_cmd_sctp_send(struct ns_cmd_sess *sess, int argc, char *const *argv, uint64_t now)
{
    (void)now;
    struct ssend_opts o = {.wait_us = 1000000u};
    const struct ns_cmd_optspec spec = {.name = "sctp send",
                                        .with_arg = "iPWm",
                                        .flags = "",
                                        .verbatim_after = 2,
                                        .cb = ssend_opt,
                                        .arg = &o};
    const char *pos[NS_CTL_MAX_ARGS];
    /* From "send", which getopt skips as the command name. */
    int npos = ns_cmd_getopt(sess, &spec, argc - 1, argv + 1, pos, NS_CTL_MAX_ARGS);
    if (npos < 0) {
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    uint32_t dst;
    uint16_t port;
    if (npos < (o.size ? 2 : 3)) {
        ns_cmd_errorf(sess, "sctp send: HOST PORT TEXT required (see: nstack sctp --help)");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (o.size && npos > 2) {
        ns_cmd_errorf(sess, "sctp send: -m SIZE sends its own message: no TEXT after PORT");
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!ns_cmd_sctp_parse_host(sess, "sctp send", pos[0], &dst)) {
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    if (!ns_arg_port(pos[1], &port)) {
        ns_cmd_errorf(sess, "sctp send: bad port '%s' (1-65535)", pos[1]);
        ns_cmd_finish(sess, NS_EXIT_USAGE);
        return;
    }
    struct ns_rt *rt = ns_svc_rt(sess->env->svc);
    if (!rt || ns_svc_stopping(sess->env->svc)) {
        ns_cmd_errorf(sess, "sctp send: this stack has no socket runtime (run it in the daemon)");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    if (o.size && !ns_cmd_sctp_msg_fits(sess, "sctp send", o.size)) {
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    struct ssend_job *j = calloc(1, sizeof(*j));
    if (!j) {
        ns_cmd_errorf(sess, "out of memory");
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    ns_sbuf_init(&j->text);
    ns_sbuf_init(&j->out);
    for (int i = 2; i < npos; i++) {
        if (i > 2)
            ns_sbuf_puts(&j->text, " ");
        ns_sbuf_puts(&j->text, pos[i]);
    }
    j->sess = sess;
    j->svc = sess->env->svc;
    j->rt = rt;
    j->dst = dst;
    j->port = port;
    j->sid = (uint16_t)o.sid;
    j->ppid = o.ppid;
    j->wait_us = o.wait_us;
    j->size = o.size;
    atomic_init(&j->stop, false);
    ns_svc_job_begin(j->svc);
    int e = pthread_create(&j->thread, NULL, ssend_main, j);
    if (e) {
        ns_svc_job_end(j->svc);
        ssend_job_free(j);
        ns_cmd_errorf(sess, "sctp send: thread: %s", strerror(e));
        ns_cmd_finish(sess, NS_EXIT_FAIL);
        return;
    }
    ns_cmd_make_long(sess, &ssend_kind, j);
}
