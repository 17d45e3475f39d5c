/* evidence.c -- a run's files and directories, a fixture's identity, host facts. */
#define _GNU_SOURCE
#include "runner/util/evidence.h"
#include "runner/util/atomicfile.h"
#include "runner/util/digest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

char *kb_path(char *out, size_t outlen, const char *dir, const char *file)
{
    snprintf(out, outlen, "%s/%s", dir, file);
    return out;
}

int kb_abspath(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    char cwd[4096];
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

int kb_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", path);
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

int kb_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    return kb_afile_write(path, data, len, err, errlen);
}

int kb_write_json_atomic(const char *path, const json_t *v, char *err, size_t errlen)
{
    return kb_afile_write_json(path, v, err, errlen);
}

json_t *kb_json_figure(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int kb_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct filelist {
    char **v;
    size_t n, cap;
};

static void list_add(struct filelist *l, const char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof(char *));
    }
    l->v[l->n++] = strdup(path);
}

/* Regular files under dir, recursively; symlinks are followed for files, not for dirs. */
static void walk(const char *dir, struct filelist *l)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    struct stat st;
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (lstat(path, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode))
            walk(path, l);
        else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && stat(path, &st) == 0 &&
                 S_ISREG(st.st_mode))
            list_add(l, path);
    }
    closedir(d);
}

static int add_digests(json_t *files, struct filelist *l, char *err, size_t errlen)
{
    char hex[KB_SHA256_HEX];
    qsort(l->v, l->n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < l->n; i++) {
        if (kb_sha256_file(l->v[i], hex, err, errlen) < 0)
            return -1;
        json_object_set_new(files, l->v[i], json_string(hex));
    }
    return 0;
}

/* Over paths and digests in order: a renamed file changes the identity too. */
static int combined(json_t *files, char hex[KB_SHA256_HEX])
{
    struct kb_digest *d = kb_digest_new();
    const char *k;
    json_t *v;
    json_object_foreach(files, k, v) {
        kb_digest_str(d, k);
        kb_digest_add(d, json_string_value(v), 64);
    }
    return kb_digest_hex(d, hex);
}

json_t *kb_fixture_identity(char *const *executables, size_t nexe, char *const *sources,
                            size_t nsrc, char *err, size_t errlen)
{
    struct filelist l = { 0 };
    json_t *files = json_object(), *out = NULL;
    char path[4096], hex[KB_SHA256_HEX];
    for (size_t i = 0; i < nexe; i++) {
        if (kb_which(executables[i], path, sizeof(path)) < 0) {
            snprintf(err, errlen, "executable %s not found", executables[i]);
            goto done;
        }
        list_add(&l, path);
    }
    for (size_t i = 0; i < nsrc; i++)
        walk(sources[i], &l);
    if (add_digests(files, &l, err, errlen) < 0)
        goto done;
    if (combined(files, hex) < 0) {
        snprintf(err, errlen, "the fixture's combined SHA-256 failed");
        goto done;
    }
    out = json_pack("{s:s,s:O}", "sha256", hex, "files", files);
done:
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    json_decref(files);
    return out;
}

void kb_cpu_model(char *out, size_t outlen)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "re");
    snprintf(out, outlen, "unknown");
    while (f && fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            snprintf(out, outlen, "%s", colon + 2);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

json_t *kb_host_identity(void)
{
    struct utsname u;
    char kernel[512], cpu[256];
    uname(&u);
    snprintf(kernel, sizeof(kernel), "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
    kb_cpu_model(cpu, sizeof(cpu));
    return json_pack("{s:s,s:s,s:s,s:i}", "hostname", u.nodename, "kernel", kernel,
                     "cpu_model", cpu, "online_cpus", (int)sysconf(_SC_NPROCESSORS_ONLN));
}

json_t *kb_fixture_mhd_version(json_t *runtime_versions)
{
    static const char tag[] = "libmicrohttpd ";
    const char *name;
    json_t *line;
    json_object_foreach(runtime_versions, name, line) {
        const char *at = json_is_string(line) ? strstr(json_string_value(line), tag) : NULL;
        size_t n = at ? strcspn(at + sizeof(tag) - 1, ",) \t") : 0;
        if (n)
            return json_stringn(at + sizeof(tag) - 1, n);
    }
    return json_null();
}
