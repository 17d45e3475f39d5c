/* evidence.c -- a run's evidence files written whole (evidence.h). */
#include "runner/util/evidence.h"
#include "runner/util/atomicfile.h"

#include <math.h>

int kb_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    return kb_afile_write(path, data, len, err, errlen);
}

int kb_write_json_atomic(const char *path, const json_t *v, char *err, size_t errlen)
{
    return kb_afile_write_json(path, v, err, errlen);
}

json_t *kb_json_figure(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

