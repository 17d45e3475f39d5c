/* mhd09.c -- see mhd09.h. */
#include "gray-static/mhd09.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* MHD 0.9.75's own words (connection.c, parse_connection_headers), never translated (its _()
 * is the identity). Should a release reword them, MHD's double answer comes back, nothing
 * worse, and the conformance suite's answered_once cases say so. */
static const char *const refusals[] = {
    "Failed to parse `Content-Length' header",
    "Too large value of 'Content-Length' header",
};

int gs_mhd09_is_refusal(const char *fmt)
{
    for (size_t i = 0; fmt && i < sizeof(refusals) / sizeof(refusals[0]); i++)
        if (strstr(fmt, refusals[i]))
            return 1;
    return 0;
}

size_t gs_mhd09_answer(char *buf, size_t size, const char *date, const char *server,
                       const char *body)
{
    int n = snprintf(buf, size,
                     "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
                     "Content-Type: text/plain\r\nDate: %s\r\nServer: %s\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     date, server, strlen(body), body);

    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

void gs_mhd09_answer_once(int fd, const char *date, const char *server, const char *body)
{
    char buf[256];
    size_t n = gs_mhd09_answer(buf, sizeof(buf), date, server, body);

    /* Nothing was sent for this request, so the socket's buffer takes the 200 bytes at once;
     * a peer whose window is shut loses our answer, as it would have lost MHD's. */
    if (n)
        (void)send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
}
