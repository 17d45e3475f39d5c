/* knee_report.h -- what a knee search found, as the user reads it: the headline ("knee
 * between A and B req/s (resolution 5 %, p99 < 100 ms, delivery >= 95 %), confirmed by 3
 * repeats"), report.md, report.csv, report.json and charts/knee.svg.
 *
 * Owns reading a knee run back -- knee.json (runner/run/knee/kneerun.h) and each sample's
 * verdict.json -- into one model, the headline and exit status it implies, and the writers.
 * Everything comes from the run directory alone, so `kneebench report DIR` writes it again
 * and says the same. Formats: docs/knee.md. */
#ifndef KB_KNEE_REPORT_H
#define KB_KNEE_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "runner/run/kneesearch.h"
#include "runner/run/knee/kneerun.h"

/* One sample's figures, from its verdict.json (NAN where it has none). */
struct kb_knee_fig {
    long rate;
    int sample, resumed, hold;   /* hold: a hold sample (runner/run/kneesearch.h) */
    const char *why, *dir;       /* knee.json's */
    const char *verdict, *server_verdict, *reason;
    double delivery, achieved_rps, p99_us, less_client_p99_us, client_delay_p99_us;
    int p99_is_bound;
    double cpu_us_per_response, rss_max_bytes, pss_max_bytes, fds_max;
    double server_steal_max, client_steal_max;
    int steal_could_decide;
    double conns_per_request;    /* under --reconnect, the connections each request needed */
};

struct kb_knee_doc {
    json_t *knee;                /* knee.json; every string below points into it */
    json_t *plan;                /* borrowed from knee */
    json_t *setup;               /* borrowed from knee, or NULL: the server found, the
                                    CPUs, the first requests' answer (runner/run/knee/kneeinit.h) */
    json_t **verdicts;           /* each sample's verdict.json (NULL where unreadable) */
    struct kb_knee_opts opts;
    const char *url, *expect;
    size_t n;                    /* samples */
    struct kb_knee_fig *f;
    struct kb_knee_row rows[KB_KNEE_MAX_SAMPLES];
    size_t nrows;
    int ended;                   /* knee.json has an outcome */
    const char *end, *step;      /* the outcome's ("" while the search runs) */
    long lo, hi;
    double elapsed_s;
    double hold_s;               /* the plan's hold sample length, 0: none */
};

/* dir's knee run read. 0, or -1 with err (no knee.json, or not a knee search's). */
int kb_knee_doc_load(const char *dir, struct kb_knee_doc *d, char *err, size_t errlen);
void kb_knee_doc_free(struct kb_knee_doc *d);

/* The first line, and the exit status it stands for: 0 located; 1 ended on a bound (the
 * rate limits, the client, --max-time), interrupted, or ended by an error. */
int kb_knee_headline(const struct kb_knee_doc *d, char *line, size_t len);

/* report.md, report.csv, report.json and charts/knee.svg into dir, each atomically. 0, or
 * -1 with err. */
int kb_knee_report_write(const char *dir, const struct kb_knee_doc *d, char *err,
                         size_t errlen);

/* The chart (knee_svg.c). */
void kb_knee_svg(FILE *f, const struct kb_knee_doc *d);

/* 1 when dir holds a knee search (knee.json), so `kneebench report` knows which report. */
int kb_knee_report_is_knee(const char *dir);

#endif
