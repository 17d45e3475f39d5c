/* pgcluster.h -- a throwaway PostgreSQL cluster for a run, started and stopped from C.
 *
 * Owns nothing but the calls: the cluster itself is gray-static/pgcluster.sh's (initdb into
 * DIR, private socket directory, no TCP, `world` filled from the contract). These run the
 * script as a child, capture the conninfo it prints and hand back its last error line.
 * Never prints; errors go to the caller's buffer. */
#ifndef KB_PGCLUSTER_H
#define KB_PGCLUSTER_H

#include <stddef.h>

/* The script's path under the source root (KB_ROOT unless root is given). */
void kb_pgcluster_script(const char *root, char *out, size_t outlen);

/* 1 when PostgreSQL server binaries are installed (/usr/lib/postgresql/<v>/bin/initdb). */
int kb_pgcluster_available(void);

/* Start (initialising on first use) the cluster in dir; conninfo gets its libpq conninfo.
 * 0, or -1 with the script's complaint in err. */
int kb_pgcluster_start(const char *root, const char *dir, char *conninfo, size_t conninfolen,
                       char *err, size_t errlen);

/* Stop the cluster in dir (fast shutdown). 0, or -1 with err. */
int kb_pgcluster_stop(const char *root, const char *dir, char *err, size_t errlen);

#endif
