/* soakwin.h -- the soak's decay gate (docs/protocol.md, "The soak's decay gate"): a phase's
 * measured interval cut into equal windows, each window's achieved rate and corrected p99
 * taken from the phase's own per-second series (series.csv's responses, series.hlog's
 * histograms merged, so a window's p99 is its requests' own, not a figure made of
 * per-second ones), and the last window set against the first.
 *
 * Owns: kb_soakwin_count (how many windows: max_s long, or a tenth of the phase when that
 * is shorter, never under the series' one second), kb_soakwin_read (a phase directory's
 * windows) and kb_soakwin_judge (pure: did throughput fall or the tail grow beyond the
 * rule?). Errors and reasons go to the caller's buffers; nothing printed. */
#ifndef KB_SOAKWIN_H
#define KB_SOAKWIN_H

#include <stddef.h>

/* The tolerances (contract soak.windows; options override): achieved may fall by at most
 * max_rate_drop of the first window's; corrected p99 may not grow to more than p99_factor
 * times the first window's by more than p99_floor_us. */
struct kb_decay_rule {
    double max_s;
    double max_rate_drop;
    double p99_factor;
    double p99_floor_us;
};

struct kb_soak_window {
    double start_s, end_s;     /* from the measured interval's start: the series' intervals
                                * it holds (each in the window its start falls in) */
    double seconds;            /* the series' intervals it holds, summed */
    long long completed;       /* responses that ended in it (series.csv) */
    long long bounded;         /* requests recorded at a lower bound in it */
    double achieved_rps;       /* completed / seconds; 0 when it holds no interval */
    double p99_us;             /* corrected p99 of its merged histograms; NAN when empty */
    int p99_bound;             /* bounded requests in it: the p99 may be only a lower bound */
};

#define KB_SOAKWIN_MAX 64      /* a window's histogram is ~190 KiB while read */

struct kb_soakwin {
    size_t n;
    double window_s;
    struct kb_soak_window w[KB_SOAKWIN_MAX];
};

/* Windows for a phase of duration_s: 10, or duration / max_s when that is more, at most one
 * per whole second of the phase (the series' resolution) and at most KB_SOAKWIN_MAX; 1 for a
 * phase shorter than 2 s. */
size_t kb_soakwin_count(double duration_s, double max_s);

/* dir/series.csv and dir/series.hlog read into out, windows over [0, duration_s) (the drain's
 * intervals are not the phase's). 0, or -1 with err (a file missing or malformed). */
int kb_soakwin_read(const char *dir, double duration_s, double max_s, struct kb_soakwin *out,
                    char *err, size_t errlen);

/* First against last, as the rule asks. */
struct kb_decay {
    double rate_drop;          /* 1 - last achieved / first achieved */
    double p99_ratio;          /* last p99 / first p99 */
    double p99_growth_us;      /* last p99 - first p99 */
    int rate_decays, tail_grows;
};

/* 1 when the phase decayed (throughput, tail or both: d says which), 0 when it held, -1 when
 * it cannot be judged (fewer than two windows, or the first or last with no response); the
 * reason says which, with the figures. */
int kb_soakwin_judge(const struct kb_soakwin *w, const struct kb_decay_rule *r,
                     struct kb_decay *d, char *reason, size_t reasonlen);

#endif
