/* test_rejudge.c -- a point's whole judgement (runner/run/judgement.h) and the report's
 * re-derivation of it from a run's files (report_rejudge.c): the composition of server
 * verdict, client trust and calibration margin; verdict.json's record read back; a run whose
 * stored verdicts follow from its load.json files; re-judging under a tighter p99 changing
 * exactly the points past it; a tampered verdict, server verdict or load copy named; a
 * verdict.json without the record of its judgement, and hand-made evidence, left as written
 * (and refused for re-judging), never re-derived from a guess. */
#define _GNU_SOURCE
#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/run/judgement.h"
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "tests/lib/kb_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct kb_criteria crit = { .min_delivery = 0.95, .max_p99_us = 100000,
                                         .client_cpu_max_fraction = 0.80,
                                         .client_lag_p99_max_us = 1000,
                                         .client_rx_delay_p99_max_us = 1000 };

static json_t *hist(double p99)
{
    return json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "count", 1000, "min", 10.0, "mean",
                     p99 / 3, "p50", p99 / 4, "p90", p99 / 2, "p99", p99, "p999", p99 * 1.1,
                     "max", p99 * 1.2);
}

/* load.json as the load generator writes it (the fields kb_point_load_parse reads). */
static json_t *load_json(double rate, double delivery, double p99_us, double lag_p99_us)
{
    return json_pack("{s:f,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:i,"
                     "s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I},s:o,s:o,s:o,s:o}",
        "requested_rps", rate, "achieved_rps", rate * delivery, "delivery", delivery,
        "scheduled", (json_int_t)rate, "sent", (json_int_t)rate, "completed", (json_int_t)rate,
        "timeouts", (json_int_t)0, "unfinished_at_drain_end", (json_int_t)0,
        "non2xx", (json_int_t)0, "client_cpu_seconds", 0.1, "client_cpu_fraction", 0.1,
        "client_cpus", 1,
        "errors", "total", (json_int_t)0, "connect", (json_int_t)0, "read", (json_int_t)0,
        "write", (json_int_t)0, "timeout", (json_int_t)0, "peer_close", (json_int_t)0,
        "malformed", (json_int_t)0,
        "mismatches", "total", (json_int_t)0, "status", (json_int_t)0, "content_type",
        (json_int_t)0, "body", (json_int_t)0,
        "corrected_us", hist(p99_us), "uncorrected_us", hist(p99_us / 2), "lag_us",
        hist(lag_p99_us), "rx_delay_us", hist(50));
}

/* ---- the judgement ------------------------------------------------------------------- */

static struct kb_point_load parsed(double rate, double delivery, double p99, double lag)
{
    struct kb_point_load r;
    char err[256];
    json_t *j = load_json(rate, delivery, p99, lag);
    ck_assert_msg(kb_point_load_parse(j, &r, err, sizeof(err)) == 0, "%s", err);
    json_decref(j);
    return r;
}

START_TEST(judgement_composes)
{
    struct kb_point_obs o = { .have_load = 1 };
    struct kb_point_load r = parsed(1000, 1.0, 5000, 100);
    struct kb_calibrate_result cal = { .factor = 1.25, .margin_rps = 1250 * 1.5 };
    struct kb_calibrate_result cal2500 = { .factor = 1.25, .margin_rps = 2500 };
    struct kb_judgement j;
    kb_judge_point(&r, &o, &crit, NULL, KB_MARGIN_UNUSED, 1000, &j);
    ck_assert_int_eq(j.verdict, KB_CONTROLLED);
    ck_assert_int_eq(j.server, KB_CONTROLLED);
    ck_assert(j.trusted);
    /* a late client: client-limited, the server's own verdict kept beside it */
    r = parsed(1000, 1.0, 5000, 3000);
    kb_judge_point(&r, &o, &crit, NULL, KB_MARGIN_UNUSED, 1000, &j);
    ck_assert_int_eq(j.verdict, KB_CLIENT_LIMITED);
    ck_assert_int_eq(j.server, KB_CONTROLLED);
    ck_assert_ptr_nonnull(strstr(j.reason, "send lag"));
    /* a rate past the calibration's margin: client-limited, however the client kept up */
    r = parsed(2000, 1.0, 5000, 100);
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_GATES, 1000, &j);
    ck_assert_int_eq(j.verdict, KB_CONTROLLED);
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_GATES, 2000, &j);
    ck_assert_int_eq(j.verdict, KB_CLIENT_LIMITED);
    ck_assert_ptr_nonnull(strstr(j.trust_reason, "proven margin"));
    /* the margin held against what a point carried, where it missed: held at 2000 is the
     * server's whatever the margin (1875 covers 1500) ... */
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_CARRIED, 2000, &j);
    ck_assert_int_eq(j.verdict, KB_CONTROLLED);
    /* ... missed while carrying 2000: the shortfall may be the client's */
    r = parsed(2000, 1.0, 200000, 100);
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_CARRIED, 2000, &j);
    ck_assert_int_eq(j.verdict, KB_CLIENT_LIMITED);
    ck_assert_int_eq(j.server, KB_UNCONTROLLED);
    ck_assert_msg(strstr(j.trust_reason, "uncontrolled while carrying 2000 req/s, which with "
                         "the 1.25x headroom asks the client to have proven 2500 req/s; it held "
                         "1875 against the control server"), "%s", j.trust_reason);
    /* ... missed while carrying 1400 (1.25 x 1400 <= 1875): the client had capacity to spare */
    r = parsed(2000, 0.7, 5000, 100);
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_CARRIED, 2000, &j);
    ck_assert_int_eq(j.verdict, KB_UNCONTROLLED);
    ck_assert(j.trusted);
    /* ... completed 2100 a second of 2000 scheduled, a margin covering exactly 2000: the
     * client carried its schedule, the rest was the server clearing its backlog */
    r = parsed(2000, 1.0, 200000, 100);
    r.achieved_rps = 2100;
    kb_judge_point(&r, &o, &crit, &cal2500, KB_MARGIN_CARRIED, 2000, &j);
    ck_assert_int_eq(j.verdict, KB_UNCONTROLLED);
    ck_assert(j.trusted);
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_CARRIED, 2000, &j); /* 1875 covers 1500 */
    ck_assert_msg(strstr(j.trust_reason, "while carrying 2000 req/s"), "%s", j.trust_reason);
    /* failed stays failed whatever the client */
    o.fixture_exited = 1;
    snprintf(o.exit_reason, sizeof(o.exit_reason), "signal 9");
    kb_judge_point(&r, &o, &crit, &cal, KB_MARGIN_GATES, 2000, &j);
    ck_assert_int_eq(j.verdict, KB_FAILED);
    ck_assert_ptr_nonnull(strstr(j.reason, "process exited (signal 9)"));
}
END_TEST

START_TEST(record_reads_back)
{
    struct kb_point_obs o = { .have_load = 1, .postflight_failed = 1 }, o2;
    struct kb_point_load r = parsed(1000, 1.0, 5000, 100);
    struct kb_criteria c2;
    struct kb_judgement j;
    json_t *v = json_object();
    enum kb_margin_use cal = KB_MARGIN_UNUSED;
    snprintf(o.postflight_reason, sizeof(o.postflight_reason), "body differs");
    ck_assert_int_eq(kb_judgement_read(v, &o2, &c2, &cal), -1);
    kb_judge_point(&r, &o, &crit, NULL, KB_MARGIN_UNUSED, 1000, &j);
    kb_judgement_record(v, &j, &r, &o, &crit, KB_MARGIN_CARRIED);
    ck_assert_str_eq(json_string_value(json_object_get(v, "verdict")), "failed");
    ck_assert_str_eq(json_string_value(json_object_get(v, "server_verdict")), "failed");
    ck_assert(json_is_true(json_object_get(json_object_get(v, "client_trust"), "ok")));
    ck_assert_int_eq(kb_judgement_read(v, &o2, &c2, &cal), 0);
    ck_assert_int_eq(cal, KB_MARGIN_CARRIED);
    ck_assert_int_eq(o2.postflight_failed, 1);
    ck_assert_str_eq(o2.postflight_reason, "body differs");
    ck_assert_int_eq(o2.fixture_exited, 0);
    ck_assert_int_eq(c2.max_p99_us, crit.max_p99_us);
    ck_assert_int_eq(c2.client_rx_delay_p99_max_us, crit.client_rx_delay_p99_max_us);
    ck_assert_double_eq_tol(c2.min_delivery, crit.min_delivery, 1e-12);
    ck_assert_double_eq_tol(c2.client_cpu_max_fraction, crit.client_cpu_max_fraction, 1e-12);
    json_decref(v);
}
END_TEST

/* ---- a run's files ------------------------------------------------------------------- */

static char dir[64];
static struct kb_report R;
static struct kb_rederive RD;

/* go on plaintext at 100, 200, 300 req/s: p99 2, 20, 200 ms, all delivered. */
static const long rates[] = { 100, 200, 300 };
static const double p99s[] = { 2000, 20000, 200000 };

static void write_plan(void)
{
    char path[128], err[256];
    json_t *pts = json_array(), *plan, *run;
    for (int k = 0; k < 3; k++) {
        char id[64];
        snprintf(id, sizeof(id), "go-plaintext-%ld", rates[k]);
        json_array_append_new(pts, json_pack("{s:s,s:s,s:s,s:I,s:i}", "id", id, "runtime", "go",
                              "route", "plaintext", "rate", (json_int_t)rates[k], "repeat", 1));
    }
    plan = json_pack("{s:s,s:f,s:f,s:f,s:i,s:i,s:i,s:[s],s:[s],s:[i,i,i],s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:i,s:f,s:i},s:o}", "profile", "quick", "duration_s", 1.0,
                     "warmup_s", 0.5, "drain_s", 0.5, "threads", 4, "connections", 16,
                     "repeats", 1, "runtimes", "go", "routes", "plaintext", "rates", 100, 200,
                     300, "backend", "native", "unconstrained", 0, "server_cpus", "0",
                     "client_cpus", "1", "criteria", "min_delivery", 0.95, "max_p99_us", 100000,
                     "client_cpu_max_fraction", 0.8, "client_lag_p99_max_us", 1000, "points", pts);
    ck_assert_ptr_nonnull(plan);
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "plan.json"), plan, err, sizeof(err));
    run = json_pack("{s:s,s:[s],s:{}}", "started", "now", "command_line", "curve", "host");
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "run.json"), run, err, sizeof(err));
    json_decref(plan);
    json_decref(run);
}

/* A point as the curve writes it: load.json, and verdict.json with the load copied in and
 * the judgement recorded (record 0: no judged_by, not a curve's). With a margin use, judged
 * as a curve with a calibration judges: a gating margin's record as evidence from before the
 * margin stopped gating wrote it (no "margin" field), against cal. */
static void write_point_m(long rate, double p99, int record, enum kb_margin_use margin,
                          const struct kb_calibrate_result *cal)
{
    char id[64], pdir[256], path[300], err[256];
    struct kb_point_obs o = { .have_load = 1 };
    struct kb_point_load r = parsed((double)rate, 1.0, p99, 100);
    struct kb_judgement j;
    json_t *load = load_json((double)rate, 1.0, p99, 100), *v;
    snprintf(id, sizeof(id), "go-plaintext-%ld", rate);
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    kb_mkdirs(pdir, err, sizeof(err));
    kb_write_json_atomic(kb_path(path, sizeof(path), pdir, "load.json"), load, err, sizeof(err));
    kb_judge_point(&r, &o, &crit, cal, margin, (double)rate, &j);
    v = json_pack("{s:s,s:s,s:s,s:I,s:{s:f,s:I},s:O}", "point", id, "runtime", "go", "route",
                  "plaintext", "rate", (json_int_t)rate, "server", "cpu_mean_fraction", 0.5,
                  "rss_max_bytes", (json_int_t)1000, "load", load);
    kb_judgement_record(v, &j, &r, &o, &crit, margin);
    if (margin == KB_MARGIN_GATES)
        json_object_del(json_object_get(v, "judged_by"), "margin");
    if (!record)
        json_object_del(v, "judged_by");
    kb_write_json_atomic(kb_path(path, sizeof(path), pdir, "verdict.json"), v, err, sizeof(err));
    kb_write_atomic(kb_path(path, sizeof(path), pdir, "DONE"), "{}", 2, err, sizeof(err));
    json_decref(load);
    json_decref(v);
}

/* A file's text with its line breaks as spaces (report.md wraps its paragraphs). */
static const char *flat_file(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n;
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return buf;
}

static void write_point(long rate, double p99, int record)
{
    write_point_m(rate, p99, record, KB_MARGIN_UNUSED, NULL);
}

/* calibrate/calibrate.json with a margin of 125 req/s at 1.25x: it covers 100 req/s only. */
static const struct kb_calibrate_result cal125 = { .factor = 1.25, .margin_rps = 125 };

static void write_calibration(void)
{
    char cdir[128], path[200], err[256];
    json_t *j = json_pack("{s:i,s:s,s:f,s:f,s:f,s:f,s:b,s:s,s:s,s:f,s:f,s:i,s:i,"
                          "s:{s:f,s:f,s:f,s:i},s:[{s:f,s:f,s:f,s:f,s:f,s:f,s:I,s:b,s:s}],s:b}",
        "calibrate_version", 1, "route", "plaintext", "up_to_rps", 300.0, "factor", 1.25,
        "required_rps", 375.0, "margin_rps", 125.0, "proven", 0, "server_cpus", "0",
        "client_cpus", "1", "duration_s", 3.0, "warmup_s", 1.0, "threads", 1, "connections", 8,
        "criteria", "client_cpu_max_fraction", 0.9, "lag_p99_max_us", 1000.0, "min_delivery",
        0.995, "errors_max", 0, "steps",
        "rate", 125.0, "achieved_rps", 125.0, "delivery", 1.0, "client_cpu_fraction", 0.3,
        "lag_p99_us", 210.0, "corrected_p99_us", 900.0, "errors", (json_int_t)0, "held", 1,
        "why", "", "complete", 1);
    ck_assert_ptr_nonnull(j);
    kb_mkdirs(kb_path(cdir, sizeof(cdir), dir, "calibrate"), err, sizeof(err));
    ck_assert_int_eq(kb_write_json_atomic(kb_path(path, sizeof(path), cdir, "calibrate.json"), j,
                                          err, sizeof(err)), 0);
    json_decref(j);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/kb-rejudge-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_plan();
    for (int k = 0; k < 3; k++)
        write_point(rates[k], p99s[k], 1);
    memset(&RD, 0, sizeof(RD));
}

static void teardown(void)
{
    char cmd[128];
    kb_report_free(&R);
    kb_rederive_free(&RD);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void load_rederived(void)
{
    char err[256];
    ck_assert_msg(kb_report_load_rederived(dir, &R, &RD, err, sizeof(err)) == 0, "%s", err);
}

/* Edits points/<id>/<file>: key set to a string value. */
static void set_field(long rate, const char *file, const char *key, const char *value)
{
    char path[300], err[256];
    json_t *v;
    snprintf(path, sizeof(path), "%s/points/go-plaintext-%ld/%s", dir, rate, file);
    v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_object_set_new(v, key, json_string(value));
    kb_write_json_atomic(path, v, err, sizeof(err));
    json_decref(v);
}

START_TEST(stored_verdicts_follow)
{
    load_rederived();
    ck_assert_uint_eq(RD.nchecked, 3);
    ck_assert_msg(RD.nmismatch == 0, "%s", RD.nmismatch ? RD.mismatch[0] : "");
    ck_assert_uint_eq(RD.nunchecked, 0);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "controlled");
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 300)->verdict, "uncontrolled");
    ck_assert_int_eq(kb_report_highest(&R, "go", "plaintext"), 200);
}
END_TEST

/* p99 < 10 ms: the 20 ms point turns uncontrolled, the others keep theirs. */
START_TEST(rejudged_where_p99_crosses)
{
    const struct kb_cell *w;
    RD.rejudge = 1;
    RD.max_p99_us = 10000;
    RD.min_delivery = 0.95;
    load_rederived();
    ck_assert_uint_eq(RD.nmismatch, 0);
    ck_assert_uint_eq(json_array_size(RD.changed), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(RD.changed, 0), "point")),
                     "go-plaintext-200");
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 100)->verdict, "controlled");
    w = kb_report_row(&R, "go", "plaintext", 200);
    ck_assert_str_eq(w->verdict, "uncontrolled");
    ck_assert_msg(strstr(w->reason, "(< 10 ms?)") != NULL, "%s", w->reason);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 300)->verdict, "uncontrolled");
    ck_assert_int_eq(kb_report_highest(&R, "go", "plaintext"), 100);
    ck_assert_double_eq_tol(R.max_p99_us, 10000, 1e-9);
}
END_TEST

START_TEST(tampered_verdict_named)
{
    set_field(300, "verdict.json", "verdict", "controlled");
    load_rederived();
    ck_assert_uint_eq(RD.nmismatch, 1);
    ck_assert_msg(strstr(RD.mismatch[0], "point go-plaintext-300: stored verdict controlled, "
                         "re-derived uncontrolled") != NULL, "%s", RD.mismatch[0]);
}
END_TEST

START_TEST(tampered_server_verdict_and_load_named)
{
    char path[300], err[256];
    json_t *l;
    set_field(100, "verdict.json", "server_verdict", "uncontrolled");
    snprintf(path, sizeof(path), "%s/points/go-plaintext-200/load.json", dir);
    l = json_load_file(path, 0, NULL);
    json_object_set_new(l, "delivery", json_real(0.5));
    kb_write_json_atomic(path, l, err, sizeof(err));
    json_decref(l);
    load_rederived();
    ck_assert_uint_eq(RD.nmismatch, 4);
    ck_assert_msg(strstr(RD.mismatch[0], "go-plaintext-100: stored server_verdict uncontrolled, "
                         "re-derived controlled") != NULL, "%s", RD.mismatch[0]);
    ck_assert_msg(strstr(RD.mismatch[1], "go-plaintext-200: stored verdict controlled, "
                         "re-derived uncontrolled") != NULL, "%s", RD.mismatch[1]);
    ck_assert_msg(strstr(RD.mismatch[3], "go-plaintext-200: verdict.json's copy of the load "
                         "figures differs from load.json") != NULL, "%s", RD.mismatch[3]);
}
END_TEST

/* Without judged_by: not a curve's judgement (every version of a curve's verdict.json records
 * it), so nothing is re-derived from a guess at what it read -- not the plan's criteria, not
 * a failure its reason names: shown as written, and unchecked (a re-judgement refuses it). */
START_TEST(without_judged_by_left_as_written)
{
    write_point(100, 2000, 0);
    write_point(200, 20000, 0);
    set_field(200, "verdict.json", "verdict", "failed");
    set_field(200, "verdict.json", "server_reason", "process exited (signal 9)");
    load_rederived();
    ck_assert_uint_eq(RD.nchecked, 1);
    ck_assert_uint_eq(RD.nunchecked, 2);
    ck_assert_str_eq(RD.unchecked[0], "go-plaintext-100");
    ck_assert_str_eq(RD.unchecked[1], "go-plaintext-200");
    ck_assert_uint_eq(RD.nmismatch, 0);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "failed");
    /* a reason naming an exit, with a recorded judgement that saw none: refused */
    set_field(300, "verdict.json", "server_reason", "process exited (signal 9)");
    set_field(300, "verdict.json", "verdict", "failed");
    kb_report_free(&R);
    kb_rederive_free(&RD);
    load_rederived();
    ck_assert_uint_eq(RD.nmismatch, 1);
    ck_assert_ptr_nonnull(strstr(RD.mismatch[0], "go-plaintext-300: stored verdict failed"));
}
END_TEST

/* Hand-made evidence: no record and no load generator output. Shown as written; refused
 * for re-judging. */
START_TEST(hand_made_left_as_written)
{
    char path[300], err[256];
    write_point(100, 2000, 0);
    snprintf(path, sizeof(path), "%s/points/go-plaintext-100/load.json", dir);
    kb_write_atomic(path, "{\"achieved_rps\": 100}", 21, err, sizeof(err));
    load_rederived();
    ck_assert_uint_eq(RD.nunchecked, 1);
    ck_assert_str_eq(RD.unchecked[0], "go-plaintext-100");
    ck_assert_uint_eq(RD.nchecked, 2);
    ck_assert_uint_eq(RD.nmismatch, 0);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 100)->verdict, "controlled");
}
END_TEST

/* The calibration the curve judged against, recorded but unreadable: named. */
START_TEST(unreadable_calibration_named)
{
    char path[300], err[256];
    json_t *v;
    snprintf(path, sizeof(path), "%s/points/go-plaintext-100/verdict.json", dir);
    v = json_load_file(path, 0, NULL);
    json_object_set_new(json_object_get(v, "judged_by"), "calibrated", json_true());
    kb_write_json_atomic(path, v, err, sizeof(err));
    json_decref(v);
    load_rederived();
    ck_assert_uint_eq(RD.nmismatch, 1);
    ck_assert_msg(strstr(RD.mismatch[0], "go-plaintext-100: judged against the run's "
                         "calibration") != NULL, "%s", RD.mismatch[0]);
}
END_TEST

/* A calibrated curve holds the margin (125 req/s, covering 100) against what a point carried
 * where it missed: the 200 req/s point held and keeps its verdict, marked "^" in the answer
 * with why; the 300 req/s point missed while carrying 300 and is client-limited; the stored
 * verdicts follow from the files. */
START_TEST(margin_held_against_what_was_carried)
{
    char err[256], cell[64], path[300];
    struct kb_answer_used u = { 0 };
    struct kb_report_answer a;
    write_calibration();
    for (int k = 0; k < 3; k++)
        write_point_m(rates[k], p99s[k], 1, KB_MARGIN_CARRIED, &cal125);
    load_rederived();
    ck_assert_msg(RD.nmismatch == 0, "%s", RD.nmismatch ? RD.mismatch[0] : "");
    ck_assert_int_eq(R.margin_gated, 0);
    ck_assert_int_eq(kb_report_covers(&R, 200), 0);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "controlled");
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 300)->verdict, "client-limited");
    kb_report_answer_of(&R, "go", "plaintext", &a);
    ck_assert_int_eq(a.proven, 200);
    ck_assert_int_eq(a.past_margin, 1);
    ck_assert_str_eq(kb_report_answer_text(cell, sizeof(cell), &R, "go", "plaintext", &u),
                     ">= 200^");
    ck_assert_int_eq(u.past_margin, 1);
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/report.md", dir);
    ck_assert_ptr_nonnull(strstr(flat_file(path), "\"N^\": N lies above the rates"));
    ck_assert_ptr_nonnull(strstr(flat_file(path), "Not covered: 200, 300 req/s. A point "
                                 "requested there keeps its own verdict where it held"));
    ck_assert_ptr_nonnull(strstr(flat_file(path), "1 of the 2 runtime x route row(s) there are "
                                 "client-limited"));
}
END_TEST

/* Evidence from when the margin gated (judged_by says "calibrated" and nothing of the margin)
 * is re-derived as it was judged: the points above the margin client-limited, no "^", and the
 * report says the run's margin gated them. */
START_TEST(margin_gated_evidence_rederived_as_it_was)
{
    char cell[64];
    struct kb_answer_used u = { 0 };
    write_calibration();
    for (int k = 0; k < 3; k++)
        write_point_m(rates[k], p99s[k], 1, KB_MARGIN_GATES, &cal125);
    load_rederived();
    ck_assert_msg(RD.nmismatch == 0, "%s", RD.nmismatch ? RD.mismatch[0] : "");
    ck_assert_int_eq(R.margin_gated, 3);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "client-limited");
    /* 200's own figures held: indicative, never proven */
    ck_assert_str_eq(kb_report_answer_text(cell, sizeof(cell), &R, "go", "plaintext", &u),
                     ">= 100; 200*");
    ck_assert_int_eq(u.past_margin, 0);
    /* the record of a new judgement reads back as what it was */
    {
        char path[300];
        json_t *v;
        snprintf(path, sizeof(path), "%s/points/go-plaintext-200/verdict.json", dir);
        v = json_load_file(path, 0, NULL);
        ck_assert_int_eq(kb_judgement_margin(v), KB_MARGIN_GATES);
        json_object_set_new(json_object_get(v, "judged_by"), "margin", json_string("carried"));
        ck_assert_int_eq(kb_judgement_margin(v), KB_MARGIN_CARRIED);
        json_object_set_new(json_object_get(v, "judged_by"), "calibrated", json_false());
        ck_assert_int_eq(kb_judgement_margin(v), KB_MARGIN_UNUSED);
        json_decref(v);
    }
}
END_TEST

/* The writers name the criterion first and carry the re-derivation in report.json. */
START_TEST(rejudged_report_names_criterion)
{
    char path[300], err[256], line[256];
    FILE *f;
    json_t *doc;
    RD.rejudge = 1;
    RD.max_p99_us = 10000;
    RD.min_delivery = 0.95;
    load_rederived();
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_json(&R, dir, err, sizeof(err)), 0);
    f = fopen(kb_path(path, sizeof(path), dir, "report.md"), "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    ck_assert_str_eq(line, "# kneebench: 1 runtime x 1 route x 3 rates, quick, re-judged: "
                           "p99 < 10 ms, delivery >= 95 %\n");
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    ck_assert(json_is_true(json_object_get(json_object_get(doc, "criteria"), "rejudged")));
    ck_assert_double_eq_tol(json_number_value(json_object_get(json_object_get(doc, "criteria"),
                                                              "max_p99_us")), 10000, 1e-9);
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(doc, "rederived"),
                                                      "changed")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(
        json_object_get(doc, "published"), "highest_controlled_rps"), "go"), "plaintext")), 30000);
    json_decref(doc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rejudge");
    TCase *tj = tcase_create("judgement"), *tc = tcase_create("rederive");
    tcase_add_test(tj, judgement_composes);
    tcase_add_test(tj, record_reads_back);
    suite_add_tcase(s, tj);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, stored_verdicts_follow);
    tcase_add_test(tc, rejudged_where_p99_crosses);
    tcase_add_test(tc, tampered_verdict_named);
    tcase_add_test(tc, tampered_server_verdict_and_load_named);
    tcase_add_test(tc, without_judged_by_left_as_written);
    tcase_add_test(tc, hand_made_left_as_written);
    tcase_add_test(tc, unreadable_calibration_named);
    tcase_add_test(tc, margin_held_against_what_was_carried);
    tcase_add_test(tc, margin_gated_evidence_rederived_as_it_was);
    tcase_add_test(tc, rejudged_report_names_criterion);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "rejudge");
}
