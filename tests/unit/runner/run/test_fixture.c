/* test_server.c -- the parts of runner/run/fixture.c that need no sandbox: load.json's
 * problems named (the generator's exit with load.log's first line, no load.json, a field
 * missing), and the command's placeholders filled with the run's values. */
#define _GNU_SOURCE
#include "runner/run/fixture.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>


START_TEST(load_problems_named)
{
    struct kb_point_obs obs;
    struct kb_point_load lr;
    json_t *load;
    memset(&obs, 0, sizeof(obs));
    obs.load_exit = 1;
    kb_tmp_put("load.log", "kneebench load: cannot connect\nmore\n");
    ck_assert_int_eq(kb_fixture_read_load(kb_tmp, &obs, &lr, &load), 0);
    ck_assert_int_eq(obs.have_load, 0);
    ck_assert_str_eq(obs.load_problem, "load generator exited 1: kneebench load: cannot connect");
    /* issue 38: the load's own full disk, or what it refused of the runner's arguments, is
     * the harness's failure: said so, for the point to be left incomplete, never failed */
    for (int st = 2; st <= 6; st += 4) {
        memset(&obs, 0, sizeof(obs));
        obs.load_exit = st;
        kb_tmp_put("load.log", "kneebench load: cannot write output: x: No space left\n");
        ck_assert_int_eq(kb_fixture_read_load(kb_tmp, &obs, &lr, &load), -1);
        ck_assert_int_eq(obs.have_load, 0);
        ck_assert_ptr_nonnull(strstr(obs.load_problem, "No space left"));
        json_decref(load);
    }
    memset(&obs, 0, sizeof(obs));
    kb_fixture_read_load(kb_tmp, &obs, &lr, &load);
    ck_assert_ptr_null(load);
    ck_assert_ptr_nonnull(strstr(obs.load_problem, "/load.json: No such file"));
    kb_tmp_put("load.json", "{\"achieved_rps\": 1}");
    memset(&obs, 0, sizeof(obs));
    kb_fixture_read_load(kb_tmp, &obs, &lr, &load);
    ck_assert_ptr_nonnull(load);
    ck_assert_int_eq(obs.have_load, 0);
    ck_assert_ptr_nonnull(strstr(obs.load_problem, "/load.json: requested_rps is missing"));
    json_decref(load);
}
END_TEST

START_TEST(expand_fills_placeholders)
{
    struct kb_contract c;
    struct kb_fixture fx;
    char *s;
    memset(&c, 0, sizeof(c));
    memset(&fx, 0, sizeof(fx));
    c.cpus = 1;
    fx.c = &c;
    fx.build = "/b";
    fx.port = 8123;
    s = kb_fixture_expand(&fx, "{build}/x --port {port} --bind {bind} --kb_tmp {rundir} -c {cpus}", "/r");
    ck_assert_str_eq(s, "/b/x --port 8123 --bind 127.0.0.1 --kb_tmp /r -c 1");
    free(s);
}
END_TEST

/* --controller-cpus: the runner pinned to the declared CPUs and the kernel's read-back
 * recorded; a list sharing a CPU with the server's is refused before anything starts. On a
 * host with a third CPU the controller gets one of its own, off the client's too. */
START_TEST(controller_pinned_where_declared)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    char want[24], e[512];
    cpu_set_t before, got;
    struct kb_contract c;
    struct kb_fixture fx;
    struct kb_fixture_opts o = { .backend = "native", .build = "/nonexistent", .no_limits = 1,
                                 .server_cpus = "0", .client_cpus = "1" };
    if (n < 2)
        return;            /* one CPU: no placement to test */
    ck_assert_int_eq(sched_getaffinity(0, sizeof(before), &before), 0);
    memset(&c, 0, sizeof(c));
    snprintf(want, sizeof(want), "%ld", n >= 3 ? n - 1 : 1);
    o.controller_cpus = want;
    memset(&fx, 0, sizeof(fx));
    ck_assert_msg(kb_fixture_setup(&fx, &c, &o, e, sizeof(e)) == 0, "%s", e);
    ck_assert_int_eq(fx.controller_declared, 1);
    ck_assert_str_eq(fx.controller_cpus, want);
    ck_assert_int_eq(sched_getaffinity(0, sizeof(got), &got), 0);
    ck_assert_int_eq(CPU_COUNT(&got), 1);
    ck_assert(CPU_ISSET(n >= 3 ? n - 1 : 1, &got));
    kb_fixture_close(&fx);
    /* not declared: the client's, as before */
    o.controller_cpus = NULL;
    memset(&fx, 0, sizeof(fx));
    ck_assert_msg(kb_fixture_setup(&fx, &c, &o, e, sizeof(e)) == 0, "%s", e);
    ck_assert_int_eq(fx.controller_declared, 0);
    ck_assert_str_eq(fx.controller_cpus, "1");
    kb_fixture_close(&fx);
    /* on the server's CPU, or sharing it: refused, naming both */
    o.controller_cpus = "0-1";
    memset(&fx, 0, sizeof(fx));
    ck_assert_int_eq(kb_fixture_setup(&fx, &c, &o, e, sizeof(e)), -1);
    ck_assert_msg(strstr(e, "controller CPUs 0-1 and server CPUs 0 overlap") != NULL, "%s", e);
    kb_fixture_close(&fx);
    ck_assert_int_eq(sched_setaffinity(0, sizeof(before), &before), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fixture");
    TCase *tc = tcase_create("no sandbox");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, load_problems_named);
    tcase_add_test(tc, expand_fills_placeholders);
    tcase_add_test(tc, controller_pinned_where_declared);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "fixture");
}
