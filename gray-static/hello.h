/* hello.h -- the contract's two static routes, GET /plaintext and GET /json
 * (fixtures/contract.json holds their exact bytes; the unit tests compare against it). */
#ifndef GS_HELLO_H
#define GS_HELLO_H

#include "gray-static/server.h"

#include <stddef.h>

/* The JSON body {"message":"Hello, World!"}, built as a jansson value and serialised
 * compactly on every call. malloc'd (the caller frees it); NULL when out of memory. */
char *gs_hello_json(size_t *len);
/* Add /plaintext and /json to s. 0, or -1 with the reason in err. */
int gs_hello_add_routes(struct gs_server *s, char *err, size_t errlen);

#endif
