/* test_compare.c -- `kneebench compare`'s logic (runner/report/compare/compare.h): the call on one figure's
 * change against the samples' min-max ranges (overlap, apart either way, the floor, too few
 * samples for the chance of ranges apart, lower bounds), then the model of two synthetic runs
 * read through kb_report_load (go made slower in B on purpose, gray-static unchanged), runs
 * with different sample counts at a point (repeats, and confirmation samples the report
 * aggregates), points in one run only, and the markdown (what moved first, the noise floors,
 * unproven answers, one unit per column, only the cells both runs have, no change between
 * bounds) and CSV written from it. */
#define _GNU_SOURCE
#include "runner/report/compare/compare.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "tests/lib/kb_check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct kb_stat st(double med, double min, double max, int n, int bound)
{
    return (struct kb_stat){ med, min, max, n, bound };
}

START_TEST(judge_ranges)
{
    struct kb_stat a = st(1000, 900, 1100, 3, 0);
    struct kb_stat overlap = st(1150, 1050, 1300, 3, 0), up = st(2000, 1800, 2200, 3, 0),
                   down = st(500, 400, 600, 3, 0);
    /* latency: lower is better */
    ck_assert_int_eq(kb_cmp_judge(&a, &overlap, 1, 1.0), KB_CMP_WITHIN);
    ck_assert_int_eq(kb_cmp_judge(&a, &up, 1, 1.0), KB_CMP_WORSE);
    ck_assert_int_eq(kb_cmp_judge(&a, &down, 1, 1.0), KB_CMP_BETTER);
    /* achieved rate: higher is better */
    ck_assert_int_eq(kb_cmp_judge(&a, &up, 0, 1.0), KB_CMP_BETTER);
    ck_assert_int_eq(kb_cmp_judge(&a, &down, 0, 1.0), KB_CMP_WORSE);
}
END_TEST

START_TEST(judge_floor)
{
    /* ranges apart by a hair: noise of the schedule's rounding, not a change */
    struct kb_stat a = st(8000, 7999.9, 8000.0, 3, 0), b = st(8000.2, 8000.1, 8000.3, 3, 0);
    ck_assert_int_eq(kb_cmp_judge(&a, &b, 0, 1.0), KB_CMP_WITHIN);
    ck_assert_int_eq(kb_cmp_judge(&a, &b, 0, 0), KB_CMP_BETTER);    /* ranges alone */
}
END_TEST

START_TEST(judge_one_repeat_and_no_figure)
{
    struct kb_stat a = st(1000, 1000, 1000, 1, 0), b = st(9000, 9000, 9000, 1, 0),
                   three = st(9000, 8000, 9500, 3, 0), none = st(0, 0, 0, 0, 0);
    ck_assert_int_eq(kb_cmp_judge(&a, &b, 1, 1.0), KB_CMP_UNJUDGED_FEW);
    ck_assert_int_eq(kb_cmp_judge(&a, &three, 1, 1.0), KB_CMP_UNJUDGED_FEW);
    ck_assert_int_eq(kb_cmp_judge(&three, &a, 1, 1.0), KB_CMP_UNJUDGED_FEW);
    ck_assert_int_eq(kb_cmp_judge(&none, &three, 1, 1.0), KB_CMP_NO_FIGURE);
    ck_assert_str_eq(kb_cmp_call_words(KB_CMP_UNJUDGED_FEW), "unjudged (too few samples)");
    ck_assert_str_eq(kb_cmp_call_name(KB_CMP_UNJUDGED_FEW), "unjudged_few_samples");
}
END_TEST

/* The chance that a and b alike samples come out with ranges apart, 2 a! b! / (a + b)!, and
 * the call made only where it is at most 10 %, whatever each run's count. */
START_TEST(judge_by_the_chance_of_each_count)
{
    struct kb_stat two = st(1000, 990, 1010, 2, 0), three = st(1000, 990, 1010, 3, 0),
                   five = st(2000, 1900, 2100, 5, 0), one = st(1000, 1000, 1000, 1, 0),
                   nineteen = st(2000, 1900, 2100, 19, 0), hi2 = st(2000, 1900, 2100, 2, 0),
                   hi3 = st(2000, 1900, 2100, 3, 0);
    ck_assert_double_eq_tol(kb_cmp_chance(3, 3), 0.1, 1e-12);
    ck_assert_double_eq_tol(kb_cmp_chance(2, 3), 0.2, 1e-12);
    ck_assert_double_eq_tol(kb_cmp_chance(1, 3), 0.5, 1e-12);
    ck_assert_double_eq_tol(kb_cmp_chance(2, 5), 2.0 / 21, 1e-12);
    ck_assert_double_eq_tol(kb_cmp_chance(5, 2), 2.0 / 21, 1e-12);
    ck_assert_double_eq_tol(kb_cmp_chance(1, 1), 1, 1e-12);
    ck_assert_double_eq_tol(kb_cmp_chance(0, 3), 1, 1e-12);
    /* doubled latency, ranges apart: told from chance only with enough samples on both sides */
    ck_assert_int_eq(kb_cmp_judge(&three, &hi3, 1, 1.0), KB_CMP_WORSE);      /* 10 % */
    ck_assert_int_eq(kb_cmp_judge(&two, &hi3, 1, 1.0), KB_CMP_UNJUDGED_FEW); /* 20 % */
    ck_assert_int_eq(kb_cmp_judge(&two, &hi2, 1, 1.0), KB_CMP_UNJUDGED_FEW); /* 33 % */
    ck_assert_int_eq(kb_cmp_judge(&two, &five, 1, 1.0), KB_CMP_WORSE);       /* 9.5 % */
    ck_assert_int_eq(kb_cmp_judge(&one, &nineteen, 1, 1.0), KB_CMP_WORSE);   /* 10 % */
    ck_assert_int_eq(kb_cmp_judge(&five, &two, 1, 1.0), KB_CMP_BETTER);
}
END_TEST

START_TEST(judge_bounds)
{
    /* a bound hides a higher true value */
    struct kb_stat exact = st(1000, 900, 1100, 3, 0), high_bound = st(5000, 4000, 6000, 3, 1),
                   low_bound = st(500, 400, 600, 3, 1), near_bound = st(1000, 950, 1200, 3, 1);
    ck_assert_int_eq(kb_cmp_judge(&exact, &high_bound, 1, 1.0), KB_CMP_WORSE);   /* rise certain */
    ck_assert_int_eq(kb_cmp_judge(&high_bound, &exact, 1, 1.0), KB_CMP_BETTER);  /* fall to exact */
    ck_assert_int_eq(kb_cmp_judge(&exact, &low_bound, 1, 1.0), KB_CMP_UNJUDGED_BOUND);
    ck_assert_int_eq(kb_cmp_judge(&low_bound, &exact, 1, 1.0), KB_CMP_UNJUDGED_BOUND);
    ck_assert_int_eq(kb_cmp_judge(&exact, &near_bound, 1, 1.0), KB_CMP_UNJUDGED_BOUND);
}
END_TEST

/* ---- two synthetic runs --------------------------------------------------------------- */

static char dirs[2][64];

/* plan: go, gray-static x plaintext x 100, 200, repeats r (ids -rN when r > 1) */
static void write_plan(const char *dir, int repeats)
{
    char path[128], err[256];
    json_t *pts = json_array(), *plan, *run;
    const char *rts[] = { "go", "gray-static" };
    long rates[] = { 100, 200 };
    for (int r = 1; r <= repeats; r++)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 2; k++) {
                char id[64];
                if (repeats > 1)
                    snprintf(id, sizeof(id), "%s-plaintext-%ld-r%d", rts[i], rates[k], r);
                else
                    snprintf(id, sizeof(id), "%s-plaintext-%ld", rts[i], rates[k]);
                json_array_append_new(pts, json_pack("{s:s,s:s,s:s,s:I,s:i}", "id", id,
                    "runtime", rts[i], "route", "plaintext", "rate", (json_int_t)rates[k],
                    "repeat", r));
            }
    plan = json_pack("{s:s,s:f,s:f,s:f,s:i,s:i,s:i,s:[s,s],s:[s],s:[i,i],s:s,s:b,"
                     "s:{s:f,s:i,s:f,s:i},s:o}", "profile", "quick", "duration_s", 1.0,
                     "warmup_s", 0.5, "drain_s", 0.5, "threads", 1, "connections", 4,
                     "repeats", repeats, "runtimes", "go", "gray-static", "routes", "plaintext",
                     "rates", 100, 200, "backend", "native", "unconstrained", 0,
                     "criteria", "min_delivery", 0.95, "max_p99_us", 100000,
                     "client_cpu_max_fraction", 0.9, "client_lag_p99_max_us", 1000, "points", pts);
    ck_assert_ptr_nonnull(plan);
    ck_assert_int_eq(kb_write_json_atomic(kb_path(path, sizeof(path), dir, "plan.json"), plan,
                                          err, sizeof(err)), 0);
    run = json_pack("{s:s,s:[s]}", "started", "2024-01-01T00:00:00Z", "command_line", "curve");
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "run.json"), run, err, sizeof(err));
    json_decref(plan);
    json_decref(run);
}

/* A point whose own figures give server_verdict and whose client was trusted unless
 * verdict is client-limited. */
static void write_point_as(const char *dir, const char *id, long rate, const char *verdict,
                           const char *server_verdict, double achieved, double p99_us)
{
    char pdir[256], path[300], err[256];
    int trusted = strcmp(verdict, "client-limited") != 0;
    json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:{s:b,s:s},s:{s:f,s:f,s:I,s:{s:I},"
                          "s:{s:I,s:f,s:f,s:f,s:f,s:f}}}",
        "point", id, "verdict", verdict, "reason", verdict, "server_verdict", server_verdict,
        "client_trust", "ok", trusted, "reason", trusted ? "" : "client CPU 95 % > 90 %",
        "load", "achieved_rps", achieved, "delivery", achieved / (double)rate,
        "scheduled", (json_int_t)rate, "errors", "total", (json_int_t)0,
        "corrected_us", "count", (json_int_t)200, "p50", p99_us / 4, "p90", p99_us / 2,
        "p99", p99_us, "p999", p99_us, "max", p99_us);
    ck_assert_ptr_nonnull(v);
    /* a backlog's answers may lift delivery past 1 by the warmup's share (evidence.h) */
    json_object_set_new(json_object_get(v, "load"), "warmup_s", json_real(1));
    json_object_set_new(json_object_get(v, "load"), "duration_s", json_real(1));
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    kb_mkdirs(pdir, err, sizeof(err));
    kb_write_json_atomic(kb_path(path, sizeof(path), pdir, "verdict.json"), v, err, sizeof(err));
    kb_write_atomic(kb_path(path, sizeof(path), pdir, "DONE"), "{}", 2, err, sizeof(err));
    json_decref(v);
}

static void write_point(const char *dir, const char *id, long rate, const char *verdict,
                        double achieved, double p99_us)
{
    write_point_as(dir, id, rate, verdict, verdict, achieved, p99_us);
}

/* Run i: gray-static the same in both; go in B delivering 4 % less with 5x the p99 at 100
 * (still controlled), and uncontrolled at 200. Repeats spread p99 by +-10 %. */
static void write_run(int i, int repeats)
{
    write_plan(dirs[i], repeats);
    for (int r = 1; r <= repeats; r++) {
        double wobble = 1 + 0.1 * (r - 2);
        char sfx[8] = "", id[64];
        if (repeats > 1)
            snprintf(sfx, sizeof(sfx), "-r%d", r);
        for (long rate = 100; rate <= 200; rate += 100) {
            snprintf(id, sizeof(id), "gray-static-plaintext-%ld%s", rate, sfx);
            /* in B a hair lower: a change that rounds to nothing, never "-0.0 %" */
            write_point(dirs[i], id, rate, "controlled", rate * (1 + 0.001 * r) - 0.0001 * i,
                        900 * wobble);
            snprintf(id, sizeof(id), "go-plaintext-%ld%s", rate, sfx);
            if (i == 0)
                write_point(dirs[i], id, rate, "controlled", rate * (1 + 0.001 * r), 1000 * wobble);
            else if (rate == 100)
                write_point(dirs[i], id, rate, "controlled", 95.5 + 0.1 * r, 5000 * wobble);
            else
                write_point(dirs[i], id, rate, "uncontrolled", 150 + r, 300000 * wobble);
        }
    }
}

static void setup(void)
{
    for (int i = 0; i < 2; i++) {
        snprintf(dirs[i], sizeof(dirs[i]), "/tmp/kb-compare-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dirs[i]));
    }
}

static void teardown(void)
{
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dirs[0], dirs[1]);
    ck_assert_int_eq(system(cmd), 0);
}

struct loaded {
    struct kb_report r[2];
    struct kb_cmp c;
};

static void load_both(struct loaded *l)
{
    char err[256];
    for (int i = 0; i < 2; i++)
        ck_assert_msg(kb_report_load(dirs[i], &l->r[i], err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(kb_cmp_build(&l->r[0], &l->r[1], KB_CMP_FLOOR_PCT, &l->c, err, sizeof(err)), 0);
}

static void free_both(struct loaded *l)
{
    kb_cmp_free(&l->c);
    kb_report_free(&l->r[0]);
    kb_report_free(&l->r[1]);
}

static const struct kb_cmp_point *point(const struct kb_cmp *c, const char *id)
{
    for (size_t i = 0; i < c->npoints; i++)
        if (!strcmp(c->points[i].id, id))
            return &c->points[i];
    ck_abort_msg("no point %s", id);
    return NULL;
}

static const struct kb_cmp_tally *tally(const struct kb_cmp *c, const char *rt)
{
    for (size_t i = 0; i < c->ntally; i++)
        if (!strcmp(c->tally[i].runtime, rt))
            return &c->tally[i];
    ck_abort_msg("no tally for %s", rt);
    return NULL;
}

START_TEST(slowed_runtime_found)
{
    struct loaded l;
    const struct kb_cmp_point *p;
    write_run(0, 3);
    write_run(1, 3);
    load_both(&l);
    ck_assert_uint_eq(l.c.npoints, 4);
    p = point(&l.c, "go-plaintext-100");
    ck_assert_int_eq(p->achieved.call, KB_CMP_WORSE);
    ck_assert_int_eq(p->p99.call, KB_CMP_WORSE);
    ck_assert_double_eq_tol(p->p99.pct, 400, 1e-6);
    ck_assert_double_eq_tol(p->achieved.pct, (95.7 - 100.2) / 100.2 * 100, 1e-6);
    p = point(&l.c, "go-plaintext-200");
    ck_assert_str_eq(p->verdict_a, "controlled");
    ck_assert_str_eq(p->verdict_b, "uncontrolled");
    p = point(&l.c, "gray-static-plaintext-200");
    ck_assert_int_eq(p->achieved.call, KB_CMP_WITHIN);
    ck_assert_int_eq(p->p99.call, KB_CMP_WITHIN);
    ck_assert_int_eq(tally(&l.c, "go")->worse, 2);
    ck_assert_int_eq(tally(&l.c, "go")->p99_worse, 2);
    ck_assert_int_eq(tally(&l.c, "gray-static")->worse, 0);
    ck_assert_int_eq(tally(&l.c, "gray-static")->better, 0);
    ck_assert_int_eq(tally(&l.c, "gray-static")->unjudged, 0);
    /* highest controlled: go 200 -> 100, gray-static 200 both */
    ck_assert_uint_eq(l.c.ntops, 2);
    ck_assert_str_eq(l.c.tops[0].runtime, "go");
    ck_assert_int_eq(l.c.tops[0].a.proven, 200);
    ck_assert_int_eq(l.c.tops[0].b.proven, 100);
    ck_assert_int_eq(l.c.tops[1].b.proven, 200);
    free_both(&l);
}
END_TEST

START_TEST(one_repeat_unjudged)
{
    struct loaded l;
    write_run(0, 1);
    write_run(1, 1);
    load_both(&l);
    for (size_t i = 0; i < l.c.npoints; i++) {
        ck_assert_int_eq(l.c.points[i].achieved.call, KB_CMP_UNJUDGED_FEW);
        ck_assert_int_eq(l.c.points[i].p99.call, KB_CMP_UNJUDGED_FEW);
    }
    ck_assert_int_eq(tally(&l.c, "go")->unjudged, 2);
    free_both(&l);
}
END_TEST

START_TEST(points_in_one_run_counted)
{
    struct loaded l;
    char path[256];
    write_run(0, 3);
    write_run(1, 3);
    /* every repeat of go 200 incomplete in B: no evidence there, so not compared */
    for (int r = 1; r <= 3; r++) {
        snprintf(path, sizeof(path), "%s/points/go-plaintext-200-r%d/DONE", dirs[1], r);
        ck_assert_int_eq(unlink(path), 0);
    }
    load_both(&l);
    ck_assert_uint_eq(l.c.npoints, 3);
    ck_assert_uint_eq(l.c.only_a, 1);
    ck_assert_uint_eq(l.c.only_b, 0);
    ck_assert_uint_eq(l.r[1].nmissing, 3);
    free_both(&l);
}
END_TEST

static char *written(struct loaded *l, int csv)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(csv ? kb_cmp_write_csv(f, &l->c)
                         : kb_cmp_write_md(f, &l->c, &l->r[0], &l->r[1], "A-dir", "B-dir"), 0);
    fclose(f);
    return buf;
}

static int fields(const char *line)
{
    int n = 1;
    for (; *line && *line != '\n'; line++)
        n += *line == ',';
    return n;
}

/* The text of the markdown's section that starts with head, up to the next "## ". */
static char *section(const char *md, const char *head)
{
    const char *at = strstr(md, head), *end;
    ck_assert_msg(at != NULL, "no section %s", head);
    end = strstr(at + strlen(head), "\n## ");
    return strndup(at, end ? (size_t)(end - at) : strlen(at));
}

/* The cells of a markdown table row, trimmed, into cell[] (at most max); their count. */
static int cells(const char *row, char cell[][64], int max)
{
    int n = 0;
    const char *p = strchr(row, '|');
    while (p && p[1] && p[1] != '\n' && n < max) {
        const char *e = strchr(p + 1, '|');
        size_t len;
        if (!e)
            break;
        while (*++p == ' ')
            ;
        for (len = (size_t)(e - p); len && p[len - 1] == ' '; len--)
            ;
        snprintf(cell[n++], 64, "%.*s", (int)len, p);
        p = e;
    }
    return n;
}

START_TEST(markdown_and_csv)
{
    struct loaded l;
    char *md, *csv, *line, *moved, *pts, cell[16][64], head[16][64];
    const char *row;
    int header, ncols;
    write_run(0, 3);
    write_run(1, 3);
    load_both(&l);
    md = written(&l, 0);
    ck_assert_ptr_nonnull(strstr(md, "- go: worse beyond noise at 2 of 2 points (achieved rate at 2, p99 at 2)"));
    ck_assert_ptr_nonnull(strstr(md, "- gray-static: no change beyond noise at 2 points"));
    ck_assert_ptr_nonnull(strstr(md, "| go | plaintext | 200 | 100 | -50.0 % |"));
    ck_assert_ptr_nonnull(strstr(md, "| gray-static | plaintext | 200 | 200 | same |"));
    ck_assert_ptr_nonnull(strstr(md, "| go-plaintext-200 | controlled -> uncontrolled |"));
    ck_assert_ptr_nonnull(strstr(md, "worse, beyond noise"));
    ck_assert_ptr_nonnull(strstr(md, "| A | A-dir |"));
    /* what moved comes first: the largest move, then the rest, the answers, the noise */
    moved = section(md, "## What moved (B against A)");
    ck_assert_ptr_nonnull(strstr(moved, "Largest moves beyond noise, of 8 figures judged (were "
                                        "nothing changed, chance alone would call about 0.8 "
                                        "of them beyond noise):\n\n"
                                        "- go-plaintext-200: p99 1.000 -> 300.000 ms "
                                        "(+29900.0 %), worse; 3 and 3 samples\n"
                                        "- go-plaintext-100: p99 1.000 -> 5.000 ms (+400.0 %), "
                                        "worse; 3 and 3 samples\n"));
    ck_assert_ptr_nonnull(strstr(moved, "- go-plaintext-200: achieved rate 200.4 -> 152.0 req/s"));
    ck_assert_ptr_nonnull(strstr(moved, "- go plaintext: 200 -> 100\n"));
    ck_assert_ptr_null(strstr(moved, "- gray-static plaintext:"));
    ck_assert_ptr_nonnull(strstr(moved, "- A: achieved rate 0.2 % (largest 0.2 %); p99 20.0 % "
                                        "(largest 20.0 %); 4 of 4 points have 2 or more "
                                        "samples\n"));
    ck_assert(strstr(md, "## What moved") < strstr(md, "## Highest controlled point"));
    /* a change that rounds to nothing is 0.0 %, never signed */
    ck_assert_ptr_null(strstr(md, "-0.0 %"));
    ck_assert_ptr_null(strstr(md, "+0.0 %"));
    /* the points table: no header twice, one unit per p99 column, named in its header */
    pts = section(md, "## Points in both runs");
    row = strstr(pts, "| point |");
    ck_assert_ptr_nonnull(row);
    ncols = cells(row, head, 16);
    ck_assert_int_eq(ncols, 11);
    for (int i = 0; i < ncols; i++)
        for (int k = i + 1; k < ncols; k++)
            ck_assert_str_ne(head[i], head[k]);
    ck_assert_str_eq(head[7], "p99 A (ms)");
    ck_assert_str_eq(head[8], "p99 B (ms)");
    for (row = strstr(pts, "| gray-static-plaintext-100 |"); row; row = NULL) {
        ck_assert_int_eq(cells(row, cell, 16), 11);
        ck_assert_str_eq(cell[7], "0.900 (0.810-0.990)");
        ck_assert_str_eq(cell[5], "0.0 %");
    }
    row = strstr(pts, "| go-plaintext-200 |");
    ck_assert_int_eq(cells(row, cell, 16), 11);
    ck_assert_str_eq(cell[2], "3, 3");
    ck_assert_str_eq(cell[8], "300.000 (270.000-330.000)");
    csv = written(&l, 1);
    header = fields(csv);
    ck_assert_int_eq(header, 39);
    for (line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
        ck_assert_int_eq(fields(line + 1), header);
    ck_assert_ptr_nonnull(strstr(csv, "highest,go,plaintext,,,,,200,0,,100,0,,"));
    ck_assert_ptr_nonnull(strstr(csv, "point,go,plaintext,100,go-plaintext-100,controlled,controlled,"));
    ck_assert_ptr_nonnull(strstr(csv, ",1000.000,900.000,1100.000,0,3,5000.000,4500.000,5500.000,"
                                      "0,3,400.000,0.1000,worse\n"));
    free(moved);
    free(pts);
    free(md);
    free(csv);
    free_both(&l);
}
END_TEST

/* B's go was never trusted, but its own figures held both rates: its answer is unproven, not
 * "none". */
START_TEST(unproven_answers_shown_as_such)
{
    struct loaded l;
    char *md;
    write_run(0, 1);
    write_plan(dirs[1], 1);
    write_point(dirs[1], "gray-static-plaintext-100", 100, "controlled", 100, 900);
    write_point(dirs[1], "gray-static-plaintext-200", 200, "controlled", 200, 900);
    write_point_as(dirs[1], "go-plaintext-100", 100, "client-limited", "controlled", 100, 900);
    write_point_as(dirs[1], "go-plaintext-200", 200, "client-limited", "controlled", 200, 900);
    load_both(&l);
    md = written(&l, 0);
    ck_assert_ptr_nonnull(strstr(md, "| go | plaintext | 200 | none proven; 200 unproven | - |"));
    ck_assert_ptr_nonnull(strstr(md, "- go plaintext: 200 -> none proven; 200 unproven\n"));
    ck_assert_ptr_null(strstr(md, "| none |"));
    free(md);
    free_both(&l);
}
END_TEST

/* A with 3 repeats, B with 5: each figure judged by its own counts (chance 2 3! 5! / 8!). */
START_TEST(different_sample_counts_judged_by_their_chance)
{
    struct loaded l;
    const struct kb_cmp_point *p;
    char *md;
    write_run(0, 3);
    write_run(1, 5);
    load_both(&l);
    p = point(&l.c, "go-plaintext-100");
    ck_assert_int_eq(p->p99.a.n, 3);
    ck_assert_int_eq(p->p99.b.n, 5);
    ck_assert_double_eq_tol(p->p99.chance, 2.0 * 6 * 120 / 40320, 1e-12);
    ck_assert_int_eq(p->p99.call, KB_CMP_WORSE);
    ck_assert_int_eq(point(&l.c, "gray-static-plaintext-100")->p99.call, KB_CMP_WITHIN);
    md = written(&l, 0);
    ck_assert_ptr_nonnull(strstr(md, "p99 1.000 -> 5.500 ms (+450.0 %), worse; 3 and 5 samples\n"));
    free(md);
    free_both(&l);
}
END_TEST

/* Confirmation samples (confirm.json) at points of runs of one repeat: the report aggregates
 * them into their rows, so compare judges those points -- 3 and 3 samples -- and leaves 1 and
 * 3 unjudged, as it does 1 and 1. */
static void add_confirm(int i, const char *id, long rate, double achieved, double p99_us)
{
    char cid[2][80], path[128], err[256];
    json_t *cf;
    for (int k = 0; k < 2; k++) {
        snprintf(cid[k], sizeof(cid[k]), "%s-c%d", id, k + 2);
        write_point(dirs[i], cid[k], rate, "controlled", achieved, p99_us * (1 + 0.05 * k));
    }
    cf = json_pack("{s:i,s:i,s:[{s:s,s:s,s:s,s:I,s:i},{s:s,s:s,s:s,s:I,s:i}]}",
                   "schema_version", 1, "samples", 3, "points",
                   "id", cid[0], "runtime", "go", "route", "plaintext", "rate", (json_int_t)rate,
                   "sample", 2,
                   "id", cid[1], "runtime", "go", "route", "plaintext", "rate", (json_int_t)rate,
                   "sample", 3);
    ck_assert_ptr_nonnull(cf);
    ck_assert_int_eq(kb_write_json_atomic(kb_path(path, sizeof(path), dirs[i], "confirm.json"),
                                          cf, err, sizeof(err)), 0);
    json_decref(cf);
}

START_TEST(confirmation_samples_are_samples)
{
    struct loaded l;
    const struct kb_cmp_point *p;
    write_run(0, 1);
    write_run(1, 1);
    add_confirm(0, "go-plaintext-100", 100, 100.1, 1050);
    add_confirm(1, "go-plaintext-100", 100, 95.7, 5250);
    load_both(&l);
    p = point(&l.c, "go-plaintext-100");
    ck_assert_int_eq(p->p99.a.n, 3);
    ck_assert_int_eq(p->p99.b.n, 3);
    ck_assert_int_eq(p->p99.call, KB_CMP_WORSE);
    ck_assert_int_eq(point(&l.c, "go-plaintext-200")->p99.call, KB_CMP_UNJUDGED_FEW);
    ck_assert_int_eq(l.c.noise[0].rows_sampled, 1);
    ck_assert_int_eq(l.c.noise[0].p99_n, 1);
    free_both(&l);
    teardown();
    setup();
    write_run(0, 1);
    write_run(1, 1);
    add_confirm(1, "go-plaintext-100", 100, 95.7, 5250);     /* B only: 1 and 3 */
    load_both(&l);
    p = point(&l.c, "go-plaintext-100");
    ck_assert_int_eq(p->p99.a.n, 1);
    ck_assert_int_eq(p->p99.b.n, 3);
    ck_assert_double_eq_tol(p->p99.chance, 0.5, 1e-12);
    ck_assert_int_eq(p->p99.call, KB_CMP_UNJUDGED_FEW);
    free_both(&l);
}
END_TEST

/* B planned a runtime A did not: its cells are counted once, never shown against "not run";
 * A's go answer is a lower bound, so its change to B's is at most what it says; a p99 past a
 * second stays in ms like every other. */
START_TEST(only_what_both_runs_have)
{
    struct loaded l;
    char *md, *pts, path[128], err[256], cell[16][64];
    json_t *plan;
    write_run(0, 1);
    write_run(1, 1);
    write_point_as(dirs[0], "go-plaintext-200", 200, "client-limited", "controlled", 200, 1000);
    write_point(dirs[1], "go-plaintext-200", 200, "controlled", 200, 1000);
    write_point(dirs[1], "gray-static-plaintext-200", 200, "uncontrolled", 150, 2500000);
    plan = json_load_file(kb_path(path, sizeof(path), dirs[1], "plan.json"), 0, NULL);
    ck_assert_ptr_nonnull(plan);
    json_array_append_new(json_object_get(plan, "runtimes"), json_string("node"));
    for (long rate = 100; rate <= 200; rate += 100) {
        char id[64];
        snprintf(id, sizeof(id), "node-plaintext-%ld", rate);
        json_array_append_new(json_object_get(plan, "points"), json_pack("{s:s,s:s,s:s,s:I,s:i}",
            "id", id, "runtime", "node", "route", "plaintext", "rate", (json_int_t)rate,
            "repeat", 1));
        write_point(dirs[1], id, rate, "controlled", rate, 900);
    }
    ck_assert_int_eq(kb_write_json_atomic(path, plan, err, sizeof(err)), 0);
    json_decref(plan);
    load_both(&l);
    md = written(&l, 0);
    ck_assert_ptr_null(strstr(md, "not run"));
    ck_assert_ptr_null(strstr(md, "| node |"));
    ck_assert_ptr_null(strstr(md, "- node plaintext"));
    ck_assert_ptr_nonnull(strstr(md, "\n1 runtime-route cell ran in one run only (0 in A, 1 in "
                                     "B): left out.\n"));
    ck_assert_ptr_nonnull(strstr(md, "| go | plaintext | >= 100; 200 unproven | 200 | "
                                     "<= +100.0 % |"));
    ck_assert_ptr_null(strstr(md, "(s)"));
    pts = section(md, "## Points in both runs");
    ck_assert_int_eq(cells(strstr(pts, "| gray-static-plaintext-200 |"), cell, 16), 11);
    ck_assert_str_eq(cell[8], "2500.000");
    free(pts);
    free(md);
    free_both(&l);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("compare");
    TCase *judge = tcase_create("judge"), *runs = tcase_create("runs");
    tcase_add_test(judge, judge_ranges);
    tcase_add_test(judge, judge_floor);
    tcase_add_test(judge, judge_one_repeat_and_no_figure);
    tcase_add_test(judge, judge_by_the_chance_of_each_count);
    tcase_add_test(judge, judge_bounds);
    tcase_add_checked_fixture(runs, setup, teardown);
    tcase_add_test(runs, slowed_runtime_found);
    tcase_add_test(runs, one_repeat_unjudged);
    tcase_add_test(runs, points_in_one_run_counted);
    tcase_add_test(runs, markdown_and_csv);
    tcase_add_test(runs, unproven_answers_shown_as_such);
    tcase_add_test(runs, different_sample_counts_judged_by_their_chance);
    tcase_add_test(runs, confirmation_samples_are_samples);
    tcase_add_test(runs, only_what_both_runs_have);
    suite_add_tcase(s, judge);
    suite_add_tcase(s, runs);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "compare");
}
