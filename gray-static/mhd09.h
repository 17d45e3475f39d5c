/* mhd09.h -- one answer where libmicrohttpd before 1.0.0 sends its own head twice.
 *
 * MHD 0.9.x refuses a head its own parser cannot take (a Content-Length that is no number, or
 * one past 64 bits) before the request reaches the server, and sends its status line and
 * headers twice: the error path builds the head into the write buffer, then the connection's
 * state machine goes on to its reply state and builds it again (fixed in 1.0.0, upstream
 * commit f1bfbe71). The one thing the server has between the refusal and that send is the
 * error logger, which MHD calls just before it builds the head. This module owns what happens
 * there: which log messages announce such a refusal, and the answer the server writes itself
 * before shutting the socket's sending side, so that MHD's doubled head fails to send and MHD
 * closes the connection. With MHD 1.0 and later none of it is compiled in. */
#ifndef GS_MHD09_H
#define GS_MHD09_H

#include <stddef.h>
#include <microhttpd.h>

#define GS_MHD09_DOUBLES_ITS_ERRORS (MHD_VERSION < 0x01000000)

/* 1 when MHD logs fmt just before answering a head it refused twice, else 0. */
int gs_mhd09_is_refusal(const char *fmt);

/* The server's answer to such a head, framed as its own refusals are: 400 (Go and nginx
 * answer both Content-Length refusals so), Connection: close, Content-Type: text/plain, Date,
 * Server, Content-Length, body. Its length in buf, or 0 when it does not fit. */
size_t gs_mhd09_answer(char *buf, size_t size, const char *date, const char *server,
                       const char *body);

/* Writes that answer on fd without blocking, then shuts fd's sending side. */
void gs_mhd09_answer_once(int fd, const char *date, const char *server, const char *body);

#endif
