/* units.h -- the command line's number forms, as wrk2, hey, k6 and vegeta users type them:
 * durations with a unit suffix (500ms, 10s, 2m, 1h; a bare number is seconds) and rates with
 * a metric suffix (20k, 1.5k, 2M; a bare number is requests per second). Pure functions: no
 * output, no exit; the caller words the refusal. */
#ifndef KB_UNITS_H
#define KB_UNITS_H

/* 0 and *out (seconds) when s is a duration within [lo, hi]; -1 otherwise (empty, junk,
 * a sign, an exponent, hex, inf/nan, a space, an unknown suffix, out of range). */
int kb_parse_duration(const char *s, double lo, double hi, double *out);

/* 0 and *out (per second) when s is a rate within [lo, hi]: k or K = x1000, M = x1000000.
 * A lower-case m is refused: it reads as milli as easily as mega. */
int kb_parse_rate(const char *s, double lo, double hi, double *out);

#endif
