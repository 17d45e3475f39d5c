/* cmd_curve.c -- placeholder until the subcommand lands; it refuses rather than pretends. */
#include "runner/commands.h"

#include <stdio.h>

int cmd_curve(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "kneebench %s: not built yet\n", argv[0]);
    return 2;
}
