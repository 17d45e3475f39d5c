/* soakplan.c -- the soak's phases planned from the options and the contract, plan.json and
 * run.json (soakrun.h). */
#define _GNU_SOURCE
#include "runner/run/soak/soakrun.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"

/* ---- the plan ------------------------------------------------------------------------- */

/* Phases from --phases/--rates or the contract; durations and windows from the options or
 * contract.soak. The contract's phase durations must agree unless --duration overrides. */
static int plan(struct kb_soakrun *s, const struct kb_soak_opts *a, char *err, size_t errlen)
{
    char list[1024], *save = NULL, *tok;
    const struct kb_contract *c = &s->r.c;
    s->duration_s = a->duration > 0 ? a->duration
                  : c->nsoak_phases ? c->soak_phases[0].duration_s : 0;
    s->warmup_s = a->warmup >= 0 ? a->warmup : c->soak_warmup_s;
    s->settle_s = a->settle >= 0 ? a->settle : c->soak_settle_s;
    s->every_s = a->every > 0 ? a->every : c->soak_sample_every_s;
    s->drain_s = a->drain >= 0 ? a->drain : c->drain_s;
    s->threads = a->threads > 0 ? a->threads : c->threads;
    s->connections = a->connections > 0 ? a->connections : c->connections;
    s->db_pool = a->db_pool > 0 ? a->db_pool : c->db_pool_size;
    if (a->phases) {
        snprintf(list, sizeof(list), "%s", a->phases);
        for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            long rate = 0;
            for (size_t i = 0; i < c->nsoak_phases; i++)
                if (!strcmp(c->soak_phases[i].route, tok))
                    rate = c->soak_phases[i].rate;
            const struct kb_route *r = kb_contract_route(c, tok);
            if (!r || !kb_route_served_by(r, KB_SOAK_RUNTIME)) {
                snprintf(err, errlen, "phase '%s': no such route served by " KB_SOAK_RUNTIME, tok);
                return -1;
            }
            if (s->nph == KB_SOAK_MAX_PHASES) {
                snprintf(err, errlen, "more than %d phases", KB_SOAK_MAX_PHASES);
                return -1;
            }
            snprintf(s->ph[s->nph].route, sizeof(s->ph[0].route), "%s", tok);
            s->ph[s->nph++].rate = rate;
        }
    } else {
        for (size_t i = 0; i < c->nsoak_phases && i < KB_SOAK_MAX_PHASES; i++) {
            snprintf(s->ph[i].route, sizeof(s->ph[0].route), "%s", c->soak_phases[i].route);
            s->ph[i].rate = c->soak_phases[i].rate;
            if (a->duration <= 0 && c->soak_phases[i].duration_s != s->duration_s) {
                snprintf(err, errlen, "the contract's soak phases differ in duration; "
                         "give --duration");
                return -1;
            }
        }
        s->nph = c->nsoak_phases < KB_SOAK_MAX_PHASES ? c->nsoak_phases : KB_SOAK_MAX_PHASES;
    }
    if (a->rates) {
        if (a->rate_list.n != s->nph) {
            snprintf(err, errlen, "--rates '%.200s' gives %zu rates for %zu phases", a->rates,
                     a->rate_list.n, s->nph);
            return -1;
        }
        for (size_t i = 0; i < s->nph; i++)
            s->ph[i].rate = a->rate_list.v[i];
    }
    for (size_t i = 0; i < s->nph; i++) {
        if (s->ph[i].rate <= 0) {
            snprintf(err, errlen, "phase %s has no rate in the contract; give --rates",
                     s->ph[i].route);
            return -1;
        }
        snprintf(s->ph[i].dir, sizeof(s->ph[i].dir), "%s/phases/%02zu-%s", s->r.dir, i + 1,
                 s->ph[i].route);
    }
    if (!s->nph || s->duration_s <= 0 || s->every_s <= 0) {
        snprintf(err, errlen, "nothing to run (no phases, or no duration / sampling interval)");
        return -1;
    }
    return 0;
}

/* The db phase's /db design and its runtime (--db-mode, else the contract's soak.db_mode,
 * which is the paper's), and the gauges its /stats must bring back to zero: the contract's,
 * the same the db qualification checks. */
static int plan_db(struct kb_soakrun *s, const struct kb_soak_opts *a, char *err, size_t errlen)
{
    const struct kb_contract *c = &s->r.c;
    int db = 0;
    for (size_t i = 0; i < s->nph; i++)
        db |= !strcmp(s->ph[i].route, "db");
    if (!db) {
        if (a->db_mode)
            snprintf(err, errlen, "--db-mode is for the db phase, which this plan does not run");
        return a->db_mode ? -1 : 0;
    }
    s->db_mode = a->db_mode ? a->db_mode : c->soak_db_mode ? c->soak_db_mode : "readiness";
    if (!(s->db_rt = kb_contract_db_runtime(c, KB_SOAK_RUNTIME, s->db_mode))) {
        snprintf(err, errlen, "the contract has no runtime for " KB_SOAK_RUNTIME "'s %s /db design "
                 "(runtimes[].db_mode)", s->db_mode);
        return -1;
    }
    if (!c->qual.zero_gauges.n) {
        snprintf(err, errlen, "the contract names no gauges for /stats at rest "
                 "(qualification.zero_gauges)");
        return -1;
    }
    return 0;
}

/* The decay gate's tolerances: the options', else the contract's soak.windows. */
static int plan_decay(struct kb_soakrun *s, const struct kb_soak_opts *a, char *err, size_t errlen)
{
    const struct kb_soak_windows *w = &s->r.c.soak_windows;
    struct kb_decay_rule *d = &s->crit.decay;
    d->max_s = a->window_max > 0 ? a->window_max : w->max_s;
    d->max_rate_drop = a->max_rate_drop >= 0 ? a->max_rate_drop : w->max_rate_drop;
    d->p99_factor = a->p99_growth >= 1 ? a->p99_growth : w->p99_growth_factor;
    d->p99_floor_us = a->p99_floor_ms >= 0 ? a->p99_floor_ms * 1000 : w->p99_growth_floor_us;
    if (d->max_s < 1 || d->max_rate_drop >= 1 || d->p99_factor <= 1 || !w->max_s) {
        snprintf(err, errlen, "the decay gate needs windows of at least 1 s, a rate drop under "
                 "1, a p99 growth factor above 1 and the contract's soak.windows");
        return -1;
    }
    return 0;
}

static json_t *plan_json(const struct kb_soakrun *s)
{
    json_t *ph = json_array(), *plan;
    for (size_t i = 0; i < s->nph; i++)
        json_array_append_new(ph, json_pack("{s:s,s:I,s:s}", "route", s->ph[i].route, "rate",
                                            (json_int_t)s->ph[i].rate, "dir", s->ph[i].dir));
    plan = json_pack("{s:s,s:o,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:i,s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:f,s:I,s:I,s:{s:f,s:f},s:{s:f,s:f}}}",
        "runtime", KB_SOAK_RUNTIME, "phases", ph, "duration_s", s->duration_s, "warmup_s", s->warmup_s,
        "settle_s", s->settle_s, "sample_every_s", s->every_s, "drain_s", s->drain_s,
        "threads", s->threads, "connections", s->connections, "db_pool", s->db_pool,
        "backend", s->r.backend, "unconstrained", s->r.fx.no_limits,
        "server_cpus", s->r.fx.server_cpus,
        "client_cpus", s->r.fx.client_cpus, "criteria", "min_delivery", s->crit.min_delivery,
        "client_cpu_max_fraction", s->crit.client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)s->crit.client_lag_p99_max_us, "min_samples", (json_int_t)s->crit.min_samples,
        "rss_growth", "pct_of_mean_per_hour", s->crit.rss.pct_per_hour, "floor_bytes",
        s->crit.rss.floor, "fd_growth", "pct_of_mean_per_hour", s->crit.fds.pct_per_hour,
        "floor_descriptors", s->crit.fds.floor);
    json_object_set_new(json_object_get(plan, "criteria"), "decay", json_pack(
        "{s:f,s:I,s:f,s:f,s:f}", "window_max_s", s->crit.decay.max_s, "windows",
        (json_int_t)kb_soakwin_count(s->duration_s, s->crit.decay.max_s), "max_rate_drop",
        s->crit.decay.max_rate_drop, "p99_growth_factor", s->crit.decay.p99_factor,
        "p99_growth_floor_us", s->crit.decay.p99_floor_us));
    json_object_set_new(plan, "db_mode", s->db_mode ? json_string(s->db_mode) : json_null());
    return plan;
}

/* A run directory holds one plan: a re-run must ask for the same one to resume it. */
int kb_soakrun_write_plan(struct kb_soakrun *s, char *err, size_t errlen)
{
    return kb_run_plan_file(s->r.dir, plan_json(s), "soak plan", err, errlen);
}

/* ---- identity ------------------------------------------------------------------------- */

/* run.json: the skeleton's identity, with gray-static's and PostgreSQL's versions. */
int kb_soakrun_write_identity(struct kb_soakrun *s, int argc, char **argv, char *err, size_t errlen)
{
    char *const names[] = { KB_SOAK_RUNTIME };
    char pg[512];
    json_t *v = kb_run_versions(&s->r, names, 1);
    kb_run_pg_version(&s->r, pg, sizeof(pg));
    json_object_set_new(v, "postgresql", json_string(pg));
    return kb_run_identity(&s->r, argc, argv, "soak", v, NULL, err, errlen);
}


int kb_soakrun_plan(struct kb_soakrun *s, const struct kb_soak_opts *a, char *err, size_t errlen)
{
    return plan(s, a, err, errlen) < 0 || plan_db(s, a, err, errlen) < 0 ||
           plan_decay(s, a, err, errlen) < 0 ? -1 : 0;
}
