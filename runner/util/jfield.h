/* jfield.h -- one field of JSON evidence, read leniently: o[a], or o[a][b] when b is given.
 *
 * Owns the accessors that the report writers, the soak report and calibrate.json's reader
 * use where a missing field is a fact to show, not an error (older evidence lacks newer
 * fields; an empty histogram's figure is null). A reader that must refuse a missing field
 * (verdict.c's load.json parser) says which instead. A NULL o is an absent field. */
#ifndef KB_JFIELD_H
#define KB_JFIELD_H

#include <jansson.h>

/* The number at o[a] (or o[a][b]); 0 when absent, null or not a number. */
double kb_jnum(const json_t *o, const char *a, const char *b);

/* 1 and *out when o[a] (or o[a][b]) is a number; 0, *out untouched, when it is not: a null
 * or absent field is not a zero. */
int kb_jnum_opt(const json_t *o, const char *a, const char *b, double *out);

/* The string at o[k]; dflt when absent or not a string (never NULL into a format when
 * dflt is not). */
const char *kb_jstr(const json_t *o, const char *k, const char *dflt);

#endif
