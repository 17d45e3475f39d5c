/* test_server.c -- the parts of runner/run/server.c that need no sandbox: plan.json written
 * once and a different plan refused, run.json kept on resume with the new identity beside
 * it, load.json's problems named (the generator's exit with load.log's first line, no
 * load.json, a field missing), and the command's placeholders filled with the run's values. */
#define _GNU_SOURCE
#include "runner/run/server.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char err[512];

static int exists(const char *file)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", kb_tmp, file);
    return access(path, F_OK) == 0;
}

START_TEST(plan_written_once_and_a_different_one_refused)
{
    ck_assert_int_eq(kb_srv_plan_file(kb_tmp, json_pack("{s:i}", "rate", 100), "plan", err,
                                     sizeof(err)), 0);
    ck_assert(exists("plan.json"));
    ck_assert_int_eq(kb_srv_plan_file(kb_tmp, json_pack("{s:i}", "rate", 100), "plan", err,
                                     sizeof(err)), 0);
    ck_assert_int_eq(kb_srv_plan_file(kb_tmp, json_pack("{s:i}", "rate", 200), "soak plan", err,
                                     sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "holds a different soak plan"));
}
END_TEST

START_TEST(run_json_kept_on_resume)
{
    json_t *a = json_pack("{s:s}", "who", "first"), *b = json_pack("{s:s}", "who", "second");
    json_t *back;
    char path[256];
    ck_assert_int_eq(kb_srv_run_file(kb_tmp, a, 1000, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_srv_run_file(kb_tmp, b, 2000, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/run.json", kb_tmp);
    back = json_load_file(path, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(back, "who")), "first");
    ck_assert(exists("run-resumed-2000.json"));
    json_decref(back);
    json_decref(a);
    json_decref(b);
}
END_TEST

START_TEST(load_problems_named)
{
    struct kb_point_obs obs;
    struct kb_point_load lr;
    json_t *load;
    memset(&obs, 0, sizeof(obs));
    obs.load_exit = 2;
    kb_tmp_put("load.log", "kneebench load: cannot connect\nmore\n");
    kb_srv_read_load(kb_tmp, &obs, &lr, &load);
    ck_assert_int_eq(obs.have_load, 0);
    ck_assert_str_eq(obs.load_problem, "load generator exited 2: kneebench load: cannot connect");
    memset(&obs, 0, sizeof(obs));
    kb_srv_read_load(kb_tmp, &obs, &lr, &load);
    ck_assert_ptr_null(load);
    ck_assert_ptr_nonnull(strstr(obs.load_problem, "/load.json: No such file"));
    kb_tmp_put("load.json", "{\"achieved_rps\": 1}");
    memset(&obs, 0, sizeof(obs));
    kb_srv_read_load(kb_tmp, &obs, &lr, &load);
    ck_assert_ptr_nonnull(load);
    ck_assert_int_eq(obs.have_load, 0);
    ck_assert_ptr_nonnull(strstr(obs.load_problem, "/load.json: requested_rps is missing"));
    json_decref(load);
}
END_TEST

START_TEST(expand_fills_placeholders)
{
    struct kb_contract c;
    struct kb_srv fx;
    char *s;
    memset(&c, 0, sizeof(c));
    memset(&fx, 0, sizeof(fx));
    c.cpus = 1;
    fx.c = &c;
    fx.build = "/b";
    fx.port = 8123;
    s = kb_srv_expand(&fx, "{build}/x --port {port} --bind {bind} --kb_tmp {rundir} -c {cpus}", "/r");
    ck_assert_str_eq(s, "/b/x --port 8123 --bind 127.0.0.1 --kb_tmp /r -c 1");
    free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fixture");
    TCase *tc = tcase_create("no sandbox");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, plan_written_once_and_a_different_one_refused);
    tcase_add_test(tc, run_json_kept_on_resume);
    tcase_add_test(tc, load_problems_named);
    tcase_add_test(tc, expand_fills_placeholders);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "fixture");
}
