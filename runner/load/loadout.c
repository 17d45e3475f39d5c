/* loadout.c -- JSON (jansson), .hgrm and the stdout summary of one `kneebench load` run. */
#define _GNU_SOURCE
#include "runner/load/loadout.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "runner/util/atomicfile.h"
#include "runner/util/schema.h"
#include "runner/load/loadgen.h"

double kb_loadout_achieved_rps(const struct kb_load_meta *m, const struct kb_load_result *r)
{
    return m->duration_s > 0 ? (double)r->c.window_completed / m->duration_s : 0;
}

/* Against the whole requests scheduled, not rate x duration: a schedule rounds that to
 * whole requests, and 1 of 1 answered is full delivery even at 0.5 req/s for 1 s. */
double kb_loadout_delivery(const struct kb_load_meta *m, const struct kb_load_result *r)
{
    if (r->c.scheduled > 0)
        return (double)r->c.window_completed / (double)r->c.scheduled;
    return m->requested_rps > 0 ? kb_loadout_achieved_rps(m, r) / m->requested_rps : 0;
}

double kb_loadout_delivery_less_client(const struct kb_load_result *r)
{
    return r->c.scheduled > 0 ? (double)r->c.window_completed_less_client / (double)r->c.scheduled
                              : 0;
}

double kb_loadout_cpu_fraction(const struct kb_load_meta *m, const struct kb_load_result *r)
{
    double cpus = m->client_cpus > 0 ? m->client_cpus : 1;
    double denom;
    if (m->client_cpu_quota > 0 && m->client_cpu_quota < cpus)
        cpus = m->client_cpu_quota;
    denom = r->interval_s * cpus;
    return denom > 0 ? r->cpu_seconds / denom : 0;
}

static const char *const fig_names[] = { "min", "mean", "p50", "p90", "p99", "p999", "max" };
#define NFIGS (sizeof(fig_names) / sizeof(fig_names[0]))

static void hist_figures(const struct kb_hist *h, double v[NFIGS])
{
    v[0] = (double)kb_hist_min(h);
    v[1] = kb_hist_mean(h);
    v[2] = (double)kb_hist_value_at_percentile(h, 50.0);
    v[3] = (double)kb_hist_value_at_percentile(h, 90.0);
    v[4] = (double)kb_hist_value_at_percentile(h, 99.0);
    v[5] = (double)kb_hist_value_at_percentile(h, 99.9);
    v[6] = (double)kb_hist_max(h);
}

/* An empty histogram has no figures: null, never a 0 that reads as "instant". */
static json_t *hist_json(const struct kb_hist *h)
{
    json_t *o = json_pack("{s:I}", "count", (json_int_t)h->total_count);
    double v[NFIGS];
    hist_figures(h, v);
    for (size_t k = 0; k < NFIGS; k++)
        json_object_set_new(o, fig_names[k], h->total_count == 0 ? json_null()
                            : k == 1 ? json_real(v[k]) : json_integer((json_int_t)v[k]));
    return o;
}

/* Corrected latency with its lower bounds (runner/load/loadgen.h): a figure at or above the
 * smallest bound may hide a larger true value, one below it is exact. The mean moves with
 * any bound. */
static json_t *bounded_json(const struct kb_hist *h, uint64_t n, int64_t bound_from_us)
{
    json_t *o = hist_json(h), *is = json_object();
    double v[NFIGS];
    hist_figures(h, v);
    for (size_t k = 0; k < NFIGS; k++)
        json_object_set_new(is, fig_names[k], json_boolean(n > 0 && (k == 1 || v[k] >= (double)bound_from_us)));
    json_object_set_new(o, "bounded", json_integer((json_int_t)n));
    json_object_set_new(o, "bound_from_us", n ? json_integer((json_int_t)bound_from_us) : json_null());
    json_object_set_new(o, "is_bound", is);
    return o;
}

static json_t *corrected_json(const struct kb_load_result *r)
{
    return bounded_json(&r->corrected, r->c.bounded, r->bound_from_us);
}

/* What a punctual client would have measured at most: the same requests, each less the
 * client's own delay in it (loadgen.h). */
static json_t *less_client_json(const struct kb_load_result *r)
{
    return bounded_json(&r->less_client, r->c.bounded, r->less_bound_from_us);
}

static json_t *errors_json(const struct kb_load_counts *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "total", json_integer((json_int_t)kb_load_errors_total(c)));
    for (int k = 0; k < KB_ERR_KINDS; k++)
        json_object_set_new(o, kb_err_kind_names[k], json_integer((json_int_t)c->errors[k]));
    return o;
}

static json_t *status_json(const struct kb_load_counts *c)
{
    json_t *o = json_object();
    char key[8];
    for (int s = 0; s < KB_LOAD_STATUS_MAX; s++)
        if (c->status[s]) {
            snprintf(key, sizeof(key), "%d", s);
            json_object_set_new(o, key, json_integer((json_int_t)c->status[s]));
        }
    if (c->status_other)
        json_object_set_new(o, "other", json_integer((json_int_t)c->status_other));
    return o;
}

json_t *kb_loadout_json(const struct kb_load_meta *m, const struct kb_load_result *r)
{
    const struct kb_load_counts *c = &r->c;
    uint64_t errs = kb_load_errors_total(c), ended = c->completed + errs;
    double achieved = kb_loadout_achieved_rps(m, r);
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(KB_SCHEMA_EVIDENCE));
    /* what readers before schema_version looked for */
    json_object_set_new(o, "kneebench_load", json_integer(1));
    json_object_set_new(o, "url", json_string(m->url));
    json_object_set_new(o, "route", m->route ? json_string(m->route) : json_null());
    if (m->expectation)
        json_object_set_new(o, "expect", json_string(m->expectation));
    json_object_set_new(o, "requested_rps", json_real(m->requested_rps));
    json_object_set_new(o, "threads_requested", json_integer(m->threads_requested));
    json_object_set_new(o, "threads", json_integer(m->threads));
    json_object_set_new(o, "connections", json_integer(m->connections));
    json_object_set_new(o, "warmup_s", json_real(m->warmup_s));
    json_object_set_new(o, "duration_s", json_real(m->duration_s));
    json_object_set_new(o, "drain_s", json_real(m->drain_s));
    json_object_set_new(o, "started_at", json_string(m->started_at));
    json_object_set_new(o, "scheduled", json_integer((json_int_t)c->scheduled));
    json_object_set_new(o, "sent", json_integer((json_int_t)c->sent));
    json_object_set_new(o, "completed", json_integer((json_int_t)c->completed));
    json_object_set_new(o, "completed_in_interval", json_integer((json_int_t)c->interval_completed));
    json_object_set_new(o, "completed_in_window", json_integer((json_int_t)c->window_completed));
    json_object_set_new(o, "timeouts", json_integer((json_int_t)c->errors[KB_ERR_TIMEOUT]));
    json_object_set_new(o, "unfinished_at_drain_end", json_integer((json_int_t)c->unfinished));
    json_object_set_new(o, "unfinished_client", json_integer((json_int_t)c->unfinished_client));
    json_object_set_new(o, "client_late_at_drain_end_us", json_integer((json_int_t)r->late_at_end_us));
    /* Computed, not assumed: non-zero here would mean a request was lost by the client. */
    json_object_set_new(o, "in_flight_at_end",
                        json_integer((json_int_t)(c->scheduled > ended ? c->scheduled - ended : 0)));
    json_object_set_new(o, "achieved_rps", json_real(achieved));
    json_object_set_new(o, "delivery", json_real(kb_loadout_delivery(m, r)));
    json_object_set_new(o, "errors", errors_json(c));
    json_object_set_new(o, "status", status_json(c));
    json_object_set_new(o, "non2xx", json_integer((json_int_t)c->non2xx));
    json_object_set_new(o, "mismatches", json_pack("{s:I, s:I, s:I, s:I, s:I}",
                        "total", (json_int_t)c->mm_total, "status", (json_int_t)c->mm_status,
                        "content_type", (json_int_t)c->mm_content_type, "body", (json_int_t)c->mm_body,
                        "header", (json_int_t)c->mm_header));
    json_object_set_new(o, "client_cpu_seconds", json_real(r->cpu_seconds));
    json_object_set_new(o, "client_cpus", json_integer(m->client_cpus));
    json_object_set_new(o, "client_cpu_quota",
                        m->client_cpu_quota > 0 ? json_real(m->client_cpu_quota) : json_null());
    json_object_set_new(o, "client_cpu_fraction", json_real(kb_loadout_cpu_fraction(m, r)));
    json_object_set_new(o, "client_sched", json_string(!m->rt_asked ? "other" :
                        r->rt_threads == m->threads ? "fifo" : "other (SCHED_FIFO refused)"));
    json_object_set_new(o, "timer", json_string(kb_load_timer_names[r->timer]));
    json_object_set_new(o, "dispatch", json_string(kb_load_dispatch_names[r->per_connection]));
    /* per-connection: how far apart the connections' schedules begin; "even" when spread */
    json_object_set_new(o, "stagger_ms", !r->per_connection ? json_null() :
                        r->stagger_ns < 0 ? json_string("even") :
                        json_real((double)r->stagger_ns / 1e6));
    json_object_set_new(o, "threads_unpinned", json_integer(r->unpinned_threads));
    json_object_set_new(o, "send_quantum_us", json_integer(m->send_quantum_us));
    json_object_set_new(o, "send_quantum_active", json_boolean(r->send_quantum_ns > 0));
    json_object_set_new(o, "client_cpu_us_per_request",
                        json_real(c->completed ? r->cpu_seconds * 1e6 / (double)c->completed : 0));
    json_object_set_new(o, "interval_s", json_real(r->interval_s));
    json_object_set_new(o, "interval_start_mono_s", json_real((double)r->interval_start / 1e9));
    json_object_set_new(o, "interval_end_mono_s", json_real((double)r->interval_end / 1e9));
    json_object_set_new(o, "corrected_us", corrected_json(r));
    json_object_set_new(o, "uncorrected_us", hist_json(&r->uncorrected));
    json_object_set_new(o, "lag_us", hist_json(&r->lag));
    json_object_set_new(o, "conn_wait_us", hist_json(&r->conn_wait));
    json_object_set_new(o, "rx_delay_us", hist_json(&r->rx_delay));
    json_object_set_new(o, "client_delay_us", hist_json(&r->client_delay));
    json_object_set_new(o, "corrected_less_client_us", less_client_json(r));
    json_object_set_new(o, "completed_in_window_less_client",
                        json_integer((json_int_t)c->window_completed_less_client));
    json_object_set_new(o, "delivery_less_client", json_real(kb_loadout_delivery_less_client(r)));
    json_object_set_new(o, "client_dropped", json_integer((json_int_t)c->client_dropped));
    json_object_set_new(o, "queue_refused", json_integer((json_int_t)c->queue_refused));
    json_object_set_new(o, "reconnects", json_integer((json_int_t)c->reconnects));
    json_object_set_new(o, "unsolicited", json_integer((json_int_t)c->unsolicited));
    json_object_set_new(o, "keepalive_breaks", json_integer((json_int_t)c->keepalive_breaks));
    json_object_set_new(o, "reconnect", json_boolean(r->reconnect));
    json_object_set_new(o, "server_closes", json_integer((json_int_t)c->server_closes));
    json_object_set_new(o, "fresh_connection_requests",
                        json_integer((json_int_t)c->fresh_conn_sends));
    json_object_set_new(o, "connections_per_request", kb_loadout_conns_per_request(r) >= 0 ?
                        json_real(kb_loadout_conns_per_request(r)) : json_null());
    json_object_set_new(o, "connect_failures", json_integer((json_int_t)c->connect_failures));
    json_object_set_new(o, "first_error", r->first_error[0] ? json_string(r->first_error) : json_null());
    json_object_set_new(o, "requests_log", m->requests_log ? json_string(m->requests_log) : json_null());
    json_object_set_new(o, "requests_log_max", m->requests_log ? json_integer((json_int_t)m->requests_log_max) : json_null());
    json_object_set_new(o, "requests_logged", json_integer((json_int_t)r->requests_n));
    json_object_set_new(o, "requests_log_truncated", json_boolean(r->requests_truncated));
    return o;
}

int kb_loadout_write_json(const char *path, const struct kb_load_meta *m,
                          const struct kb_load_result *r, char *err, size_t errlen)
{
    json_t *o = kb_loadout_json(m, r);
    int rc = kb_afile_write_json(path, o, err, errlen);
    json_decref(o);
    return rc;
}

/* Times in whole microseconds from the measured interval's start; the latency column is
 * received - intended of the two printed values, so a reader can check every line. */
static int request_line(FILE *f, const struct kb_load_req_record *q)
{
    long long in = (long long)(q->intended / 1000), rx = (long long)(q->received / 1000);
    char sent[24] = "-", recv[24] = "-", status[12] = "-", lat[24] = "-";
    if (q->sent >= 0)
        snprintf(sent, sizeof(sent), "%lld", (long long)(q->sent / 1000));
    if (q->received >= 0) {
        snprintf(recv, sizeof(recv), "%lld", rx);
        snprintf(lat, sizeof(lat), "%lld", rx - in);
    }
    if (q->status > 0)
        snprintf(status, sizeof(status), "%d", (int)q->status);
    return fprintf(f, "%lld %s %s %s %s %s\n", in, sent, recv, status, lat,
                   q->err >= 0 && q->err < KB_ERR_KINDS ? kb_err_kind_names[q->err] : "-") < 0;
}

static int put_requests(FILE *f, const void *arg)
{
    const struct kb_load_result *r = arg;
    int failed;
    /* A large stdio buffer: the file is written once, after the run, in big blocks. */
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    failed = fprintf(f, "# kneebench requests log: us from the measured interval's start; "
                        "%llu records%s\n# intended_us sent_us received_us status latency_us error\n",
                     (unsigned long long)r->requests_n,
                     r->requests_truncated ? ", TRUNCATED at --requests-log-max" : "") < 0;
    for (uint64_t k = 0; k < r->requests_n && !failed; k++)
        failed = request_line(f, &r->requests[k]);
    return failed ? -1 : 0;
}

int kb_loadout_write_requests(const char *path, const struct kb_load_result *r, char *err, size_t errlen)
{
    return kb_afile_write_with(path, put_requests, r, err, errlen);
}

/* Milliseconds (the us histogram at value scale 1000, 3 decimals: nothing lost), 5 ticks per
 * half distance: what wrk2 and HistogramLogProcessor print, so their .hgrm files read side by
 * side with ours. The first line names the unit: the format itself has no place for it, and
 * files from before it held microseconds without saying so. */
static int put_hgrm(FILE *f, const void *arg)
{
    return fprintf(f, "%s\n", KB_LOADOUT_HGRM_UNIT_LINE) < 0 ||
           kb_hist_print_hgrm(arg, f, 5, 1000.0) != 0 ? -1 : 0;
}

int kb_loadout_write_hgrm(const char *path, const struct kb_hist *h, char *err, size_t errlen)
{
    return kb_afile_write_with(path, put_hgrm, h, err, errlen);
}

void kb_loadout_spectrum(FILE *f, const struct kb_load_meta *m, const struct kb_load_result *r)
{
    static const double pct[] = { 50, 75, 90, 99, 99.9, 99.99, 99.999, 100 };
    const struct kb_hist *h = &r->corrected;
    fprintf(f, "  Latency Distribution (HdrHistogram - corrected, from each intended send time)\n");
    for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
        double us = pct[k] >= 100 ? (double)kb_hist_max(h)
                                  : (double)kb_hist_value_at_percentile(h, pct[k]);
        if (h->total_count == 0)
            fprintf(f, "%7.3f%%       -\n", pct[k]);
        else
            fprintf(f, "%7.3f%% %8.2fms%s\n", pct[k], us / 1000, r->c.bounded &&
                    us >= (double)r->bound_from_us ? " (a lower bound)" : "");
    }
    fprintf(f, "\n  Detailed Percentile spectrum (ms):\n");
    kb_hist_print_hgrm(h, f, 5, 1000.0);
    fprintf(f, "\nRequests/sec: %10.2f\n", kb_loadout_achieved_rps(m, r));
}

/* A figure at or above bound_from is a lower bound and printed as ">=N"; none: "-". */
static void hist_line(FILE *f, const char *name, const struct kb_hist *h, int64_t bound_from)
{
    double v[NFIGS];
    int idx[] = { 2, 3, 4, 5, 6 };
    fprintf(f, "  %-12s", name);
    hist_figures(h, v);
    for (size_t k = 0; k < sizeof(idx) / sizeof(idx[0]); k++) {
        char cell[32];
        if (h->total_count == 0)
            snprintf(cell, sizeof(cell), "-");
        else
            snprintf(cell, sizeof(cell), "%s%lld", v[idx[k]] >= (double)bound_from ? ">=" : "",
                     (long long)v[idx[k]]);
        fprintf(f, " %9s", cell);
    }
    fprintf(f, " %10lld\n", (long long)h->total_count);
}

double kb_loadout_conns_per_request(const struct kb_load_result *r)
{
    return r->c.sent ? (double)r->c.fresh_conn_sends / (double)r->c.sent : -1;
}

void kb_loadout_summary(FILE *f, const struct kb_load_meta *m, const struct kb_load_result *r)
{
    const struct kb_load_counts *c = &r->c;
    double achieved = kb_loadout_achieved_rps(m, r);
    fprintf(f, "kneebench load %s (%s%s): %d thread%s, %d connection%s, %gs warmup, %gs measured, %gs drain\n",
            m->url, m->route ? "route " : "expecting ",
            m->route ? m->route : m->expectation ? m->expectation : "?", m->threads,
            m->threads == 1 ? "" : "s", m->connections, m->connections == 1 ? "" : "s",
            m->warmup_s, m->duration_s, m->drain_s);
    if (m->threads != m->threads_requested)
        fprintf(f, "  %d thread%s asked, %d run: one per client CPU (--exact-threads to override)\n",
                m->threads_requested, m->threads_requested == 1 ? "" : "s", m->threads);
    fprintf(f, "  rate: requested %.0f/s, achieved %.1f/s, delivery %.4f\n", m->requested_rps,
            achieved, kb_loadout_delivery(m, r));
    fprintf(f, "  requests: scheduled %llu, sent %llu, completed %llu, errors %llu, non-2xx %llu, mismatches %llu\n",
            (unsigned long long)c->scheduled, (unsigned long long)c->sent, (unsigned long long)c->completed,
            (unsigned long long)kb_load_errors_total(c), (unsigned long long)c->non2xx,
            (unsigned long long)c->mm_total);
    fprintf(f, "  errors:");
    for (int k = 0; k < KB_ERR_KINDS; k++)
        fprintf(f, " %s %llu", kb_err_kind_names[k], (unsigned long long)c->errors[k]);
    fprintf(f, "; reconnects %llu", (unsigned long long)c->reconnects);
    if (r->reconnect && c->server_closes)
        fprintf(f, " (the server closed %llu times; %.2f connections per request)",
                (unsigned long long)c->server_closes, kb_loadout_conns_per_request(r));
    if (c->unsolicited || c->keepalive_breaks)
        fprintf(f, "; PROTOCOL: unsolicited %llu, keep-alive broken %llu",
                (unsigned long long)c->unsolicited, (unsigned long long)c->keepalive_breaks);
    fputc('\n', f);
    fprintf(f, "  latency (us)     p50       p90       p99     p99.9       max      count\n");
    hist_line(f, "corrected", &r->corrected, r->c.bounded ? r->bound_from_us : INT64_MAX);
    hist_line(f, "uncorrected", &r->uncorrected, INT64_MAX);
    hist_line(f, "send lag", &r->lag, INT64_MAX);
    hist_line(f, "rx delay", &r->rx_delay, INT64_MAX);
    hist_line(f, "conn wait", &r->conn_wait, INT64_MAX);
    hist_line(f, "client own", &r->client_delay, INT64_MAX);
    hist_line(f, "less client", &r->less_client, r->c.bounded ? r->less_bound_from_us : INT64_MAX);
    if (c->bounded)
        fprintf(f, "  %llu unanswered requests are in corrected at their lower bound (>= %lld us)\n",
                (unsigned long long)c->bounded, (long long)r->bound_from_us);
    fprintf(f, "  client: %.3f CPU s over %.2f s on %d CPU(s)", r->cpu_seconds, r->interval_s, m->client_cpus);
    if (m->client_cpu_quota > 0)
        fprintf(f, " (cgroup quota %.2f CPU)", m->client_cpu_quota);
    fprintf(f, " = %.1f %%, %.2f us CPU per request\n", 100.0 * kb_loadout_cpu_fraction(m, r),
            c->completed ? r->cpu_seconds * 1e6 / (double)c->completed : 0.0);
    if (r->send_quantum_ns > 0)
        fprintf(f, "  sends grouped on a %lld us grid (--send-quantum-us): send lag includes up to that wait\n",
                (long long)(r->send_quantum_ns / 1000));
    if (r->first_error[0])
        fprintf(f, "  first error: %s\n", r->first_error);
}
