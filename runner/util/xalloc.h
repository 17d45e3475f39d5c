/* xalloc.h -- the harness's out-of-memory policy: an allocation it cannot do is a fault of
 * the host, not a result, so it stops the run at once (a message on stderr, then abort())
 * rather than carry on with evidence it could not build. The load path does not use these:
 * it checks each allocation and counts a request it could not afford (loadgen.c). */
#ifndef KB_XALLOC_H
#define KB_XALLOC_H

#include <stddef.h>

void *kb_xmalloc(size_t n);
void *kb_xcalloc(size_t n, size_t size);
void *kb_xrealloc(void *p, size_t n);
char *kb_xstrdup(const char *s);

#endif
