/* units.h -- the command line's number forms, as wrk2, hey, k6 and vegeta users type them:
 * durations with a unit suffix (500ms, 10s, 2m, 1h; a bare number is seconds), rates with
 * a metric suffix (20k, 1.5k, 2M; a bare number is requests per second), plain decimals
 * (0.995, 5%) and whole numbers (256). Pure functions: no output, no exit; the caller words
 * the refusal (runner/util/opts.h words it the same way for every command). */
#ifndef KB_UNITS_H
#define KB_UNITS_H

/* 0 and *out (seconds) when s is a duration within [lo, hi]; -1 otherwise (empty, junk,
 * a sign, an exponent, hex, inf/nan, a space, an unknown suffix, out of range). */
int kb_parse_duration(const char *s, double lo, double hi, double *out);

/* 0 and *out (per second) when s is a rate within [lo, hi]: k or K = x1000, M = x1000000.
 * A lower-case m is refused: it reads as milli as easily as mega. */
int kb_parse_rate(const char *s, double lo, double hi, double *out);

/* 0 and *out when s is a plain decimal ("0.995", "5", ".5") within [lo, hi], with a trailing
 * '%' too when percent is set (the value is the number before it: "5%" is 5); -1 otherwise. */
int kb_parse_number(const char *s, int percent, double lo, double hi, double *out);

/* 0 and *out when s is decimal digits alone ("256") within [lo, hi]; -1 otherwise: a sign, a
 * point, a space, an exponent, a suffix, or a value past a long. */
int kb_parse_whole(const char *s, long lo, long hi, long *out);

#endif
