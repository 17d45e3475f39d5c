/* sandbox_probe.c -- drives the docker sandbox backend for test_docker.py.
 *
 *   sandbox-probe RUNTIME PORT [--db CPUS]
 *
 * Starts RUNTIME in a docker sandbox with the contract's limits (the image named by
 * $KB_DOCKER_IMAGE, else the backend's default), waits until PORT accepts connections (15 s at most), prints one JSON
 * line: the container's limits read back from its cgroup, its processes, alive. Then it
 * waits for a line on stdin ("stop", or EOF), stops the fixture and prints a second line
 * saying whether the stop succeeded. SIGINT/SIGTERM also stop it: the same path Ctrl-C
 * takes in the curve. With --db, the sandbox's PostgreSQL is started first on the cpuset
 * CPUS (its evidence in a new directory, "db_dir" in the first line) and the runtime gets
 * its conninfo; it is stopped after the runtime. Exit 0 only when start, read-back and stop all succeeded. */
#define _GNU_SOURCE
#include "contract/contract.h"
#include "runner/sandbox/sandbox.h"
#include "runner/util/root.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int port_open(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static int wait_listening(struct kb_sandbox_fixture *sb, int port)
{
    struct timespec ts = { 0, 100 * 1000000L };
    for (int i = 0; i < 150 && !stop_requested; i++) {
        if (port_open(port))
            return 0;
        if (!kb_sandbox_alive(sb))
            return -1;
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* s as a JSON string literal (docker's messages carry quotes). */
static const char *js(const char *s)
{
    static char buf[8][1200]; /* one per argument of the longest printf */
    static int k;
    char *o = buf[k = (k + 1) % 8];
    size_t n = 0;
    o[n++] = '"';
    for (; *s && n < sizeof(buf[0]) - 8; s++) {
        if (*s == '"' || *s == '\\')
            o[n++] = '\\';
        if ((unsigned char)*s < 0x20)
            n += (size_t)snprintf(o + n, 8, "\\u%04x", *s);
        else
            o[n++] = *s;
    }
    o[n++] = '"';
    o[n] = '\0';
    return o;
}

static void print_state(struct kb_sandbox_fixture *sb, int listening, const char *dbdir,
                        const char *conninfo)
{
    struct kb_limits_applied la;
    char err[512] = "";
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    size_t n = kb_sandbox_pids(sb, pids, KB_SANDBOX_MAX_PIDS);
    int rc = kb_sandbox_limits(sb, &la, err, sizeof(err));
    printf("{\"started\": true, \"listening\": %s, \"alive\": %d, \"exit_reason\": %s, "
           "\"nprocs\": %zu, \"pids\": [", listening ? "true" : "false", kb_sandbox_alive(sb),
           js(kb_sandbox_exit_reason(sb)), n);
    for (size_t i = 0; i < n; i++)
        printf("%s%ld", i ? ", " : "", (long)pids[i]);
    printf("], \"limits_ok\": %s, \"limits_err\": %s, \"backend\": %s, "
           "\"cgroup_version\": %d, \"cpu_quota_us\": %lld, \"cpu_period_us\": %lld, "
           "\"cpus\": %.6f, \"cpuset\": %s, \"cpuset_mems\": %s, \"memory_bytes\": %lld, "
           "\"memsw_bytes\": %lld, \"pids_max\": %lld, \"paths\": %s, \"db_dir\": %s, "
           "\"conninfo\": %s}\n",
           rc == 0 ? "true" : "false", js(err), js(la.backend), la.cgroup_version, la.cpu_quota_us,
           la.cpu_period_us, la.cpus, js(la.cpuset), js(la.cpuset_mems), la.memory_bytes,
           la.memsw_bytes, la.pids_max, js(la.paths), js(dbdir), js(conninfo));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct kb_contract c;
    char err[512] = "", portstr[16], line[64];
    const char *image = getenv("KB_DOCKER_IMAGE");
    const struct kb_sandbox_config cfg = { .backend = "docker",
                                           .image = image && *image ? image : NULL };
    struct kb_sandbox *box;
    struct kb_sandbox_fixture *sb;
    struct kb_pgrun pg = { .running = 0 };
    char dbdir[] = "/tmp/kb-probe-db-XXXXXX";
    int rc = 1, port, listening, db = argc == 5 && !strcmp(argv[3], "--db");

    if (argc != 3 && !db) {
        fprintf(stderr, "usage: sandbox-probe RUNTIME PORT [--db CPUS]\n");
        return 2;
    }
    if (db)
        snprintf(pg.cpus, sizeof(pg.cpus), "%s", argv[4]);
    if (!(box = kb_sandbox_open(&cfg, err, sizeof(err)))) {
        printf("{\"started\": false, \"error\": %s}\n", js(err));
        return 1;
    }
    if (kb_contract_load(kb_root_contract(), &c, err, sizeof(err)) < 0) {
        fprintf(stderr, "sandbox-probe: %s\n", err);
        kb_sandbox_close(box);
        return 1;
    }
    port = atoi(argv[2]);
    snprintf(portstr, sizeof(portstr), "%d", port);
    char *fargv[] = { "unused-by-docker", "--port", portstr, "--bind", "127.0.0.1", NULL };
    struct kb_fixture_spec spec = { .name = argv[1], .argv = fargv, .rundir = "/tmp",
                                    .log_path = getenv("KB_PROBE_LOG"), .port = port };
    spec.limits.cpus = c.cpus;
    spec.limits.memory_bytes = c.memory_bytes;
    spec.limits.pids = c.pids;
    snprintf(spec.limits.server_cpuset, sizeof(spec.limits.server_cpuset), "%s", c.server_cpus);

    /* No SA_RESTART: the signal must interrupt the fgets() below, as Ctrl-C would. */
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (kb_sandbox_available(box, err, sizeof(err)) < 0 ||
        (db && (!mkdtemp(dbdir) || kb_sandbox_db_start(box, &pg, dbdir, err, sizeof(err)) < 0))) {
        printf("{\"started\": false, \"error\": %s, \"db_dir\": %s}\n", js(err),
               js(db ? dbdir : ""));
        goto done;
    }
    spec.db_conninfo = pg.running ? pg.conninfo : NULL;
    spec.db_pool = c.db_pool_size;
    if (kb_sandbox_start(box, &spec, &sb, err, sizeof(err)) < 0) {
        printf("{\"started\": false, \"error\": %s, \"db_dir\": %s}\n", js(err),
               js(db ? dbdir : ""));
        goto done;
    }
    listening = wait_listening(sb, port) == 0;
    print_state(sb, listening, db ? dbdir : "", pg.conninfo);
    while (!stop_requested && fgets(line, sizeof(line), stdin) && strncmp(line, "stop", 4))
        ;
    err[0] = '\0';
    rc = kb_sandbox_stop(sb, err, sizeof(err)) == 0 && listening ? 0 : 1;
    if (!err[0] && kb_sandbox_db_stop(box, &pg, err, sizeof(err)) < 0)
        rc = 1;
    printf("{\"stopped\": %s, \"error\": %s}\n", err[0] ? "false" : "true", js(err));
done:
    kb_sandbox_db_stop(box, &pg, err, sizeof(err));
    kb_sandbox_close(box);
    kb_contract_free(&c);
    return rc;
}
