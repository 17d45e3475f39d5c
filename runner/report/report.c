/* report.c -- the report model read: the plan's names, a piece of evidence, the rows and
 * boundaries (report.h). Loading it is report_load.c's. */
#define _POSIX_C_SOURCE 200809L
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/run/cell.h"
#include "runner/util/evidence.h"
#include "runner/util/schema.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

size_t kb_report_nruntimes(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "runtimes"));
}
const char *kb_report_runtime(const struct kb_report *r, size_t i)
{
    return json_string_value(json_array_get(json_object_get(r->plan, "runtimes"), i));
}
size_t kb_report_nroutes(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "routes"));
}
const char *kb_report_route(const struct kb_report *r, size_t i)
{
    return json_string_value(json_array_get(json_object_get(r->plan, "routes"), i));
}
size_t kb_report_nrates(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "rates"));
}
long kb_report_rate(const struct kb_report *r, size_t i)
{
    return (long)json_integer_value(json_array_get(json_object_get(r->plan, "rates"), i));
}

json_t *kb_report_evidence(struct kb_report *r, const char *path)
{
    json_error_t je;
    json_t *j = kb_evidence_load(path, &je);
    char err[sizeof(r->schema_err)];
    /* a file there but no evidence (a FIFO, a giant, not JSON) refuses the run as a newer
     * schema does: never read as if it were absent */
    if (!j && errno != ENOENT) {
        if (!r->schema_err[0])
            snprintf(r->schema_err, sizeof(r->schema_err), "%.300s is unreadable: %s", path,
                     je.text);
        return NULL;
    }
    if (j && kb_schema_version(j, path, KB_SCHEMA_EVIDENCE, err, sizeof(err)) < 0) {
        if (!r->schema_err[0])
            snprintf(r->schema_err, sizeof(r->schema_err), "%s", err);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The rows as cells, for what cell.h judges over them. */
static struct kb_cells cells_of(const struct kb_report *r)
{
    struct kb_cells c = { r->plan, r->min_delivery, r->max_p99_us, r->rows, r->fine,
                          r->nrows, r->nfine };
    return c;
}
const struct kb_cell *kb_report_row(const struct kb_report *r, const char *runtime,
                                    const char *route, long rate)
{
    struct kb_cells c = cells_of(r);
    return kb_cells_row(&c, runtime, route, rate);
}

long kb_report_highest(const struct kb_report *r, const char *runtime, const char *route)
{
    struct kb_cells c = cells_of(r);
    return kb_cells_highest(&c, runtime, route);
}

size_t kb_report_boundaries(const struct kb_report *r, struct kb_boundary *out, size_t max)
{
    struct kb_cells c = cells_of(r);
    return kb_cells_boundaries(&c, out, max);
}
