/* kneebench -- the suite's one binary: a subcommand table, --version, --root and nothing
 * else. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/util/root.h"
#include "runner/util/version.h"
#include "runner/util/xalloc.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *what;
    int tree;                       /* runs the tree's fixtures or control server */
} commands[] = {
    { "load", cmd_load, "drive one route open-loop at a fixed rate and measure it", 0 },
    { "knee", cmd_knee, "locate the knee of any HTTP server you run, to a stated resolution", 0 },
    { "curve", cmd_curve, "run the runtime x route x rate comparison into a run directory", 1 },
    { "report", cmd_report, "write report.md, CSV, JSON and SVG charts from a run directory", 0 },
    { "compare", cmd_compare, "what moved between two runs, and whether beyond their repeats' spread", 0 },
    { "calibrate", cmd_calibrate, "prove the client's margin against the control server", 1 },
    { "soak", cmd_soak, "the one-hour qualification: gray-static plaintext, json, db phases with resource slopes", 1 },
    { "qualify", cmd_qualify, "seed 001's db qualification: gray-static /db at 8k req/s, /stats sampled densely, the paper's figures beside", 1 },
    { "version", cmd_version, "the runner's version and the contract's (also --version)", 0 },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* help2man builds the man page from this and from --version; each command's own --help is
 * added to it by runner/cli/man-include.sh. */
static int usage(FILE *f)
{
    fprintf(f, "Usage: kneebench [--root DIR] <command> [options]   (kneebench <command> --help)\n"
               "  or:  kneebench --version\n"
               "Measures where HTTP servers stop delivering their offered load with a bounded\n"
               "corrected-latency tail (README.md, docs/protocol.md).\n\n"
               "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\nExit status:\n"
               "  the command's own (each command's --help lists them); 2 for an unknown command.\n"
               "\nOptions:\n"
               "  -h, --help     this list; kneebench help COMMAND is COMMAND --help\n"
               "  -V, --version  the runner's version (git describe at build time) and the\n"
               "                 contract's contract_version\n"
               "  --root DIR     the kneebench tree (the directory holding contract/contract.json)\n"
               "                 whose contract, fixtures and build/ the command uses; default\n"
               "                 $KB_ROOT, else the nearest such directory at or above this\n"
               "                 program's own, else the current directory\n");
    return f == stdout ? 0 : 2;
}

int cmd_version(int argc, char **argv)
{
    const char *path = kb_root_contract();
    long cv = path ? kb_contract_version_of(path) : -1;
    if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
        fprintf(stderr, "kneebench version: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    if (argc > 1) {
        printf("usage: kneebench version   (or kneebench --version)\n"
               "  the runner's version and the contract's contract_version.\n"
               "exit: 0; 2 for an argument.\n");
        return 0;
    }
    printf("kneebench %s\n", kb_runner_version());
    if (!path)
        printf("contract version unknown (%s)\n", kb_root_error());
    else if (cv < 0)
        printf("contract version unknown (%s unreadable)\n", path);
    else
        printf("contract version %ld (%s)\n", cv, path);
    return 0;
}

/* The edit distance between a and b (insertions, deletions, substitutions, and a swap of
 * two neighbours counting one): how far a misspelt command lies from a real one. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), d[32][32];
    if (la > 30 || lb > 30)
        return (size_t)-1;
    for (size_t i = 0; i <= la; i++)
        for (size_t j = 0; j <= lb; j++) {
            if (!i || !j) {
                d[i][j] = i + j;
                continue;
            }
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]), del = d[i - 1][j] + 1,
                   ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;
        }
    return d[la][lb];
}

/* The command nearest name, when it is near enough to be what was meant (at most a third
 * of its letters off, at least one), or the one name begins; NULL otherwise. */
static const char *nearest(const char *name)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t d = distance(name, commands[i].name), cap = strlen(commands[i].name) / 3;
        if (strlen(name) >= 2 && !strncmp(commands[i].name, name, strlen(name)))
            d = 0;
        if (d <= (cap ? cap : 1) && d < bd) {
            bd = d;
            best = commands[i].name;
        }
    }
    return best;
}

static int run_command(const char *name, int argc, char **argv)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, commands[i].name))
            continue;
        /* --help needs no tree; running fixtures does, and says so before anything starts */
        if (commands[i].tree && !kb_root() && !(argc > 1 && (!strcmp(argv[1], "--help") ||
                                                             !strcmp(argv[1], "-h")))) {
            fprintf(stderr, "kneebench %s: %s\n", name, kb_root_error());
            return 2;
        }
        return commands[i].run(argc, argv);
    }
    if (nearest(name)) {
        fprintf(stderr, "kneebench: unknown command '%s'; did you mean '%s'? "
                "(kneebench --help lists them)\n", name, nearest(name));
        return 2;
    }
    fprintf(stderr, "kneebench: unknown command '%s'\n", name);
    return usage(stderr);
}

/* `--root DIR` or `--root=DIR` before the command: taken out of argv. 0, 1 without one,
 * or -1 when it is malformed or names no tree (said on stderr). */
static int root_option(int *argc, char ***argv)
{
    char **v = *argv;
    const char *dir = NULL;
    int used = 0;
    if (*argc > 1 && !strcmp(v[1], "--root")) {
        if (*argc < 3) {
            fprintf(stderr, "kneebench: --root needs a directory\n");
            return -1;
        }
        dir = v[2];
        used = 2;
    } else if (*argc > 1 && !strncmp(v[1], "--root=", 7)) {
        dir = v[1] + 7;
        used = 1;
    }
    if (kb_root_init(dir, NULL, 0) < 0 && dir) {
        fprintf(stderr, "kneebench: %s\n", kb_root_error());
        return -1;
    }
    if (used) {
        v[used] = v[0];
        *argv = v + used;
        *argc -= used;
    }
    return used ? 0 : 1;
}

int main(int argc, char **argv)
{
    /* jansson's allocations follow the harness's policy too (runner/util/xalloc.h) */
    json_set_alloc_funcs(kb_xmalloc, free);
    if (root_option(&argc, &argv) < 0)
        return 2;
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
        return cmd_version(1, argv + 1);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        char *help[] = { argc > 2 ? argv[2] : NULL, "--help", NULL };
        return argc > 2 && !strcmp(argv[1], "help") ? run_command(argv[2], 2, help) : usage(stdout);
    }
    return run_command(argv[1], argc - 1, argv + 1);
}
