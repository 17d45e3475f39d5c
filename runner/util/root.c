/* root.c -- finds the kneebench tree at run time (root.h). */
#define _GNU_SOURCE
#include "runner/util/root.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONTRACT_REL "fixtures/contract.json"

static char root[PATH_MAX], build[PATH_MAX + 8], contract[PATH_MAX + 32];
static char why[2 * PATH_MAX + 256];
static int tried;

/* dir's canonical path into out (PATH_MAX) when dir holds a readable contract; else -1. */
static int holds_contract(const char *dir, char *out)
{
    char real[PATH_MAX], path[PATH_MAX + 32];
    if (!realpath(dir, real))
        return -1;
    snprintf(path, sizeof(path), "%s/%s", real, CONTRACT_REL);
    if (access(path, R_OK) != 0)
        return -1;
    memcpy(out, real, sizeof(real));
    return 0;
}

/* The nearest directory at or above the executable's own that holds the contract; self
 * gets the executable's path (for the error when none does). */
static int beside_exe(char *out, char *self, size_t selflen)
{
    char dir[PATH_MAX], *slash;
    ssize_t n = readlink("/proc/self/exe", self, selflen - 1);
    if (n <= 0) {
        snprintf(self, selflen, "this program (/proc/self/exe unreadable)");
        return -1;
    }
    self[n] = '\0';
    snprintf(dir, sizeof(dir), "%s", self);
    while ((slash = strrchr(dir, '/'))) {
        slash[slash == dir] = '\0';          /* "/kneebench" leaves "/", not "" */
        if (holds_contract(dir, out) == 0)
            return 0;
        if (slash == dir)
            break;
    }
    return -1;
}

int kb_root_init(const char *dir, char *err, size_t errlen)
{
    const char *env = getenv("KB_ROOT");
    char found[PATH_MAX], self[PATH_MAX];
    tried = 1;
    root[0] = why[0] = '\0';
    if (dir || (env && *env)) {
        const char *named = dir ? dir : env;
        if (holds_contract(named, found) < 0) {
            snprintf(why, sizeof(why), "%s %s is not a kneebench tree (no readable %s in it)",
                     dir ? "--root" : "$KB_ROOT", named, CONTRACT_REL);
            goto fail;
        }
    } else if (beside_exe(found, self, sizeof(self)) < 0 && holds_contract(".", found) < 0) {
        snprintf(why, sizeof(why), "cannot find the kneebench tree: no directory holding %s "
                 "at or above %s, nor in the current directory; name it with --root DIR or "
                 "$KB_ROOT", CONTRACT_REL, self);
        goto fail;
    }
    memcpy(root, found, sizeof(root));
    snprintf(build, sizeof(build), "%s/build", root);
    snprintf(contract, sizeof(contract), "%s/%s", root, CONTRACT_REL);
    /* the programs the runner starts inherit it and find the same tree */
    if (setenv("KB_ROOT", root, 1) < 0) {
        snprintf(why, sizeof(why), "cannot set $KB_ROOT for the programs started");
        root[0] = '\0';
        goto fail;
    }
    return 0;
fail:
    if (errlen)
        snprintf(err, errlen, "%s", why);
    return -1;
}

const char *kb_root(void)
{
    if (!tried)
        kb_root_init(NULL, NULL, 0);
    return root[0] ? root : NULL;
}

const char *kb_root_error(void)
{
    return why;
}

const char *kb_root_contract(void)
{
    const char *env = getenv("KNEEBENCH_CONTRACT");
    if (env && *env)
        return env;
    return kb_root() ? contract : NULL;
}

const char *kb_root_build(void)
{
    return kb_root() ? build : NULL;
}
