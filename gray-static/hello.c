/* hello.c -- /plaintext shares one static body; /json serialises a fresh jansson value per
 * request, as the contract demands (no cached string). */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/hello.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char hello_text[] = "Hello, World!";

char *gs_hello_json(size_t *len)
{
    json_t *o = json_object();
    char *s = NULL;

    if (o && json_object_set_new(o, "message", json_string(hello_text)) == 0)
        s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (s)
        *len = strlen(s);
    return s;
}

static enum MHD_Result plaintext(struct gs_request *req)
{
    return gs_respond(req, 200, "text/plain", hello_text, sizeof(hello_text) - 1, GS_BODY_STATIC);
}

static enum MHD_Result json(struct gs_request *req)
{
    size_t len = 0;
    char *body = gs_hello_json(&len);

    if (!body)
        return MHD_NO;
    /* jansson allocates with malloc (no json_set_alloc_funcs here), so MHD may free() it. */
    return gs_respond(req, 200, "application/json", body, len, GS_BODY_FREE);
}

int gs_hello_add_routes(struct gs_server *s, char *err, size_t errlen)
{
    static const struct gs_route routes[] = {
        { "GET", "/plaintext", plaintext, NULL, 0 },
        { "GET", "/json", json, NULL, 0 },
    };

    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (gs_server_add_route(s, &routes[i], err, errlen) < 0)
            return -1;
    return 0;
}
