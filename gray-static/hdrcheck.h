/* hdrcheck.h -- request-header checks that libmicrohttpd 0.9.75 leaves to the application.
 *
 * RFC 9112 5.1 and RFC 9110 5.5 require a 400 for whitespace between a field name and its
 * colon and for a NUL inside a field value; 0.9.75 passes both through (it keeps "X-Name "
 * as the name, and cuts the value at the NUL). The server asks gs_headers_ok() once per
 * request, on the handler's first call, and answers 400 when it says no. */
#ifndef GS_HDRCHECK_H
#define GS_HDRCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* 1 when name[0..len) is a non-empty RFC 9110 token (the only legal field name). */
int gs_field_name_ok(const char *name, size_t len);
/* 1 when every request header of c has a token name and (on 0.9.75) no NUL in its value.
 * pool is the connection memory limit the daemon was started with. */
int gs_headers_ok(struct MHD_Connection *c, size_t pool);

#endif
