/* hello.h -- the contract's two static routes, GET /plaintext and GET /json
 * (contract/contract.json holds their exact bytes; the unit tests compare against it). */
#ifndef GS_HELLO_H
#define GS_HELLO_H

#include "gray-static/server.h"

#include <stddef.h>

/* Room for the JSON body; a body that needs more is an error, never cut. */
#define GS_HELLO_JSON_MAX 64

/* The JSON body {"message":"Hello, World!"}, built as a jansson value and serialised
 * compactly into buf on every call. Its length (more than size: it did not fit, buf holds
 * part of it), or 0 when out of memory. Not NUL-terminated. */
size_t gs_hello_json(char *buf, size_t size);
/* Add /plaintext and /json to s. 0, or -1 with the reason in err. */
int gs_hello_add_routes(struct gs_server *s, char *err, size_t errlen);

#endif
