/* schema.h -- "schema_version", the format version every JSON evidence file of a run carries
 * (plan, run, a fixture's and a point's files and DONE, calibrate, confirm, refine,
 * requests-logs, knee, a soak's and a qualification's: KB_SCHEMA_EVIDENCE for all of them
 * today), and the check its reader makes through kb_schema_version().
 *
 * A file without one is version 0, the format from before files carried versions, read as
 * it was. A version above the one a reader knows was written by a newer kneebench and is
 * refused by name, never read by guessing from its fields. A file whose format changes gets
 * its own version, said at its writer and reader. report.json and report.csv have their own
 * (docs/report-format.md). Never prints. */
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
