/* report_md.c -- report.md, written to be read in a terminal: the answer first (the
 * runtimes ranked by their highest controlled rate per route, how each cell was confirmed),
 * then what each response cost the server, the run, the client's margin, every curve
 * (report_md_curves.c) and the identity. Every line outside a code block, tables included,
 * fits KB_REPORT_WRAP columns: wide detail lives in report.csv, report.json and report.html.
 * Each sentence is said only where it describes something in this run, and each term is
 * defined where it first appears. Built in memory, written atomically. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/util/atomicfile.h"
#include "runner/report/report_int.h"
#include "runner/report/report_text.h"
#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define para kb_text_para

/* A string of the evidence, "?" where it is missing. */
static const char *js(json_t *o, const char *k)
{
    return kb_jstr(o, k, "?");
}

/* ---- what stands above the answer ------------------------------------------------------ */

/* "4 runtimes x 2 routes x 7 rates, quick profile" */
static void title(FILE *f, const struct kb_report *r)
{
    fprintf(f, "# kneebench: %zu runtime%s x %zu route%s x %zu rate%s, %s%s",
            kb_report_nruntimes(r), kb_report_nruntimes(r) == 1 ? "" : "s",
            kb_report_nroutes(r), kb_report_nroutes(r) == 1 ? "" : "s", kb_report_nrates(r),
            kb_report_nrates(r) == 1 ? "" : "s", js(r->plan, "profile"),
            r->rd && r->rd->rejudge ? "" : " profile");
    if (r->rd && r->rd->rejudge)
        fprintf(f, ", re-judged: p99 < %g ms, delivery >= %g %%", r->max_p99_us / 1000,
                100 * r->min_delivery);
    fprintf(f, "\n\n");
}

static char *id_list(char **ids, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (size_t i = 0; m && i < n; i++)
        fprintf(m, " `%s`", ids[i]);
    if (m)
        fclose(m);
    return buf;
}

static void stamps(FILE *f, const struct kb_report *r)
{
    json_t *im = json_object_get(r->run, "image");
    if (r->partial) {
        char *ids = id_list(r->missing, r->nmissing);
        para(f, "> **PARTIAL REPORT**: %zu planned point(s) have no complete evidence and are "
             "left out:%s", r->nmissing, ids ? ids : "");
        free(ids);
    }
    /* a container run on another base than the pinned one is not the paper's setup */
    if (json_is_false(json_object_get(im, "base_is_pinned")))
        para(f, "> **BASE NOT PINNED**: %s", js(im, "note"));
    if (r->unconstrained)
        para(f, "> **UNCONSTRAINED**: this run used `--no-limits`; no CPU, memory or process "
             "limit was applied, so no point is comparable with the paper's.");
    if (r->contract_note[0])
        para(f, "> **CONTRACT**: %s.", r->contract_note);
}

/* " `id` stored -> re-judged" per change; a client-limited point whose own verdict changed
 * says that too, since the answer's unproven levels read it. */
static char *change_list(json_t *changed)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (size_t i = 0; m && i < json_array_size(changed); i++) {
        json_t *c = json_array_get(changed, i);
        fprintf(m, "%s `%s` %s -> %s", i ? "," : "", js(c, "point"), js(c, "stored"),
                js(c, "rejudged"));
        if (strcmp(js(c, "stored_server"), js(c, "rejudged_server")))
            fprintf(m, " (own figures: %s -> %s)", js(c, "stored_server"),
                    js(c, "rejudged_server"));
    }
    if (m)
        fclose(m);
    return buf;
}

/* Where the verdicts come from: re-judged under another criterion, or re-derived from the
 * raw files and found as stored (and any point that could not be). */
static void rederived(FILE *f, const struct kb_report *r)
{
    const struct kb_rederive *rd = r->rd;
    json_t *crit = json_object_get(r->plan, "criteria");
    char *ids;
    if (!rd)
        return;
    if (rd->rejudge) {
        ids = change_list(rd->changed);
        para(f, "> **RE-JUDGED**: controlled here means delivery >= %g %% and corrected p99 < "
             "%g ms, not the run's own criterion (delivery >= %g %%, p99 < %g ms). Every verdict "
             "was derived again from the run's raw evidence in the directory above; nothing was "
             "run, and the run's own files are untouched. %zu of %zu point(s) changed their "
             "verdict or their own figures' verdict%s%s", 100 * r->min_delivery,
             r->max_p99_us / 1000, 100 * json_number_value(json_object_get(crit, "min_delivery")),
             json_number_value(json_object_get(crit, "max_p99_us")) / 1000,
             json_array_size(rd->changed), rd->nchecked, ids && *ids ? ":" : ".",
             ids && *ids ? ids : "");
        free(ids);
    } else if (rd->nunchecked) {
        ids = id_list(rd->unchecked, rd->nunchecked);
        para(f, "> **NOT RE-DERIVED**: %zu point(s) have no record of their judgement in their "
             "verdict.json (hand-made or damaged evidence); their stored verdicts are shown "
             "as written:%s", rd->nunchecked, ids ? ids : "");
        free(ids);
    }
}

/* ---- the answer ------------------------------------------------------------------------ */

/* The papers' highest controlled point for rt on route, 0 when none is published. */
static long published(const struct kb_report *r, const char *rt, const char *route)
{
    json_t *hi = json_object_get(r->published, "highest_controlled_rps");
    return (long)json_integer_value(json_object_get(json_object_get(hi, rt), route));
}

static void answer_header(FILE *f, const struct kb_report *r)
{
    fprintf(f, "| rank | runtime |");
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        fprintf(f, " %s |", kb_report_route(r, j));
    fprintf(f, " cost vs %s |%s\n|---:|---|", kb_report_baseline_label(r),
            r->published ? " paper's host |" : "");
    for (size_t j = 0; j < kb_report_nroutes(r) + 1; j++)
        fprintf(f, "---:|");
    fprintf(f, "%s\n", r->published ? "---:|" : "");
}

static void answer_row(FILE *f, const struct kb_report *r, size_t rt_index, int rank,
                       struct kb_answer_used *u)
{
    const char *rt = kb_report_runtime(r, rt_index);
    char cell[96];
    double e = kb_report_efficiency_ratio(r, rt);
    fprintf(f, "| %d | %s |", rank, rt);
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        fprintf(f, " %s |", kb_report_answer_text(cell, sizeof(cell), r, rt,
                                                  kb_report_route(r, j), u));
    e > 0 ? fprintf(f, " %.2f |", e) : fprintf(f, " - |");
    if (r->published) {
        for (size_t j = 0; j < kb_report_nroutes(r); j++) {
            long p = published(r, rt, kb_report_route(r, j));
            p ? fprintf(f, "%s%ld", j ? " / " : " ", p) : fprintf(f, "%s-", j ? " / " : " ");
        }
        fprintf(f, " |");
    }
    fprintf(f, "\n");
}

/* The notation the table used, each said once; nothing about what it did not use. */
static void notation(FILE *f, const struct kb_answer_used *u)
{
    if (u->bound)
        para(f, "\">= N\": the point above N was client-limited (the load generator could have "
             "decided it: by its own delay, or by missing while carrying more than its "
             "calibrated margin covers), so N is a lower bound and the knee lies above it, where "
             "a client with more CPU (or the fixtures on another host's Docker engine) can locate it.");
    if (u->unproven)
        para(f, "\"M*\": the highest rate whose own figures were controlled while the client "
             "was not trusted there: indicative, never counted as proven.");
    if (u->below)
        para(f, "\"< R\": the lowest rate R was already uncontrolled with the client trusted: "
             "the knee lies below the plan's rates.");
    if (u->failed)
        para(f, "\"failed (R)\": nothing held and the lowest rate R failed (wrong bytes, "
             "errors, or the fixture exited); Curves says why.");
    if (u->missing)
        para(f, "\"missing\": no complete evidence for this runtime and route.");
    if (u->past_margin)
        para(f, "\"N^\": N lies above the rates the client's calibrated margin covers (Client "
             "margin), and held there: a controlled point is the server's at any rate, since "
             "the client's own effects only add to its latency (and it sent what was "
             "scheduled). A point that missed while carrying more than the margin covers is "
             "client-limited instead.");
    if (u->refined)
        para(f, "\"N (refined)\": the knee refined between the grid's rates (`--refine`): N "
             "held and the next rate measured above it did not, within the resolution, both "
             "confirmed as the grid's boundary is. The ranking, the cost and report.json read N; "
             "the grid's own highest held rate is in Curves and Refined knees, marked as the "
             "grid's.");
}

/* How the runtimes are ordered, and what the cost column is. */
static void ranking_note(FILE *f, const struct kb_report *r)
{
    para(f, "Ranked by the sum of each runtime's highest rate (proven, or * where higher) over "
         "the routes all ran, then by cost: the server's CPU per response at its own highest "
         "held rate, as a ratio to %s's (lower is cheaper; see Cost per response).",
         kb_report_baseline_label(r));
    if (!kb_report_baseline(r))
        para(f, "This run's plan names no baseline (it was written before plans recorded the "
             "contract's comparison.baseline), so no cost ratio is given.");
}

/* One boundary rate: "60000 held 3/3 (median p99 8.26 ms)"; its samples that were
 * controlled of all it had. */
static void boundary_rate(FILE *f, const struct kb_report *r, const struct kb_boundary *b,
                          const struct kb_boundary_rate *side, const char *sep)
{
    const struct kb_cell *w = kb_report_row(r, b->runtime, b->route, side->rps);
    char p99[32];
    if (!side->rps || !w)
        return;
    fprintf(f, "%s%ld %s %d/%d (p99 %s)", sep, side->rps,
            !strcmp(w->verdict, "controlled") ? "held" : w->verdict, w->controlled_n, w->n,
            kb_text_lat(p99, sizeof(p99), w->p99));
}

/* How each cell of the answer was confirmed: its boundary's samples, judged by their
 * medians (docs/protocol.md, "Confirming the answer"); or why one sample is all it has. */
static void confirmation(FILE *f, const struct kb_report *r)
{
    struct kb_boundary b[64];
    size_t n = kb_report_boundaries(r, b, 64);
    int samples = (int)json_integer_value(json_object_get(r->plan, "confirm_samples"));
    if (samples <= 1 && r->repeats <= 1) {
        para(f, "**One sample per point.** Each cell rests on one measurement at each rate: on a "
             "shared or virtual host a stall during one point can move a cell by a rate step, "
             "so one run alone cannot rank runtimes whose cells are a step apart. `--confirm 3` "
             "samples each cell's boundary until the median of three is decided; `--repeats N` "
             "repeats the whole matrix.");
        return;
    }
    if (samples > 1)
        para(f, "**How each cell was confirmed**: its highest controlled rate and the next one "
             "up were sampled until the median of %d samples was decided (two that agree "
             "plainly decide it), and a rate the client could still have decided got up to "
             "two more; a server started afresh for a round was first driven, unmeasured, at "
             "its lowest rates, as the matrix's climb had warmed it. \"held 2/3\": two of "
             "three samples were controlled on their own, a rate close to the knee. Figures "
             "are medians.", samples);
    else
        para(f, "**How each cell was confirmed**: by the medians of its %d repeats.", r->repeats);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "- %s %s: %s", b[i].runtime, b[i].route, b[i].held.rps ? "" : "none held; ");
        boundary_rate(f, r, &b[i], &b[i].held, "");
        boundary_rate(f, r, &b[i], &b[i].next, b[i].held.rps ? "; " : "");
        fprintf(f, "%s\n", b[i].next.rps ? "" : "; the top rate");
    }
    fprintf(f, "\n");
}

/* What the papers' column is, and why it is no target. */
static void orientation(FILE *f, const struct kb_report *r)
{
    if (!r->published) {
        para(f, "The papers' own figures are not shown: %s.", r->published_note);
        return;
    }
    para(f, "Paper's host: the papers' highest controlled rates (%s), measured on %s, per route "
         "in the order above. They orient, they are no target: another CPU, kernel, "
         "virtualisation layer and client (wrk2 there, kneebench load here) move every one of "
         "them, so this run's runtimes are compared with each other, never with these numbers.",
         js(r->published, "source"), js(r->published, "host"));
    if (r->published_curve)
        para(f, "The %s column's paper's-host figure is the highest rate that held on the "
             "paper's readiness curve for this profile (see Readiness curve below).",
             js(r->published_curve, "route"));
}

/* The host's floor over the run, said once: how far its speed moved while the runtimes ran. */
static void floor_line(FILE *f, const struct kb_report *r)
{
    struct kb_report_floor fl;
    kb_report_floor_of(r, &fl);
    if (!fl.n) {
        para(f, "This run took no floor of the host (it ran %s): its figures are absolute, "
             "and a host's speed moves them between runs.",
             !strcmp(kb_jstr(r->plan, "order", "sequential"), "interleaved")
                 ? "interleaved, but kb-control was not measured" : "the runtimes one after "
                 "another");
        return;
    }
    para(f, "**The host's floor**: kb-control, the cheapest server this kernel allows, driven "
         "at a fixed rate between the runtimes' points, cost %.2f us of CPU a response (%.2f-"
         "%.2f over %d samples): the host's speed moved by %.0f %% during this run, with at "
         "most %.1f %% of the server CPUs stolen during a sample.", fl.med, fl.min, fl.max,
         fl.n, 100 * (fl.max / fl.min - 1), 100 * fl.steal_max);
}

/* Each runtime beside the baseline, per route, in one sentence each: the answer to "by how
 * much", from figures measured seconds apart. */
static void side_by_side(FILE *f, const struct kb_report *r)
{
    const char *base = kb_report_baseline(r);
    int interleaved = !strcmp(kb_jstr(r->plan, "order", "sequential"), "interleaved");
    if (!base)
        return;
    fprintf(f, "### Side by side with %s\n\n", base);
    para(f, "%s Each runtime's knee over %s's (the range its bracket and %s's allow%s), its CPU "
         "a response over %s's at the same rates (median over the rates both were measured at, "
         "with their range)%s. These ratios carry from one host to another; the rates and "
         "microseconds above do not.", interleaved ? "Measured side by side: at each rate "
         "the runtimes ran in turn, seconds apart, in a rotating order." : "Measured one "
         "runtime after another (--order sequential): the host's speed can differ between "
         "them.", base, base, json_object_get(r->refine, "cells") ? "; refined knees where "
         "located" : "", base, r->floor ? ", and over the host's floor measured before each "
         "point" : "");
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        const char *ro = kb_report_route(r, j);
        fprintf(f, "| %s | knee x %s | CPU a response x %s | rates | x the floor |\n"
                "|---|---:|---:|---:|---:|\n", ro, base, base);
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            const char *rt = kb_report_runtime(r, i);
            struct kb_report_side s;
            char k[48], c[48], fl[48];
            kb_report_side_of(r, rt, ro, &s);
            if (!s.n_rates && !s.knee && !s.n_floor)
                continue;
            fprintf(f, "| %s | %s%s | %s | %d | %s |\n", rt,
                    !strcmp(rt, base) ? "" : kb_report_side_mark(&s),
                    !strcmp(rt, base) ? "1" : kb_text_ratio(k, sizeof(k), s.knee, s.knee_lo,
                                                         s.knee_hi),
                    !strcmp(rt, base) ? "1" : kb_text_ratio(c, sizeof(c), s.cost, s.cost_min,
                                                         s.cost_max),
                    s.n_rates, kb_text_ratio(fl, sizeof(fl), s.floor, s.floor_min, s.floor_max));
        }
        fprintf(f, "\n");
    }
    floor_line(f, r);
}

/* The first table: the runtimes in order, the highest controlled rate per route, the cost
 * ratio that orders ties, then how each cell was confirmed. */
static void answer(FILE *f, const struct kb_report *r)
{
    size_t order[64];
    int rank[64];
    struct kb_answer_used u = { 0 };
    size_t n = kb_report_rank(r, order, rank, 64);
    fprintf(f, "## Answer\n\n");
    para(f, "The highest controlled rate per route, in req/s. A point is controlled when its "
         "delivery (achieved over requested rate) is at least %.0f %% and its corrected p99 "
         "(latency measured from each request's intended send time) is under %g ms, with the "
         "load generator trusted: its own delay in sending and reading could not have changed "
         "that verdict (docs/protocol.md, \"Trusting the client\").", 100 * r->min_delivery,
         r->max_p99_us / 1000);
    answer_header(f, r);
    for (size_t i = 0; i < n; i++)
        answer_row(f, r, order[i], rank[i], &u);
    fprintf(f, "\n");
    notation(f, &u);
    kb_report_md_how_much(f, r);
    side_by_side(f, r);
    ranking_note(f, r);
    confirmation(f, r);
    orientation(f, r);
    if (kb_report_nroutes(r))
        fprintf(f, "![corrected p99 vs requested, %s](charts/p99-%s.svg)\n\n",
                kb_report_route(r, 0), kb_report_route(r, 0));
}

/* ---- what a response cost --------------------------------------------------------------- */

static void cost_row(FILE *f, const struct kb_report *r, const char *rt, const char *route)
{
    struct kb_report_cost c, b;
    kb_report_cost_of(r, rt, route, &c);
    kb_report_cost_of(r, kb_report_baseline(r), route, &b);
    const struct kb_cell *w = c.rate ? kb_report_row(r, rt, route, c.rate) : NULL;
    char pss[32] = "-";
    if (w && w->pss_max > 0)
        snprintf(pss, sizeof(pss), "%.1f MiB", (double)w->pss_max / 1048576);
    if (!c.rate) {
        fprintf(f, "| %s | none held | - | - | - | - |\n", rt);
        return;
    }
    if (c.us <= 0) {
        fprintf(f, "| %s | %ld | - | - | - | %s |\n", rt, c.rate, pss);
        return;
    }
    fprintf(f, "| %s | %ld | %.1f us | ", rt, c.rate, c.us);
    b.us > 0 ? fprintf(f, "%.2f | ", c.us / b.us) : fprintf(f, "- | ");
    fprintf(f, "%s%.0f | %s |\n", c.capacity_floor ? ">= " : "~", c.capacity_rps, pss);
}

/* Server CPU per response at each runtime's own highest held rate: how the fast runtimes
 * differ when their knees are past what the client can drive. */
static void cost(FILE *f, const struct kb_report *r)
{
    int figures = 0, floor = 0;
    for (size_t i = 0; i < r->nrows; i++)
        figures |= r->rows[i].cpu_us_per_response.n > 0;
    fprintf(f, "## Cost per response\n\n");
    if (!figures) {
        para(f, "This run's evidence has no server CPU per response (verdict.json's "
             "server.cpu_us_per_response; written by an older kneebench).");
        return;
    }
    para(f, "The server's CPU time over the measured interval divided by the responses it "
         "completed there, at each runtime's own highest held rate (its own figures controlled, "
         "trusted client or not): where its cost per response is lowest before a queue forms. "
         "The ratio is to %s's, lower is cheaper. Capacity is one CPU over that cost, an "
         "estimate of what one CPU would serve if nothing but CPU limited it; \"~\" marks it "
         "an estimate, since queueing raises the tail before the CPU is full. PSS is the "
         "fixture's largest proportional set size at that rate: each page shared between its "
         "processes counted once (RSS, in report.csv, counts php-fpm's shared pages once per "
         "child). The charts show the cost at every rate.", kb_report_baseline_label(r));
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        const char *route = kb_report_route(r, j);
        fprintf(f, "### %s\n\n| runtime | held at req/s | CPU per response | vs %s | "
                "capacity req/s | PSS |\n|---|---:|---:|---:|---:|---:|\n", route,
                kb_report_baseline_label(r));
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            struct kb_report_cost c;
            const char *rt = kb_report_runtime(r, i);
            const struct kb_cell *w = kb_report_row(r, rt, route, kb_report_rate(r, 0));
            if (!w || !w->planned)
                continue;
            kb_report_cost_of(r, rt, route, &c);
            floor |= c.capacity_floor;
            cost_row(f, r, rt, route);
        }
        fprintf(f, "\n![CPU per response vs requested, %s](charts/cpu-%s.svg)\n\n", route, route);
    }
    if (floor)
        para(f, "\">= N\" capacity: one CPU over the measured cost came out below the rate the "
             "runtime held, which its own figures show it served; the held rate stands.");
}

/* ---- the run ----------------------------------------------------------------------------- */

/* The client's threads over every point: lowest and highest run, as asked, and its CPUs. */
static void client_threads(const struct kb_report *r, int *lo, int *hi, int *req, int *cpus)
{
    *lo = *hi = *req = *cpus = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_cell *w = &r->rows[i];
        if (w->threads_max <= 0)
            continue;
        *lo = *lo && *lo < w->threads_min ? *lo : w->threads_min;
        *hi = *hi > w->threads_max ? *hi : w->threads_max;
        *req = w->threads_requested ? w->threads_requested : *req;
        *cpus = *cpus > w->client_cpus ? *cpus : w->client_cpus;
    }
}

static void threads_line(FILE *f, const struct kb_report *r)
{
    int lo, hi, req, cpus;
    char th[32];
    client_threads(r, &lo, &hi, &req, &cpus);
    if (hi <= 0 || req <= 0)
        return;
    snprintf(th, sizeof(th), lo == hi ? "%d" : "%d-%d", lo, hi);
    if (lo == req && hi == req)
        para(f, "The client ran %s load thread%s on %d CPU%s, as the contract asks.", th,
             hi == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s");
    else
        para(f, "The contract's %d client %s the offered load (open loop at the "
             "rate over %lld connections); the client ran one thread per CPU it was given (%s "
             "thread%s on %d CPU%s), since threads sharing a CPU multiply its wake-ups, and "
             "offered that load.", req, req == 1 ? "thread describes" : "threads describe",
             json_integer_value(json_object_get(r->plan, "connections")), th,
             hi == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s");
}

/* What the host withheld from the server's and the client's CPUs over the whole run. */
static void host_line(FILE *f, const struct kb_report *r)
{
    double srv = -1, cli = -1;
    int could = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        srv = r->rows[i].steal_server_max > srv ? r->rows[i].steal_server_max : srv;
        cli = r->rows[i].steal_client_max > cli ? r->rows[i].steal_client_max : cli;
        could += r->rows[i].host_could_decide;
    }
    if (srv < 0 && cli < 0)
        return;
    para(f, "The host withheld (steal: time the hypervisor ran something else while a vCPU of "
         "this machine wanted to) up to %.1f %% of the server's CPUs and %.1f %% of the "
         "client's in any second of any point%s.", 100 * (srv < 0 ? 0 : srv),
         100 * (cli < 0 ? 0 : cli), could ? "; the Curves note the points where that was "
         "enough to explain the verdict" : ", never enough to explain a verdict");
}

/* Achieved counts every response that ended inside the measured interval, the warmup's
 * backlog included: past 100 % where that backlog ended there. */
static void delivery_line(FILE *f, const struct kb_report *r)
{
    double top = 0;
    for (size_t i = 0; i < r->nrows; i++)
        top = r->rows[i].n && r->rows[i].delivery.med > top ? r->rows[i].delivery.med : top;
    if (top > 1.0005)
        para(f, "Delivery reaches %.1f %%: achieved counts every response that ended inside the "
             "measured interval, so a server still answering the warmup's requests there is "
             "credited with them (and one behind at the end is charged).", 100 * top);
}

static void run_summary(FILE *f, const struct kb_report *r)
{
    json_t *p = r->plan;
    fprintf(f, "## Run\n\n");
    para(f, "Started %s. Profile `%s`: %g s warmup, %g s measured, %g s drain per point; "
         "%lld connections; %d repeat(s) of the matrix%s. Sandbox `%s`: server CPUs %s, client "
         "CPUs %s.", js(r->run, "started"), js(p, "profile"), kb_jnum(p, "warmup_s", NULL),
         kb_jnum(p, "duration_s", NULL), kb_jnum(p, "drain_s", NULL),
         json_integer_value(json_object_get(p, "connections")), r->repeats,
         r->repeats > 1 ? ", the runtimes' order rotated between them" : "",
         js(p, "backend"), js(p, "server_cpus"), js(p, "client_cpus"));
    if (r->rd && !r->rd->rejudge)
        para(f, "Every verdict shown was derived again from its point's raw files (load.json, "
             "what verdict.json records the judgement read, the calibration) with the run's "
             "criteria: %zu of %zu point(s) re-derived, each as stored.", r->rd->nchecked,
             r->rd->nchecked + r->rd->nunchecked);
    threads_line(f, r);
    host_line(f, r);
    delivery_line(f, r);
}

/* ---- the client's margin --------------------------------------------------------------- */

/* 1 when the run's command line has --force (run with the margin not proven). */
static int forced(const struct kb_report *r)
{
    json_t *cl = json_object_get(r->run, "command_line");
    for (size_t i = 0; i < json_array_size(cl); i++) {
        const char *a = json_string_value(json_array_get(cl, i));
        if (a && !strcmp(a, "--force"))
            return 1;
    }
    return 0;
}

/* " 100, 200" for the plan's rates the margin covers (cover 1) or not (cover 0); the count. */
static int rates_where(FILE *m, const struct kb_report *r, int cover)
{
    int any = 0;
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if (kb_report_covers(r, kb_report_rate(r, k)) == cover)
            fprintf(m, "%s %ld", any++ ? "," : "", kb_report_rate(r, k));
    return any;
}

/* The plan's rates the margin covers, or not, and what the rows at the uncovered rates are:
 * held to the margin against what they carried, or (a run from before, judgement.h)
 * client-limited by it. */
static void coverage(FILE *f, const struct kb_report *r)
{
    const struct kb_calibrate_result *c = r->cal;
    int limited = 0, points = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    fprintf(m, "The margin covers a point requested at rate R when R x %.2f <= %.0f req/s, so "
            "up to %.0f req/s. Covered:", c->factor, c->margin_rps, c->margin_rps / c->factor);
    fprintf(m, "%s. Not covered:", rates_where(m, r, 1) ? " req/s" : " none");
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].n && kb_report_covers(r, r->rows[i].rate) == 0) {
            points++;
            limited += !strcmp(r->rows[i].verdict, "client-limited");
        }
    if (!rates_where(m, r, 0))
        fprintf(m, " none: every point is inside the proven margin.");
    else if (r->margin_gated)
        fprintf(m, " req/s%s: %d of %d runtime x route row(s) there are marked client-limited "
                "(this run's points were judged when the margin gated them).",
                forced(r) ? " (the curve ran with --force)" : "", limited, points);
    else
        fprintf(m, " req/s. A point requested there keeps its own verdict where it held (the "
                "client's own effects only add to latency) or where it missed while carrying no "
                "more than the margin covers (the client had capacity to spare); one that "
                "missed while carrying more is client-limited. %d of the %d runtime x route "
                "row(s) there are client-limited.", limited, points);
    fclose(m);
    para(f, "%s", text);
    free(text);
}

/* The rungs, compact: their corrected p99 is the harness's floor at that rate. Why a rung
 * missed follows the table. */
static void margin_steps(FILE *f, const struct kb_report *r)
{
    fprintf(f, "| rung | requested/s | achieved/s | in time | harness p99 | client CPU | held |\n"
            "|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < r->cal->nsteps; i++) {
        const struct kb_calibrate_step *s = &r->cal->steps[i];
        char p99[24];
        fprintf(f, "| %zu | %.0f | %.0f | %.1f %% | %s | %.0f %% | %s |\n", i + 1, s->rate,
                s->achieved_rps, 100 * s->delivery, kb_text_us(p99, sizeof(p99),
                s->corrected_p99_us), 100 * s->cpu_fraction, s->held ? "yes" : "no");
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < r->cal->nsteps; i++) {
        const struct kb_calibrate_step *s = &r->cal->steps[i];
        if (!s->held)
            para(f, "Rung %zu missed: %s.", i + 1, s->why);
        if (s->missed_before[0] && s->held)
            para(f, "Rung %zu held at attempt %d; before: %s.", i + 1, s->attempts,
                 s->missed_before);
        else if (s->missed_before[0])   /* the miss above is its last attempt's */
            para(f, "Rung %zu missed at each of %d attempts; before the last: %s.", i + 1,
                 s->attempts, s->missed_before);
    }
}

/* The rule the rungs were held to, as calibrate.json records it. */
static void margin_rule(FILE *f, const struct kb_report *r)
{
    json_t *j = r->cal_json, *cr = json_object_get(j, "criteria");
    if (!strcmp(kb_jstr(cr, "trust_rule", ""), "could-decide"))
        para(f, "Calibrated against the control server (a raw epoll loop serving the "
             "contract's bytes; route `%s`, client CPUs %s, server CPUs %s, %g s per rung). A "
             "rung holds when the client is trusted as on a curve point (its own delay cannot "
             "change the verdict, CPU <= %.0f %%), the control server's point is controlled as "
             "measured, at least %.1f %% of it was answered in time and nothing failed. Its "
             "corrected p99 is the harness's floor at that rate: what the client, kernel and "
             "host add to a server that answers at once.", js(j, "route"),
             js(j, "client_cpus"), js(j, "server_cpus"), kb_jnum(j, "duration_s", NULL),
             100 * kb_jnum(cr, "client_cpu_max_fraction", NULL),
             100 * kb_jnum(cr, "min_delivery", NULL));
    else
        para(f, "Calibrated against the control server (route `%s`, client CPUs %s, server "
             "CPUs %s, %g s per rung) by an older rule: a rung held when client CPU <= %.0f %%, "
             "send-lag and receive-delay p99 <= %g us, delivery >= %.1f %% and no errors.",
             js(j, "route"), js(j, "client_cpus"), js(j, "server_cpus"),
             kb_jnum(j, "duration_s", NULL), 100 * kb_jnum(cr, "client_cpu_max_fraction", NULL),
             kb_jnum(cr, "lag_p99_max_us", NULL), 100 * kb_jnum(cr, "min_delivery", NULL));
}

/* The client's headroom (docs/protocol.md, "Trusting the client"): the margin the client
 * proved against the control server. */
static void client_margin(FILE *f, const struct kb_report *r)
{
    long long quantum = (long long)json_integer_value(json_object_get(r->cal_json,
                                                                      "send_quantum_us"));
    fprintf(f, "## Client margin\n\n");
    if (!r->cal) {
        para(f, "> **NO CALIBRATION PROOF**: this run has no calibration proof (%s). The "
             "client's margin was not measured, so no point is proven free of client limits "
             "beyond its own per-point checks. `kneebench curve --calibrate` proves it.",
             r->cal_note);
        return;
    }
    margin_rule(f, r);
    fprintf(f, "- proven margin: **%.0f req/s** (the highest rate held with every lower rung "
            "held)\n- required: %.0f req/s (%.2f x the curve's top rate %.0f req/s)\n"
            "- proven: **%s**\n\n", r->cal->margin_rps, r->cal->required_rps, r->cal->factor,
            r->cal->up_to_rps, r->cal->proven ? "yes" : "no");
    /* a rung held above a miss is not margin (every rung below must hold), but it is not
     * nothing either: the miss may have been one stall of a shared host */
    if (r->cal->highest_held_rps > r->cal->margin_rps)
        para(f, "The client also held %.0f req/s, above a missed rung: not counted in the "
             "margin, which needs every lower rung held.", r->cal->highest_held_rps);
    if (quantum > 0)
        para(f, "Above %lld req/s per thread the client groups sends on a %lld us grid "
             "(`kneebench load --send-quantum-us`), as in the curve: a wake-up costs this kind "
             "of host more than the send it serves; the wait is part of its own delay.",
             1000000 / quantum, quantum);
    margin_steps(f, r);
    coverage(f, r);
    para(f, "Rungs: calibrate/calibrate.json and calibrate/step-NN.json (step-NN-A.json: "
         "attempt A+1 of a rung tried again).");
}

/* ---- identity ---------------------------------------------------------------------------- */

static void limits_table(FILE *f, const struct kb_report *r)
{
    const char *rt;
    json_t *fx;
    fprintf(f, "### Fixtures: limits read back, identity, preflight\n\n"
            "| runtime | cgroup | CPUs | cpuset | memory MiB | pids | identity | preflight |\n"
            "|---|---|---:|---|---:|---:|---|---|\n");
    json_object_foreach(r->fixtures, rt, fx) {
        json_t *l = json_object_get(fx, "limits"), *p = json_object_get(fx, "preflight");
        const char *id = json_string_value(json_object_get(fx, "identity_sha256"));
        const char *pre = !p ? "not run" : json_is_true(json_object_get(p, "failed"))
                          ? "failed (see Curves)" : "ok";
        if (!json_is_object(l)) {
            /* never started, so nothing was read back: no figure, never a 0 */
            fprintf(f, "| %s | - | - | - | - | - | %.12s | %s |\n", rt, id ? id : "-", pre);
            continue;
        }
        fprintf(f, "| %s | %s v%lld | %.2f | %s | %.0f | %lld | %.12s | %s |\n", rt,
                js(l, "backend"), json_integer_value(json_object_get(l, "cgroup_version")),
                kb_jnum(l, "cpus", NULL), js(l, "cpuset"),
                (double)json_integer_value(json_object_get(l, "memory_bytes")) / (1 << 20),
                json_integer_value(json_object_get(l, "pids_max")), id ? id : "-", pre);
    }
    fprintf(f, "\n");
    para(f, "CPUs: the quota over the period (-1: no limit). Identity: the first 12 hex digits "
         "of the SHA-256 of %s, rechecked after every point; fixtures/<runtime>/limits.json "
         "and identity.json hold the whole.", json_object_get(r->run, "image")
             ? "the image ID and the contract's command"
             : "the fixture's executables and every source file");
}

/* The container image: what ran, and on which base. */
static void image_lines(FILE *f, const struct kb_report *r)
{
    json_t *im = json_object_get(r->run, "image"), *dg = json_object_get(im, "repo_digests");
    fprintf(f, "- backend: `%s`\n", js(r->run, "backend"));
    if (!im)
        return;
    fprintf(f, "- image `%s`\n- image ID `%s`\n", js(im, "image"), js(im, "id"));
    if (!json_array_size(dg))
        fprintf(f, "- digest none (built here, never pushed)\n");
    for (size_t i = 0; i < json_array_size(dg); i++)
        fprintf(f, "- digest `%s`\n", json_string_value(json_array_get(dg, i)));
    fprintf(f, "- base `%s` (%s), %s\n", js(im, "base"), js(im, "base_os"),
            json_is_true(json_object_get(im, "base_is_pinned")) ? "the pinned one"
                                                                : "NOT the pinned one");
    fprintf(f, "- runtime versions below are the image's own\n");
}

/* The fixtures' libmicrohttpd (from the version line of a runtime that names one); runs
 * recorded before it have the runner's own under host. */
static const char *mhd_version(const struct kb_report *r)
{
    json_t *m = json_object_get(r->run, "libmicrohttpd");
    if (json_is_string(m))
        return json_string_value(m);
    return m ? "none recorded (no runtime in this run names one)"
             : js(json_object_get(r->run, "host"), "libmicrohttpd");
}

static void identity(FILE *f, const struct kb_report *r)
{
    json_t *h = json_object_get(r->run, "host"), *v = json_object_get(r->run, "runtime_versions"),
           *val;
    const char *k;
    fprintf(f, "## Identity\n\n- host %s, kernel `%s`, %lld CPUs online\n- CPU `%s`\n"
            "- libmicrohttpd %s\n- runner SHA-256 `%s`\n- contract `%s`\n"
            "- contract SHA-256 `%s`\n- %s\n", js(h, "hostname"), js(h, "kernel"),
            json_integer_value(json_object_get(h, "online_cpus")), js(h, "cpu_model"),
            mhd_version(r), js(r->run, "runner_sha256"), js(r->run, "contract"),
            js(r->run, "contract_sha256"), r->contract_kept
                ? "contract kept as `contract.json`: the one this report read"
                : "contract not kept: the checkout's was read");
    kb_text_wrap(f, js(r->hostclock, "line"));
    image_lines(f, r);
    json_object_foreach(v, k, val) {
        char *line = NULL;
        if (asprintf(&line, "- %s: `%s`", k, json_string_value(val)) >= 0)
            kb_text_wrap(f, line);
        free(line);
    }
    fprintf(f, "\nThe command line:\n\n```\nkneebench");
    for (size_t i = 0; i < json_array_size(json_object_get(r->run, "command_line")); i++)
        fprintf(f, " %s", json_string_value(json_array_get(json_object_get(r->run, "command_line"), i)));
    fprintf(f, "\n```\n\n");
    limits_table(f, r);
}

static int fill_report_md(FILE *f, const void *arg)
{
    const struct kb_report *r = arg;
    title(f, r);
    rederived(f, r);
    stamps(f, r);
    answer(f, r);
    kb_report_md_readiness(f, r);
    cost(f, r);
    run_summary(f, r);
    client_margin(f, r);
    kb_report_md_curves(f, r);
    kb_report_md_refined(f, r);
    identity(f, r);
    para(f, "Generated by `kneebench report` from the evidence in %s only (points/<id>/: "
         "verdict.json, load.json, the .hgrm files, samples.csv, series.csv, hostclock.json; "
         "calibrate/calibrate.json; confirm.json). report.csv and report.json hold the same "
         "rows with every figure, report.html the same with its charts; docs/report-format.md "
         "documents them.", r->rd && r->rd->rejudge ? "the run directory above this one"
                                                     : "this directory");
    return ferror(f) ? -1 : 0;
}

int kb_report_write_md(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    return kb_afile_write_with(kb_path(path, sizeof(path), dir, "report.md"), fill_report_md, r, err,
                               errlen);
}
