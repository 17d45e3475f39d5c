/* kb_check.h -- run one Check suite and record "passed failed skipped" for `make test`.
 * Each unit test program's main() ends with `return kb_check_run(suite(), "name");`. */
#ifndef KB_CHECK_H
#define KB_CHECK_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static int kb_check_run(Suite *s, const char *name)
{
    SRunner *sr = srunner_create(s);
    const char *dir = getenv("KB_TEST_RESULTS"), *suffix = getenv("KB_TEST_SUFFIX");
    int run, failed;

    srunner_run_all(sr, CK_NORMAL);
    run = srunner_ntests_run(sr);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (dir && *dir) {
        char path[4096];
        FILE *f;
        snprintf(path, sizeof(path), "%s/unit-%s%s", dir, name, suffix ? suffix : "");
        if ((f = fopen(path, "w"))) {
            fprintf(f, "%d %d 0\n", run - failed, failed);
            fclose(f);
        }
    }
    return failed == 0 ? 0 : 1;
}

#endif
