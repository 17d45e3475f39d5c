/* paths.c -- a run's file and directory names (paths.h). */
#define _GNU_SOURCE
#include "runner/util/paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *kb_path(char *out, size_t outlen, const char *dir, const char *file)
{
    int n = snprintf(out, outlen, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= outlen) {
        if (outlen)
            out[0] = '\0';
        return NULL;
    }
    return out;
}

int kb_abspath(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    char cwd[KB_PATH_MAX];
    int n;
    if (path[0] == '/') {
        n = snprintf(out, outlen, "%s", path);
    } else if (!getcwd(cwd, sizeof(cwd))) {
        snprintf(err, errlen, "%s: cannot read the current directory: %s", path, strerror(errno));
        return -1;
    } else {
        while (path[0] == '.' && path[1] == '/')
            path += 2;
        n = !strcmp(path, ".") || !path[0] ? snprintf(out, outlen, "%s", cwd)
            : snprintf(out, outlen, "%s%s%s", cwd, cwd[1] ? "/" : "", path);
    }
    if (n < 0 || (size_t)n >= outlen) {
        snprintf(err, errlen, "%.200s: path too long", path);
        return -1;
    }
    return 0;
}

int kb_dir_own(const char *dir, int absent_ok, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) < 0) {
        if (errno == ENOENT && absent_ok)
            return 0;
        snprintf(err, errlen, "%.300s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(err, errlen, "%.300s must be a directory (not a symlink) owned by uid %ld that "
                 "no one else may write (it is %sowned by uid %ld, mode %04o)", dir,
                 (long)geteuid(), S_ISDIR(st.st_mode) ? "" : "not a directory, ",
                 (long)st.st_uid, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

int kb_plain_name(const char *s)
{
    size_t n = s ? strnlen(s, KB_NAME_MAX + 1) : 0;
    if (n == 0 || n > KB_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    for (; *s; s++)
        if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

int kb_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[KB_PATH_MAX];
    if (!path || !*path || (size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf)) {
        snprintf(err, errlen, "mkdir: %s", path && *path ? "the path is too long"
                                                         : "a path too long to name");
        return -1;
    }
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
                snprintf(err, errlen, "mkdir %s: %s", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

int kb_file_exists(const char *path)
{
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The highest-versioned "<name><digit>..." executable in dir (php-fpm8.2 for php-fpm),
 * the same choice php-fpm/run.sh makes; 0 and out filled, or -1. */
static int versioned_in(const char *dir, size_t dlen, const char *name, char *out, size_t outlen)
{
    char d[1024], best[256] = "";
    size_t nl = strlen(name);
    struct dirent *e;
    DIR *h;
    snprintf(d, sizeof(d), "%.*s", (int)dlen, dir);
    if (!(h = opendir(d)))
        return -1;
    while ((e = readdir(h))) {
        if (strncmp(e->d_name, name, nl) || e->d_name[nl] < '0' || e->d_name[nl] > '9')
            continue;
        snprintf(out, outlen, "%s/%s", d, e->d_name);
        if (access(out, X_OK) == 0 && strverscmp(e->d_name, best) > 0)
            snprintf(best, sizeof(best), "%s", e->d_name);
    }
    closedir(h);
    if (!best[0])
        return -1;
    snprintf(out, outlen, "%s/%s", d, best);
    return 0;
}

static int which_in_path(const char *name, int versioned, char *out, size_t outlen)
{
    const char *path = getenv("PATH");
    for (const char *p = path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(out, outlen, "%.*s/%s", (int)len, p, name);
        if (!versioned && access(out, X_OK) == 0)
            return 0;
        if (versioned && versioned_in(p, len, name, out, outlen) == 0)
            return 0;
        p += len + (p[len] == ':');
    }
    return -1;
}

int kb_which(const char *name, char *out, size_t outlen)
{
    if (strchr(name, '/')) {
        snprintf(out, outlen, "%s", name);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    if (which_in_path(name, 0, out, outlen) == 0 || which_in_path(name, 1, out, outlen) == 0)
        return 0;
    /* sbin is where Debian puts daemons, and a non-root PATH may lack it */
    return versioned_in("/usr/sbin", 9, name, out, outlen) == 0 ||
                   (snprintf(out, outlen, "/usr/sbin/%s", name), access(out, X_OK) == 0)
               ? 0 : -1;
}
