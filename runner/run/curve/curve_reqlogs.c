/* curve_reqlogs.c -- a complete curve's raw request events settled (curve_rounds.h). */
#define _GNU_SOURCE
#include "runner/run/curve/curve_rounds.h"
#include "runner/util/evidence.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/run/cell.h"
#include "runner/run/fixture.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

/* ---- raw request events, kept where they decide --------------------------------------- */
/* Every point records its measured requests while it runs (requests.log, bounded), because which points will decide the answer is
 * known only once the run is complete: each runtime-route's final boundary, its highest
 * controlled rate and the next (runner/run/cell.h). The bound is KB_FIXTURE_REQUESTS_LOG_MAX. With knee, the logs of every sample at
 * those two rates (the matrix's repeats and the confirmation samples) are kept and the rest
 * removed; RUN/requests-logs.json says which, with their sizes (docs/protocol.md, "Raw
 * request events"). */

/* {id: true} for every sample at a boundary rate, as the report's rows aggregate them; NULL
 * with err when the run cannot be read. */
static json_t *boundary_points(const struct kb_curve *cv, char *err, size_t errlen)
{
    struct kb_cells rep;
    json_t *plan;
    struct kb_boundary b[256];
    json_t *ids = json_object(), *id;
    size_t nb, k;
    if (kb_cells_load(cv->r.dir, &rep, &plan, err, errlen) < 0) {
        json_decref(ids);
        return NULL;
    }
    nb = kb_cells_boundaries(&rep, b, sizeof(b) / sizeof(b[0]));
    for (size_t i = 0; i < nb; i++) {
        long rates[2] = { b[i].held.rps, b[i].next.rps };
        for (size_t j = 0; j < 2; j++) {
            const struct kb_cell *w = rates[j]
                ? kb_cells_row(&rep, b[i].runtime, b[i].route, rates[j]) : NULL;
            json_array_foreach(w ? w->point_ids : NULL, k, id)
                json_object_set_new(ids, json_string_value(id), json_true());
        }
    }
    kb_cells_free(&rep);
    json_decref(plan);
    return ids;
}

/* One point's requests.log kept (into kept) or removed (into removed); its size either way. */
static void settle_one_log(const char *dir, const char *id, int keep, json_t *kept,
                           json_t *removed, long long *bytes)
{
    char path[KB_PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "%s/points/%s/requests.log", dir, id);
    if (stat(path, &st) < 0)
        return;
    if (!keep && unlink(path) == 0) {
        json_array_append_new(removed, json_pack("{s:s,s:I}", "point", id,
                                                 "bytes", (json_int_t)st.st_size));
        return;
    }
    json_array_append_new(kept, json_pack("{s:s,s:I}", "point", id, "bytes",
                                          (json_int_t)st.st_size));
    bytes[0] += st.st_size;
}

/* What an earlier pass removed and is still gone: a resumed run's record stays whole. -1
 * with err when the earlier record is a newer kneebench's. */
static int removed_before(const char *dir, json_t *removed, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    size_t i;
    json_t *old, *e;
    if (kb_evidence_read(kb_path(path, sizeof(path), dir, "requests-logs.json"), &old, err,
                         errlen) == KB_EVIDENCE_REFUSED)
        return -1;
    json_array_foreach(json_object_get(old, "removed"), i, e) {
        snprintf(path, sizeof(path), "%s/points/%s/requests.log", dir,
                 kb_jstr(e, "point", ""));
        if (kb_jstr(e, "point", "")[0] && !kb_file_exists(path))
            json_array_append(removed, e);
    }
    json_decref(old);
    return 0;
}

/* The complete run's logs settled by its mode and requests-logs.json written. -1 said on
 * stderr when the boundaries could not be read or the record written. */
int kb_curve_settle_requests_logs(struct kb_curve *cv)
{
    char err[1024], pdir[KB_PATH_MAX], path[KB_PATH_MAX];
    json_t *keep = cv->requests_log == KB_RL_KNEE ? boundary_points(cv, err, sizeof(err))
                                               : json_object();
    json_t *kept = json_array(), *removed = json_array(), *doc;
    long long bytes = 0;
    struct dirent *e;
    DIR *d;
    int rc = -1;
    /* a newer kneebench's record is refused before any log is removed */
    if (keep && removed_before(cv->r.dir, removed, err, sizeof(err)) < 0) {
        json_decref(keep);
        keep = NULL;
    } else if (keep && kb_path(pdir, sizeof(pdir), cv->r.dir, "points") &&
               (d = opendir(pdir))) {
        while ((e = readdir(d)))
            if (e->d_name[0] != '.')
                settle_one_log(cv->r.dir, e->d_name, cv->requests_log == KB_RL_ALL ||
                               json_object_get(keep, e->d_name), kept, removed, &bytes);
        closedir(d);
        doc = json_pack("{s:i,s:s,s:s,s:I,s:I,s:o,s:o}", "schema_version", 1, "mode",
                        cv->requests_log == KB_RL_ALL ? "all" : "knee", "file", "requests.log",
                        "records_max_per_point", (json_int_t)KB_FIXTURE_REQUESTS_LOG_MAX,
                        "bytes_kept", (json_int_t)bytes, "kept", kept, "removed", removed);
        rc = kb_run_evidence_json(kb_path(path, sizeof(path), cv->r.dir, "requests-logs.json"),
                                  doc, err, sizeof(err));
        json_decref(doc);
        kept = removed = NULL;
    } else if (keep) {
        snprintf(err, sizeof(err), "%.900s: %s", pdir, strerror(errno));
    }
    if (rc < 0)
        fprintf(stderr, "kneebench curve: requests logs: %s\n", err);
    json_decref(keep);
    json_decref(kept);
    json_decref(removed);
    return rc;
}

