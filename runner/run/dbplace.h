/* dbplace.h -- where the db route's PostgreSQL runs beside the server and the client: the
 * run's three CPU roles (server, client, db), checked and recorded.
 *
 * Owns the rule and its record, nothing that touches a process (the pinning is
 * runner/sandbox/pin.c's, done by pgcluster.c). The rule: with --db-cpus the three sets must
 * be disjoint on a host that has a CPU per role; on a host with fewer (a 2-core machine)
 * the overlap is allowed, named and recorded, never refused, so the curve still runs there.
 * Without --db-cpus PostgreSQL gets the online CPUs no other role has, else the server's:
 * never the client's by default, whose load threads run SCHED_FIFO and would starve it.
 * The record (kb_dbplace_json) goes into plan.json and run.json. */
#ifndef KB_DBPLACE_H
#define KB_DBPLACE_H

#include <jansson.h>
#include <sched.h>                 /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <stddef.h>

#define KB_DBPLACE_ROLES 3         /* server, client, db: a CPU each at least */

struct kb_dbplace {
    int declared;                  /* --db-cpus was given */
    int online;                    /* the host's online CPUs when checked */
    cpu_set_t set;
    char cpus[64];                 /* canonical (runner/util/cpulist.h) */
    char server_cpus[64], client_cpus[64];
    /* roles sharing CPUs: "server+db share CPU 0; ..." or "" when disjoint */
    char shared[256];
    char note[512];                /* why they share, or "" */
    json_t *shares;                /* [{roles: [a, b], cpus}] owned */
};

/* Pure: the rule over parsed sets. db NULL means no --db-cpus (the default above). online is
 * the host's CPU count. 0, or -1 with err (a declared overlap on a host with a CPU per role).
 * Call kb_dbplace_free() either way. */
int kb_dbplace_check(struct kb_dbplace *d, const cpu_set_t *server, const cpu_set_t *client,
                     const cpu_set_t *db, int online, char *err, size_t errlen);

/* kb_dbplace_check on CPU lists kept to this host's online CPUs (db_cpus NULL: none
 * given). 0, or -1 with err naming the bad list or the overlap. */
int kb_dbplace_resolve(struct kb_dbplace *d, const char *db_cpus, const char *server_cpus,
                       const char *client_cpus, char *err, size_t errlen);

/* {"db_cpus": LIST, "db_cpus_declared": bool, "placement": {server, client, db, online_cpus,
 * disjoint, shared: [...], note}}: what plan.json and run.json record. New reference. */
json_t *kb_dbplace_json(const struct kb_dbplace *d);

void kb_dbplace_free(struct kb_dbplace *d);

#endif
