/* root.c -- finds the kneebench tree at run time (root.h). */
#define _GNU_SOURCE
#include "runner/util/root.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONTRACT_REL "contract/contract.json"
#define INSTALLED_REL "../share/kneebench/contract.json"

static char root[PATH_MAX], build[PATH_MAX + 8], contract[PATH_MAX + 32];
static char installed[PATH_MAX];     /* the installed contract when no tree; "" otherwise */
static char why[3 * PATH_MAX + 256];
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

/* This program's own path into self, or -1 with what to call it in a message instead. */
static int self_exe(char *self, size_t selflen)
{
    ssize_t n = readlink("/proc/self/exe", self, selflen - 1);
    if (n <= 0) {
        snprintf(self, selflen, "this program (/proc/self/exe unreadable)");
        return -1;
    }
    self[n] = '\0';
    return 0;
}

/* The nearest directory at or above the executable self that holds the contract. */
static int beside_exe(const char *self, char *out)
{
    char dir[PATH_MAX], *slash;
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

int kb_root_installed_contract(const char *exe, char *out, size_t outlen)
{
    char dir[PATH_MAX], real[PATH_MAX], *slash;
    snprintf(dir, sizeof(dir), "%s", exe);
    if (!(slash = strrchr(dir, '/')))
        snprintf(dir, sizeof(dir), ".");
    else
        slash[slash == dir] = '\0';
    snprintf(out, outlen, "%s/%s", dir, INSTALLED_REL);
    /* realpath also takes out the "bin/..", so messages and run.json name a plain path */
    if (!realpath(out, real) || access(real, R_OK) != 0)
        return -1;
    snprintf(out, outlen, "%s", real);
    return 0;
}

/* No tree found by 2-4: the reason, and the installed contract when there is one. */
static void no_tree(const char *self, int have_self)
{
    char look[PATH_MAX + 64] = "";
    int have = have_self && kb_root_installed_contract(self, look, sizeof(look)) == 0;
    snprintf(installed, sizeof(installed), "%s", have ? look : "");
    snprintf(why, sizeof(why), "cannot find the kneebench tree: no directory holding %s "
             "at or above %s, nor in the current directory%s%s; name it with --root DIR or "
             "$KB_ROOT", CONTRACT_REL, self, have || !have_self ? "" : ", and no installed "
             "contract at ", have || !have_self ? "" : look);
}

int kb_root_init(const char *dir, char *err, size_t errlen)
{
    const char *env = getenv("KB_ROOT");
    char found[PATH_MAX], self[PATH_MAX];
    tried = 1;
    root[0] = why[0] = installed[0] = '\0';
    if (dir || (env && *env)) {
        const char *named = dir ? dir : env;
        if (holds_contract(named, found) < 0) {
            snprintf(why, sizeof(why), "%s %s is not a kneebench tree (no readable %s in it)",
                     dir ? "--root" : "$KB_ROOT", named, CONTRACT_REL);
            goto fail;
        }
    } else {
        int have_self = self_exe(self, sizeof(self)) == 0;
        if (!(have_self && beside_exe(self, found) == 0) && holds_contract(".", found) < 0) {
            no_tree(self, have_self);
            goto fail;
        }
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
    if (kb_root())
        return contract;
    return installed[0] ? installed : NULL;
}

const char *kb_root_build(void)
{
    return kb_root() ? build : NULL;
}
