/* pqdl.c -- see pqdl.h. The table's types are checked against libpq's own declarations at
 * compile time, so a libpq whose signatures differ fails the build rather than a call. */
#define _POSIX_C_SOURCE 200809L
#define GS_PQDL_IMPL
#include "gray-static/pqdl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct gs_pq_table gs_pq;

#define GS_PQ_SAME_TYPE(ret, name, params)                                                 \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), __typeof__(gs_pq.name)), \
                   #name " in pqdl.h differs from libpq-fe.h");
GS_PQ_FUNCS(GS_PQ_SAME_TYPE)
#undef GS_PQ_SAME_TYPE

struct slot {
    const char *name;
    void *field;               /* &gs_pq.<name> */
};

#define GS_PQ_SLOT(ret, name, params) { #name, &gs_pq.name },
static const struct slot slots[] = { GS_PQ_FUNCS(GS_PQ_SLOT) };
#undef GS_PQ_SLOT

static int loaded;             /* 0 not tried, 1 loaded, -1 failed */
static char why[256];

/* dlsym's void * into a function pointer field: POSIX guarantees the representations
 * agree, and memcpy says so without a cast ISO C leaves undefined. */
static int fill(void *lib)
{
    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
        void *sym = dlsym(lib, slots[i].name);
        if (!sym) {
            snprintf(why, sizeof(why), "%s has no %s", GS_LIBPQ_SONAME, slots[i].name);
            return -1;
        }
        memcpy(slots[i].field, &sym, sizeof(sym));
    }
    return 0;
}

int gs_pq_load(char *err, size_t errlen)
{
    void *lib;

    if (!loaded) {
        loaded = -1;
        if (!(lib = dlopen(GS_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, sizeof(why), "cannot load %s (libpq, needed for --db): %s",
                     GS_LIBPQ_SONAME, dlerror());
        else if (fill(lib) < 0)
            memset(&gs_pq, 0, sizeof(gs_pq));
        else
            loaded = 1;
    }
    if (loaded < 0)
        snprintf(err, errlen, "%s", why);
    return loaded > 0 ? 0 : -1;
}
