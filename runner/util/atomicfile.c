/* atomicfile.c -- a file written under a temporary name, synced, then renamed (atomicfile.h). */
#define _GNU_SOURCE
#include "runner/util/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Free names tried before giving up: each taken one is a leftover or a concurrent writer of
 * the same file, and a thousand of them is a directory to look at, not to fill further. */
#define MAX_TRIES 1000

/* step: what failed ("writing", "syncing", "rename to"); e 0: a write failed long before */
static int fail_at(struct kb_afile *a, const char *step, const char *path, int e, char *err,
                   size_t errlen)
{
    snprintf(err, errlen, "%s %.3900s: %s", step, path, e ? strerror(e) : "a write failed");
    if (a->tmp[0])
        unlink(a->tmp);
    a->tmp[0] = '\0';
    return -1;
}

static int fail(struct kb_afile *a, const char *path, int e, char *err, size_t errlen)
{
    return fail_at(a, "writing", path, e, err, errlen);
}

/* The first free PATH.tmp.<pid>.<n>, created; its descriptor, or -1 (errno). */
static int create_tmp(struct kb_afile *a, const char *path)
{
    int fd = -1;
    for (unsigned n = 0; n < MAX_TRIES && fd < 0; n++) {
        if ((size_t)snprintf(a->tmp, sizeof(a->tmp), "%s.tmp.%ld.%u", path, (long)getpid(), n) >=
            sizeof(a->tmp)) {
            errno = ENAMETOOLONG;
            break;
        }
        /* O_EXCL never follows a link, dangling or not: a planted name is EEXIST, skipped */
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        a->tmp[0] = '\0';      /* nothing of ours to remove */
    return fd;
}

int kb_afile_open(struct kb_afile *a, const char *path, char *err, size_t errlen)
{
    int fd, e;
    a->f = NULL;
    a->tmp[0] = '\0';
    /* no name at all is one paths.h's kb_path refused as too long: never a file in the
     * current directory named by the suffix alone */
    if (!path || !*path)
        return fail(a, "(a path too long to name)", ENAMETOOLONG, err, errlen);
    if ((size_t)snprintf(a->path, sizeof(a->path), "%s", path) >= sizeof(a->path))
        return fail(a, path, ENAMETOOLONG, err, errlen);
    if ((fd = create_tmp(a, path)) < 0)
        return fail(a, path, errno, err, errlen);
    /* the mode evidence has whatever the umask: others read a run's files */
    if (fchmod(fd, 0644) < 0 || !(a->f = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        return fail(a, path, e, err, errlen);
    }
    return 0;
}

int kb_afile_commit(struct kb_afile *a, char *err, size_t errlen)
{
    const char *step = "writing";
    int e = 0;                 /* -1: a write failed, its errno long gone */
    if (!a->f)
        return fail(a, a->path, EBADF, err, errlen);
    /* the error flag keeps a write that failed long before (a full disk mid-series) */
    if (fflush(a->f) != 0)
        e = errno ? errno : -1;
    else if (ferror(a->f))
        e = -1;
    else if (fsync(fileno(a->f)) != 0)
        e = errno, step = "syncing";
    if (fclose(a->f) != 0 && !e)
        e = errno;
    a->f = NULL;
    if (!e && rename(a->tmp, a->path) != 0)
        e = errno, step = "rename to";
    if (e)
        return fail_at(a, step, a->path, e < 0 ? 0 : e, err, errlen);
    a->tmp[0] = '\0';
    return 0;
}

void kb_afile_abort(struct kb_afile *a)
{
    if (a->f)
        fclose(a->f);
    a->f = NULL;
    if (a->tmp[0])
        unlink(a->tmp);
    a->tmp[0] = '\0';
}

int kb_afile_write_with(const char *path, int (*fill)(FILE *f, const void *arg),
                        const void *arg, char *err, size_t errlen)
{
    struct kb_afile a;
    int e;
    if (kb_afile_open(&a, path, err, errlen) < 0)
        return -1;
    errno = 0;
    if (fill(a.f, arg) < 0) {
        e = errno;
        kb_afile_abort(&a);
        snprintf(err, errlen, "writing %.3900s: %s", path, e ? strerror(e) : "a write failed");
        return -1;
    }
    return kb_afile_commit(&a, err, errlen);
}

struct buffer {
    const void *data;
    size_t len;
};

static int put_buffer(FILE *f, const void *arg)
{
    const struct buffer *b = arg;
    return b->len && fwrite(b->data, 1, b->len, f) != b->len ? -1 : 0;
}

int kb_afile_write(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    struct buffer b = { data, len };
    return kb_afile_write_with(path, put_buffer, &b, err, errlen);
}

static int put_json(FILE *f, const void *arg)
{
    return json_dumpf(arg, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) != 0 ||
                   fputc('\n', f) == EOF ? -1 : 0;
}

int kb_afile_write_json(const char *path, const json_t *v, char *err, size_t errlen)
{
    if (!v) {
        snprintf(err, errlen, "writing %.3900s: nothing to write (out of memory)", path);
        return -1;
    }
    return kb_afile_write_with(path, put_json, v, err, errlen);
}
