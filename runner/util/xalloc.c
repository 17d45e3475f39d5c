/* xalloc.c -- allocations that abort on failure (xalloc.h). */
#define _POSIX_C_SOURCE 200809L
#include "runner/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *enough(void *p, size_t n)
{
    if (!p && n) {
        fprintf(stderr, "kneebench: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

void *kb_xmalloc(size_t n)
{
    return enough(malloc(n ? n : 1), n ? n : 1);
}

void *kb_xcalloc(size_t n, size_t size)
{
    size_t bytes;
    if (size && n > (size_t)-1 / size)
        return enough(NULL, (size_t)-1);
    bytes = n * size;
    return enough(calloc(n ? n : 1, size ? size : 1), bytes ? bytes : 1);
}

void *kb_xrealloc(void *p, size_t n)
{
    return enough(realloc(p, n ? n : 1), n ? n : 1);
}

char *kb_xstrdup(const char *s)
{
    return enough(strdup(s), strlen(s) + 1);
}
