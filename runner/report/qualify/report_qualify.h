/* report_qualify.h -- the db qualification's report (`kneebench qualify`): report.md and
 * report.json in the run directory, from its verdict.json and the contract's paper figures.
 *
 * Owns the side-by-side table (docs/protocol.md, "The db qualification"): the paper's figures
 * for each of its runs of seed 001's qualification (contract.json, qualification.papers: the
 * readiness qualification this command reproduces, and the continuation run), labelled as
 * measured on the paper's host -- orientation, not a target -- beside this run's delivery,
 * corrected p50/p99/p99.9/max, responses, /stats observations and their rate, the most
 * handlers suspended at once, RSS and descriptors and the final zero state; a figure a paper
 * run does not state is null ("-"). Then the criteria, the resource series and where the
 * evidence lies. Nothing is written when verdict.json is missing or unreadable. */
#ifndef KB_REPORT_QUALIFY_H
#define KB_REPORT_QUALIFY_H

#include "contract/contract.h"

#include <jansson.h>
#include <stddef.h>

/* The report's JSON document (schema_version 2: a row's paper figures under "papers", by
 * run name) from a run's verdict.json v and the
 * contract's qualification section; the caller json_decrefs it. */
json_t *kb_qual_report_json(json_t *v, const struct kb_qualification *q);

/* Markdown for the document kb_qual_report_json() made; malloc'd, NULL on failure. */
char *kb_qual_report_md(json_t *report);

/* run/verdict.json into run/report.json and run/report.md (atomically). 0, or -1 with err. */
int kb_qual_report_write(const char *run, const struct kb_contract *c, char *err,
                         size_t errlen);

#endif
