/* gray-static conns: the connection table's policy without sockets -- who is closed for a
 * newcomer over the limit, the deadlines trickled bytes do not move, and the pokes for a
 * peer that has gone (the socket-level behaviour is in test_server.c). */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/conns.h"
#include "tests/lib/kb_check.h"

#include <string.h>

/* What the shut callback was asked, in order. */
static struct { int fd; enum gs_conn_shut how; } shuts[64];
static int nshuts;

static void record(void *arg, int fd, enum gs_conn_shut how)
{
    (void)arg;
    ck_assert_int_lt(nshuts, 64);
    shuts[nshuts].fd = fd;
    shuts[nshuts++].how = how;
}

static struct gs_conns t;

static void table(size_t limit, long idle_ms, long head_ms)
{
    const struct gs_conns_cfg cfg = { limit, idle_ms, head_ms, record, NULL };
    nshuts = 0;
    gs_conns_init(&t, &cfg);
}

static void assert_shut(int i, int fd, enum gs_conn_shut how)
{
    ck_assert_int_gt(nshuts, i);
    ck_assert_int_eq(shuts[i].fd, fd);
    ck_assert_int_eq(shuts[i].how, how);
}

START_TEST(the_longest_waiting_goes_for_a_newcomer)
{
    struct gs_conn *a, *b, *c, *d;

    table(3, 0, 0);
    a = gs_conns_open(&t, 10, 100);
    b = gs_conns_open(&t, 11, 200);
    c = gs_conns_open(&t, 12, 300);
    ck_assert_int_eq(nshuts, 0);
    gs_conns_head(&t, a, 400); /* a's request line: its wait now dates from 400 */
    d = gs_conns_open(&t, 13, 500);
    assert_shut(0, 11, GS_SHUT_EVICT); /* b, idle since 200, waited longest */
    ck_assert_int_eq(b->state, GS_CONN_EVICTED);
    ck_assert_uint_eq(t.live, 3);
    gs_conns_open(&t, 14, 600);
    assert_shut(1, 12, GS_SHUT_EVICT); /* c (300) before a's head (400) */
    ck_assert_uint_eq(t.evicted_limit, 2);
    gs_conns_close(&t, b); /* MHD closes the evicted ones later: no double count */
    gs_conns_close(&t, c);
    ck_assert_uint_eq(t.live, 3);
    (void)d;
    gs_conns_clear(&t);
}
END_TEST

START_TEST(busy_connections_are_never_evicted)
{
    struct gs_conn *a, *b, *n;

    table(2, 0, 0);
    a = gs_conns_open(&t, 10, 100);
    b = gs_conns_open(&t, 11, 200);
    gs_conns_busy(&t, a);
    gs_conns_head(&t, b, 300);
    gs_conns_busy(&t, b);
    n = gs_conns_open(&t, 12, 400); /* everyone else busy: the newcomer is refused */
    ck_assert_int_eq(n->state, GS_CONN_EVICTED);
    assert_shut(0, 12, GS_SHUT_EVICT);
    ck_assert_uint_eq(t.refused, 1);
    gs_conns_close(&t, n);
    gs_conns_idle(&t, a, 500); /* answered: a waits again, and may go for the next one */
    n = gs_conns_open(&t, 13, 600);
    assert_shut(1, 10, GS_SHUT_EVICT);
    gs_conns_close(&t, a);
    gs_conns_close(&t, b);
    gs_conns_close(&t, n);
    ck_assert_uint_eq(t.live, 0);
}
END_TEST

START_TEST(deadlines_are_not_moved_by_trickled_bytes)
{
    struct gs_conn *idle, *head, *busy;

    table(0, 1000, 300);
    idle = gs_conns_open(&t, 10, 0);
    head = gs_conns_open(&t, 11, 0);
    busy = gs_conns_open(&t, 12, 0);
    gs_conns_head(&t, head, 500);
    gs_conns_busy(&t, busy);
    gs_conns_sweep(&t, 799); /* nothing is due before its deadline */
    ck_assert_int_eq(nshuts, 0);
    gs_conns_sweep(&t, 800); /* the head's 300 ms since its request line */
    assert_shut(0, 11, GS_SHUT_EVICT);
    ck_assert_uint_eq(t.evicted_head, 1);
    gs_conns_sweep(&t, 999);
    ck_assert_int_eq(nshuts, 1);
    gs_conns_sweep(&t, 1000); /* idle 1000 ms since the accept, whatever came meanwhile */
    assert_shut(1, 10, GS_SHUT_EVICT);
    ck_assert_uint_eq(t.evicted_idle, 1);
    gs_conns_sweep(&t, 100000); /* a busy connection has no deadline here */
    ck_assert_int_eq(nshuts, 2);
    gs_conns_idle(&t, busy, 100000); /* its wait starts when its response is done */
    gs_conns_sweep(&t, 100999);
    ck_assert_int_eq(nshuts, 2);
    gs_conns_sweep(&t, 101000);
    assert_shut(2, 12, GS_SHUT_EVICT);
    gs_conns_close(&t, idle);
    gs_conns_close(&t, head);
    gs_conns_close(&t, busy);
}
END_TEST

START_TEST(zero_means_no_deadline)
{
    table(0, 0, 0);
    gs_conns_head(&t, gs_conns_open(&t, 10, 0), 0);
    gs_conns_open(&t, 11, 0);
    gs_conns_sweep(&t, 1LL << 40);
    ck_assert_int_eq(nshuts, 0);
    gs_conns_clear(&t);
}
END_TEST

START_TEST(a_departed_peer_is_poked_while_it_waits)
{
    struct gs_conn *w, *b;

    table(0, 0, 0);
    w = gs_conns_open(&t, 10, 0);
    b = gs_conns_open(&t, 11, 0);
    gs_conns_busy(&t, b);
    gs_conns_fin(&t, w);
    gs_conns_fin(&t, b);
    gs_conns_fin(&t, w); /* once is enough */
    ck_assert_uint_eq(t.fin.n, 1);
    gs_conns_poke_fins(&t);
    assert_shut(0, 10, GS_SHUT_POKE);
    gs_conns_poke_fins(&t); /* again: a poke may have come before the last read */
    assert_shut(1, 10, GS_SHUT_POKE);
    ck_assert_int_eq(nshuts, 2);
    gs_conns_idle(&t, b, 1); /* answered: poked at once, and listed */
    assert_shut(2, 11, GS_SHUT_POKE);
    ck_assert_uint_eq(t.fin.n, 2);
    gs_conns_head(&t, w, 2); /* a head cut short by the FIN stays listed */
    ck_assert_uint_eq(t.fin.n, 2);
    gs_conns_busy(&t, w);
    ck_assert_uint_eq(t.fin.n, 1);
    gs_conns_close(&t, b);
    ck_assert_uint_eq(t.fin.n, 0);
    gs_conns_close(&t, w);
    ck_assert_int_eq(nshuts, 3);
}
END_TEST

START_TEST(evicted_stays_evicted)
{
    struct gs_conn *a, *n;

    table(1, 0, 0);
    a = gs_conns_open(&t, 10, 0);
    gs_conns_head(&t, a, 1);
    gs_conns_busy(&t, a);
    n = gs_conns_open(&t, 11, 2); /* refused: a is busy */
    gs_conns_idle(&t, n, 3);      /* MHD may still answer what it read before the shutdown */
    ck_assert_int_eq(n->state, GS_CONN_EVICTED);
    ck_assert_int_eq(nshuts, 1);
    assert_shut(0, 11, GS_SHUT_EVICT);
    gs_conns_idle(&t, a, 4);
    ck_assert_ptr_eq(t.idle.first, a);
    ck_assert_uint_eq(t.idle.n, 1);
    gs_conns_close(&t, n);
    gs_conns_clear(&t);
    table(1, 0, 0);
    a = gs_conns_open(&t, 10, 0);
    gs_conns_open(&t, 11, 1);
    ck_assert_int_eq(a->state, GS_CONN_EVICTED);
    gs_conns_head(&t, a, 2); /* late callbacks for an evicted connection change nothing */
    gs_conns_busy(&t, a);
    gs_conns_idle(&t, a, 3);
    gs_conns_fin(&t, a);
    ck_assert_int_eq(a->state, GS_CONN_EVICTED);
    ck_assert_uint_eq(t.idle.n + t.head.n + t.fin.n, 1);
    ck_assert_uint_eq(t.live, 1);
    gs_conns_close(&t, a);
    gs_conns_clear(&t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static conns");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, the_longest_waiting_goes_for_a_newcomer);
    tcase_add_test(tc, busy_connections_are_never_evicted);
    tcase_add_test(tc, deadlines_are_not_moved_by_trickled_bytes);
    tcase_add_test(tc, zero_means_no_deadline);
    tcase_add_test(tc, a_departed_peer_is_poked_while_it_waits);
    tcase_add_test(tc, evicted_stays_evicted);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-conns");
}
