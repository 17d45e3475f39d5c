/* cmd_serve_agent.c -- placeholder until the agent lands; it refuses rather than pretends. */
#include "runner/commands.h"

#include <stdio.h>

int cmd_serve_agent(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "kneebench %s: not built yet\n", argv[0]);
    return 2;
}
