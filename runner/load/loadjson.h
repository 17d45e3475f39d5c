/* loadjson.h -- the one reader of load.json, the document `kneebench load --json` writes
 * (runner/load/loadout.h writes it; runner/README-load.md documents every field).
 *
 * Owns struct kb_point_load, the figures the runner judges a point or a calibration rung
 * by, and the two ways to fill it: from a parsed jansson value (kb_point_load_parse, for a
 * caller that already holds the document) and from the file (kb_point_load_read, which
 * names the file in every error). The curve, the soak and calibrate read load.json only
 * through here, so a field means the same thing to all of them.
 *
 * Fields a load.json of an older writer lacks read as documented below (absent is never a
 * silent 0 where 0 would pass a criterion); every other field is required, and the error
 * names the first one missing or mistyped. */
#ifndef KB_LOADJSON_H
#define KB_LOADJSON_H

#include <jansson.h>
#include <stddef.h>

struct kb_latency {
    double count, min, mean, p50, p90, p99, p999, max;   /* microseconds; NAN when count is 0 */
};

/* One point's load.json as parsed (loadgen.h's struct kb_load_result is the in-process
 * result before it is written out; this is what the runner reads back). */
struct kb_point_load {
    double requested_rps, achieved_rps, delivery;
    long long scheduled, sent, completed, timeouts;
    long long unfinished;      /* of err_timeout: queued or in flight when the drain ended */
    long long errors_total, err_connect, err_read, err_write, err_timeout, err_peer_close,
        err_malformed;
    long long non2xx, mismatches, mm_status, mm_content_type, mm_body;
    long long mm_header;       /* a required header absent or other (0 when absent) */
    double client_cpu_seconds, client_cpu_fraction;
    int client_cpus;
    long long completed_in_interval;   /* -1 when the JSON predates it */
    long long completed_in_window;     /* responses that ended inside the measured interval
                                          (achieved_rps's count); -1 when absent */
    double interval_start_mono_s, interval_end_mono_s;   /* the measured interval on the
                                          runner's monotonic clock (kb_fixture_now_s()); NAN
                                          when absent */
    long long unsolicited, keepalive_breaks;   /* protocol breaches (0 when absent) */
    long long bounded;         /* requests in corrected at a lower bound (0 when absent) */
    int corrected_p99_is_bound;   /* the p99 is only a lower bound */
    struct kb_latency corrected, uncorrected, lag;
    struct kb_latency rx_delay;   /* p99 < 0 when the JSON predates it */
    int threads, threads_requested;   /* 0 and threads when absent */
    /* The client's own delay (loadgen.h): has_less_client is 0 for a load.json that predates
     * it, and the rest then reads 0 / NAN. */
    int has_less_client;
    struct kb_latency client_delay, less_client;   /* corrected less the client's own delay */
    int less_client_p99_is_bound;
    double delivery_less_client;
    long long client_dropped;         /* requests the client itself lost */
    long long in_flight_at_end;       /* scheduled but neither completed nor failed: lost */
    long long unfinished_client;      /* of unfinished: left by a client that was not running
                                         when the drain ended (0 when absent) */
    double client_late_at_end_us;     /* how late it ended the drain then (0 when absent) */
    char first_error[256];
};

/* 0, or -1 with err naming the missing/mistyped field ("load JSON: errors.total is missing
 * or not a number"), or a schema_version newer than this reader knows (runner/util/schema.h;
 * a file without one is version 0, read as before). */
int kb_point_load_parse(json_t *load, struct kb_point_load *out, char *err, size_t errlen);

/* Reads and parses the file at path. 0, or -1 with err naming path and what is wrong: it
 * cannot be read, it is not JSON (with jansson's line and column), or a field is missing.
 * raw: NULL, or gets the parsed document whenever it is JSON at all -- even when a field is
 * missing, so that evidence keeps what the load generator wrote -- for the caller to
 * json_decref (NULL when the file is absent or not JSON). */
int kb_point_load_read(const char *path, struct kb_point_load *out, json_t **raw, char *err,
                       size_t errlen);

/* Socket errors in the protocol's sense ("Point verdicts"): errors.total without the
 * requests that were only still unanswered when the drain ended (those are an overloaded
 * server's queue, judged apart). */
long long kb_point_load_socket_errors(const struct kb_point_load *r);

/* Of the scheduled requests, the fraction answered within the measured interval (responses
 * that came only during the drain are left out); achieved / requested for a load.json that
 * predates completed_in_interval. 0 when nothing was scheduled. */
double kb_point_load_in_time(const struct kb_point_load *r);

#endif
