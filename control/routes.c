/* routes.c -- pre-rendered responses. The Date header is rewritten in place (its length
 * never changes), so serving a request is one memcpy of ready bytes. */
#define _DEFAULT_SOURCE
#include "control/routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void format_date(char *out, time_t now)
{
    struct tm tm;
    char buf[64];
    gmtime_r(&now, &tm);
    strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    memcpy(out, buf, KBC_DATE_LEN);
}

static int render(struct kbc_response *r, const char *reason, time_t now)
{
    char date[KBC_DATE_LEN + 1] = { 0 };
    int head;
    format_date(date, now);
    head = snprintf(NULL, 0, "HTTP/1.1 %d %s\r\nServer: kb-control\r\nDate: %s\r\n"
                    "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                    r->status, reason, date, r->content_type, r->body_len);
    r->bytes = malloc((size_t)head + r->body_len + 1);
    if (!r->bytes)
        return -1;
    snprintf(r->bytes, (size_t)head + 1, "HTTP/1.1 %d %s\r\nServer: kb-control\r\nDate: %s\r\n"
             "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
             r->status, reason, date, r->content_type, r->body_len);
    memcpy(r->bytes + head, r->body, r->body_len);
    r->len = (size_t)head + r->body_len;
    r->date_off = (size_t)(strstr(r->bytes, "\r\nDate: ") - r->bytes) + 8;
    return 0;
}

static int make(struct kbc_response *r, const char *path, int status, const char *reason,
                const char *ct, const char *body, size_t body_len, time_t now)
{
    r->path = path ? strdup(path) : NULL;
    r->content_type = strdup(ct);
    r->body = malloc(body_len + 1);
    r->status = status;
    r->body_len = body_len;
    if (!r->content_type || !r->body || (path && !r->path))
        return -1;
    memcpy(r->body, body, body_len);
    return render(r, reason, now);
}

static void response_free(struct kbc_response *r)
{
    free(r->path);
    free(r->content_type);
    free(r->body);
    free(r->bytes);
    memset(r, 0, sizeof(*r));
}

int kbc_routes_init(struct kbc_routes *t, const struct kb_contract *c, char *err, size_t errlen)
{
    time_t now = time(NULL);
    memset(t, 0, sizeof(*t));
    t->second = now;
    for (size_t i = 0; i < c->nroutes; i++) {
        const struct kb_route *cr = &c->routes[i];
        if (!cr->body || strcmp(cr->method, "GET"))
            continue;
        if (t->n == KBC_MAX_ROUTES) {
            snprintf(err, errlen, "too many routes in the contract");
            goto fail;
        }
        if (make(&t->r[t->n++], cr->path, cr->status, "OK", cr->content_type, cr->body,
                 cr->body_len, now))
            goto nomem;
    }
    if (make(&t->not_found, NULL, 404, "Not Found", "text/plain", "Not Found", 9, now) ||
        make(&t->bad_request, NULL, 400, "Bad Request", "text/plain", "Bad Request", 11, now))
        goto nomem;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    kbc_routes_free(t);
    return -1;
}

void kbc_routes_free(struct kbc_routes *t)
{
    for (size_t i = 0; i < t->n; i++)
        response_free(&t->r[i]);
    response_free(&t->not_found);
    response_free(&t->bad_request);
    t->n = 0;
}

void kbc_routes_tick(struct kbc_routes *t, time_t now)
{
    char date[KBC_DATE_LEN];
    if (now == t->second)
        return;
    t->second = now;
    format_date(date, now);
    for (size_t i = 0; i < t->n; i++)
        memcpy(t->r[i].bytes + t->r[i].date_off, date, KBC_DATE_LEN);
    memcpy(t->not_found.bytes + t->not_found.date_off, date, KBC_DATE_LEN);
    memcpy(t->bad_request.bytes + t->bad_request.date_off, date, KBC_DATE_LEN);
}

const struct kbc_response *kbc_routes_find(const struct kbc_routes *t, const char *path, size_t len)
{
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->r[i].path) == len && !memcmp(t->r[i].path, path, len))
            return &t->r[i];
    return &t->not_found;
}
