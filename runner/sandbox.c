/* sandbox.c -- the one place a sandbox backend is chosen by name ("native", "docker",
 * "remote").
 *
 * The docker backend lives in runner/sandbox_docker.c, written by another engineer; the
 * header declares its ops table weak, so until that file is linked in &kb_sandbox_docker is
 * NULL and "docker" is reported as unknown instead of failing the link. */
#define _POSIX_C_SOURCE 200809L
#include "runner/sandbox.h"
#include "runner/agent_client.h"   /* kb_sandbox_remote */

#include <string.h>

const struct kb_sandbox_ops *kb_sandbox_backend(const char *name)
{
    if (!name || !strcmp(name, "native"))
        return &kb_sandbox_native;
    if (!strcmp(name, "docker"))
        return &kb_sandbox_docker ? &kb_sandbox_docker : NULL;
    /* a fixture on another host, through its `kneebench serve-agent` (runner/agent.h) */
    if (!strcmp(name, "remote"))
        return &kb_sandbox_remote;
    return NULL;
}
