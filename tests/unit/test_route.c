/* IPv4 routing (ipv4/route.c): longest-prefix match over up interfaces
 * with addresses, the default gateway (only when on-link), /32 and /31,
 * limited broadcast, unroutable classes; the PMTU cache (never below 68,
 * only decreasing, expiry, slot replacement) and its effect on output. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/stack.h"
#include "wire.h"

static const struct ns_mac mac0 = {{0x02, 0, 0, 0, 0, 0x10}};
static const struct ns_mac mac1 = {{0x02, 0, 0, 0, 0, 0x11}};
static const struct ns_mac mac2 = {{0x02, 0, 0, 0, 0, 0x12}};

struct env {
    struct ns_stack *s;
    uint32_t if0, if1, if2;
};

/* eth0 198.18.0.1/16 (MTU 1500), eth1 198.18.5.1/24 (MTU 9000), eth2 no
 * address yet (MTU 1400); all up. */
static int setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct ns_stack_config cfg = {.seed = 3};
    e->s = ns_stack_new(&cfg, 0);
    e->if0 = (uint32_t)ns_stack_add_iface(e->s, "eth0", &mac0, 1500);
    e->if1 = (uint32_t)ns_stack_add_iface(e->s, "eth1", &mac1, 9000);
    e->if2 = (uint32_t)ns_stack_add_iface(e->s, "eth2", &mac2, 1400);
    ns_stack_set_addr(e->s, e->if0, IP4(198, 18, 0, 1), 16, 0);
    ns_stack_set_addr(e->s, e->if1, IP4(198, 18, 5, 1), 24, 0);
    ns_stack_iface_up(e->s, e->if0, 0);
    ns_stack_iface_up(e->s, e->if1, 0);
    ns_stack_iface_up(e->s, e->if2, 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    ns_stack_free(e->s);
    free(e);
    return 0;
}

static void expect(struct env *e, uint32_t dst, uint32_t ifindex, uint32_t nexthop, uint32_t src,
                   uint32_t mtu)
{
    struct ns_route rt;
    memset(&rt, 0xa5, sizeof(rt));
    assert_true(ns_route_lookup(&e->s->ip, dst, 0, &rt));
    assert_int_equal(rt.ifc->index, ifindex);
    assert_int_equal(rt.nexthop, nexthop);
    assert_int_equal(rt.src, src);
    assert_int_equal(rt.mtu, mtu);
}

static void no_route(struct env *e, uint32_t dst)
{
    struct ns_route rt;
    assert_false(ns_route_lookup(&e->s->ip, dst, 0, &rt));
}

static void test_longest_prefix(void **state)
{
    struct env *e = *state;
    uint32_t a0 = IP4(198, 18, 0, 1), a1 = IP4(198, 18, 5, 1);
    expect(e, IP4(198, 18, 5, 9), e->if1, IP4(198, 18, 5, 9), a1, 9000);
    expect(e, IP4(198, 18, 9, 9), e->if0, IP4(198, 18, 9, 9), a0, 1500);
    expect(e, IP4(198, 18, 4, 255), e->if0, IP4(198, 18, 4, 255), a0, 1500);
    /* outside every subnet, no gateway */
    no_route(e, IP4(198, 19, 0, 1));
    /* a longer prefix on an interface that goes down stops matching */
    e->s->link.ifaces[e->if1 - 1].up = false;
    expect(e, IP4(198, 18, 5, 9), e->if0, IP4(198, 18, 5, 9), a0, 1500);
    e->s->link.ifaces[e->if1 - 1].up = true;
    /* an interface without an address routes nothing but broadcasts */
    ns_stack_set_addr(e->s, e->if0, 0, 0, 0);
    no_route(e, IP4(198, 18, 9, 9));
}

static void test_gateway(void **state)
{
    struct env *e = *state;
    uint32_t a0 = IP4(198, 18, 0, 1), a1 = IP4(198, 18, 5, 1);
    uint32_t gw = IP4(198, 18, 5, 254);
    ns_stack_set_gateway(e->s, gw);
    expect(e, IP4(198, 19, 0, 1), e->if1, gw, a1, 9000);
    expect(e, IP4(8, 8, 8, 8), e->if1, gw, a1, 9000);
    /* on-link destinations still go direct */
    expect(e, IP4(198, 18, 200, 1), e->if0, IP4(198, 18, 200, 1), a0, 1500);
    /* a gateway that is not on-link is useless */
    ns_stack_set_gateway(e->s, IP4(203, 0, 113, 1));
    no_route(e, IP4(8, 8, 8, 8));
    /* nor one whose interface is down */
    ns_stack_set_gateway(e->s, gw);
    e->s->link.ifaces[e->if1 - 1].up = false;
    expect(e, IP4(8, 8, 8, 8), e->if0, gw, a0, 1500); /* eth0's /16 covers it */
    e->s->link.ifaces[e->if0 - 1].up = false;
    no_route(e, IP4(8, 8, 8, 8));
}

static void test_host_and_p2p_prefixes(void **state)
{
    struct env *e = *state;
    uint32_t a2 = IP4(198, 19, 7, 7);
    ns_stack_set_addr(e->s, e->if2, a2, 32, 0);
    /* /32: only the address itself is on-link */
    expect(e, a2, e->if2, a2, a2, 1400);
    no_route(e, IP4(198, 19, 7, 8));
    /* /31 (RFC 3021): both addresses on-link, neither is a broadcast */
    ns_stack_set_addr(e->s, e->if2, IP4(198, 19, 8, 0), 31, 0);
    expect(e, IP4(198, 19, 8, 1), e->if2, IP4(198, 19, 8, 1), IP4(198, 19, 8, 0), 1400);
    no_route(e, IP4(198, 19, 8, 2));
    assert_false(ns_ip_is_bcast(&e->s->ip, IP4(198, 19, 8, 1)));
    assert_false(ns_ip_is_bcast(&e->s->ip, IP4(198, 19, 8, 0)));
    /* /30 does have one */
    ns_stack_set_addr(e->s, e->if2, IP4(198, 19, 8, 1), 30, 0);
    assert_true(ns_ip_is_bcast(&e->s->ip, IP4(198, 19, 8, 3)));
    assert_true(ns_ip_is_bcast(&e->s->ip, IP4(198, 18, 255, 255)));
    assert_true(ns_ip_is_bcast(&e->s->ip, IP4(198, 18, 5, 255)));
    assert_true(ns_ip_is_bcast(&e->s->ip, 0xffffffffu));
    assert_false(ns_ip_is_bcast(&e->s->ip, IP4(198, 18, 5, 254)));
}

static void test_limited_broadcast(void **state)
{
    struct env *e = *state;
    expect(e, 0xffffffffu, e->if0, 0xffffffffu, IP4(198, 18, 0, 1), 1500);
    e->s->link.ifaces[e->if0 - 1].up = false;
    expect(e, 0xffffffffu, e->if1, 0xffffffffu, IP4(198, 18, 5, 1), 9000);
    e->s->link.ifaces[e->if1 - 1].up = false;
    /* eth2 has no address: still usable for limited broadcast (DHCP) */
    expect(e, 0xffffffffu, e->if2, 0xffffffffu, 0, 1400);
    e->s->link.ifaces[e->if2 - 1].up = false;
    no_route(e, 0xffffffffu);
}

static void test_unroutable(void **state)
{
    struct env *e = *state;
    ns_stack_set_gateway(e->s, IP4(198, 18, 0, 254));
    expect(e, IP4(192, 0, 2, 1), e->if0, IP4(198, 18, 0, 254), IP4(198, 18, 0, 1), 1500);
    no_route(e, 0);
    no_route(e, IP4(224, 0, 0, 1));
    no_route(e, IP4(239, 255, 255, 250));
    no_route(e, IP4(240, 0, 0, 1));
    no_route(e, IP4(127, 0, 0, 1));
}

static void test_pmtu(void **state)
{
    struct env *e = *state;
    struct ns_stack *s = e->s;
    uint32_t d = IP4(198, 18, 9, 9);
    uint64_t t = 10 * NS_SEC;
    assert_int_equal(ns_pmtu_get(&s->ip, d, t), 0);
    ns_pmtu_update(&s->ip, d, 1400, t);
    assert_int_equal(ns_pmtu_get(&s->ip, d, t), 1400);
    struct ns_route rt;
    assert_true(ns_route_lookup(&s->ip, d, t, &rt));
    assert_int_equal(rt.mtu, 1400);
    /* never raised */
    ns_pmtu_update(&s->ip, d, 1450, t + 1);
    assert_int_equal(ns_pmtu_get(&s->ip, d, t + 1), 1400);
    /* lowered, and the lifetime restarts */
    ns_pmtu_update(&s->ip, d, 1300, t + 5 * NS_SEC);
    assert_int_equal(ns_pmtu_get(&s->ip, d, t + 5 * NS_SEC), 1300);
    /* never below 68 */
    ns_pmtu_update(&s->ip, d, 20, t + 5 * NS_SEC);
    assert_int_equal(ns_pmtu_get(&s->ip, d, t + 5 * NS_SEC), 68);
    /* expiry exactly pmtu_expires_ms after the last decrease */
    uint64_t exp = t + 5 * NS_SEC + (uint64_t)s->params.ip.pmtu_expires_ms * NS_MS;
    assert_int_equal(ns_pmtu_get(&s->ip, d, exp - 1), 68);
    assert_int_equal(ns_pmtu_get(&s->ip, d, exp), 0);
    assert_true(ns_route_lookup(&s->ip, d, exp, &rt));
    assert_int_equal(rt.mtu, 1500);
    /* at or above the link MTU teaches nothing */
    ns_pmtu_update(&s->ip, d, 1500, exp);
    assert_int_equal(ns_pmtu_get(&s->ip, d, exp), 0);
    /* nothing for unroutable destinations */
    ns_pmtu_update(&s->ip, IP4(203, 0, 113, 1), 1000, exp);
    assert_int_equal(ns_pmtu_get(&s->ip, IP4(203, 0, 113, 1), exp), 0);
}

static void test_pmtu_slots(void **state)
{
    struct env *e = *state;
    struct ns_stack *s = e->s;
    /* fill every slot, each one microsecond younger than the previous */
    for (uint32_t i = 0; i < NS_PMTU_SLOTS; i++)
        ns_pmtu_update(&s->ip, IP4(198, 18, 10, 0) + i, 1000 + i, i);
    for (uint32_t i = 0; i < NS_PMTU_SLOTS; i++)
        assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 10, 0) + i, 100), 1000 + i);
    /* one more replaces the oldest (the first) */
    ns_pmtu_update(&s->ip, IP4(198, 18, 11, 0), 900, 100);
    assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 11, 0), 100), 900);
    assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 10, 0), 100), 0);
    for (uint32_t i = 1; i < NS_PMTU_SLOTS; i++)
        assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 10, 0) + i, 100), 1000 + i);
    /* an expired slot is reused before any live one */
    uint64_t life = (uint64_t)s->params.ip.pmtu_expires_ms * NS_MS;
    ns_pmtu_update(&s->ip, IP4(198, 18, 12, 0), 800, life + 1); /* slot 1 (t=1) has expired */
    assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 12, 0), life + 1), 800);
    assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 11, 0), life + 1), 900);
    assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 10, 1), life + 1), 0);
    for (uint32_t i = 2; i < NS_PMTU_SLOTS; i++)
        assert_int_equal(ns_pmtu_get(&s->ip, IP4(198, 18, 10, 0) + i, life + 1), 1000 + i);
}

static void test_pmtu_fragments_output(void **state)
{
    struct env *e = *state;
    struct ns_stack *s = e->s;
    uint32_t d = IP4(198, 18, 9, 9);
    uint8_t key[4] = {198, 18, 9, 9};
    const uint8_t lladdr[6] = {0x02, 0, 0, 0, 0, 0x99};
    assert_int_equal(ns_neigh_admin_set(&s->arp.tbl, e->if0, key, lladdr, NS_NUD_PERMANENT, 0), 0);
    struct ns_pkt *p;
    while ((p = ns_stack_tx_pop(s, e->if0)))
        ns_pkt_free(p);
    ns_pmtu_update(&s->ip, d, 576, 0);
    /* 1000 bytes of ICMP: fits 1500 but not 576 -> 552 + 448 */
    assert_int_equal(ns_icmp_echo_send(&s->ip, d, 1, 1, 992, 0, 0), 0);
    const uint16_t want[2] = {572, 468}; /* 552 is the largest multiple of 8 <= 556 */
    for (int i = 0; i < 2; i++) {
        p = ns_stack_tx_pop(s, e->if0);
        assert_non_null(p);
        assert_true(ns_pkt_linearize(p, 0));
        struct ns_ip_hdr h;
        assert_int_equal(ns_ip_parse(p->data + 14, p->len - 14, &h), NS_IP_OK);
        assert_int_equal(h.tot_len, want[i]);
        assert_int_equal(h.frag, i == 0 ? NS_IP_MF : 552 / 8);
        ns_pkt_free(p);
    }
    assert_null(ns_stack_tx_pop(s, e->if0));
    /* and with DF it is refused */
    p = ns_pkt_alloc(NS_PKT_HEADROOM, 600);
    ns_pkt_put(p, 600);
    struct ns_ip_out o = {.dst = d, .proto = 253, .df = true};
    assert_int_equal(ns_ip_output(&s->ip, p, &o, 0), -EMSGSIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_longest_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gateway, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_and_p2p_prefixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limited_broadcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unroutable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pmtu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pmtu_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pmtu_fragments_output, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
