/* cmd_report.c -- `kneebench report DIR`: report.md, report.csv, report.json and charts from
 * a run directory's evidence. Refuses a run with missing or incomplete points, naming them;
 * --partial writes it anyway, stamped as partial everywhere. */
#define _POSIX_C_SOURCE 200809L
#include "runner/commands.h"
#include "runner/report.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static int usage(FILE *f)
{
    fprintf(f, "usage: kneebench report [--partial] DIR\n"
               "  writes DIR/report.md, report.csv, report.json and charts/*.svg from the\n"
               "  evidence in DIR; refuses when a planned point is missing or incomplete\n"
               "  unless --partial (the report is then stamped PARTIAL).\n"
               "  report.csv and report.json: docs/report-format.md (schema_version 2).\n"
               "exit: 0 written; 1 an incomplete run refused, or a file could not be written;\n"
               "      2 bad usage, or DIR is not a run directory.\n");
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

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = { { "partial", 0, 0, 'p' }, { "help", 0, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    struct kb_report r;
    char err[1024];
    int partial = 0, o, rc = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'p')
            partial = 1;
        else
            return usage(o == 'h' ? stdout : stderr);
    }
    if (optind != argc - 1)
        return usage(stderr);
    if (kb_report_load(argv[optind], &r, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench report: %s\n", err);
        return 2;
    }
    if (r.nmissing) {
        name_missing(&r);
        if (!partial) {
            fprintf(stderr, "kneebench report: refusing an incomplete run; re-run the curve into "
                    "the same directory to finish it, or pass --partial\n");
            kb_report_free(&r);
            return 1;
        }
    }
    r.partial = r.nmissing > 0;
    if (kb_report_write_md(&r, argv[optind], err, sizeof(err)) < 0 ||
        kb_report_write_csv(&r, argv[optind], err, sizeof(err)) < 0 ||
        kb_report_write_json(&r, argv[optind], err, sizeof(err)) < 0 ||
        kb_report_write_svg(&r, argv[optind], err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench report: %s\n", err);
        rc = 1;
    } else {
        printf("kneebench report: %s/report.md%s\n", argv[optind], r.partial ? " (PARTIAL)" : "");
    }
    kb_report_free(&r);
    return rc;
}
