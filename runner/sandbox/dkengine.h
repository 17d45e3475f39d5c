/* dkengine.h -- which Docker engine the docker backend drives, and how a fixture's host is
 * read through it when the engine is elsewhere.
 *
 * The engine is chosen as the docker CLI chooses it (--docker-host, else --docker-context,
 * else DOCKER_HOST or the current context) and put into this process's environment, so every
 * docker call, docker/image-identity.py's included, reaches the same engine. An endpoint that
 * is not a unix socket is another host: its processes, cgroups and /proc/stat are not ours.
 * There the image is carried over when missing (docker save | docker load, its ID checked),
 * and a probe container (host PID namespace, the host's cgroups read-only, no network) reads
 * the fixture's cgroup, its processes' /proc and the host's /proc/stat through `docker exec`,
 * so the reads cost nothing in the fixture's cgroup. Nothing here prints. */
#ifndef KB_DKENGINE_H
#define KB_DKENGINE_H

#include <jansson.h>
#include <stddef.h>

/* Where the probe container sees the engine host's cgroup tree. */
#define KB_DKENGINE_CGROOT "/kb-cg"

struct kb_dkengine {
    char host[512];            /* the endpoint: unix:///var/run/docker.sock, ssh://root@ADDR */
    char context[128];         /* the context that chose it; "" when DOCKER_HOST did */
    char chosen_by[32];        /* "--docker-host", "--docker-context", "DOCKER_HOST", "context" */
    char version[64];          /* the engine's ServerVersion */
    char name[256];            /* the engine host's name, as the engine says */
    char os[128], kernel[128];
    int ncpu;
    int elsewhere;             /* 1: not this host's unix socket */
    char image_note[512];      /* how the image came to be there */
    char probe[160];           /* the probe container's name; "" while none runs */
    char tmp[256];             /* a directory of this runner's own for what is read there */
    double procstat_at;        /* monotonic seconds of the last copy of its /proc/stat */
};

/* Choose the engine (host wins over context; neither: the user's environment) and read its
 * endpoint. 0, or -1 with err. */
int kb_dkengine_choose(struct kb_dkengine *e, const char *host, const char *context, char *err,
                       size_t errlen);

/* The IPv4 address of the endpoint's host (ssh://[user@]HOST[:port], tcp://HOST:port),
 * resolved. 0, or -1 with err. */
int kb_dkengine_target(const struct kb_dkengine *e, char *out, size_t outlen, char *err,
                       size_t errlen);

/* `docker info`: version, name, OS, kernel, CPUs. 0, or -1 with err (no engine answers). */
int kb_dkengine_info(struct kb_dkengine *e, char *err, size_t errlen);

/* The image on the engine: there already, or (elsewhere) loaded from this host's engine
 * over the same transport, its ID checked against this host's after. image_note says which.
 * 0, or -1 with err. */
int kb_dkengine_image(struct kb_dkengine *e, const char *image, char *err, size_t errlen);

/* Start the probe container (elsewhere only), labelled label (KEY=VALUE). 0, or -1 with err. */
int kb_dkengine_probe_start(struct kb_dkengine *e, const char *image, const char *label,
                            char *err, size_t errlen);

/* Remove the probe and the temporary directory. */
void kb_dkengine_close(struct kb_dkengine *e);

/* Run script with `sh -c` in the probe, args as $1..; stdout into out. 0, -1 with err, or
 * -2 with err when the engine did not answer (the transport, not the script, failed). */
int kb_dkengine_exec(struct kb_dkengine *e, const char *script, char *const args[], char *out,
                     size_t outcap, char *err, size_t errlen);

/* 1 when a docker CLI error text says the engine could not be reached (a lost SSH
 * connection, a refused socket) rather than that an object is missing. */
int kb_dkengine_unreachable(const char *errtext);

/* The engine host's /proc/stat into a file of tmp: the copy a fixture's sample brought
 * along when it is under a second old (one round trip a second, not two), else read now
 * through the probe. Its path, or NULL (not elsewhere, or unreadable). */
const char *kb_dkengine_procstat(struct kb_dkengine *e);

/* Keep text (the /proc/stat lines a sample read) as that copy. 0, or -1. */
int kb_dkengine_procstat_put(struct kb_dkengine *e, const char *text);

/* run.json's "engine": endpoint, how chosen, version, name, OS, kernel, CPUs, elsewhere,
 * the image's note. New reference. */
json_t *kb_dkengine_json(const struct kb_dkengine *e);

#endif
