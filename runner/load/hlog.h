/* hlog.h -- a point's time series: an HdrHistogram interval log (.hlog) and a per-second CSV
 * (achieved rate, corrected p50/p99/max, errors, which figures are lower bounds).
 *
 * The .hlog is what HdrHistogram's own tools read: hdr_log_write_entry's header and
 * "Tag=...,start,length,max,payload" lines, each payload the V2 compressed encoding of
 * hdr_encode_compressed (cookie 0x1c849313, zigzag LEB128 counts, zero runs negative, zlib,
 * cookie 0x1c849314, base64). Values are nanoseconds and the max column milliseconds, as
 * HdrHistogram's Java writer does, so HistogramLogProcessor prints ms with no flags; the
 * KB_HLOG_UNIT_LINE header says so, and a kneebench log without it holds microseconds. The
 * CSV keeps microseconds, as every other file of a point. Written atomically; never prints. */
#ifndef KB_HLOG_H
#define KB_HLOG_H

#include <stddef.h>
#include <stdint.h>

#include "runner/load/hist.h"

/* The header line that names the log's unit (hlog.h's header says why it is needed). */
#define KB_HLOG_UNIT_LINE "#[Value unit: nanoseconds; Interval_Max in milliseconds]"
/* The series' histograms' range: 1 ns to one hour, like the load's 1 us to one hour. */
#define KB_HLOG_HIGHEST_NS 3600000000000LL

/* The base64 text of h's V2 compressed encoding (h's values as they are; the series passes
 * nanoseconds). Returns a malloc'd NUL-terminated string
 * the caller frees, or NULL with the reason in err. */
char *kb_hlog_encode(const struct kb_hist *h, char *err, size_t errlen);

/* One interval's figures as the CSV carries them (filled by kb_hlog_series_add). */
struct kb_hlog_row {
    double start_s;        /* seconds since the series' base time */
    double length_s;
    int64_t completed;     /* responses recorded in the interval's histogram */
    int64_t errors;
    double achieved_rps;   /* completed / length_s */
    int64_t p50_us, p99_us, max_us;   /* the histogram's nanosecond figures, whole us */
    /* Unanswered requests recorded at a lower bound in this interval (runner/load/loadgen.h):
     * they are in the histogram but not in completed; a figure at or above the smallest of
     * them (bound_from_us, INT64_MAX when none) is only a lower bound, judged in ns. */
    int64_t bounded, bound_from_us;
    int p50_is_bound, p99_is_bound, max_is_bound;
};

struct kb_hlog_series;     /* opaque: a tag, a base time and the intervals added so far */

/* A series whose lines carry tag (NULL or "" = untagged) and whose interval start times
 * are relative to base_epoch_s (wall-clock seconds since the epoch at the series' start).
 * NULL on no memory. Free with kb_hlog_series_free. */
struct kb_hlog_series *kb_hlog_series_new(const char *tag, double base_epoch_s);
void kb_hlog_series_free(struct kb_hlog_series *s);

/* Encode h (values in nanoseconds) now (the caller may reset it right after) as the interval
 * [start_s, start_s + length_s) with errors counted in it. 0, or -1 with err. */
int kb_hlog_series_add(struct kb_hlog_series *s, double start_s, double length_s,
                       const struct kb_hist *h, int64_t errors, char *err, size_t errlen);
/* The same with `bounded` of h's values lower bounds, the smallest of them bound_from_ns. */
int kb_hlog_series_add_bounded(struct kb_hlog_series *s, double start_s, double length_s,
                               const struct kb_hist *h, int64_t errors, int64_t bounded,
                               int64_t bound_from_ns, char *err, size_t errlen);

size_t kb_hlog_series_len(const struct kb_hlog_series *s);
/* The i-th interval's figures; NULL when i is out of range. Owned by the series. */
const struct kb_hlog_row *kb_hlog_series_row(const struct kb_hlog_series *s, size_t i);

/* Write the .hlog to hlog_path and the CSV to csv_path (either may be NULL), each through
 * a temporary file renamed into place. 0, or -1 with err. */
int kb_hlog_series_write(const struct kb_hlog_series *s, const char *hlog_path,
                         const char *csv_path, char *err, size_t errlen);

/* ---- collecting a series from several threads ----
 *
 * A load thread records into its own kb_hlog_recorder (no locking on its path); at each
 * interval boundary the recorder hands its interval histogram to the shared collector,
 * which merges it under a lock into that interval's histogram and encodes the interval as
 * soon as every thread has handed it over, so only the few intervals in flight are held.
 * Intervals are counted from the recorder's start (the measured interval's start) by the
 * time each response completes, so a queue forming shows as latency rising over time. */
struct kb_hlog_collector;  /* opaque, thread-safe */

/* nthreads recorders will report; intervals are interval_s long; histograms use the
 * layout (1, highest_ns, sigfigs) of the recorders' (KB_HLOG_HIGHEST_NS, 3 as the load's).
 * NULL on bad arguments or no memory. */
struct kb_hlog_collector *kb_hlog_collector_new(const char *tag, double base_epoch_s,
                                                double interval_s, int nthreads,
                                                int64_t highest_ns, int sigfigs);

/* Encodes whatever is still pending (intervals some thread never reached), in order, and
 * hands back the series: the caller owns it (kb_hlog_series_free) and frees the collector
 * with kb_hlog_collector_free. NULL with err when an encoding failed. Call once, after every
 * recorder finished. */
struct kb_hlog_series *kb_hlog_collector_finish(struct kb_hlog_collector *c, char *err,
                                                size_t errlen);
void kb_hlog_collector_free(struct kb_hlog_collector *c);

/* finish + kb_hlog_series_write + free the series: what a command does at the end of a run.
 * 0, or -1 with err. The collector is still the caller's to free. */
int kb_hlog_collector_write(struct kb_hlog_collector *c, const char *hlog_path,
                            const char *csv_path, char *err, size_t errlen);

/* Wall-clock seconds since the epoch now (a series' base time). */
double kb_hlog_epoch_now(void);

struct kb_hlog_recorder {      /* one per thread; its fields are the module's business */
    struct kb_hlog_collector *col;
    struct kb_hist h;
    int64_t errors;
    int64_t bounded, bound_from_ns;   /* lower bounds recorded in the current interval */
    uint64_t index;            /* current interval */
    uint64_t start_ns, interval_ns, next_ns;
};

/* 0, or -1 when no memory. start_ns: the thread's clock reading where interval 0 begins. */
int kb_hlog_recorder_init(struct kb_hlog_recorder *r, struct kb_hlog_collector *col,
                          uint64_t start_ns);
/* A response completing at now_ns with latency value_ns. */
void kb_hlog_recorder_value(struct kb_hlog_recorder *r, int64_t value_ns, uint64_t now_ns);
/* A request failing at now_ns. */
void kb_hlog_recorder_error(struct kb_hlog_recorder *r, uint64_t now_ns);
/* A request given up at now_ns (an error) whose latency is at least value_ns: recorded in
 * the histogram as a lower bound. */
void kb_hlog_recorder_bound(struct kb_hlog_recorder *r, int64_t value_ns, uint64_t now_ns);
/* Hands over every interval up to now_ns (the last one partial) and frees the recorder. */
void kb_hlog_recorder_finish(struct kb_hlog_recorder *r, uint64_t now_ns);

#endif
