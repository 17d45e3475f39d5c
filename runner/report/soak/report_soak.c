/* report_soak.c -- `kneebench soak`'s report.md, from the phases' evidence (report.h):
 * each complete phase's verdict.json (its DONE marker says it is whole), its limits read
 * back, and run.json's identity; beside them the paper's one-hour figures from the contract,
 * labelled as its host's, and each phase's decay windows. Reads files only; a phase without
 * a marker is a row that says INCOMPLETE. */
#define _GNU_SOURCE
#include "runner/report/soak/report_soak.h"
#include "contract/contract.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string member, "" when absent (never NULL into a format). */
static const char *jstr(json_t *o, const char *k)
{
    return kb_jstr(o, k, "");
}

static void report_header(FILE *f, const struct kb_soak_report *s, char *pg, size_t pglen)
{
    char path[KB_PATH_MAX];
    json_t *run;
    fprintf(f, "# kneebench soak -- %s\n\n", s->runtime);
    fprintf(f, "Sequential phases, %g s each after a %g s warmup; server RSS and open descriptors "
            "sampled every %g s from warmup + %g s settling to the end of the measured interval; "
            "%d connections, %d client threads; backend %s%s, server CPUs %s, client CPUs %s.\n\n",
            s->duration_s, s->warmup_s, s->every_s, s->settle_s, s->connections, s->threads,
            s->backend, s->unconstrained ? " (UNCONSTRAINED)" : "", s->server_cpus,
            s->client_cpus);
    fprintf(f, "A phase passes with delivery >= %.3f %%, no socket errors, non-2xx or mismatched "
            "responses, no process exit, a trusted client, and no resource growth: the "
            "least-squares slope of RSS (of descriptors), extrapolated to one hour, must stay "
            "within %.3g %% (%.3g %%) of the series' mean, or its fitted rise over the window "
            "within %.0f bytes (%.3g descriptors). The db phase's /stats gauges must return to "
            "zero after the load. Decay gate: the measured interval is cut into windows of %g s "
            "or a tenth of the phase, whichever is shorter; the phase fails when its last "
            "window's achieved rate is more than %.2f %% below its first's, or its last "
            "window's corrected p99 exceeds %.3g x the first's by more than %.3g ms (docs/"
            "protocol.md, \"The soak's decay gate\"). The tail's level is reported, not "
            "judged.\n\n",
            100 * s->crit->min_delivery, s->crit->rss.pct_per_hour, s->crit->fds.pct_per_hour,
            s->crit->rss.floor, s->crit->fds.floor, s->crit->decay.max_s,
            100 * s->crit->decay.max_rate_drop, s->crit->decay.p99_factor,
            s->crit->decay.p99_floor_us / 1000);
    if (s->db_mode)
        fprintf(f, "The db phase ran gray-static's **%s** /db design: %s.\n\n", s->db_mode,
                !strcmp(s->db_mode, "blocking")
                    ? "the papers' baseline as this suite reads it, task workers each parked "
                      "on a synchronous query over its own connection (their count is the "
                      "fixture's --db-workers, in command.json), the design the paper's one-hour "
                      "db phase ran; its tail is that design's queue (docs/protocol.md, \"The "
                      "blocking baseline\")"
                    : "queries on a pool driven by socket readiness, requests parked meanwhile; "
                      "the paper's one-hour db phase ran the blocking route instead, so its "
                      "figures beside this phase measure another design (--db-mode blocking "
                      "runs the paper's)");
    kb_path(path, sizeof(path), s->run, "run.json");
    if ((run = kb_evidence_load(path, NULL))) {
        json_t *host = json_object_get(run, "host");
        json_t *ver = json_object_get(run, "runtime_versions");
        fprintf(f, "Identity (run.json): started %s; runner sha256 %.16s...; %s; %s, %s, %lld "
                "CPUs; %s.\n\n", jstr(run, "started"), jstr(run, "runner_sha256"),
                jstr(ver, s->runtime), jstr(host, "kernel"), jstr(host, "cpu_model"),
                (long long)json_integer_value(json_object_get(host, "online_cpus")),
                jstr(ver, "postgresql"));
        snprintf(pg, pglen, "%s", jstr(ver, "postgresql"));
        json_decref(run);
    }
    fprintf(f, "| phase | requested/s | achieved/s | delivery | p50 ms | p99 ms | p99.9 ms | "
            "max ms | RSS first..last KiB | RSS slope KiB/h | fds first..last | fds slope /h | "
            "samples | verdict |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---|\n");
}

/* A complete phase's verdict.json, or NULL (no marker, or no verdict). */
static json_t *phase_verdict(const struct kb_soak_planned *p)
{
    char path[KB_PATH_MAX];
    kb_path(path, sizeof(path), p->dir, "DONE");
    if (!kb_file_exists(path))
        return NULL;
    kb_path(path, sizeof(path), p->dir, "verdict.json");
    return kb_evidence_load(path, NULL);
}

static void report_row(FILE *f, const struct kb_soak_planned *p, json_t *v)
{
    json_t *load = json_object_get(v, "load"), *rss = json_object_get(v, "rss_bytes");
    json_t *fds = json_object_get(v, "fds");
    if (!v) {
        fprintf(f, "| %s | %ld | | | | | | | | | | | | INCOMPLETE (no marker or verdict) |\n",
                p->route, p->rate);
        return;
    }
    fprintf(f, "| %s | %ld | %.1f | %.3f %% | %.2f | %.2f | %.2f | %.2f | %.0f..%.0f | %+.1f "
            "| %.0f..%.0f | %+.2f | %lld | **%s**: %s |\n", p->route, p->rate,
            kb_jnum(load, "achieved_rps", NULL), 100 * kb_jnum(load, "delivery", NULL),
            kb_jnum(load, "corrected_us", "p50") / 1000,
            kb_jnum(load, "corrected_us", "p99") / 1000,
            kb_jnum(load, "corrected_us", "p999") / 1000,
            kb_jnum(load, "corrected_us", "max") / 1000,
            kb_jnum(rss, "first", NULL) / 1024, kb_jnum(rss, "last", NULL) / 1024,
            kb_jnum(rss, "per_hour", NULL) / 1024, kb_jnum(fds, "first", NULL),
            kb_jnum(fds, "last", NULL), kb_jnum(fds, "per_hour", NULL),
            (long long)json_integer_value(json_object_get(rss, "n")), jstr(v, "verdict"),
            jstr(v, "reason"));
}

/* One row of a phase beside the paper's: the paper's figure in its own column (through fmt,
 * or "-" where the paper states none), this run's beside it ("-" without a verdict). */
static void beside_row(FILE *f, const char *what, const char *fmt, double paper, double run,
                       int have_run)
{
    char a[48] = "-", b[48] = "-";
    if (paper >= 0)
        snprintf(a, sizeof(a), fmt, paper);
    if (have_run && run >= 0)
        snprintf(b, sizeof(b), fmt, run);
    fprintf(f, "| %s | %s | %s |\n", what, a, b);
}

/* A latency in us as the paper writes it: ms to two decimals, seconds from one second. */
static void lat_text(char *b, size_t len, double us)
{
    if (us < 0)
        snprintf(b, len, "-");
    else
        snprintf(b, len, us >= 1e6 ? "%.2f s" : "%.2f ms", us >= 1e6 ? us / 1e6 : us / 1e3);
}

/* A corrected latency of the phase beside the paper's (us; < 0: not stated). */
static void lat_row(FILE *f, const char *what, double paper, json_t *load, const char *key,
                    int have_run)
{
    char a[48], b[48];
    lat_text(a, sizeof(a), paper);
    lat_text(b, sizeof(b), have_run ? kb_jnum(load, "corrected_us", key) : -1);
    fprintf(f, "| %s | %s | %s |\n", what, a, b);
}

/* first..last of a sampled series (scale: bytes to KiB), "-" without one. */
static void series_row(FILE *f, const char *what, double paper, json_t *ser, double scale)
{
    char a[48] = "-", b[64] = "-";
    if (paper >= 0)
        snprintf(a, sizeof(a), "%.0f, flat", paper);
    if (ser)
        snprintf(b, sizeof(b), "%.0f..%.0f", kb_jnum(ser, "first", NULL) / scale,
                 kb_jnum(ser, "last", NULL) / scale);
    fprintf(f, "| %s | %s | %s |\n", what, a, b);
}

/* One phase, the paper's figures in a column of their own beside this run's. */
static void beside_phase(FILE *f, const struct kb_soak_report *s, size_t i, json_t *v,
                         const struct kb_published_soak_phase *pp, const char *pg)
{
    json_t *load = json_object_get(v, "load"), *rss = json_object_get(v, "rss_bytes");
    int db = !strcmp(s->ph[i].route, "db"), have = v != NULL;
    fprintf(f, "### %s at %ld req/s\n\n| | paper's host%s%s | this run |\n|---|---:|---:|\n",
            s->ph[i].route, s->ph[i].rate, s->paper->section ? ", section " : "",
            s->paper->section ? s->paper->section : "");
    if (pp && pp->rate != s->ph[i].rate)
        fprintf(f, "| requested/s | %ld | %ld |\n", pp->rate, s->ph[i].rate);
    beside_row(f, "achieved/s", "%.2f", pp ? pp->achieved_rps : -1,
               kb_jnum(load, "achieved_rps", NULL), have);
    beside_row(f, "delivery (achieved / requested)", "%.3f %%", pp && pp->achieved_rps >= 0
               ? 100 * pp->achieved_rps / pp->rate : -1, 100 * kb_jnum(load, "delivery", NULL),
               have);
    lat_row(f, "corrected p50", pp ? pp->p50_us : -1, load, "p50", have);
    lat_row(f, "corrected p99", pp ? pp->p99_us : -1, load, "p99", have);
    lat_row(f, "corrected p99.9", pp ? pp->p999_us : -1, load, "p999", have);
    lat_row(f, "corrected max", pp ? pp->max_us : -1, load, "max", have);
    series_row(f, "RSS KiB (this run: first..last sample)", pp ? pp->rss_kib : -1, rss, 1024);
    series_row(f, "descriptors (this run: first..last)", pp ? pp->fds : -1,
               json_object_get(v, "fds"), 1);
    beside_row(f, "samples", "%.0f", pp && pp->observations > 0 ? (double)pp->observations : -1,
               (double)json_integer_value(json_object_get(rss, "n")), have);
    if (db) {
        fprintf(f, "| /db design | %s | %s |\n", pp && pp->db_mode ? pp->db_mode : "-",
                s->db_mode ? s->db_mode : "?");
        fprintf(f, "| PostgreSQL | 16 (the papers') | %s (run.json) |\n", pg[0] ? pg : "unknown");
    }
    fprintf(f, "\n");
}

/* The paper's one-hour phases beside this run's, phase by phase. */
static void paper_section(FILE *f, const struct kb_soak_report *s, json_t **v, const char *pg)
{
    const struct kb_published_soak *ps = s->paper;
    if (!ps || !ps->nphases) {
        fprintf(f, "The contract carries no published one-hour figures (published.soak).\n\n");
        return;
    }
    fprintf(f, "## Beside the paper's one-hour qualification\n\n"
            "Each phase's figures on the paper's host in a column of their own, this run's "
            "beside them; \"-\" where the paper states none. Paper's host: %s (%s).", ps->host,
            ps->source);
    if (ps->note)
        fprintf(f, " %s", ps->note);
    fprintf(f, " Orientation, not a target: another CPU, kernel, virtualisation layer or "
            "client moves every figure, and this run is judged by its own criteria above, "
            "never against that column.\n\n");
    for (size_t i = 0; i < s->nph; i++) {
        const struct kb_published_soak_phase *pp = NULL;
        for (size_t k = 0; k < ps->nphases; k++)
            if (!strcmp(ps->phases[k].route, s->ph[i].route))
                pp = &ps->phases[k];
        beside_phase(f, s, i, v[i], pp, pg);
    }
}

/* One phase's windows, first against last. */
static void windows_section(FILE *f, size_t i, const struct kb_soak_planned *p, json_t *v)
{
    json_t *d = json_object_get(v, "decay"), *w;
    size_t k;
    fprintf(f, "### Phase %zu, %s at %ld/s: %s\n\n", i + 1, p->route, p->rate,
            kb_jstr(d, "verdict", "no decay record"));
    if (!json_array_size(json_object_get(d, "windows"))) {
        fprintf(f, "%s\n\n", kb_jstr(d, "reason", "no windows"));
        return;
    }
    fprintf(f, "| window | from..to s | achieved/s | corrected p99 |\n|---:|---|---:|---:|\n");
    json_array_foreach(json_object_get(d, "windows"), k, w) {
        double p99 = kb_jnum(w, "p99_us", NULL);
        fprintf(f, "| %zu | %g..%g | %.1f |", k + 1, kb_jnum(w, "start_s", NULL),
                kb_jnum(w, "end_s", NULL), kb_jnum(w, "achieved_rps", NULL));
        if (json_is_number(json_object_get(w, "p99_us")))
            fprintf(f, " %s%.2f ms |\n",
                    json_is_true(json_object_get(w, "p99_is_bound")) ? ">= " : "", p99 / 1000);
        else
            fprintf(f, " - |\n");
    }
    fprintf(f, "\n%s.\n\n", kb_jstr(d, "reason", ""));
}

/* Below the table: identity and limits read back, and the db phase's counters. */
static void report_notes(FILE *f, size_t i, const struct kb_soak_planned *p, json_t *v)
{
    char path[KB_PATH_MAX];
    json_t *lim, *st = json_object_get(v, "stats");
    kb_path(path, sizeof(path), p->dir, "fixture/limits.json");
    lim = kb_evidence_load(path, NULL);
    fprintf(f, "- phase %zu (%s, %ld/s): fixture identity %.16s..., limits read back: %g CPU on "
            "cpuset %s, memory %lld bytes, pids %lld (cgroup v%d, %s)", i + 1, p->route, p->rate,
            jstr(v, "identity_sha256"), kb_jnum(lim, "cpus", NULL), jstr(lim, "cpuset"),
            (long long)kb_jnum(lim, "memory_bytes", NULL),
            (long long)kb_jnum(lim, "pids_max", NULL), (int)kb_jnum(lim, "cgroup_version", NULL),
            lim ? jstr(lim, "backend") : "no limits.json");
    if (st)
        fprintf(f, "; /stats: suspended handlers max %lld over %lld reads (%lld failed), gauges "
                "at rest after the load: %s", (long long)kb_jnum(st, "suspended_max", NULL),
                (long long)kb_jnum(st, "reads", NULL),
                (long long)kb_jnum(st, "read_failures", NULL),
                json_is_true(json_object_get(st, "at_rest_after")) ? "yes" : "NO");
    fprintf(f, ".\n");
    json_decref(lim);
}

/* 0 when no file the report reads is a newer kneebench's (an absent one is said in its
 * row); -1 with err naming the first that is. */
static int newer_evidence(const struct kb_soak_report *s, char *err, size_t errlen)
{
    static const char *const per_phase[] = { "verdict.json", "fixture/limits.json" };
    char path[KB_PATH_MAX];
    json_t *j;
    if (kb_evidence_read(kb_path(path, sizeof(path), s->run, "run.json"), &j, err,
                         errlen) == KB_EVIDENCE_REFUSED)
        return -1;
    json_decref(j);
    for (size_t i = 0; i < s->nph; i++)
        for (size_t k = 0; k < 2; k++) {
            if (kb_evidence_read(kb_path(path, sizeof(path), s->ph[i].dir, per_phase[k]), &j,
                                 err, errlen) == KB_EVIDENCE_REFUSED)
                return -1;
            json_decref(j);
        }
    return 0;
}

int kb_report_soak(const struct kb_soak_report *s, size_t *complete, char *err, size_t errlen)
{
    char *buf = NULL, path[KB_PATH_MAX], pg[128] = "";
    size_t len = 0;
    FILE *f;
    json_t **v = calloc(s->nph ? s->nph : 1, sizeof(*v));
    int passed = 0;
    *complete = 0;
    if (newer_evidence(s, err, errlen) < 0) {
        free(v);
        return -1;
    }
    if (!v || !(f = open_memstream(&buf, &len))) {
        snprintf(err, errlen, "report.md: %s", strerror(errno));
        free(v);
        return -1;
    }
    report_header(f, s, pg, sizeof(pg));
    for (size_t i = 0; i < s->nph; i++) {
        v[i] = phase_verdict(&s->ph[i]);
        *complete += v[i] != NULL;
        passed += v[i] && !strcmp(jstr(v[i], "verdict"), "pass");
        report_row(f, &s->ph[i], v[i]);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < s->nph; i++)
        if (v[i])
            report_notes(f, i, &s->ph[i], v[i]);
    fprintf(f, "\n");
    paper_section(f, s, v, pg);
    fprintf(f, "## Decay: each phase's windows, first against last\n\n");
    for (size_t i = 0; i < s->nph; i++) {
        if (v[i])
            windows_section(f, i, &s->ph[i], v[i]);
        json_decref(v[i]);
    }
    free(v);
    fprintf(f, "\n%d of %zu phases passed (%zu complete). Evidence per phase under phases/: "
            "command.json, fixture/ (limits.json read back, identity.json, preflight.json, "
            "fixture.log), load.json, corrected/uncorrected .hgrm, series.csv and series.hlog (the "
            "windows' source), samples.csv, stats.csv (db), verdict.json (with the windows), "
            "DONE.\n", passed, s->nph, *complete);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "report.md: %s", strerror(errno));
        free(buf);
        return -1;
    }
    kb_path(path, sizeof(path), s->run, "report.md");
    if (kb_write_atomic(path, buf, len, err, errlen) < 0)
        passed = -1;
    free(buf);
    return passed;
}
