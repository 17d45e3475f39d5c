/* kneerun.h -- the knee search carried out: each step runner/run/kneesearch.h asks for measured
 * (runner/run/kneepoint.h) into the run directory, until the search ends or a bound stops
 * it, with the record of it kept as it goes.
 *
 * Owns the run directory's search files: plan.json (what must match for a re-run to resume:
 * the target, the criteria, the search and point settings), and knee.json (the plan, every
 * step in the order taken with why, and the outcome), rewritten atomically after every
 * sample, the outcome last. A sample whose directory holds DONE is read back, not measured
 * again, so an interrupted search resumes where it stopped and asks for what it would have
 * asked for (the decision is a function of the samples alone). Sample k of rate R lives in
 * points/R-sK/, its hold sample k (kneesearch.h) in points/R-holdK/. */
#ifndef KB_KNEERUN_H
#define KB_KNEERUN_H

#include <jansson.h>
#include <stddef.h>

#include "runner/run/kneesearch.h"
#include "runner/run/kneepoint.h"

#define KB_KNEE_STEPS_MAX 200        /* a search never takes more samples than this */

enum kb_kneerun_end {
    KB_KNEERUN_SEARCH,           /* the search itself ended: next.step says how */
    KB_KNEERUN_MAX_TIME,         /* --max-time left no room for the next sample */
    KB_KNEERUN_MAX_STEPS,        /* KB_KNEE_STEPS_MAX samples taken */
    KB_KNEERUN_INTERRUPTED,      /* the caller's stop flag */
    KB_KNEERUN_ERROR,            /* a sample could not be measured or kept: err says */
};

struct kb_kneerun_step {
    struct kb_knee_sample s;
    int sample;                  /* its number at that rate, from 1, among short or hold ones */
    char why[64];
    int resumed;                 /* read back from an earlier run */
};

struct kb_kneerun {
    const char *dir;             /* absolute */
    json_t *plan;                /* borrowed: plan.json's object */
    json_t *setup;               /* borrowed, or NULL: knee.json's "setup" (the server found,
                                    the CPUs, the trial's answer), this invocation's */
    struct kb_knee_opts opts;
    struct kb_kneepoint_cfg point;
    double hold_s, hold_warmup_s;     /* a hold sample's measured seconds and warmup */
    double max_time_s;           /* the search's bound, resumed samples not counted */
    int (*stopped)(void);        /* non-zero (a signal came): end after the current sample */
    /* called after every sample (taken or read back), for progress lines */
    void (*progress)(void *arg, const struct kb_kneerun_step *st, const struct kb_knee_next *nx);
    void *arg;
    /* filled by the search */
    struct kb_kneerun_step steps[KB_KNEE_STEPS_MAX];
    size_t nsteps;
    struct kb_knee_next next;    /* the last decision */
    enum kb_kneerun_end end;
    double elapsed_s;            /* measuring in this invocation */
};

/* Run the search. 0 when it ended by itself or on a bound (k->end, k->next say which), -1
 * with err on an error (k->end KB_KNEERUN_ERROR; knee.json keeps what was measured). */
int kb_kneerun_search(struct kb_kneerun *k, char *err, size_t errlen);

/* The plan of an earlier search in dir: plan.json made when absent, else it must equal
 * want (a re-run resumes only the same search). Takes want. 0, or -1 with err. */
int kb_kneerun_plan(const char *dir, json_t *want, char *err, size_t errlen);

const char *kb_kneerun_end_name(enum kb_kneerun_end e);

#endif
