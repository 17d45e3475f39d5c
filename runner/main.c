/* kneebench -- the suite's one binary: a subcommand table, --version and nothing else. */
#define _POSIX_C_SOURCE 200809L
#include "runner/commands.h"

#include <stdio.h>
#include <string.h>

#include "fixtures/contract.h"
#include "runner/version.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *what;
} commands[] = {
    { "load", cmd_load, "drive one route open-loop at a fixed rate and measure it" },
    { "curve", cmd_curve, "run the runtime x route x rate comparison into a run directory" },
    { "report", cmd_report, "write report.md, CSV, JSON and SVG charts from a run directory" },
    { "compare", cmd_compare, "what moved between two runs, and whether beyond their repeats' spread" },
    { "calibrate", cmd_calibrate, "prove the client's margin against the control server" },
    { "serve-agent", cmd_serve_agent, "serve the suite's start/sample/stop commands for a remote client" },
    { "soak", cmd_soak, "the one-hour qualification: gray-static plaintext, json, db phases with resource slopes" },
    { "version", cmd_version, "the runner's version and the contract's (also --version)" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* help2man builds the man page from this and from --version; each command's own --help is
 * added to it by runner/man-include.sh. */
static int usage(FILE *f)
{
    fprintf(f, "Usage: kneebench <command> [options]   (kneebench <command> --help)\n"
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
               "                 contract's contract_version\n");
    return f == stdout ? 0 : 2;
}

int cmd_version(int argc, char **argv)
{
    const char *path = kb_contract_default_path();
    long cv = kb_contract_version_of(path);
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
    if (cv < 0)
        printf("contract version unknown (%s unreadable)\n", path);
    else
        printf("contract version %ld (%s)\n", cv, path);
    return 0;
}

static int run_command(const char *name, int argc, char **argv)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].run(argc, argv);
    fprintf(stderr, "kneebench: unknown command '%s'\n", name);
    return usage(stderr);
}

int main(int argc, char **argv)
{
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
