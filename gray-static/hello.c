/* hello.c -- /plaintext shares one static body; /json serialises a fresh jansson value per
 * request, as the contract demands (no cached string).
 *
 * Cost (gray-static/PERF.md): the value is built per request with the _nocheck setters (its
 * key and string are ASCII literals here, so jansson's UTF-8 scan of them proves nothing) and
 * written with json_dumpb into the handler's stack buffer, which MHD copies into the response
 * it owns (GS_BODY_COPY): one allocation where json_dumps took a growing buffer, its
 * duplicate, a strlen and two frees. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/hello.h"

#include <jansson.h>

static const char hello_text[] = "Hello, World!";

size_t gs_hello_json(char *buf, size_t size)
{
    json_t *o = json_object();
    size_t n = 0;

    if (o && json_object_set_new_nocheck(o, "message", json_string_nocheck(hello_text)) == 0)
        n = json_dumpb(o, buf, size, JSON_COMPACT);
    json_decref(o);
    return n;
}

static enum MHD_Result plaintext(struct gs_request *req)
{
    return gs_respond(req, 200, "text/plain", hello_text, sizeof(hello_text) - 1, GS_BODY_STATIC);
}

static enum MHD_Result json(struct gs_request *req)
{
    char body[GS_HELLO_JSON_MAX];
    size_t len = gs_hello_json(body, sizeof(body));

    if (!len || len > sizeof(body))
        return MHD_NO;
    return gs_respond(req, 200, "application/json", body, len, GS_BODY_COPY);
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
