/* test_sandbox.c -- the native backend applies the contract's limits, reads them back,
 * sees every process of the fixture and leaves nothing behind. Needs root and cgroups;
 * where they are absent the availability check's refusal is what is tested. */
#define _GNU_SOURCE
#include "runner/sandbox.h"
#include "contract.h"
#include "tests/lib/kb_check.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static struct kb_contract C;
static char err[512];

static void setup(void)
{
    ck_assert_int_eq(kb_contract_load(kb_contract_default_path(), &C, err, sizeof(err)), 0);
}

static void teardown(void)
{
    kb_contract_free(&C);
}

static struct kb_fixture_spec spec_for(char *const *argv, int no_limits)
{
    struct kb_fixture_spec s = { .name = "unit", .argv = argv, .rundir = "/tmp",
                                 .no_limits = no_limits };
    s.limits.cpus = C.cpus;
    s.limits.memory_bytes = C.memory_bytes;
    s.limits.pids = C.pids;
    snprintf(s.limits.server_cpuset, sizeof(s.limits.server_cpuset), "%s", C.server_cpus);
    return s;
}

START_TEST(limits_read_back_equal_contract)
{
    const struct kb_sandbox_ops *ops = kb_sandbox_backend("native");
    char *argv[] = { "sh", "-c", "sleep 30 & sleep 30 & wait", NULL };
    struct kb_fixture_spec spec = spec_for(argv, 0);
    struct kb_limits_applied la;
    struct kb_sandbox *sb;
    pid_t pids[16];
    char paths[1024];

    if (ops->available(err, sizeof(err)) != 0) {
        ck_assert_msg(strstr(err, "no-limits") != NULL, "refusal must name --no-limits: %s", err);
        return;
    }
    sb = ops->start(&spec, err, sizeof(err));
    ck_assert_msg(sb != NULL, "%s", err);
    usleep(200000);
    ck_assert_int_eq(ops->alive(sb), 1);
    ck_assert_uint_eq(ops->pids(sb, pids, 16), 3); /* sh + two sleeps, all in the cgroup */
    ck_assert_int_eq(ops->limits_applied(sb, &la, err, sizeof(err)), 0);
    ck_assert_double_eq_tol(la.cpus, C.cpus, 1e-9);
    ck_assert_int_eq(la.memory_bytes, C.memory_bytes);
    ck_assert_int_eq(la.pids_max, C.pids);
    ck_assert_str_eq(la.cpuset, C.server_cpus);
    snprintf(paths, sizeof(paths), "%s", la.paths);
    ck_assert_int_eq(ops->stop(sb, err, sizeof(err)), 0);
    for (char *p = strtok(paths, " "); p; p = strtok(NULL, " "))
        ck_assert_msg(access(p, F_OK) != 0, "%s left behind", p);
}
END_TEST

START_TEST(no_limits_tracks_session_and_exit)
{
    const struct kb_sandbox_ops *ops = kb_sandbox_backend("native");
    char *argv[] = { "sh", "-c", "sleep 30 & exit 3", NULL };
    struct kb_fixture_spec spec = spec_for(argv, 1);
    struct kb_limits_applied la;
    struct kb_sandbox *sb = ops->start(&spec, err, sizeof(err));
    pid_t pids[16];
    ck_assert_msg(sb != NULL, "%s", err);
    usleep(200000);
    ck_assert_int_eq(ops->alive(sb), 0);
    ck_assert_str_eq(ops->exit_reason(sb), "exit 3");
    ck_assert_uint_eq(ops->pids(sb, pids, 16), 1); /* the orphaned sleep, same session */
    ck_assert_int_eq(ops->limits_applied(sb, &la, err, sizeof(err)), 0);
    ck_assert_int_eq(la.cgroup_version, 0);
    ck_assert_int_eq(ops->stop(sb, err, sizeof(err)), 0);
    ck_assert_int_eq(kill(pids[0], 0), -1);
}
END_TEST

START_TEST(backend_by_name)
{
    ck_assert_ptr_eq(kb_sandbox_backend("native"), &kb_sandbox_native);
    ck_assert_ptr_null(kb_sandbox_backend("nosuch"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sandbox");
    TCase *tc = tcase_create("native");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, limits_read_back_equal_contract);
    tcase_add_test(tc, no_limits_tracks_session_and_exit);
    tcase_add_test(tc, backend_by_name);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "sandbox");
}
