/* routes.c -- linear route matching: a handful of routes, so a scan beats any index. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/routes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void gs_routes_init(struct gs_routes *t)
{
    t->v = NULL;
    t->n = t->cap = 0;
}

void gs_routes_free(struct gs_routes *t)
{
    free(t->v);
    gs_routes_init(t);
}

int gs_routes_add(struct gs_routes *t, const struct gs_route *r)
{
    const struct gs_route *dup;

    if (!r->method || !r->path || !r->handler) {
        errno = EINVAL;
        return -1;
    }
    if (gs_routes_match(t, r->method, r->path, &dup) == GS_MATCH_OK) {
        errno = EEXIST;
        return -1;
    }
    if (t->n == t->cap) {
        size_t n = t->cap ? t->cap * 2 : 8;
        struct gs_route *v = realloc(t->v, n * sizeof(*v));
        if (!v)
            return -1;
        t->v = v;
        t->cap = n;
    }
    t->v[t->n++] = *r;
    return 0;
}

enum gs_match gs_routes_match(const struct gs_routes *t, const char *method, const char *path,
                              const struct gs_route **out)
{
    enum gs_match m = GS_MATCH_NOT_FOUND;

    *out = NULL;
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->v[i].path, path))
            continue;
        if (!strcmp(t->v[i].method, method)) {
            *out = &t->v[i];
            return GS_MATCH_OK;
        }
        m = GS_MATCH_BAD_METHOD;
    }
    return m;
}

size_t gs_routes_allow(const struct gs_routes *t, const char *path, char *buf, size_t len)
{
    size_t found = 0, used = 0;

    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < t->n; i++) {
        size_t ml = strlen(t->v[i].method), sep = found ? 2 : 0;
        if (strcmp(t->v[i].path, path))
            continue;
        if (used + sep + ml + 1 > len)
            break;
        memcpy(buf + used, ", ", sep);
        memcpy(buf + used + sep, t->v[i].method, ml + 1);
        used += sep + ml;
        found++;
    }
    return found;
}
