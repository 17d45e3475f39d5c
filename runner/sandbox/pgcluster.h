/* pgcluster.h -- a throwaway PostgreSQL cluster for a run, started and stopped from C, and
 * the db route's wiring for a fixture (kneebench soak; kneebench curve --routes db).
 *
 * Owns nothing but the calls: the cluster itself is gray-static/pgcluster.sh's (initdb into
 * DIR, private socket directory, no TCP, `world` filled from the contract). These run the
 * script as a child, capture the conninfo it prints and hand back its last error line.
 * struct kb_pgrun is one fixture's cluster: started before the fixture, its conninfo put
 * into the runtime's db_command_extra (contract), stopped after the fixture.
 * With cpus set, kb_pgrun_start pins the postmaster and every process it has (runner/sandbox/pin.h;
 * the backends it forks later inherit the set) and records the kernel's read-back in
 * DIR/pinning.json: PostgreSQL otherwise runs on any CPU, the client's SCHED_FIFO ones too.
 * Never prints; errors go to the caller's buffer. */
#ifndef KB_PGCLUSTER_H
#define KB_PGCLUSTER_H

#include "runner/util/paths.h"
#include "contract/contract.h"

#include <stddef.h>
#include <sys/types.h>

/* The script's path under the source root (the tree kb_root() found unless root is given). */
void kb_pgcluster_script(const char *root, char *out, size_t outlen);

/* 1 when PostgreSQL server binaries are installed (/usr/lib/postgresql/<v>/bin/initdb). */
int kb_pgcluster_available(void);

/* `postgres --version` of the binaries the script starts (the highest installed), or
 * "unavailable". */
void kb_pgcluster_version(char *out, size_t outlen);

/* Start (initialising on first use) the cluster in dir; conninfo gets its libpq conninfo.
 * 0, or -1 with the script's complaint in err. */
int kb_pgcluster_start(const char *root, const char *dir, char *conninfo, size_t conninfolen,
                       char *err, size_t errlen);

/* Stop the cluster in dir (fast shutdown). 0, or -1 with err. */
int kb_pgcluster_stop(const char *root, const char *dir, char *err, size_t errlen);

/* One fixture's cluster. Zero it before use; running says whether stop has work to do. */
struct kb_pgrun {
    char dir[KB_PATH_MAX];
    char conninfo[1024];
    int running;
    char cpus[64];             /* the caller's: pin PostgreSQL there ("" = unpinned) */
};

/* 1 when the runtime takes db arguments (db_command_extra) and the route list has "db". */
int kb_pgrun_wanted(const struct kb_runtime *rt, char *const *routes, size_t nroutes);

/* Start the cluster in dir, pinned to pg->cpus when set (dir/pinning.json records it). 0, or
 * -1 with err (no binaries, initdb or start failed, a process that would not be pinned). */
int kb_pgrun_start(struct kb_pgrun *pg, const char *dir, char *err, size_t errlen);

/* Append the runtime's db_command_extra, expanded with {conninfo} and {db_pool}, to argv at
 * index n without passing max - 1 (argv stays NULL-terminated). Returns the new count; the
 * strings are malloc'd and the caller frees them with the rest of argv. */
size_t kb_pgrun_args(const struct kb_pgrun *pg, const struct kb_runtime *rt, int db_pool,
                     char **argv, size_t n, size_t max);

/* Poll GET route until it matches the contract, every 200 ms up to timeout_ms: the pool
 * connects asynchronously after the port opens and /db answers 503 until it has. alive
 * (may be NULL) ends the wait early. 0, or -1 with the last reason. */
int kb_pgrun_wait_route(int port, const struct kb_route *r, int timeout_ms,
                        int (*alive)(void *), void *arg, char *reason, size_t reasonlen);

/* The postmaster's PID from dir's data/postmaster.pid; 0 when there is none. */
pid_t kb_pgcluster_postmaster(const char *dir);

/* Stop the cluster if this struct started it. 0, or -1 with err. */
int kb_pgrun_stop(struct kb_pgrun *pg, char *err, size_t errlen);

#endif
