/* fixture.h -- runs one runtime for a run, for `kneebench curve` and `kneebench soak`.
 *
 * Owns what the two commands do alike around a fixture: the run's placement (server and
 * client CPUs, overlap refused) and sandbox backend, the fixture's command expanded from
 * the contract, starting it in the sandbox and waiting until it accepts, reading the
 * limits back (limits.json) and hashing its identity, the server's processes sampled,
 * and the load generator as a child pinned to the client CPUs, driven to its end while
 * the caller samples, then its load.json read and the postflight. What differs (which
 * routes are preflighted, the sampling schedule and its figures, the evidence layout, the
 * verdict) stays with the commands. Never prints; errors come back in the caller's buffer.
 *
 * With the docker backend the fixture runs from an image, not from the host's build/: its
 * identity is then the image's ID plus the contract's command for the runtime (a host
 * rebuild during the run changes nothing measured; a re-tagged image does), and the run
 * records what docker/image-identity.py says of the image. The image is $KB_DOCKER_IMAGE
 * (the curve's --image sets it), else kneebench:latest -- sandbox_docker.c reads the same.
 *
 * With the remote backend the fixture runs on another host under its `kneebench serve-agent`
 * (runner/agent.h): the load, the readiness wait and the pre/postflight go to the target
 * host instead of 127.0.0.1, the server samples and the limits come from the agent, the
 * fixture's identity is the agent's host identity plus the contract's command (the agent
 * hashes no files), and whether limits apply is the agent's (serve-agent --no-limits). */
#ifndef KB_FIXTURE_H
#define KB_FIXTURE_H

#include "runner/pgcluster.h"
#include "runner/procs.h"
#include "runner/sandbox.h"
#include "runner/verdict.h"
#include "fixtures/contract.h"

#include <jansson.h>
#include <sched.h>                 /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* What one run asks of every fixture it starts (all strings the caller's). */
struct kb_fx_opts {
    const char *backend;           /* "native", "docker" */
    const char *build;             /* where the built fixtures live */
    const char *server_cpus, *client_cpus;   /* placement lists (runner/cpulist.h) */
    const char *load_cmd;          /* NULL: this kneebench, through /proc/self/exe */
    int no_limits;
    int client_other;              /* load threads in SCHED_OTHER instead of SCHED_FIFO 1 */
};

/* The load generator's parameters, the same for every point / phase of a run. */
struct kb_fx_load {
    double duration_s, warmup_s, drain_s;
    int threads, connections;
};

/* Zeroed by the caller, then kb_fx_setup(); one fixture at a time. */
struct kb_fx {
    /* the run's, from kb_fx_setup() */
    const struct kb_contract *c;
    const struct kb_sandbox_ops *ops;
    const char *build;
    int no_limits;
    int client_rt;                 /* pass --rt to the load generator (kneebench load) */
    char server_cpus[64], client_cpus[64];   /* canonical */
    cpu_set_t client_set;
    char load_cmd[4096];
    int self_exec;                 /* exec /proc/self/exe: the image the run hashed */
    volatile sig_atomic_t *stop;   /* once *stop: readiness waits give up, the load child is
                                    * killed (NULL: never) */
    /* the fixture now running */
    const struct kb_runtime *rt;
    struct kb_sandbox *sb;
    int port;
    json_t *identity;              /* {"sha256": ...} of its executables and sources, or
                                    * (docker) of the image ID and the contract's command */
    /* the docker backend's image: its name and the ID it had at kb_fx_setup() ("" native) */
    char image[256], image_id[160];
    /* The remote backend: the caller sets agent ("HOST:PORT") and may set target (the
     * fixture host's IPv4 address; "" = the agent's host) before kb_fx_setup(); setup
     * sets target to "127.0.0.1" for the other backends and fills agent_identity (the
     * agent's "identity" answer, JSON text). */
    char agent[256], target[64], agent_identity[2048];
    double last_exit_check;        /* the remote backend: the drive loop asks at most 1/s */
    pid_t load_pid;                /* the load child while it runs, else 0 */
};

/* Backend (checked available unless no_limits), placement and load command; with the
 * docker backend also the image (named in fx->image, $KB_DOCKER_IMAGE set to it) and its
 * ID, which must exist; with the remote backend the agent (reachable, its identity kept in
 * fx->agent_identity) and the target host. 0, or -1. */
int kb_fx_setup(struct kb_fx *fx, const struct kb_contract *c, const struct kb_fx_opts *o,
                char *err, size_t errlen);

/* Monotonic seconds: the drive loop's clock, which the commands time their points, phases
 * and polls with too (they sleep with clock.h's kb_sleep_ms). */
double kb_fx_now_s(void);

/* Install handler for SIGINT and SIGTERM without SA_RESTART (blocking calls return early),
 * and ignore SIGPIPE. */
void kb_fx_signals(void (*handler)(int));

/* The run directory's plan.json: written when absent; when present it must equal want,
 * else -1 with err saying run holds a different `what` (a re-run resumes only the same
 * plan). 0, or -1. Takes want's reference. */
int kb_fx_plan_file(const char *run, json_t *want, const char *what, char *err,
                    size_t errlen);

/* run/run.json, the run's identity; a resumed run keeps the first invocation's and
 * records this one beside it as run-resumed-<started>.json. 0, or -1 with err. */
int kb_fx_run_file(const char *run, json_t *identity, time_t started, char *err,
                   size_t errlen);

/* tmpl with {root} {build} {port} {bind} {rundir} {cpus} filled in with this run's values
 * (spawn.h's kb_tmpl_expand); malloc'd. */
char *kb_fx_expand(const struct kb_fx *fx, const char *tmpl, const char *rundir);

/* SHA-256 of fx->rt's executables and sources (kb_fixture_identity); with the docker
 * backend {"image", "image_id" (looked up now), "command" (the contract's, unexpanded: a
 * free port must not change it), "sha256" (of ID and command)}. NULL with err. */
json_t *kb_fx_identity(const struct kb_fx *fx, char *err, size_t errlen);

/* The docker image's ID now (`docker image inspect`), into id. 0, or -1 with err. */
int kb_fx_image_id(const char *image, char *id, size_t idlen, char *err, size_t errlen);

/* What docker/image-identity.py prints for fx->image (image ID, RepoDigests, the base
 * actually used, base_is_pinned, note, inside.versions), or NULL with err. */
json_t *kb_fx_image_identity(const struct kb_fx *fx, char *err, size_t errlen);

/* Limits read back, as limits.json holds them. */
json_t *kb_fx_limits_json(const struct kb_limits_applied *la);

/* The spec for fx->rt in rundir: argv (64 slots, with the db arguments when pg runs),
 * env (16 slots), log (4200 bytes: rundir/fixture.log) are the caller's, freed with
 * kb_fx_spec_free(). */
void kb_fx_spec(const struct kb_fx *fx, const char *rundir, const struct kb_pgrun *pg,
                int db_pool, char **argv, char **env, char *log, struct kb_fixture_spec *spec);
void kb_fx_spec_free(char **argv, char **env);

/* Start fx->rt from spec, wait until its port accepts (20 s), read the limits back into
 * rundir/limits.json and hash its identity into fx->identity. 0; or -1 with reason
 * ("start failed: ...", "limits: ...", "identity: ..."), the sandbox stopped when it
 * never became ready; or KB_FX_HARNESS, nothing left running, when the harness and not
 * the fixture stood in the way: the port held before the start (after sweeping a leftover
 * an unconstrained run recorded in spec->rundir), or, once it accepted, answering from a
 * process that is not the fixture's (with the remote backend, the agent's refusal says
 * so). That reason starts with KB_FX_HARNESS_PREFIX; its points must not be judged. */
#define KB_FX_HARNESS (-2)
#define KB_FX_HARNESS_PREFIX "harness: "
int kb_fx_start(struct kb_fx *fx, const struct kb_fixture_spec *spec, const char *rundir,
                char *reason, size_t reasonlen);

/* Sweep the session records left in every directory under dir (a run's fixtures/) by
 * unconstrained fixtures whose runner is gone (kb_sandbox_sweep_session). How many. */
int kb_fx_sweep_sessions(const char *dir);

/* Stop the fixture (and so its cgroup or container) and forget its identity. 0, or -1 with
 * err; fx->sb is NULL either way. */
int kb_fx_stop(struct kb_fx *fx, char *err, size_t errlen);

/* 1 while the fixture runs (and *stop is not set): the readiness polls' callback. */
int kb_fx_alive(void *fx);

/* Note in obs the fixture's exit, the first time it is seen dead. */
void kb_fx_check_exit(struct kb_fx *fx, struct kb_point_obs *obs);

/* 1 with the remote backend. */
int kb_fx_remote(const struct kb_fx *fx);

/* The fixture's processes now (with the remote backend: the agent's sample; zeros when it
 * could not be had). */
void kb_fx_sample_server(const struct kb_fx *fx, struct kb_proc_sample *out);

/* How the caller samples while the load child runs: from first_s after its start, every
 * every_s, none after until_s; sample(arg, t0, t) with monotonic seconds. */
struct kb_fx_sampling {
    double first_s, every_s, until_s;
    void (*sample)(void *arg, double t0, double t);
    void *arg;
    int kill_signal;               /* what the child gets when *stop interrupts it */
};

/* Run `load` for route at rate into dir (load.json, corrected.hgrm, uncorrected.hgrm,
 * load.log) as a child pinned to the client CPUs, to its end, sampling and watching the
 * fixture. 0 with obs->load_exit; -1 when it could not start or *stop interrupted it. */
int kb_fx_drive(struct kb_fx *fx, const struct kb_fx_load *ld, const char *route, long rate,
                const char *dir, const struct kb_fx_sampling *sp, struct kb_point_obs *obs);

/* Kill a load child still running (cleanup) and reap it. */
void kb_fx_kill_load(struct kb_fx *fx, int sig);

/* dir/load.json into *load (NULL when absent or not JSON) and lr, by runner/loadjson.h's
 * reader; obs gets have_load or the problem (the exit status with load.log's first line,
 * or the reader's error, which names the file and the field). */
void kb_fx_read_load(const char *dir, struct kb_point_obs *obs, struct kb_point_load *lr,
                     json_t **load);

/* After the load: the fixture alive, the route still answering exactly, the identity
 * unchanged; what is not goes into obs. */
void kb_fx_postflight(struct kb_fx *fx, const struct kb_route *r, struct kb_point_obs *obs);

#endif
