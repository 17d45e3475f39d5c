/* version.c -- the runner's build-time version and the contract's version (version.h). */
#include "runner/util/version.h"

#include <jansson.h>

/* The build always passes it (runner/module.mk); a compile outside make still says so. */
#ifndef KB_RUNNER_VERSION
#define KB_RUNNER_VERSION "unknown"
#endif

const char *kb_runner_version(void)
{
    return KB_RUNNER_VERSION;
}

long kb_contract_version_of(const char *path)
{
    json_t *c = json_load_file(path, 0, NULL), *v = json_object_get(c, "contract_version");
    long n = json_is_integer(v) ? (long)json_integer_value(v) : -1;
    json_decref(c);
    return n;
}
