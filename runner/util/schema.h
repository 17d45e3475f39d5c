/* schema.h -- the version an evidence file's format carries, and the check its reader makes.
 *
 * Owns "schema_version": every JSON file a run writes as evidence (plan.json, run.json, a
 * fixture's limits/identity/preflight, a point's command/load/verdict/hostclock.json and its
 * DONE, calibrate.json, confirm.json, refine.json, requests-logs.json, knee.json, a soak's
 * and a qualification's files) carries the version of its format, KB_SCHEMA_EVIDENCE for
 * all of them today. A file without one is version 0: the format the runner wrote before
 * files carried versions, which every reader still reads as it did. Version 1 is that
 * format with the version in it (and beside a run's files, the contract it ran under:
 * contract.json). A reader takes a file through kb_schema_version(): a version above the
 * one it knows was written by a newer kneebench and is refused by name, never read by
 * guessing from which fields are there. A file whose format changes gets its own version
 * past this one, said where its writer and reader are. The report's own report.json and
 * report.csv carry their own schema_version (docs/report-format.md). Never prints. */
#ifndef KB_SCHEMA_H
#define KB_SCHEMA_H

#include <jansson.h>
#include <stddef.h>

#define KB_SCHEMA_EVIDENCE 1

/* o with "schema_version" as its first key (a reader sees it before anything it qualifies):
 * the version o already carries, else version. Returns o; NULL stays NULL (a value that
 * could not be built). */
json_t *kb_schema_stamp(json_t *o, int version);

/* The version o carries: 0 when it has none; -1 with err naming file when it is not a
 * whole number >= 0 or is above known (written by a newer kneebench). */
int kb_schema_version(const json_t *o, const char *file, int known, char *err, size_t errlen);

#endif
