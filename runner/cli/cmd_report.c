/* cmd_report.c -- `kneebench report DIR`: report.md, report.csv, report.json and charts from
 * a run directory's evidence. Every complete point's verdict is first derived again from
 * its raw files (report_rejudge.c); a stored verdict that does not follow is refused, naming
 * the point. Refuses a run with missing or incomplete points, naming them; --partial writes
 * it anyway, stamped as partial everywhere. --max-p99-ms / --min-delivery judge the run
 * again under that criterion into DIR/rejudged-p99-<N>ms-d<F>/, never over DIR's files. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/opts.h"
#include "runner/report/knee/knee_report.h"
#include "runner/report/report.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(FILE *f)
{
    fprintf(f, "usage: kneebench report [--partial] [--max-p99-ms N] [--min-delivery F] DIR\n"
               "  writes DIR/report.md, report.csv, report.json and charts/*.svg from the\n"
               "  evidence in DIR; refuses when a planned point is missing or incomplete\n"
               "  unless --partial (the report is then stamped PARTIAL).\n"
               "  Every verdict is first derived again from the point's raw files (load.json,\n"
               "  what verdict.json records the judgement read, calibrate/calibrate.json) with\n"
               "  the run's own criteria; a stored verdict that does not follow is refused,\n"
               "  naming the point, the stored and the re-derived verdict.\n"
               "  --max-p99-ms N, --min-delivery F: judge the finished run again under that\n"
               "  criterion (controlled = delivery >= F and corrected p99 < N ms; the one not\n"
               "  given stays the run's) from its raw files, running nothing; the report goes\n"
               "  to DIR/rejudged-p99-<N>ms-d<F>/ and names the criterion on its first line.\n"
               "  DIR's own files are never written.\n"
               "  The papers' figures and the runtimes' order come from DIR/contract.json, the\n"
               "  contract the run ran under, not the checkout's (a warning when they differ).\n"
               "  Evidence files carry schema_version; one this kneebench does not know is\n"
               "  refused, naming the file.\n"
               "  report.csv and report.json: docs/report-format.md (schema_version 4).\n"
               "exit: 0 written; 1 an incomplete run or a stored verdict that does not follow\n"
               "      refused, or a file could not be written;\n"
               "      2 bad usage, DIR is not a run directory of this user's that no one else may\n"
               "      write, its plan names a runtime, route or point other than by a plain\n"
               "      name (or more than 64 of any), or a newer kneebench wrote it.\n");
    return f == stdout ? 0 : 2;
}

static void name_missing(const struct kb_report *r)
{
    fprintf(stderr, "kneebench report: %zu planned point(s) have no complete evidence:",
            r->nmissing);
    for (size_t i = 0; i < r->nmissing; i++)
        fprintf(stderr, "%s %s", i % 6 == 0 ? "\n " : "", r->missing[i]);
    fprintf(stderr, "\n");
}

/* 0 when every re-derived verdict follows (and, re-judging, every point could be); else
 * each point named on stderr, and 1. */
static int rederived_ok(const struct kb_rederive *rd)
{
    for (size_t i = 0; i < rd->nmismatch; i++)
        fprintf(stderr, "kneebench report: %s\n", rd->mismatch[i]);
    if (rd->nmismatch) {
        fprintf(stderr, "kneebench report: refusing: %zu stored judgement(s) do not follow from "
                "the run's raw files\n", rd->nmismatch);
        return 1;
    }
    for (size_t i = 0; i < rd->nunchecked; i++)
        fprintf(stderr, "kneebench report: point %s: %s\n", rd->unchecked[i], rd->rejudge
                ? "cannot be re-judged: its verdict.json has no record of its judgement"
                : "not re-derived: its verdict.json has no record of its judgement; "
                  "its stored verdict is shown as written");
    return rd->rejudge && rd->nunchecked ? 1 : 0;
}

/* --max-p99-ms and --min-delivery, read through runner/util/opts.h. 0, or 2 said on stderr. */
static int criterion_opt(int o, const char *v, double *p99_ms, double *delivery)
{
    char e[320];
    if (o == 'm' ? kb_opt_number("--max-p99-ms", v, KB_BOUND(P99_MS), p99_ms, e, sizeof(e))
                 : kb_opt_fraction("--min-delivery", v, KB_BOUND(DELIVERY), delivery, e,
                                   sizeof(e))) {
        fprintf(stderr, "kneebench report: %s\n", e);
        return 2;
    }
    return 0;
}

/* out, and its charts/ when there, a directory of this user's that no one else may write
 * (paths.h): checked before the first file is written, so a planted link costs nothing. */
static int out_own(const char *out, char *err, size_t errlen)
{
    char charts[KB_PATH_MAX];
    return kb_dir_own(out, 0, err, errlen) < 0 ||
           !kb_path(charts, sizeof(charts), out, "charts") ||
           kb_dir_own(charts, 1, err, errlen) < 0 ? -1 : 0;
}

static int write_all(const struct kb_report *r, const char *out, char *err, size_t errlen)
{
    return kb_report_write_md(r, out, err, errlen) < 0 ||
           kb_report_write_csv(r, out, err, errlen) < 0 ||
           kb_report_write_json(r, out, err, errlen) < 0 ||
           kb_report_write_svg(r, out, err, errlen) < 0 ||
           kb_report_write_html(r, out, err, errlen) < 0 ? -1 : 0;
}

/* The run's own criterion, for the one a re-judgement does not override. */
static double plan_criterion(const char *dir, const char *key)
{
    char path[KB_PATH_MAX];
    json_t *plan = kb_evidence_load(kb_path(path, sizeof(path), dir, "plan.json"), NULL);
    double v = json_number_value(json_object_get(json_object_get(plan, "criteria"), key));
    json_decref(plan);
    return v;
}

/* A knee search's report (runner/report/knee/knee_report.h), its headline first. */
static int knee_report(const char *dir)
{
    struct kb_knee_doc d;
    char err[1024], line[512];
    int rc = 0;
    /* unreadable, not a knee's, or a newer kneebench's: 2, as for a curve's run */
    if (kb_knee_doc_load(dir, &d, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench report: %s\n", err);
        return 2;
    }
    kb_knee_headline(&d, line, sizeof(line));
    printf("%s\n", line);
    if (kb_knee_report_write(dir, &d, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench report: %s\n", err);
        rc = 1;
    }
    kb_knee_doc_free(&d);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = { { "partial", 0, 0, 'p' }, { "help", 0, 0, 'h' },
                                          { "max-p99-ms", 1, 0, 'm' },
                                          { "min-delivery", 1, 0, 'd' }, { 0, 0, 0, 0 } };
    struct kb_report r;
    struct kb_rederive rd = { 0 };
    char err[1024], out[KB_PATH_MAX];
    double p99_ms = -1, delivery = -1;
    int partial = 0, o, rc = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'p')
            partial = 1;
        else if (o == 'm' || o == 'd') {
            if (criterion_opt(o, optarg, &p99_ms, &delivery))
                return 2;
            rd.rejudge = 1;
        } else
            return usage(o == 'h' ? stdout : stderr);
    }
    if (optind != argc - 1)
        return usage(stderr);
    /* the report is written into DIR as whoever runs it, often root: a directory another
     * user may write could hold a link (charts -> anywhere) that redirects those writes */
    if (out_own(argv[optind], err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench report: %s\n", err);
        return 2;
    }
    if (kb_knee_report_is_knee(argv[optind]))
        return rd.rejudge ? fprintf(stderr, "kneebench report: a knee search is judged by its "
                                    "own criteria: search again with them\n"), 2
                          : knee_report(argv[optind]);
    snprintf(out, sizeof(out), "%s", argv[optind]);
    if (rd.rejudge) {
        /* the judgement compares whole microseconds */
        rd.max_p99_us = p99_ms > 0 ? round(p99_ms * 1000) : plan_criterion(argv[optind], "max_p99_us");
        rd.min_delivery = delivery > 0 ? delivery : plan_criterion(argv[optind], "min_delivery");
        snprintf(out, sizeof(out), "%s/rejudged-p99-%gms-d%g", argv[optind], rd.max_p99_us / 1000,
                 rd.min_delivery);
    }
    if (kb_report_load_rederived(argv[optind], &r, &rd, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench report: %s\n", err);
        kb_rederive_free(&rd);
        return 2;
    }
    if (r.contract_note[0])
        fprintf(stderr, "kneebench report: warning: %s\n", r.contract_note);
    if (r.nmissing) {
        name_missing(&r);
        if (!partial) {
            fprintf(stderr, "kneebench report: refusing an incomplete run; re-run the curve into "
                    "the same directory to finish it, or pass --partial\n");
            rc = 1;
        }
    }
    if (!rc)
        rc = rederived_ok(&rd);
    r.partial = r.nmissing > 0;
    if (!rc && ((rd.rejudge && (kb_mkdirs(out, err, sizeof(err)) < 0 ||
                                out_own(out, err, sizeof(err)) < 0)) ||
                write_all(&r, out, err, sizeof(err)) < 0)) {
        fprintf(stderr, "kneebench report: %s\n", err);
        rc = 1;
    } else if (!rc) {
        printf("kneebench report: %s/report.md%s", out, r.partial ? " (PARTIAL)" : "");
        if (rd.rejudge)
            printf(" (re-judged: %zu of %zu points changed verdict)",
                   json_array_size(rd.changed), rd.nchecked);
        printf("\n");
    }
    kb_report_free(&r);
    kb_rederive_free(&rd);
    return rc;
}
