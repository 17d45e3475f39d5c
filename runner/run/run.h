/* run.h -- the skeleton of a run: what `kneebench curve`, `soak` and `qualify` do alike around
 * their points (a soak phase is a point), and the evidence helpers `knee` shares.
 *
 * The run directory with its plan.json (one plan per directory) and run.json (the identity,
 * built here once, plus what a command adds); the interrupt flag and its signals; the
 * contract; the fixture (fixture.h) opened and closed, the run's PostgreSQL stopped with it;
 * a dead runner's leftovers swept; and a point's evidence: every write checked, the first
 * failure kept, DONE written only when nothing failed, else incomplete.json naming the file
 * and why, so a re-run redoes the point. Options, plans, sampling and verdicts stay the
 * commands'. Errors come back in the caller's buffer; what is printed starts with the
 * command's name. */
#ifndef KB_RUN_H
#define KB_RUN_H

#include "runner/run/fixture.h"
#include "runner/util/paths.h"
#include "runner/run/dbplace.h"
#include "runner/sandbox/pgcluster.h"
#include "contract/contract.h"
#include "runner/util/atomicfile.h"
#include "runner/util/digest.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/* The first evidence file of a point (or of the fixture it ran on) that could not be
 * written: file is "" while every write succeeded. */
struct kb_run_evidence {
    char file[128];
    char reason[512];
};

/* Zeroed by kb_run_open(); closed once with kb_run_close(). */
struct kb_run {
    const char *cmd;               /* "curve", "soak": what messages start with */
    const char *dir;               /* the run directory, absolute (dirbuf) */
    char dirbuf[KB_PATH_MAX];
    const char *backend;           /* --backend, as given */
    struct kb_contract c;
    struct kb_fixture fx;              /* the sandbox, placement, the fixture now running */
    struct kb_pgrun pg;            /* the db route's PostgreSQL, stopped with the fixture */
    int db_on;                     /* the run starts PostgreSQL: dbp says on which CPUs */
    struct kb_dbplace dbp;
    struct kb_run_evidence fixture_ev;   /* the running fixture's files (limits, identity,
                                          * preflight): every point it serves inherits it */
    int incomplete;                /* points left without complete evidence */
    int unrecorded;                /* of those, points whose incomplete.json failed too */
    char unrecorded_why[256];      /* the first such failure */
};

/* SIGINT/SIGTERM set the run's one flag (no SA_RESTART: blocking calls return early),
 * SIGPIPE ignored. */
void kb_run_signals(void);

/* The signal that interrupted the run, 0 while none has. */
int kb_run_interrupted(void);

/* Zero r, name it, make dir absolute, load the contract (NULL: the tree's,
 * kb_root_contract()). dir, when it exists, must be this user's own directory that no one
 * else may write (kb_dir_own; kb_run_plan_file checks again once it is made). The
 * fixture's readiness waits and load child give up on the interrupt flag. 0, or -1 with
 * err; call kb_run_close() either way. */
int kb_run_open(struct kb_run *r, const char *cmd, const char *dir, const char *contract,
                char *err, size_t errlen);

/* The server opened (kb_fixture_setup: sandbox, placement, load command). 0, or -1 with err. */
int kb_run_setup(struct kb_run *r, const struct kb_fixture_opts *o, char *err, size_t errlen);

/* What a runner killed with -9 left: the sandbox's stale cgroups and, when sessions is not
 * NULL, the unconstrained fixtures recorded in the directories under it. Says so on stderr. */
void kb_run_sweep(struct kb_run *r, const char *sessions);

/* Kill a load child with load_sig, stop the fixture and PostgreSQL, close the sandbox, free
 * the contract. */
void kb_run_close(struct kb_run *r, int load_sig);

/* Stop the fixture (its cgroup or container) and the run's PostgreSQL, saying on stderr
 * what could not be stopped. fx.rt is kept. */
void kb_run_stop_fixture(struct kb_run *r);

/* ---- the run directory's files ------------------------------------------------------------ */

/* After kb_run_setup, for a run that starts PostgreSQL: its CPUs beside the server's and the
 * client's (db_cpus NULL: the default of runner/run/dbplace.h), which the cluster is pinned
 * to and run.json records; roles that share are said on stderr. 0, or -1 with err. */
int kb_run_db_place(struct kb_run *r, const char *db_cpus, char *err, size_t errlen);

/* A run's JSON evidence file at path, written atomically with "schema_version" first
 * (runner/util/schema.h; v itself is not changed). 0, or -1 with err. */
int kb_run_evidence_json(const char *path, const json_t *v, char *err, size_t errlen);

/* The run directory made and dir/plan.json in it: written when absent; when present it
 * must equal want, its schema_version aside (kb_run_evidence_json stamps it), else -1 with
 * err saying dir holds a different `what` (a re-run resumes only the same plan) or was
 * written by a newer kneebench. Takes want. */
int kb_run_plan_file(const char *dir, json_t *want, const char *what, char *err,
                     size_t errlen);

/* dir/run.json; a resumed run keeps the first invocation's and records this one beside it
 * as run-resumed-<started>.json. 0, or -1 with err. */
int kb_run_identity_file(const char *dir, json_t *identity, time_t started, char *err,
                         size_t errlen);

/* The version line of each named runtime: the sandbox's (an image's own) where it knows
 * it, else the contract's version command run here; "unknown" without one. New object. */
json_t *kb_run_versions(const struct kb_run *r, char *const *names, size_t n);

/* The version of the PostgreSQL the run's db route runs against: the sandbox's own (an
 * image's) where it knows it, else the binaries installed here that pgcluster.sh starts. */
void kb_run_pg_version(const struct kb_run *r, char *out, size_t outlen);

/* The contract a run ran under, kept beside its evidence: kb_run_keep_contract writes it,
 * `kneebench report` reads it (published figures, the runtimes' order), not the checkout's. */
#define KB_RUN_CONTRACT "contract.json"

/* The contract r was loaded from, its bytes as they are, into dir/contract.json when the
 * run has none yet; a resumed run keeps the copy its first invocation made, and a contract
 * that differs from it now is said on stderr (the points already measured ran under the
 * copy). hex: the SHA-256 of this invocation's contract (run.json's contract_sha256).
 * 0, or -1 with err when the contract cannot be read or the copy not written. */
int kb_run_keep_contract(struct kb_run *r, char hex[KB_SHA256_HEX], char *err, size_t errlen);

/* run.json for this invocation: kind (NULL: none), started, command line, runner and
 * contract SHA-256 (the contract kept first: kb_run_keep_contract), host, versions (taken), backend, limits requested and placement (the
 * runner's own CPUs among them: controller_cpus), what
 * the sandbox adds, the command's own fields (more, taken; NULL: none), and the fixture's
 * own libmicrohttpd from gray-static's version line. 0, or -1 with err. */
int kb_run_identity(struct kb_run *r, int argc, char **argv, const char *kind,
                    json_t *versions, json_t *more, char *err, size_t errlen);

/* ---- a point's evidence ------------------------------------------------------------------- */

/* Remember the first failure only: the rest of a point's evidence is still written. */
void kb_run_note(struct kb_run_evidence *ev, const char *file, const char *reason);

/* Write dir/file (kb_run_evidence_json), noting a failure in ev. 0 or -1. */
int kb_run_write_json(struct kb_run_evidence *ev, const char *dir, const char *file,
                      const json_t *v);

/* A fixture starting in fixdir: r->fixture_ev cleared, fixdir made (noted when it cannot be). */
void kb_run_fixture_begin(struct kb_run *r, const char *fixdir);

/* Start r->fx.rt in fixdir on r->fx.port: kb_run_fixture_begin(); with pgdir, the run's
 * PostgreSQL first (its cluster there) and the fixture given the db arguments and db_pool;
 * then kb_fixture_start() (ready, limits.json read back, identity), a limits.json it could not
 * write noted. argv (64 slots) gets the fixture's command, the caller's to free with
 * kb_tmpl_free(). kb_fixture_start()'s result with reason, -1 with reason "PostgreSQL: ..."
 * when the cluster did not start, or KB_FX_HARNESS, nothing started, when fixdir is not
 * this user's own directory that no one else may write (kb_dir_own). */
int kb_run_launch(struct kb_run *r, const char *fixdir, const char *pgdir, int db_pool,
                  char **argv, char *reason, size_t reasonlen);

/* A point about to run in dir: made, its marker and incomplete.json removed, and the
 * temporary files an interrupted run left in it (a runner killed with -9 renames nothing).
 * 0, or -1 with err. */
int kb_run_point_begin(const char *dir, char *err, size_t errlen);

/* 1 when dir's point is complete (its DONE exists). */
int kb_run_point_done(const char *dir);

/* dir/file opened for writing under a temporary name (runner/util/atomicfile.h), the header
 * line written: write rows to ->f. NULL, noted in ev, when it cannot be created. */
struct kb_afile *kb_run_csv_open(struct kb_run_evidence *ev, const char *dir, const char *file,
                                 const char *header);

/* Commit *f (NULL: nothing to do): flushed, synced and given its final name; a write, sync,
 * close or rename that failed is noted in ev under file, and the temporary file removed.
 * *f is freed and NULL after. 0 or -1. */
int kb_run_csv_close(struct kb_run_evidence *ev, struct kb_afile **f, const char *file);

/* Drop *f (NULL: nothing to do): closed and its temporary file removed, nothing noted (the
 * point it belongs to gets no marker and is redone). *f is NULL after. */
void kb_run_csv_abort(struct kb_afile **f);

/* The point's last step: with nothing noted in ev or in r->fixture_ev (the fixture that
 * served it), dir/DONE from marker; else (or when DONE itself cannot be written) no DONE,
 * dir/incomplete.json naming the file and the reason (best effort: one that cannot be
 * written either is counted in r->unrecorded), r->incomplete counted, and -1 with err saying
 * so. Takes marker. */
int kb_run_point_finish(struct kb_run *r, const struct kb_run_evidence *ev, const char *dir,
                        json_t *marker, char *err, size_t errlen);

/* On stderr, when points (a soak's phases: what = "phase") were left incomplete: how many,
 * and whether each has its incomplete.json or why some have none (a full disk writes
 * neither). Nothing when all are complete. */
void kb_run_say_incomplete(const struct kb_run *r, const char *what);

#endif
