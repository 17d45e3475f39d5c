/* kneebench -- the suite's one binary: a subcommand table and nothing else. */
#define _POSIX_C_SOURCE 200809L
#include "runner/commands.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *what;
} commands[] = {
    { "load", cmd_load, "drive one route open-loop at a fixed rate and measure it" },
    { "curve", cmd_curve, "run the runtime x route x rate comparison into a run directory" },
    { "report", cmd_report, "write report.md, CSV, JSON and SVG charts from a run directory" },
    { "calibrate", cmd_calibrate, "prove the client's margin against the control server" },
    { "serve-agent", cmd_serve_agent, "serve the suite's start/sample/stop commands for a remote client" },
    { "soak", cmd_soak, "the one-hour qualification: gray-static plaintext, json, db phases with resource slopes" },
};

static int usage(FILE *f)
{
    fprintf(f, "usage: kneebench <command> [options]   (kneebench <command> --help)\n\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].what);
    return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(stdout);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "kneebench: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
