/* evidence.c -- a run's evidence files written whole (evidence.h). */
#define _GNU_SOURCE
#include "runner/util/evidence.h"
#include "runner/util/atomicfile.h"
#include "runner/util/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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


static json_t *load_fail(json_error_t *je, const char *path, const char *why, int e)
{
    if (je) {
        memset(je, 0, sizeof(*je));
        snprintf(je->source, sizeof(je->source), "%.*s", (int)sizeof(je->source) - 1, path);
        snprintf(je->text, sizeof(je->text), "%s", why);
    }
    errno = e;
    return NULL;
}

json_t *kb_evidence_load(const char *path, json_error_t *je)
{
    struct stat st;
    char *buf;
    size_t got = 0;
    ssize_t n;
    json_t *j;
    int fd, e;
    if (!path || !*path)
        return load_fail(je, "", "no path", ENAMETOOLONG);
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        e = errno;
        return load_fail(je, path, e == ELOOP ? "a symbolic link, not evidence" : strerror(e), e);
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return load_fail(je, path, "not a regular file, not evidence", EINVAL);
    }
    if (st.st_size > (off_t)KB_EVIDENCE_MAX_BYTES) {
        close(fd);
        return load_fail(je, path, "larger than any evidence file (16 MiB)", EFBIG);
    }
    if (!(buf = malloc((size_t)st.st_size + 1))) {
        close(fd);
        return load_fail(je, path, "out of memory", ENOMEM);
    }
    /* the size read is the size judged: a file growing meanwhile is read no further */
    while (got < (size_t)st.st_size &&
           ((n = read(fd, buf + got, (size_t)st.st_size - got)) > 0 || (n < 0 && errno == EINTR)))
        got += n > 0 ? (size_t)n : 0;
    close(fd);
    j = json_loadb(buf, got, 0, je);
    free(buf);
    if (!j)
        errno = EINVAL;
    return j;
}

int kb_evidence_read(const char *path, json_t **out, char *err, size_t errlen)
{
    json_error_t je;
    int e;
    if (!(*out = kb_evidence_load(path, &je))) {
        e = errno;
        snprintf(err, errlen, "%.3000s: %s", path ? path : "", je.text);
        errno = e;
        return KB_EVIDENCE_UNREADABLE;
    }
    if (kb_schema_version(*out, path, KB_SCHEMA_EVIDENCE, err, errlen) < 0) {
        json_decref(*out);
        *out = NULL;
        return KB_EVIDENCE_REFUSED;
    }
    return 0;
}

static int bad_fig(const char *file, const char *what, double v, char *err, size_t errlen)
{
    snprintf(err, errlen, "%.3000s: %s is %g, which no measurement gives", file, what, v);
    return -1;
}

/* Every number in a histogram object (p50 .. max, min, mean; nested is_bound skipped). */
static int check_hist(const json_t *h, const char *name, const char *file, char *err,
                      size_t errlen)
{
    const char *k;
    const json_t *v;
    char what[160];
    json_object_foreach((json_t *)h, k, v)
        if (json_is_number(v) && !(isfinite(json_number_value(v)) && json_number_value(v) >= 0)) {
            snprintf(what, sizeof(what), "%.60s.%.60s", name, k);
            return bad_fig(file, what, json_number_value(v), err, errlen);
        }
    return 0;
}

int kb_evidence_check_load(const json_t *o, const char *file, char *err, size_t errlen)
{
    static const char *const counts[] = { "scheduled", "completed" };
    const json_t *d = json_object_get(o, "delivery"), *errs = json_object_get(o, "errors");
    double dur = json_number_value(json_object_get(o, "duration_s")),
           warm = json_number_value(json_object_get(o, "warmup_s")), top, x;
    const char *k;
    const json_t *v;
    json_int_t n[3] = { -1, -1, -1 };
    top = 1 + (dur > 0 && warm > 0 && isfinite(warm / dur) ? warm / dur : 0) + 1e-9;
    if (d && !json_is_null(d) &&
        !(json_is_number(d) && (x = json_number_value(d)) >= 0 && x <= top))
        return bad_fig(file, "delivery", json_number_value(d), err, errlen);
    x = json_number_value(json_object_get(o, "achieved_rps"));
    if (!(isfinite(x) && x >= 0))
        return bad_fig(file, "achieved_rps", x, err, errlen);
    json_object_foreach((json_t *)o, k, v) {
        size_t len = strlen(k);
        if (json_is_object(v) && len > 3 && !strcmp(k + len - 3, "_us") &&
            check_hist(v, k, file, err, errlen) < 0)
            return -1;
    }
    for (int i = 0; i < 2; i++)
        if ((v = json_object_get(o, counts[i]))) {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return bad_fig(file, counts[i], json_number_value(v), err, errlen);
            n[i] = json_integer_value(v);
        }
    json_object_foreach((json_t *)errs, k, v)
        if (json_is_number(v) && !(json_is_integer(v) && json_integer_value(v) >= 0)) {
            char what[96];
            snprintf(what, sizeof(what), "errors.%.60s", k);
            return bad_fig(file, what, json_number_value(v), err, errlen);
        }
    if ((v = json_object_get(errs, "total")))
        n[2] = json_integer_value(v);
    if (n[0] >= 0 && n[1] >= 0 && n[2] >= 0 && n[0] != n[1] + n[2]) {
        snprintf(err, errlen, "%.3000s: scheduled %lld is not completed %lld + errors.total %lld",
                 file, (long long)n[0], (long long)n[1], (long long)n[2]);
        return -1;
    }
    return 0;
}
