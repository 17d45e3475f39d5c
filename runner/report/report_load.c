/* report_load.c -- the report model loaded: evidence in, aggregated rows out (report.h).
 * Reads files only. */
#define _POSIX_C_SOURCE 200809L
#include "runner/report/report.h"
#include "runner/util/evidence.h"
#include "runner/util/jfield.h"
#include "runner/report/report_int.h"
#include "runner/util/paths.h"
#include "contract/contract.h"
#include "runner/run/cell.h"
#include "runner/run/hostclock.h"
#include "runner/run/judgement.h"
#include "runner/util/root.h"
#include "runner/util/digest.h"
#include "runner/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The evidence of one complete point, or NULL when its marker is missing; re-derived from
 * the raw files when the load asks for it. */
static json_t *load_point(struct kb_report *r, const char *dir, const char *id, long rate)
{
    char path[KB_PATH_MAX], pdir[KB_PATH_MAX], bad[sizeof(r->schema_err)];
    json_t *v;
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    if (!kb_file_exists(kb_path(path, sizeof(path), pdir, "DONE")))
        return NULL;
    v = kb_report_evidence(r, kb_path(path, sizeof(path), pdir, "verdict.json"));
    /* figures no measurement gives (delivery inf, a negative p99 or count) refuse the run */
    if (v && kb_evidence_check_load(json_object_get(v, "load"), path, bad, sizeof(bad)) < 0) {
        if (!r->schema_err[0])
            snprintf(r->schema_err, sizeof(r->schema_err), "%s", bad);
        json_decref(v);
        return NULL;
    }
    r->margin_gated += v && kb_judgement_margin(v) == KB_MARGIN_GATES;
    if (v && r->rd)
        kb_report_rederive_point(r, dir, id, rate, v);
    return v;
}

static void add_missing(struct kb_report *r, const char *id)
{
    r->missing = kb_xrealloc(r->missing, (r->nmissing + 1) * sizeof(char *));
    r->missing[r->nmissing++] = kb_xstrdup(id);
}

/* The reader the cells take samples through: the report's checks and re-derivation. */
static json_t *sample_of(void *ctx, const char *id, long rate)
{
    struct kb_report *r = ctx;
    return load_point(r, r->dir, id, rate);
}
static void missing_of(void *ctx, const char *id)
{
    add_missing(ctx, id);
}
static double floor_of(void *ctx, const char *floor_sample)
{
    return kb_report_floor_us(ctx, floor_sample);
}

/* The rows, judged from their samples below the report (runner/run/cell.h). */
static void build_rows(struct kb_report *r)
{
    struct kb_cell_reader rd = { sample_of, missing_of, floor_of, r };
    struct kb_cells c = { .min_delivery = r->min_delivery, .max_p99_us = r->max_p99_us };
    kb_cells_build(&c, r->plan, r->confirm, r->refine, &rd);
    r->rows = c.rows;
    r->nrows = c.nrows;
    r->fine = c.fine;
    r->nfine = c.nfine;
}

/* Per runtime: the limits read back, the identity digest and the preflight outcome. */
static void load_fixtures(struct kb_report *r, const char *dir)
{
    char fdir[KB_PATH_MAX], path[KB_PATH_MAX];
    r->fixtures = json_object();
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        json_t *id, *f = json_object();
        snprintf(fdir, sizeof(fdir), r->repeats > 1 ? "%s/fixtures/%s-r1" : "%s/fixtures/%s", dir, rt);
        json_object_set_new(f, "limits", kb_report_evidence(r, kb_path(path, sizeof(path), fdir, "limits.json")));
        json_object_set_new(f, "preflight", kb_report_evidence(r, kb_path(path, sizeof(path), fdir, "preflight.json")));
        id = kb_report_evidence(r, kb_path(path, sizeof(path), fdir, "identity.json"));
        json_object_set(f, "identity_sha256", id ? json_object_get(id, "sha256") : json_null());
        json_decref(id);
        json_object_set_new(r->fixtures, rt, f);
    }
}

/* The contract the run ran under: its own copy, RUN/contract.json, checked against run.json's
 * contract_sha256 and set beside the checkout's; a run from before runs kept one has only
 * the checkout's. Into path the one to read (NULL: none); what a reader must know about it
 * into r->contract_note. */
static const char *choose_contract(struct kb_report *r, char *path, size_t len)
{
    const char *ran = kb_jstr(r->run, "contract_sha256", ""), *here = kb_root_contract();
    char copy[KB_SHA256_HEX] = "", now[KB_SHA256_HEX] = "", why[256];
    int kept = kb_file_exists(kb_path(path, len, r->dir, "contract.json"));
    if (kept && kb_sha256_file(path, copy, why, sizeof(why)) < 0)
        copy[0] = '\0';
    if (here && kb_sha256_file(here, now, why, sizeof(why)) < 0)
        now[0] = '\0';
    r->contract_kept = kept;
    if (kept && strcmp(copy, ran))
        snprintf(r->contract_note, sizeof(r->contract_note), "the run's copy of its contract "
                 "(contract.json, SHA-256 %.12s) is not the one run.json names (%.12s): it "
                 "was changed after the run; its figures are shown all the same", copy, ran);
    else if (kept && here && strcmp(now, copy))
        snprintf(r->contract_note, sizeof(r->contract_note), "the checkout's contract (%.300s, "
                 "SHA-256 %.12s) differs from the one this run ran under; this report reads "
                 "the run's own copy (contract.json, %.12s)", here, now, copy);
    else if (!kept)
        snprintf(r->contract_note, sizeof(r->contract_note), "this run kept no copy of its "
                 "contract (runs began keeping contract.json later): the papers' figures and "
                 "the runtimes' order are the checkout's contract's (%.300s)%s", here ? here
                 : "none found", here && strcmp(now, ran) ? ", which differs from the one it "
                 "ran under (run.json's contract_sha256)" : "");
    if (kept)
        return path;
    if (!here)
        snprintf(r->published_note, sizeof(r->published_note), "no contract: %s",
                 kb_root_error());
    return here;
}

/* A figure the paper states (>= 0) into o under key; one it does not is left out. */
static void set_stated(json_t *o, const char *key, double v)
{
    if (v >= 0)
        json_object_set_new(o, key, json_real(v));
}

/* published.points as report.json carries them: [{runtime, route, rate, section, and the
 * figures the paper states}]. */
static json_t *published_points(const struct kb_contract *c)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < c->npoints; i++) {
        const struct kb_published_fig *f = &c->points[i];
        json_t *o = json_pack("{s:s,s:s,s:I,s:s}", "runtime", f->runtime, "route", f->route,
                              "rate", (json_int_t)f->rate, "section", f->section);
        if (!o)
            continue;
        set_stated(o, "achieved_rps", f->achieved_rps);
        set_stated(o, "delivery", f->delivery);
        set_stated(o, "p50_us", f->p50_us);
        set_stated(o, "p99_us", f->p99_us);
        set_stated(o, "p999_us", f->p999_us);
        json_array_append_new(a, o);
    }
    return a;
}

/* The papers' figures from the run's contract (choose_contract), for orientation, and its
 * runtimes' order (the charts' colours): absent or unreadable, the report says so and goes
 * on. */
static void load_published(struct kb_report *r)
{
    struct kb_contract c;
    char err[256], buf[KB_PATH_MAX];
    json_t *hi;
    const char *path = choose_contract(r, buf, sizeof(buf));
    if (!path)
        return;
    if (kb_contract_load(path, &c, err, sizeof(err)) < 0) {
        snprintf(r->published_note, sizeof(r->published_note), "%s", err);
        return;
    }
    r->contract_runtimes = json_array();
    for (size_t i = 0; i < c.nruntimes; i++)
        json_array_append_new(r->contract_runtimes, json_string(c.runtimes[i].name));
    if (c.npublished == 0) {
        snprintf(r->published_note, sizeof(r->published_note), "the contract %s publishes "
                 "no figures", c.path);
    } else {
        hi = json_object();
        for (size_t i = 0; i < c.npublished; i++) {
            json_t *rt = json_object_get(hi, c.published[i].runtime);
            if (!rt)
                json_object_set_new(hi, c.published[i].runtime, rt = json_object());
            json_object_set_new(rt, c.published[i].route,
                                json_integer(c.published[i].highest_controlled_rps));
        }
        r->published = json_pack("{s:s,s:s,s:o}", "source", c.published_source, "host",
                                 c.published_host, "highest_controlled_rps", hi);
        if (r->published && c.npoints)
            json_object_set_new(r->published, "points", published_points(&c));
    }
    kb_report_load_curve(r, kb_contract_published_curve(&c, kb_jstr(r->plan, "profile", NULL)));
    kb_contract_free(&c);
}


static int load_run(const char *dir, struct kb_report *r, struct kb_rederive *rd, char *err,
                    size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *crit;
    memset(r, 0, sizeof(*r));
    snprintf(r->dir, sizeof(r->dir), "%s", dir);
    if (!(r->plan = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "plan.json")))) {
        if (r->schema_err[0])
            snprintf(err, errlen, "%s", r->schema_err);
        else
            snprintf(err, errlen, "%s has no plan.json: not a kneebench run directory", dir);
        return -1;
    }
    if (kb_cells_check_plan(r->plan, dir, err, errlen) < 0) {
        kb_report_free(r);
        return -1;
    }
    r->run = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "run.json"));
    if (!r->run && r->schema_err[0]) {
        snprintf(err, errlen, "%s", r->schema_err);
        kb_report_free(r);
        return -1;
    } else if (!r->run) {
        snprintf(err, errlen, "%s has no run.json (run identity)", dir);
        kb_report_free(r);
        return -1;
    }
    crit = json_object_get(r->plan, "criteria");
    if (!json_is_number(json_object_get(crit, "max_p99_us"))) {
        snprintf(err, errlen, "%s/plan.json has no criteria.max_p99_us", dir);
        kb_report_free(r);
        return -1;
    }
    r->rd = rd;
    r->min_delivery = rd && rd->rejudge ? rd->min_delivery : kb_jnum(crit, "min_delivery", NULL);
    r->max_p99_us = rd && rd->rejudge ? rd->max_p99_us : kb_jnum(crit, "max_p99_us", NULL);
    r->repeats = (int)json_integer_value(json_object_get(r->plan, "repeats"));
    r->unconstrained = json_is_true(json_object_get(r->plan, "unconstrained"));
    r->confirm = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "confirm.json"));
    r->refine = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "refine.json"));
    kb_report_load_calibration(r, dir);
    kb_report_load_floor(r, dir);
    build_rows(r);
    load_fixtures(r, dir);
    kb_report_load_series(r, dir);
    load_published(r);
    r->hostclock = kb_hostclock_summary(dir, json_object_get(r->plan, "points"));
    if (r->schema_err[0]) {        /* never a figure read by guessing what a newer file holds */
        snprintf(err, errlen, "%s", r->schema_err);
        kb_report_free(r);
        return -1;
    }
    return 0;
}

int kb_report_load(const char *dir, struct kb_report *r, char *err, size_t errlen)
{
    return load_run(dir, r, NULL, err, errlen);
}

int kb_report_load_rederived(const char *dir, struct kb_report *r, struct kb_rederive *rd,
                             char *err, size_t errlen)
{
    return load_run(dir, r, rd, err, errlen);
}

void kb_report_free(struct kb_report *r)
{
    struct kb_cells c = { .rows = r->rows, .fine = r->fine, .nrows = r->nrows,
                          .nfine = r->nfine };
    for (size_t i = 0; i < r->nmissing; i++)
        free(r->missing[i]);
    free(r->missing);
    kb_cells_free(&c);
    kb_report_free_proof(r);
    json_decref(r->plan);
    json_decref(r->run);
    json_decref(r->fixtures);
    json_decref(r->published);
    json_decref(r->published_curve);
    json_decref(r->hostclock);
    json_decref(r->confirm);
    json_decref(r->refine);
    json_decref(r->floor);
    json_decref(r->contract_runtimes);
    memset(r, 0, sizeof(*r));
}

