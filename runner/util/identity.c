/* identity.c -- a fixture's identity and the host's facts (identity.h). */
#define _GNU_SOURCE
#include "runner/util/identity.h"
#include "runner/util/digest.h"
#include "runner/util/paths.h"
#include "runner/util/xalloc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

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
        l->v = kb_xrealloc(l->v, l->cap * sizeof(char *));
    }
    l->v[l->n++] = kb_xstrdup(path);
}

/* Regular files under dir, recursively; symlinks are followed for files, not for dirs. */
static void walk(const char *dir, struct filelist *l)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[KB_PATH_MAX];
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

json_t *kb_identity_of_files(char *const *executables, size_t nexe, char *const *sources,
                             size_t nsrc, char *err, size_t errlen)
{
    struct filelist l = { 0 };
    json_t *files = json_object(), *out = NULL;
    char path[KB_PATH_MAX], hex[KB_SHA256_HEX];
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

