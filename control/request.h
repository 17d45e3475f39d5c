/* request.h -- what kb-control reads of a request head: where it ends, the method and path,
 * whether it carries a body, whether the connection closes after it.
 *
 * Owns the head's framing for the control server: lines end in CR LF or a bare LF (RFC 9112
 * 2.2 lets a server take both), so the head ends at the first empty line either way; a
 * field line must be a token name, its colon, then the value (RFC 9112 5.1: whitespace
 * before the colon is a 400, never a header read as another one or ignored). A body is
 * refused (no route reads one): a Content-Length other than 0, which must be digits, or any
 * Transfer-Encoding. Pure: no I/O, no allocation. */
#ifndef KBC_REQUEST_H
#define KBC_REQUEST_H

#include <stddef.h>

struct kbc_request {
    size_t head_len;       /* bytes of the head, the empty line included */
    const char *path;      /* the target up to '?', inside the buffer */
    size_t path_len;
    int bad;               /* answer 400 and close */
    int close_after;       /* Connection: close, or HTTP/1.0 without keep-alive */
};

/* The head at buf[0..len): 1 with *r when it is complete, 0 while it is not. */
int kbc_request_parse(const char *buf, size_t len, struct kbc_request *r);

#endif
