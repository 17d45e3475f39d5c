/* gray-static -- the C fixture: GET /plaintext and GET /json on libmicrohttpd + jansson,
 * one process, one thread serving every connection (see server.c for the loop and why); with
 * --db-mode blocking, task worker threads beside it wait on PostgreSQL (dbworkers.h).
 * main() owns the flags, the descriptor limit and the process's exit status; everything
 * else lives in server.c. */
#define _GNU_SOURCE
#include "gray-static/server.h"
#include "gray-static/db.h"
#include "gray-static/dbworkers.h"

#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gray-static [--port N] [--bind ADDR] [--loop KIND] [--turbo]\n"
            "                   [--conn-limit N] [--idle-timeout S] [--head-timeout S]\n"
            "                   [--version] [--help]\n"
            "                   [--db CONNINFO] [--db-mode MODE] [--db-pool N]\n"
            "                   [--db-workers N] [--db-queue N] [--test-routes]\n"
            "  --port N          TCP port (default 8084; 0 picks a free one)\n"
            "  --bind ADDR       numeric IPv4/IPv6 address (default 127.0.0.1)\n"
            "  --loop KIND       epoll (default: our epoll loop drives MHD), mhd-epoll,\n"
            "                    poll, select (libmicrohttpd's internal thread)\n"
            "  --turbo           MHD_USE_TURBO (opportunistic reads/writes)\n"
            "  --conn-limit N    connections kept (default 4096, lowered to what the\n"
            "                    descriptor limit allows); a new one past it closes the one\n"
            "                    that has waited longest for a request\n"
            "  --idle-timeout S  close idle connections after S seconds, also a request line\n"
            "                    trickled for S seconds (0: never; default 60)\n"
            "  --head-timeout S  close a connection whose request is not whole S seconds\n"
            "                    after its request line, however it trickles (0: never;\n"
            "                    default 10)\n"
            "  --db CONNINFO     serve GET /db from PostgreSQL (libpq conninfo); libpq is\n"
            "                    loaded then, and without --db never\n"
            "  --db-mode MODE    readiness (default): queries on a pool driven by socket\n"
            "                    readiness, requests parked meanwhile; blocking: the\n"
            "                    papers' baseline, task workers each parked on a\n"
            "                    synchronous query over its own connection, requests\n"
            "                    parked and queued for a free worker; inline: one\n"
            "                    connection, one synchronous query on the loop itself\n"
            "  --db-pool N       database connections (default 64; readiness only)\n"
            "  --db-workers N    task workers, one connection each (default 16; blocking)\n"
            "  --db-queue N      /db requests that may wait for a worker; past it 503\n"
            "                    (default 4096; blocking)\n"
            "  --test-routes     also serve GET /db-sleep?ms=N (pg_sleep; tests only)\n"
            "GET /stats always serves the runtime counters as JSON.\n"
            "On start it prints \"gray-static: listening on ADDR:PORT loop=KIND\" to stdout,\n"
            "with \" db=MODE\" after it when --db is given.\n"
            "SIGTERM or SIGINT stops it; it exits 0 after a clean stop.\n");
}

static int parse_uint(const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (!*s || *end || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Every connection is a descriptor: lift the soft limit as far as conn_limit needs (MHD
 * holds up to GS_CONN_SPARE more while it closes those shut to make room, and the server
 * keeps `reserve` of its own: loops, timers, the database pool). Where the hard limit
 * stops short, the connection limit comes down to what the descriptors allow: past them
 * accept() fails with EMFILE, libmicrohttpd stops accepting, and every new client waits
 * out the idle timeout, where a limit below them closes the connection waiting longest
 * instead. -1 when not even a few connections fit. */
static int fit_nofile(struct gs_config *c, unsigned reserve)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)c->conn_limit + GS_CONN_SPARE + reserve, floor = GS_CONN_SPARE + reserve;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= want)
        return 0;
    if (rl.rlim_cur < floor + 16) {
        fprintf(stderr, "gray-static: only %llu descriptors (RLIMIT_NOFILE): too few to serve\n",
                (unsigned long long)rl.rlim_cur);
        return -1;
    }
    fprintf(stderr, "gray-static: only %llu descriptors (RLIMIT_NOFILE): --conn-limit %u "
            "lowered to %llu\n", (unsigned long long)rl.rlim_cur, c->conn_limit,
            (unsigned long long)(rl.rlim_cur - floor));
    c->conn_limit = (unsigned)(rl.rlim_cur - floor);
    return 0;
}

/* The db flags that mean nothing together: a mode without a database, one design's sizes
 * given to another. 0, or 2 said on stderr. */
static int check_db_flags(const struct gs_db_config *dc, int mode_given)
{
    if (mode_given && !dc->conninfo)
        return fprintf(stderr, "gray-static: --db-mode needs --db CONNINFO\n"), 2;
    if (dc->mode != GS_DB_READINESS && dc->pool_size)
        return fprintf(stderr, "gray-static: --db-pool is the readiness design's; "
                       "--db-mode %s has no pool\n", gs_db_mode_name(dc->mode)), 2;
    if (dc->mode != GS_DB_BLOCKING && (dc->workers || dc->queue_max))
        return fprintf(stderr, "gray-static: --db-workers and --db-queue are the blocking "
                       "design's (--db-mode blocking)\n"), 2;
    return 0;
}

/* Descriptors the database side holds: one per connection. */
static unsigned db_descriptors(const struct gs_db_config *dc)
{
    if (!dc->conninfo)
        return 0;
    if (dc->mode == GS_DB_BLOCKING)
        return (unsigned)(dc->workers > 0 ? dc->workers : GS_DB_WORKERS_DEFAULT) + 1;
    if (dc->mode == GS_DB_INLINE)
        return 1;
    return (unsigned)(dc->pool_size > 0 ? dc->pool_size : GS_DB_POOL_DEFAULT);
}

/* 0: parsed; 1: done (help/version printed); 2: bad usage. */
static int parse_flags(int argc, char **argv, struct gs_config *c, struct gs_db_config *dc)
{
    enum { O_PORT = 'p', O_BIND = 'b', O_LOOP = 'l', O_TURBO = 't', O_VERSION = 'V',
           O_HELP = 'h', O_CONNS = 1000, O_IDLE, O_HEAD, O_DB, O_DB_POOL, O_TEST_ROUTES,
           O_DB_MODE, O_DB_WORKERS, O_DB_QUEUE };
    static const struct option opts[] = {
        { "port", required_argument, NULL, O_PORT },
        { "bind", required_argument, NULL, O_BIND },
        { "loop", required_argument, NULL, O_LOOP },
        { "turbo", no_argument, NULL, O_TURBO },
        { "conn-limit", required_argument, NULL, O_CONNS },
        { "idle-timeout", required_argument, NULL, O_IDLE },
        { "head-timeout", required_argument, NULL, O_HEAD },
        { "version", no_argument, NULL, O_VERSION },
        { "help", no_argument, NULL, O_HELP },
        { "db", required_argument, NULL, O_DB },
        { "db-pool", required_argument, NULL, O_DB_POOL },
        { "db-mode", required_argument, NULL, O_DB_MODE },
        { "db-workers", required_argument, NULL, O_DB_WORKERS },
        { "db-queue", required_argument, NULL, O_DB_QUEUE },
        { "test-routes", no_argument, NULL, O_TEST_ROUTES },
        { NULL, 0, NULL, 0 },
    };
    long v;
    int o, mode_given = 0;

    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case O_PORT:
            if (parse_uint(optarg, 65535, &v) < 0)
                return fprintf(stderr, "gray-static: bad --port '%s'\n", optarg), 2;
            c->port = (int)v;
            break;
        case O_BIND:
            c->bind = optarg;
            break;
        case O_LOOP:
            if (gs_loop_kind_parse(optarg, &c->loop) < 0)
                return fprintf(stderr, "gray-static: unknown --loop '%s'\n", optarg), 2;
            break;
        case O_TURBO:
            c->turbo = 1;
            break;
        case O_CONNS:
            if (parse_uint(optarg, 1000000, &v) < 0 || v == 0)
                return fprintf(stderr, "gray-static: bad --conn-limit '%s'\n", optarg), 2;
            c->conn_limit = (unsigned)v;
            break;
        case O_IDLE:
            if (parse_uint(optarg, 86400, &v) < 0)
                return fprintf(stderr, "gray-static: bad --idle-timeout '%s'\n", optarg), 2;
            c->idle_timeout_s = (unsigned)v;
            break;
        case O_HEAD:
            if (parse_uint(optarg, 86400, &v) < 0)
                return fprintf(stderr, "gray-static: bad --head-timeout '%s'\n", optarg), 2;
            c->head_timeout_s = (unsigned)v;
            break;
        case O_DB:
            dc->conninfo = optarg;
            break;
        case O_DB_POOL:
            if (parse_uint(optarg, 10000, &v) < 0 || v == 0)
                return fprintf(stderr, "gray-static: bad --db-pool '%s'\n", optarg), 2;
            dc->pool_size = (int)v;
            break;
        case O_DB_WORKERS:
            if (parse_uint(optarg, GS_DBWORKERS_MAX, &v) < 0 || v == 0)
                return fprintf(stderr, "gray-static: bad --db-workers '%s' (1..%d)\n", optarg,
                               GS_DBWORKERS_MAX), 2;
            dc->workers = (int)v;
            break;
        case O_DB_QUEUE:
            if (parse_uint(optarg, 1000000, &v) < 0 || v == 0)
                return fprintf(stderr, "gray-static: bad --db-queue '%s'\n", optarg), 2;
            dc->queue_max = v;
            break;
        case O_DB_MODE:
            if (gs_db_mode_parse(optarg, &dc->mode) < 0)
                return fprintf(stderr, "gray-static: --db-mode is readiness, blocking or "
                               "inline, not '%s'\n", optarg), 2;
            mode_given = 1;
            break;
        case O_TEST_ROUTES:
            dc->test_routes = 1;
            break;
        case O_VERSION:
            printf("%s %s (libmicrohttpd %s, jansson %s)\n", GS_SERVER_NAME, GS_SERVER_VERSION,
                   MHD_get_version(), jansson_version_str());
            return 1;
        case O_HELP:
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gray-static: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return check_db_flags(dc, mode_given);
}

int main(int argc, char **argv)
{
    struct gs_config cfg;
    struct gs_server *s = NULL;
    struct gs_db_config dcfg = { .log = stderr };
    struct gs_db *db = NULL;
    char err[512];
    int rc = 1, p;

    gs_config_defaults(&cfg);
    cfg.port = 8084; /* the contract's port for gray-static, for a bare run by hand */
    cfg.log = stderr;
    if ((p = parse_flags(argc, argv, &cfg, &dcfg)) != 0)
        return p == 1 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    if (fit_nofile(&cfg, 64 + db_descriptors(&dcfg)) < 0)
        return 1;
    if (!(s = gs_server_new(&cfg, err, sizeof(err))) ||
        !(db = gs_db_new(s, &dcfg, err, sizeof(err))) ||
        gs_server_catch_signals(s, err, sizeof(err)) < 0 ||
        gs_server_start(s, err, sizeof(err)) < 0)
        goto out;
    printf("gray-static: listening on %s:%d loop=%s%s%s\n", cfg.bind, gs_server_port(s),
           gs_loop_kind_name(cfg.loop), dcfg.conninfo ? " db=" : "",
           dcfg.conninfo ? gs_db_mode_name(dcfg.mode) : "");
    fflush(stdout);
    if (gs_server_run(s, err, sizeof(err)) == 0)
        rc = 0;
out:
    if (rc)
        fprintf(stderr, "gray-static: %s\n", err);
    gs_db_free(db); /* before the server: the pool still uses its loop */
    gs_server_free(s);
    return rc;
}
