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

/* What the final name is: 0 a name to rename over (none yet, a regular file, or one we
 * cannot see, whose creation then says why), 1 a node to write through (a character device
 * or a FIFO, named or linked to: a rename would put a regular file in its place, and as root
 * that is /dev/null or /dev/stdout replaced for the whole system), -1 refused with err.
 * A link to anything else is refused rather than replaced: /dev/stdout redirected to a file
 * is such a link, and a link planted among evidence is never followed either way. */
static int final_kind(const char *path, char *err, size_t errlen)
{
    struct stat st, to;
    const char *what;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return 1;
    if (S_ISLNK(st.st_mode)) {
        if (stat(path, &to) == 0 && (S_ISCHR(to.st_mode) || S_ISFIFO(to.st_mode)))
            return 1;
        what = "a symbolic link to no device or FIFO (neither followed nor replaced; name "
               "the file itself)";
    } else if (S_ISDIR(st.st_mode))
        what = "a directory";
    else if (S_ISBLK(st.st_mode))
        what = "a block device";
    else
        what = "a socket";
    snprintf(err, errlen, "writing %.3900s: it is %s", path, what);
    return -1;
}

/* The device or FIFO at path opened for writing, as a stream in a->f. Never blocks: a FIFO
 * nobody reads is an error now, not a run that hangs at its last step. */
static int open_through(struct kb_afile *a, const char *path, char *err, size_t errlen)
{
    struct stat st;
    int fd, fl, e;
    fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        snprintf(err, errlen, "writing %.3900s: %s", path,
                 e == ENXIO ? "a FIFO with no reader" : strerror(e));
        return -1;
    }
    /* the name may have changed since it was looked at: only what was judged is written */
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) ||
        (fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
        !(a->f = fdopen(fd, "w"))) {
        close(fd);
        snprintf(err, errlen, "writing %.3900s: it changed while it was opened", path);
        return -1;
    }
    a->through = 1;
    return 0;
}

int kb_afile_probe(const char *path, char *err, size_t errlen)
{
    struct kb_afile a;
    int k = path && *path ? final_kind(path, err, errlen) : 0;
    if (k < 0)
        return -1;
    /* opening a FIFO to try it would hand its reader an end of file before the output */
    if (k == 1) {
        if (access(path, W_OK) == 0)
            return 0;
        snprintf(err, errlen, "writing %.3900s: %s", path, strerror(errno));
        return -1;
    }
    if (kb_afile_open(&a, path, err, errlen) < 0)
        return -1;
    kb_afile_abort(&a);
    return 0;
}

int kb_afile_open(struct kb_afile *a, const char *path, char *err, size_t errlen)
{
    int fd, e, k;
    a->f = NULL;
    a->tmp[0] = '\0';
    a->through = 0;
    /* no name at all is one paths.h's kb_path refused as too long: never a file in the
     * current directory named by the suffix alone */
    if (!path || !*path)
        return fail(a, "(a path too long to name)", ENAMETOOLONG, err, errlen);
    if ((size_t)snprintf(a->path, sizeof(a->path), "%s", path) >= sizeof(a->path))
        return fail(a, path, ENAMETOOLONG, err, errlen);
    if ((k = final_kind(path, err, errlen)) != 0)
        return k < 0 ? -1 : open_through(a, path, err, errlen);
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
    /* a pipe or a terminal has nothing to sync and no name to give */
    else if (!a->through && fsync(fileno(a->f)) != 0)
        e = errno, step = "syncing";
    if (fclose(a->f) != 0 && !e)
        e = errno;
    a->f = NULL;
    if (!e && !a->through && rename(a->tmp, a->path) != 0)
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
