/* report_soak.h -- `kneebench soak`'s report.md, from its own evidence (report_soak.c). */
#ifndef KB_REPORT_SOAK_H
#define KB_REPORT_SOAK_H

#include "runner/run/soak/soak.h"

#include <stddef.h>

/* What the soak ran, as its plan says, and the paper's one-hour figures from the contract
 * (all the caller's). */
struct kb_soak_report {
    const char *run, *runtime, *backend, *server_cpus, *client_cpus;
    int unconstrained, connections, threads;
    double duration_s, warmup_s, settle_s, every_s;
    const struct kb_soak_criteria *crit;
    const struct kb_soak_planned *ph;
    size_t nph;
    const char *db_mode;                       /* the db phase's /db design, or NULL */
    const struct kb_published_soak *paper;     /* published.soak (nphases 0: none) */
};

/* run/report.md from the phases' verdict.json files (only phases whose marker exists) and
 * run.json: each phase's figures, the paper's beside them (labelled as its host's), and
 * each phase's decay windows, first against last. The number of phases complete and passed, or -1 with err when report.md could
 * not be written; *complete gets how many are complete. */
int kb_report_soak(const struct kb_soak_report *s, size_t *complete, char *err, size_t errlen);

#endif
