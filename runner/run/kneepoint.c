/* kneepoint.c -- one sample of the knee search, measured and kept (kneepoint.h). */
#define _GNU_SOURCE
#include "runner/run/kneepoint.h"
#include "runner/util/evidence.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runner/load/hlog.h"
#include "runner/load/loadgen.h"
#include "runner/load/loadjson.h"
#include "runner/load/loadout.h"
#include "runner/run/judgement.h"
#include "runner/run/run.h"
#include "runner/run/steal.h"
#include "runner/util/clock.h"
#include "runner/util/paths.h"

static void configure(const struct kb_kneepoint_cfg *c, long rate, struct kb_load_config *l)
{
    const struct kb_target *t = c->target;
    *l = (struct kb_load_config){
        .addr = t->addr, .request = t->request, .request_len = t->request_len,
        .expect = &t->expect, .rate = (double)rate, .warmup_s = c->warmup_s,
        .duration_s = c->duration_s, .drain_s = c->drain_s, .connections = c->connections,
        .timeout_ms = c->timeout_ms, .send_quantum_ns = c->send_quantum_us * 1000,
        .rx_timestamps = 1, .rt = c->rt, .series_tag = "", .cpus = c->client_cpus,
        .timer = KB_TIMER_AUTO, .per_connection = c->per_connection,
        .reconnect = c->reconnect,
    };
    /* one thread per client CPU, as `load` fits them */
    l->threads = CPU_COUNT(c->client_cpus) < c->threads ? CPU_COUNT(c->client_cpus) : c->threads;
    if (l->threads < 1)
        l->threads = 1;
}

/* load.json's connections per request, NAN where the server closed nothing (a keep-alive
 * server: its connections are those opened before the warmup, and a 0.00 beside every
 * sample would say nothing). */
static double conns_of(const json_t *load)
{
    const json_t *v = json_object_get(load, "connections_per_request");
    return json_is_true(json_object_get(load, "reconnect")) &&
           json_integer_value(json_object_get(load, "server_closes")) > 0 && json_is_number(v)
               ? json_number_value(v) : NAN;
}

/* The load's files; a failure noted in ev. */
static void write_load(struct kb_run_evidence *ev, const char *dir, const struct kb_load_meta *m,
                       struct kb_load_result *res)
{
    char path[KB_PATH_MAX], hlog[KB_PATH_MAX], err[512];
    if (kb_loadout_write_json(kb_path(path, sizeof(path), dir, "load.json"), m, res, err,
                              sizeof(err)))
        kb_run_note(ev, "load.json", err);
    if (kb_loadout_write_hgrm(kb_path(path, sizeof(path), dir, "corrected.hgrm"),
                              &res->corrected, err, sizeof(err)))
        kb_run_note(ev, "corrected.hgrm", err);
    if (kb_loadout_write_hgrm(kb_path(path, sizeof(path), dir, "uncorrected.hgrm"),
                              &res->uncorrected, err, sizeof(err)))
        kb_run_note(ev, "uncorrected.hgrm", err);
    if (!res->series)
        kb_run_note(ev, "series.hlog", "no memory for the series");
    else if (kb_hlog_collector_write(res->series, kb_path(hlog, sizeof(hlog), dir, "series.hlog"),
                                     kb_path(path, sizeof(path), dir, "series.csv"), err,
                                     sizeof(err)))
        kb_run_note(ev, "series.hlog", err);
}

/* verdict.json: the judgement, the server's figures, the host's steal, the load. */
static json_t *verdict_json(const struct kb_kneepoint_cfg *c, long rate, int k,
                            const struct kb_point_load *pl, const struct kb_point_obs *obs,
                            struct kb_procwatch *w, const struct kb_load_result *res,
                            json_t *load, struct kb_judgement *j)
{
    char why[256];
    int could;
    json_t *v;
    kb_judge_point(pl, obs, c->crit, NULL, KB_MARGIN_UNUSED, (double)rate, j);
    v = json_pack("{s:I,s:i,s:s,s:s}", "rate", (json_int_t)rate, "sample", k, "verdict",
                  kb_verdict_name(j->verdict), "reason", j->reason);
    kb_judgement_record(v, j, pl, obs, c->crit, KB_MARGIN_UNUSED);
    json_object_set_new(v, "server", kb_procwatch_server_json(w, res->interval_start,
                        res->interval_end, (double)res->c.window_completed));
    could = kb_steal_could_decide(pl, c->crit, kb_procwatch_steal_server(w), why, sizeof(why));
    json_object_set_new(v, "host", kb_steal_json(kb_procwatch_steal_server(w),
                        kb_procwatch_steal_client(w), could, why));
    json_object_set(v, "load", load);
    return v;
}

/* The load measured with the server watched; its evidence, verdict and figures. */
static int measure(const struct kb_kneepoint_cfg *c, long rate, int k, const char *dir,
                   struct kb_run_evidence *ev, struct kb_knee_sample *out, char *err,
                   size_t errlen)
{
    struct kb_load_config lc;
    struct kb_load_meta m;
    struct kb_load_result res;
    struct kb_point_load pl;
    struct kb_point_obs obs = { .have_load = 1 };
    struct kb_judgement j;
    struct kb_procwatch *w;
    char path[KB_PATH_MAX];
    json_t *load, *v;
    configure(c, rate, &lc);
    m = (struct kb_load_meta){ .url = c->url, .route = c->target->route,
        .expectation = c->target->expectation, .requested_rps = (double)rate,
        .threads_requested = c->threads, .threads = lc.threads, .connections = c->connections,
        .warmup_s = c->warmup_s, .duration_s = c->duration_s, .drain_s = c->drain_s,
        .client_cpus = CPU_COUNT(c->client_cpus), .rt_asked = c->rt,
        .send_quantum_us = c->send_quantum_us };
    kb_clock_iso8601_utc(m.started_at, sizeof(m.started_at));
    if (!(w = kb_procwatch_start(&c->watch, err, errlen)))
        return -1;
    if (kb_load_run(&lc, &res, err, errlen)) {
        kb_procwatch_free(w);
        return -1;
    }
    kb_procwatch_stop(w);
    write_load(ev, dir, &m, &res);
    if (kb_procwatch_write_csv(w, kb_path(path, sizeof(path), dir, "samples.csv"), err, errlen))
        kb_run_note(ev, "samples.csv", err);
    load = kb_loadout_json(&m, &res);
    if (kb_point_load_parse(load, &pl, err, errlen)) {
        json_decref(load);
        kb_load_result_free(&res);
        kb_procwatch_free(w);
        return -1;
    }
    if (kb_procwatch_gone(w)) {
        obs.fixture_exited = 1;
        snprintf(obs.exit_reason, sizeof(obs.exit_reason), "the server's processes are gone");
    }
    v = verdict_json(c, rate, k, &pl, &obs, w, &res, load, &j);
    kb_run_write_json(ev, dir, "verdict.json", v);
    *out = (struct kb_knee_sample){ .rate = rate, .verdict = j.verdict,
                                    .delivery = pl.delivery, .p99_us = pl.corrected.p99,
                                    .keepalive_breaks = pl.keepalive_breaks,
                                    .completed = pl.completed,
                                    .conns_per_request = conns_of(load) };
    json_decref(v);
    json_decref(load);
    kb_load_result_free(&res);
    kb_procwatch_free(w);
    return 0;
}

int kb_kneepoint_run(const struct kb_kneepoint_cfg *c, long rate, int k, const char *dir,
                     struct kb_knee_sample *out, char *err, size_t errlen)
{
    struct kb_run_evidence ev = { "", "" };
    char path[KB_PATH_MAX];
    json_t *done;
    int rc;
    if (kb_run_point_begin(dir, err, errlen) < 0 || measure(c, rate, k, dir, &ev, out, err, errlen))
        return -1;
    if (ev.file[0]) {
        snprintf(err, errlen, "%s: %s could not be written: %s", dir, ev.file, ev.reason);
        return -1;
    }
    done = json_pack("{s:s,s:I,s:i}", "verdict", kb_verdict_name(out->verdict), "rate",
                     (json_int_t)rate, "sample", k);
    rc = kb_run_evidence_json(kb_path(path, sizeof(path), dir, "DONE"), done, err, errlen);
    json_decref(done);
    return rc;
}

int kb_kneepoint_read(const char *dir, struct kb_knee_sample *out, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *v, *load, *p99;
    int verdict;
    if (!kb_run_point_done(dir))
        return 0;
    if (kb_evidence_read(kb_path(path, sizeof(path), dir, "verdict.json"), &v, err, errlen) < 0)
        return -1;
    load = json_object_get(v, "load");
    /* a resumed search decides from this: delivery -5 or p99 -1 is no sample to build on */
    if (kb_evidence_check_load(load, path, err, errlen) < 0) {
        json_decref(v);
        return -1;
    }
    p99 = json_object_get(json_object_get(load, "corrected_us"), "p99");
    verdict = kb_verdict_from_name(json_string_value(json_object_get(v, "verdict")) ?
                                   json_string_value(json_object_get(v, "verdict")) : "");
    if (verdict < 0 || !json_is_integer(json_object_get(v, "rate")) ||
        !json_is_number(json_object_get(load, "delivery"))) {
        snprintf(err, errlen, "%s: no verdict, rate or load.delivery", path);
        json_decref(v);
        return -1;
    }
    *out = (struct kb_knee_sample){
        .rate = (long)json_integer_value(json_object_get(v, "rate")),
        .verdict = (enum kb_verdict)verdict,
        .delivery = json_number_value(json_object_get(load, "delivery")),
        .p99_us = json_is_number(p99) ? json_number_value(p99) : NAN,
        .keepalive_breaks = json_integer_value(json_object_get(load, "keepalive_breaks")),
        .completed = json_integer_value(json_object_get(load, "completed")),
        .conns_per_request = conns_of(load),
    };
    json_decref(v);
    return 1;
}
