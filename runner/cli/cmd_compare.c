/* cmd_compare.c -- `kneebench compare RUN_A RUN_B`: what moved between two runs (a changed
 * runtime version, a flag, a patch) and whether it is more than the samples' noise. Reads
 * each run through kb_report_load(), the evidence the reports read; the comparison is
 * runner/report/compare/compare.c's, the formats compare_out.c's. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"
#include "runner/util/paths.h"
#include "runner/report/compare/compare.h"
#include "runner/util/atomicfile.h"
#include "runner/util/opts.h"
#include "runner/util/units.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench compare RUN_A RUN_B [--csv FILE] [--md FILE] [--min-change PCT]\n"
        "  RUN_B against RUN_A (the baseline), two run directories of kneebench curve. First\n"
        "  what moved: the largest changes beyond noise, the highest controlled points that\n"
        "  changed, each run's noise floor (how far a point's own samples lie apart). Then\n"
        "  per runtime and route the highest controlled points side by side, and per point\n"
        "  with evidence in both runs (runtime-route-rate) the change in achieved rate and\n"
        "  in corrected p99. A point's samples are its repeats and confirmation samples;\n"
        "  beyond noise when every sample of one run lies above every one of the other and\n"
        "  their counts make that a 10 %% chance or less were nothing changed (3 and 3, 2 and\n"
        "  5, ...); \"unjudged (too few samples)\" otherwise, as with one repeat. Markdown on\n"
        "  standard output unless --md; each column in one unit, named in its header.\n"
        "  --csv FILE        the same as CSV (one row per highest point and per point;\n"
        "                    latency in us, rates in req/s, per figure its sample counts\n"
        "                    and that chance; FILE - is standard output, in place of the\n"
        "                    markdown)\n"
        "  --md FILE         the markdown into FILE\n"
        "  --min-change PCT  a change under PCT %% of RUN_A's median is within noise\n"
        "                    whatever the ranges (default %g; 0 judges by the ranges alone)\n"
        "  Incomplete points are left out and counted.\n"
        "exit: 0 compared (whatever moved); 1 an output could not be written;\n"
        "      2 bad usage, or a directory is not a readable run.\n", KB_CMP_FLOOR_PCT);
    return f == stdout ? 0 : 2;
}

struct compare_args {
    const char *run[2], *csv, *md;
    double floor_pct;
};

static int parse_args(int argc, char **argv, struct compare_args *a)
{
    static const struct option opts[] = { { "csv", 1, 0, 'c' }, { "md", 1, 0, 'm' },
        { "min-change", 1, 0, 'f' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 } };
    static const struct kb_bound min_change = { 0, 1000, 0, 0 };
    char e[320];
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'h')
            return usage(stdout) ? 2 : 1;
        if (o == 'c')
            a->csv = optarg;
        else if (o == 'm')
            a->md = optarg;
        else if (o == 'f') {
            if (!kb_opt_percent("--min-change", optarg, &min_change, &a->floor_pct, e, sizeof(e)))
                continue;
            fprintf(stderr, "kneebench compare: %s\n", e);
            return 2;
        } else {
            fprintf(stderr, "kneebench compare: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            return usage(stderr);
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "kneebench compare: two run directories are needed, %d given\n",
                argc - optind);
        return usage(stderr);
    }
    a->run[0] = argv[optind];
    a->run[1] = argv[optind + 1];
    return 0;
}

/* One output: written whole to a temporary name, then renamed, as every evidence file is
 * (runner/util/atomicfile.h: never through a symlink planted at either name). */
static int write_out(const char *path, const struct kb_cmp *c, const struct kb_report *r,
                     const struct compare_args *a, int csv)
{
    struct kb_afile f;
    char err[KB_PATH_MAX + 512];
    int rc;
    if (!strcmp(path, "-"))
        return csv ? kb_cmp_write_csv(stdout, c) : kb_cmp_write_md(stdout, c, &r[0], &r[1],
                                                                   a->run[0], a->run[1]);
    if (kb_afile_open(&f, path, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench compare: %s\n", err);
        return -1;
    }
    rc = csv ? kb_cmp_write_csv(f.f, c) : kb_cmp_write_md(f.f, c, &r[0], &r[1], a->run[0], a->run[1]);
    if (rc) {
        kb_afile_abort(&f);
        fprintf(stderr, "kneebench compare: cannot write %s\n", path);
        return -1;
    }
    if (kb_afile_commit(&f, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench compare: %s\n", err);
        return -1;
    }
    return 0;
}

static int load_runs(const struct compare_args *a, struct kb_report r[2])
{
    char err[1024];
    for (int i = 0; i < 2; i++) {
        if (kb_report_load(a->run[i], &r[i], err, sizeof(err))) {
            fprintf(stderr, "kneebench compare: %s\n", err);
            if (i)
                kb_report_free(&r[0]);
            return -1;
        }
        if (r[i].nmissing)
            fprintf(stderr, "kneebench compare: %s: %zu planned point(s) incomplete, left out\n",
                    a->run[i], r[i].nmissing);
        if (r[i].contract_note[0])
            fprintf(stderr, "kneebench compare: %s: warning: %s\n", a->run[i],
                    r[i].contract_note);
    }
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_args a = { .floor_pct = KB_CMP_FLOOR_PCT };
    struct kb_report r[2];
    struct kb_cmp c;
    char err[256];
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (load_runs(&a, r))
        return 2;
    if (kb_cmp_build(&r[0], &r[1], a.floor_pct, &c, err, sizeof(err))) {
        fprintf(stderr, "kneebench compare: %s\n", err);
        rc = 1;
    } else {
        if (a.csv && write_out(a.csv, &c, r, &a, 1))
            rc = 1;
        /* markdown goes to stdout unless it has a file, or the CSV took stdout */
        if (a.md ? write_out(a.md, &c, r, &a, 0)
                 : !(a.csv && !strcmp(a.csv, "-")) && write_out("-", &c, r, &a, 0))
            rc = 1;
        kb_cmp_free(&c);
    }
    kb_report_free(&r[0]);
    kb_report_free(&r[1]);
    return rc;
}
