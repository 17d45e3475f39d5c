/* opts.h -- the command line's number options, read one way by every command.
 *
 * Owns the one table of bounds the commands share (kb_bounds: the load generator's limits,
 * which curve, knee, soak, qualify and calibrate check before they plan a load child, so
 * that no plan holds a value its child would refuse mid-run; ports; the db pool; the
 * criteria's ranges) and kb_opt_*, which read an option's value in units.h's forms against
 * a bound. A refused value gets the same sentence in every command, naming the option, the
 * form and the range:
 *     --threads must be a whole number in 1..256, not '1e12'
 *     --duration must be a duration in (0, 24h] (30, 30s, 500ms, 2m), not 'inf'
 * written into the caller's buffer; the command prints it after "kneebench CMD: " and exits
 * 2 before anything starts. A bound only one command has may be that command's own struct
 * kb_bound. Pure: no output, no exit. */
#ifndef KB_OPTS_H
#define KB_OPTS_H

#include <stddef.h>

struct kb_bound {
    double lo, hi;
    int open_lo;        /* lo itself refused: (0, 24h] */
    int whole;          /* rates: a whole number of requests per second, as a plan's are */
};

enum kb_bound_id {
    /* kneebench load's own limits */
    KB_B_THREADS,       /* 1..256 load threads */
    KB_B_CONNECTIONS,   /* 1..60000, every one a descriptor */
    KB_B_RATE,          /* (0, 10M] req/s */
    KB_B_DURATION,      /* (0, 24h] measured */
    KB_B_WARMUP,        /* [0, 1h] */
    KB_B_DRAIN,         /* [0, 10m] */
    KB_B_TIMEOUT,       /* [1ms, 1h] a request may wait */
    KB_B_TIMEOUT_MS,    /* the same in whole milliseconds */
    KB_B_CLIENT_US,     /* 0..1000 us: --spin-us, --timer-slack-us, --send-quantum-us */
    KB_B_REQLOG_LINES,  /* 1..100000000 lines of requests.log */
    /* what a plan asks of the load: whole rates (plan.json's), the client's trust */
    KB_B_PLAN_RATE,     /* [1, 10M] whole req/s: curve's and soak's --rates, qualify's --rate */
    KB_B_CLIENT_US_MAX, /* [0, 1h] in us: a send-lag or rx-delay p99 bound */
    KB_B_FRACTION,      /* [0, 1]: a CPU fraction, a tolerated drop */
    KB_B_DELIVERY,      /* (0, 1]: achieved over requested */
    KB_B_P99_MS,        /* (0, 1h] in ms: a corrected p99 bound */
    /* a run's other numbers */
    KB_B_SETTLE,        /* [0, 1h] after the warmup, before resources are sampled */
    KB_B_INTERVAL,      /* [1ms, 1h] between two samples */
    KB_B_REPEATS,       /* 1..1000 passes of a matrix */
    KB_B_DB_POOL,       /* 1..10000: gray-static --db-pool's own limit */
    KB_B_PORT,          /* 1..65535 a server listens on */
    KB_B_LISTEN_PORT,   /* 0..65535, 0: any free port */
    KB_B_PID,           /* 1..4194304: Linux's PID_MAX_LIMIT */
    KB_B_COUNT
};

extern const struct kb_bound kb_bounds[KB_B_COUNT];
#define KB_BOUND(id) (&kb_bounds[KB_B_##id])

/* Each reads v (name is how the refusal names the option: "--threads", "-t/--threads")
 * against b: 0 and *out, or -1, *out untouched and the refusal in err. */

/* Decimal digits alone: no sign, point, exponent or suffix. */
int kb_opt_int(const char *name, const char *v, const struct kb_bound *b, int *out,
               char *err, size_t errlen);
int kb_opt_long(const char *name, const char *v, const struct kb_bound *b, long *out,
                char *err, size_t errlen);

/* Seconds: 30, 30s, 500ms, 250us, 2m, 1h. */
int kb_opt_duration(const char *name, const char *v, const struct kb_bound *b, double *out,
                    char *err, size_t errlen);

/* Requests per second: 45000, 20k, 1.5k, 2M. */
int kb_opt_rate(const char *name, const char *v, const struct kb_bound *b, double *out,
                char *err, size_t errlen);

/* A comma-separated list of rates, each as kb_opt_rate reads it (b: KB_BOUND(PLAN_RATE)),
 * into out as whole req/s in the order given ("4k,8k" -> 4000, 8000): parsed once, here. */
#define KB_RATES_MAX 64
struct kb_rates {
    long v[KB_RATES_MAX];
    size_t n;
};
int kb_opt_rates(const char *name, const char *v, const struct kb_bound *b,
                 struct kb_rates *out, char *err, size_t errlen);

/* A plain decimal (0.995, .5, 2): a fraction, a factor, a count of ms or bytes. */
int kb_opt_fraction(const char *name, const char *v, const struct kb_bound *b, double *out,
                    char *err, size_t errlen);
int kb_opt_number(const char *name, const char *v, const struct kb_bound *b, double *out,
                  char *err, size_t errlen);

/* A plain decimal with an optional '%': 5 and 5% are both five percent. */
int kb_opt_percent(const char *name, const char *v, const struct kb_bound *b, double *out,
                   char *err, size_t errlen);

/* A CPU list of this host's online CPUs (runner/util/cpulist.h: 0, 1-3, 0,2), read before
 * anything is made: 0, or -1 with "NAME must be a CPU list ..., not 'V' (why)" in err. */
int kb_opt_cpulist(const char *name, const char *v, char *err, size_t errlen);

/* --pid: one PID or several, separated by commas or blanks ("12,13", "12 13", what
 * $(pidof nginx) gives quoted), each as kb_opt_long reads it against KB_BOUND(PID). Appends
 * to out[0..*n) (a repeated --pid adds), skipping one already there: 0, or -1 with the
 * refusal in err, naming --pid, and *n untouched. */
#define KB_OPT_PIDS_MAX 64
int kb_opt_pids(const char *v, long *out, int *n, char *err, size_t errlen);

/* 1 when s is decimal digits alone: a word of an unquoted --pid $(pidof x), never a URL. */
int kb_opt_all_digits(const char *s);

/* --dispatch any|per-connection (load, knee, curve): 0 and *per_connection, or -1. */
int kb_opt_dispatch(const char *v, int *per_connection);

#endif
