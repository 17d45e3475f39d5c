/* jfield.c -- lenient JSON field accessors (jfield.h). */
#include "runner/util/jfield.h"

static json_t *field(const json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return b ? json_object_get(v, b) : v;
}

double kb_jnum(const json_t *o, const char *a, const char *b)
{
    return json_number_value(field(o, a, b));
}

int kb_jnum_opt(const json_t *o, const char *a, const char *b, double *out)
{
    json_t *v = field(o, a, b);
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return 1;
}

const char *kb_jstr(const json_t *o, const char *k, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : dflt;
}
