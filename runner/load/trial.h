/* trial.h -- the first look at a user's target (`kneebench knee`, `kneebench load`): a few
 * requests, the target's own (runner/load/target.h: its bytes, its headers, its
 * expectation), sent one after another on a blocking client before any load, under one
 * deadline. It says what the server answers -- the status, the body's size, the Server
 * header, whether the connection was kept for the next request -- and whether that answer
 * is right, so that a 404, a wrong body or a closed port ends the command in a second
 * instead of a search of failed samples. Responses are read by the load generator's parser
 * (runner/load/http_resp.h), so the trial cannot pass what the load would count wrong, nor
 * fail what it would pass. Never prints. */
#ifndef KB_TRIAL_H
#define KB_TRIAL_H

#include <stddef.h>

#include "runner/load/target.h"

#define KB_TRIAL_REQUESTS 3
#define KB_TRIAL_DEADLINE_MS 4000     /* the whole trial: the command stops within 5 s */

enum kb_trial_rc {
    KB_TRIAL_OK = 0,          /* every request answered right */
    KB_TRIAL_REFUSED = 1,     /* no connection (refused, unreachable, timed out) */
    KB_TRIAL_WRONG = 2        /* connected, but a reply was not right, malformed or late */
};

struct kb_trial {
    int answered;             /* complete replies read */
    int status;               /* the last reply's (0: none) */
    long long body_bytes;     /* its body's size, de-chunked */
    char server[128];         /* its Server header ("" when it sent none) */
    char content_type[128];
    char body[160];           /* the body's start, for a reason */
    int kept;                 /* replies after which the connection carried the next request */
    int closed;               /* replies after which the server closed (Connection: close,
                                 HTTP/1.0, a body ended by the close) */
    double max_ms;            /* the slowest request, connect included */
};

/* Send up to KB_TRIAL_REQUESTS requests to t, stopping at the first wrong one. The outcome,
 * with *out filled as far as it got and, for REFUSED and WRONG, why in err. */
enum kb_trial_rc kb_trial_run(const struct kb_target *t, struct kb_trial *out, char *err,
                              size_t errlen);

/* One line of what the trial saw: "200, 13 bytes, Server: nginx/1.22.1, kept alive". */
void kb_trial_describe(const struct kb_trial *tr, char *buf, size_t len);

/* 1 when the server closed its connection after its replies (so the load reconnects). */
static inline int kb_trial_closes(const struct kb_trial *tr)
{
    return tr->closed > 0 && tr->kept == 0;
}

#endif
