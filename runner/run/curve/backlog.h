/* backlog.h -- whether a point's queue grew through its measured seconds: the per-second
 * series the load wrote (series.csv) read for a corrected median latency that rose every
 * second, by more than noise.
 *
 * A rate a fraction e past a server's capacity adds e x T seconds of work over T measured
 * seconds, so a short point can meet p99 < 100 ms while its backlog grows: at T = 3 s the
 * criterion lets through e < 3.3 %, at the papers' 30 s e < 0.3 %. Such a point is not
 * judged otherwise -- the contract's criteria stay the verdict -- but the report says
 * "p99 under 100 ms but its queue grew" beside it. The rule: at least 3 whole seconds, the
 * median of each above the one before, the last at least twice the first and at least
 * KB_BACKLOG_RISE_US above it. A server below its knee answers from an empty queue: its
 * medians wander by fractions of a millisecond, never up every second by milliseconds. */
#ifndef KB_BACKLOG_H
#define KB_BACKLOG_H

#include <stddef.h>

#define KB_BACKLOG_RISE_US 5000.0

struct kb_backlog {
    int seconds;                 /* whole measured seconds read */
    double first_p50_us, last_p50_us;
    int grew;
};

/* The series' text (series.csv, header line first) for a measured interval of duration_s.
 * 0 with *b set; -1 when the text is not such a series. */
int kb_backlog_read(const char *csv, size_t len, double duration_s, struct kb_backlog *b);

/* The same from a file (regular, at most 1 MiB). 0, or -1 when it cannot be read. */
int kb_backlog_file(const char *path, double duration_s, struct kb_backlog *b);

#endif
