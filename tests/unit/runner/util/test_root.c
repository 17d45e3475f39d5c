/* test_root.c -- runner/root: the tree named by --root or $KB_ROOT (and refused, naming which,
 * when it holds no contract), found beside this test's own executable otherwise, $KB_ROOT set
 * for the programs started, and the contract and build paths under it; the installed
 * contract found from an executable's path (BIN/../share/kneebench/contract.json). Each test runs in its
 * own process (Check's fork mode), so the environment it changes dies with it. */
#define _GNU_SOURCE
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char real_tmp[PATH_MAX];

static void setup(void)
{
    kb_tmp_setup();
    ck_assert_ptr_nonnull(realpath(kb_tmp, real_tmp));
    unsetenv("KB_ROOT");
    unsetenv("KNEEBENCH_CONTRACT");
}

/* kb_tmp as a tree: contract/contract.json in it (its content is not read here) */
static void make_tree(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/contract", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    kb_tmp_put("contract/contract.json", "{}\n");
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

START_TEST(named_root_is_used_and_exported)
{
    char want[PATH_MAX + 32], err[512];
    make_tree();
    ck_assert_int_eq(kb_root_init(kb_tmp, err, sizeof(err)), 0);
    ck_assert_str_eq(kb_root(), real_tmp);
    ck_assert_str_eq(getenv("KB_ROOT"), real_tmp);
    snprintf(want, sizeof(want), "%s/contract/contract.json", real_tmp);
    ck_assert_str_eq(kb_root_contract(), want);
    snprintf(want, sizeof(want), "%s/build", real_tmp);
    ck_assert_str_eq(kb_root_build(), want);
    /* $KNEEBENCH_CONTRACT still names another contract */
    setenv("KNEEBENCH_CONTRACT", "/elsewhere/c.json", 1);
    ck_assert_str_eq(kb_root_contract(), "/elsewhere/c.json");
}
END_TEST

START_TEST(env_root_is_used)
{
    make_tree();
    setenv("KB_ROOT", kb_tmp, 1);
    ck_assert_int_eq(kb_root_init(NULL, NULL, 0), 0);
    ck_assert_str_eq(kb_root(), real_tmp);
}
END_TEST

START_TEST(a_named_root_without_contract_is_refused)
{
    char err[512];
    ck_assert_int_eq(kb_root_init(kb_tmp, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--root"));
    ck_assert_ptr_nonnull(strstr(err, kb_tmp));
    ck_assert_ptr_null(kb_root());
    ck_assert_ptr_null(kb_root_build());
    ck_assert_ptr_null(kb_root_contract());
    ck_assert_str_eq(kb_root_error(), err);
    /* $KB_ROOT is not passed over for the tree beside the executable either */
    setenv("KB_ROOT", kb_tmp, 1);
    ck_assert_int_eq(kb_root_init(NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "$KB_ROOT"));
}
END_TEST

START_TEST(found_above_the_executable)
{
    char path[PATH_MAX + 32];
    struct stat st;
    /* this test lives under build/tests/unit/runner/ of its tree */
    ck_assert_ptr_nonnull(kb_root());
    snprintf(path, sizeof(path), "%s/contract/contract.json", kb_root());
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(ends_with(kb_root_contract(), "/contract/contract.json"));
    ck_assert_str_eq(kb_root_error(), "");
}
END_TEST

/* PREFIX/bin/kneebench's contract is PREFIX/share/kneebench/contract.json, named without the
 * "bin/.."; without that file there is none, and the path looked at is said. */
START_TEST(installed_contract_beside_bin)
{
    char dir[PATH_MAX], exe[PATH_MAX], out[PATH_MAX], want[PATH_MAX + 64];
    snprintf(dir, sizeof(dir), "%s/bin", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(exe, sizeof(exe), "%s/bin/kneebench", kb_tmp);
    ck_assert_int_eq(kb_root_installed_contract(exe, out, sizeof(out)), -1);
    ck_assert(ends_with(out, "/bin/../share/kneebench/contract.json"));
    snprintf(dir, sizeof(dir), "%s/share", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(dir, sizeof(dir), "%s/share/kneebench", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    kb_tmp_put("share/kneebench/contract.json", "{}\n");
    ck_assert_int_eq(kb_root_installed_contract(exe, out, sizeof(out)), 0);
    snprintf(want, sizeof(want), "%s/share/kneebench/contract.json", real_tmp);
    ck_assert_str_eq(out, want);
    /* only the executable's own directory's parent is looked in, never further up */
    snprintf(exe, sizeof(exe), "%s/bin/deeper/kneebench", kb_tmp);
    ck_assert_int_eq(kb_root_installed_contract(exe, out, sizeof(out)), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("root");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, kb_tmp_teardown);
    tcase_add_test(tc, named_root_is_used_and_exported);
    tcase_add_test(tc, env_root_is_used);
    tcase_add_test(tc, a_named_root_without_contract_is_refused);
    tcase_add_test(tc, found_above_the_executable);
    tcase_add_test(tc, installed_contract_beside_bin);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "root");
}
