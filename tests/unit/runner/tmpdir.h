/* tmpdir.h -- a scratch directory for one unit test and small files in it, for the runner's
 * tests that read or write files (test_cgfile, test_fixture). Header-only: the unit test
 * rule builds each test_<name>.c alone. The directory is made in setup, removed in teardown. */
#ifndef KB_TEST_TMPDIR_H
#define KB_TEST_TMPDIR_H

#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char kb_tmp[64];

static inline void kb_tmp_put(const char *file, const char *text)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", kb_tmp, file);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static inline void kb_tmp_setup(void)
{
    snprintf(kb_tmp, sizeof(kb_tmp), "/tmp/kb-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(kb_tmp));
}

static inline void kb_tmp_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", kb_tmp);
    ck_assert_int_eq(system(cmd), 0);
}

#endif
