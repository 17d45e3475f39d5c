/* schema.c -- schema_version written first and checked on reading (schema.h). */
#include "runner/util/schema.h"

#include <stdio.h>

json_t *kb_schema_stamp(json_t *o, int version)
{
    json_t *rest, *own = json_object_get(o, "schema_version");
    if (!json_is_object(o))
        return o;
    if (json_is_integer(own))  /* a file whose format moved past the common one says so */
        version = (int)json_integer_value(own);
    /* insertion order is the file's order: take the keys out and put them back after it */
    if (!(rest = json_copy(o)))
        return o;              /* out of memory: the file goes without, its reader says 0 */
    json_object_clear(o);
    json_object_set_new(o, "schema_version", json_integer(version));
    json_object_del(rest, "schema_version");
    json_object_update(o, rest);
    json_decref(rest);
    return o;
}

int kb_schema_version(const json_t *o, const char *file, int known, char *err, size_t errlen)
{
    json_t *v = json_object_get(o, "schema_version");
    json_int_t n;
    if (!v)
        return 0;
    n = json_integer_value(v);
    if (!json_is_integer(v) || n < 0) {
        snprintf(err, errlen, "%s: schema_version is not a whole number >= 0", file);
        return -1;
    }
    if (n > known) {
        snprintf(err, errlen, "%s: schema_version %lld, written by a newer kneebench (this one "
                 "reads up to %d)", file, (long long)n, known);
        return -1;
    }
    return (int)n;
}
