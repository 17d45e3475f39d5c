/* test_sandbox.c -- the sandbox handle picks a backend by name and checks its options; the
 * native backend applies the contract's limits, reads them back, sees every process of the
 * fixture and leaves nothing behind. Needs root and cgroups; where they are absent the
 * availability check's refusal is what is tested. */
#define _GNU_SOURCE
#include "runner/sandbox/procs.h"
#include "runner/util/root.h"
#include "runner/sandbox/sandbox.h"
#include "contract/contract.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <glob.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct kb_contract C;
static char err[512];

static void setup(void)
{
    ck_assert_int_eq(kb_contract_load(kb_root_contract(), &C, err, sizeof(err)), 0);
    kb_tmp_setup();
}

static void teardown(void)
{
    kb_contract_free(&C);
    kb_tmp_teardown();
}

/* A native sandbox (no_limits as the spec has it); it must open. */
static struct kb_sandbox *native(int no_limits)
{
    const struct kb_sandbox_config cfg = { .backend = "native", .no_limits = no_limits };
    struct kb_sandbox *box = kb_sandbox_open(&cfg, err, sizeof(err));
    ck_assert_msg(box != NULL, "%s", err);
    return box;
}

static struct kb_fixture_spec spec_for(char *const *argv, int no_limits)
{
    struct kb_fixture_spec s = { .name = "unit", .argv = argv, .rundir = kb_tmp,
                                 .no_limits = no_limits };
    s.limits.cpus = C.cpus;
    s.limits.memory_bytes = C.memory_bytes;
    s.limits.pids = C.pids;
    snprintf(s.limits.server_cpuset, sizeof(s.limits.server_cpuset), "%s", C.server_cpus);
    return s;
}

START_TEST(limits_read_back_equal_contract)
{
    struct kb_sandbox *box = native(0);
    char *argv[] = { "sh", "-c", "sleep 30 & sleep 30 & wait", NULL };
    struct kb_fixture_spec spec = spec_for(argv, 0);
    struct kb_limits_applied la;
    struct kb_sandbox_fixture *sb;
    struct kb_proc_sample ps;
    pid_t pids[16];
    char paths[1024];

    if (kb_sandbox_available(box, err, sizeof(err)) != 0) {
        ck_assert_msg(strstr(err, "no-limits") != NULL, "refusal must name --no-limits: %s", err);
        kb_sandbox_close(box);
        return;
    }
    ck_assert_msg(kb_sandbox_start(box, &spec, &sb, err, sizeof(err)) == 0, "%s", err);
    usleep(200000);
    ck_assert_int_eq(kb_sandbox_alive(sb), 1);
    ck_assert_uint_eq(kb_sandbox_pids(sb, pids, 16), 3); /* sh + two sleeps, all in the cgroup */
    ck_assert_int_eq(kb_sandbox_sample(sb, &ps, err, sizeof(err)), 0);
    ck_assert_uint_eq(ps.nprocs, 3);
    ck_assert_int_eq(kb_sandbox_limits(sb, &la, err, sizeof(err)), 0);
    ck_assert_double_eq_tol(la.cpus, C.cpus, 1e-9);
    ck_assert_int_eq(la.memory_bytes, C.memory_bytes);
    ck_assert_int_eq(la.pids_max, C.pids);
    ck_assert_str_eq(la.cpuset, C.server_cpus);
    snprintf(paths, sizeof(paths), "%s", la.paths);
    ck_assert_int_eq(kb_sandbox_stop(sb, err, sizeof(err)), 0);
    for (char *p = strtok(paths, " "); p; p = strtok(NULL, " "))
        ck_assert_msg(access(p, F_OK) != 0, "%s left behind", p);
    kb_sandbox_close(box);
}
END_TEST

START_TEST(no_limits_tracks_session_and_exit)
{
    struct kb_sandbox *box = native(1);
    char *argv[] = { "sh", "-c", "sleep 30 & exit 3", NULL };
    struct kb_fixture_spec spec = spec_for(argv, 1);
    struct kb_limits_applied la;
    struct kb_sandbox_fixture *sb;
    pid_t pids[16];
    ck_assert_msg(kb_sandbox_start(box, &spec, &sb, err, sizeof(err)) == 0, "%s", err);
    usleep(200000);
    ck_assert_int_eq(kb_sandbox_alive(sb), 0);
    ck_assert_str_eq(kb_sandbox_exit_reason(sb), "exit 3");
    ck_assert_uint_eq(kb_sandbox_pids(sb, pids, 16), 1); /* the orphaned sleep, same session */
    ck_assert_int_eq(kb_sandbox_limits(sb, &la, err, sizeof(err)), 0);
    ck_assert_int_eq(la.cgroup_version, 0);
    ck_assert_int_eq(kb_sandbox_stop(sb, err, sizeof(err)), 0);
    ck_assert_int_eq(kill(pids[0], 0), -1);
    kb_sandbox_close(box);
}
END_TEST

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Up to 2 s for pid to be gone (or a zombie nobody here reaps). */
static int gone(pid_t pid)
{
    for (int i = 0; i < 40 && kb_procs_running(pid); i++)
        sleep_ms(50);
    return !kb_procs_running(pid);
}

START_TEST(no_limits_follows_new_sessions_and_pins)
{
    /* `setsid sleep` is a child of sh in a session of its own, as nginx is of run.sh */
    struct kb_sandbox *box = native(1);
    char *argv[] = { "sh", "-c", "setsid sleep 30 & sleep 30 & wait", NULL };
    struct kb_fixture_spec spec = spec_for(argv, 1);
    struct kb_limits_applied la;
    struct kb_sandbox_fixture *sb;
    cpu_set_t want, have;
    pid_t pids[16];
    size_t n;
    ck_assert_msg(kb_sandbox_start(box, &spec, &sb, err, sizeof(err)) == 0, "%s", err);
    sleep_ms(300);
    n = kb_sandbox_pids(sb, pids, 16);
    ck_assert_uint_eq(n, 3);
    CPU_ZERO(&want);
    CPU_SET(0, &want);          /* the contract's server CPUs */
    ck_assert_str_eq(C.server_cpus, "0");
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(sched_getaffinity(pids[i], sizeof(have), &have), 0);
        ck_assert_msg(CPU_EQUAL(&want, &have), "pid %d not pinned to the server CPUs", pids[i]);
    }
    ck_assert_int_eq(kb_sandbox_limits(sb, &la, err, sizeof(err)), 0);
    ck_assert_str_eq(la.cpuset, "0");
    ck_assert_int_eq(kb_sandbox_stop(sb, err, sizeof(err)), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(gone(pids[i]), "pid %d survived stop", pids[i]);
    kb_sandbox_close(box);
}
END_TEST

/* A runner (a child of this test) starts a fixture, reports its main PID and whatever
 * extra it prints, and waits to be killed. */
static pid_t runner_with_fixture(char *const *argv, int no_limits, pid_t *fixture)
{
    int fds[2];
    pid_t runner;
    ck_assert_int_eq(pipe(fds), 0);
    if ((runner = fork()) == 0) {
        struct kb_sandbox *box = native(no_limits);
        struct kb_fixture_spec spec = spec_for(argv, no_limits);
        struct kb_sandbox_fixture *sb = NULL;
        pid_t p[1] = { 0 };
        pid_t all[16];
        kb_sandbox_start(box, &spec, &sb, err, sizeof(err));
        /* the child joins its cgroup after the fork */
        for (int i = 0; sb && i < 100 && kb_sandbox_pids(sb, p, 1) == 0; i++)
            sleep_ms(10);
        /* and the runner looks at the whole fixture once, as a curve's sampler does */
        sleep_ms(100);
        if (sb)
            kb_sandbox_pids(sb, all, 16);
        if (write(fds[1], p, sizeof(p)) < 0)
            _exit(1);
        pause();
        _exit(0);
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], fixture, sizeof(*fixture)), sizeof(*fixture));
    close(fds[0]);
    ck_assert_int_gt(*fixture, 0);
    return runner;
}

START_TEST(fixture_dies_with_its_runner)
{
    char *argv[] = { "sleep", "30", NULL };
    pid_t fixture, runner = runner_with_fixture(argv, 1, &fixture);
    sleep_ms(100);
    ck_assert_int_eq(kb_procs_running(fixture), 1);
    kill(runner, SIGKILL);     /* kill -9 of the runner: no cleanup runs */
    ck_assert_msg(gone(fixture), "the fixture outlived its runner");
    waitpid(runner, NULL, 0);
}
END_TEST

START_TEST(session_left_by_a_dead_runner_is_swept)
{
    /* the server is sh's child: the parent-death signal reaches sh, not it */
    char *argv[] = { "sh", "-c", "sleep 30 & wait", NULL };
    char record[256], note[512];
    pid_t pids[16], fixture, runner = runner_with_fixture(argv, 1, &fixture);
    struct kb_sandbox *box = native(1);
    size_t n;
    sleep_ms(200);
    snprintf(record, sizeof(record), "%s/" KB_SANDBOX_SESSION_FILE, kb_tmp);
    ck_assert_int_eq(access(record, F_OK), 0);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0); /* runs */
    n = kb_procs_tree(fixture, pids, 16);
    ck_assert_uint_eq(n, 2);
    kill(runner, SIGKILL);
    sleep_ms(200);              /* the runner is a zombie now: gone all the same */
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 1);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(gone(pids[i]), "pid %d left running", pids[i]);
    ck_assert_int_ne(access(record, F_OK), 0);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0);
    ck_assert_str_eq(note, "");
    waitpid(runner, NULL, 0);
    kb_sandbox_close(box);
}
END_TEST

static size_t matches(const char *pattern)
{
    glob_t g;
    size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
    globfree(&g);
    return n;
}

START_TEST(cgroups_of_a_zombie_runner_are_swept)
{
    struct kb_sandbox *box = native(0);
    char *argv[] = { "sleep", "30", NULL }, v1[128], v2[128];
    pid_t fixture, runner;
    if (kb_sandbox_available(box, err, sizeof(err)) != 0) {
        kb_sandbox_close(box);
        return;         /* no cgroups here: nothing to sweep */
    }
    runner = runner_with_fixture(argv, 0, &fixture);
    snprintf(v1, sizeof(v1), "/sys/fs/cgroup/*/kneebench-%ld-*", (long)runner);
    snprintf(v2, sizeof(v2), "/sys/fs/cgroup/kneebench-%ld-*", (long)runner);
    ck_assert_msg(matches(v1) + matches(v2) > 0, "the runner made no cgroup");
    kill(runner, SIGKILL);
    sleep_ms(200);              /* not reaped: a zombie, as under a parent that never waits */
    ck_assert_int_ge(kb_sandbox_sweep_stale(box), 1);
    ck_assert_msg(gone(fixture), "the swept cgroup's fixture runs on");
    ck_assert_int_eq(matches(v1) + matches(v2), 0);
    waitpid(runner, NULL, 0);
    kb_sandbox_close(box);
}
END_TEST

/* ---- records the runner cannot prove: nothing they name is killed ------------------------ */

/* A process of a session of its own that no runner started (`setsid sleep 300 &`). */
static pid_t bystander(void)
{
    pid_t p = fork();
    if (p == 0) {
        setsid();
        execlp("sleep", "sleep", "300", (char *)NULL);
        _exit(127);
    }
    ck_assert_int_gt(p, 0);
    sleep_ms(100);
    return p;
}

static void end_bystander(pid_t p)
{
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}

static void boot(char *out, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(out, (int)len, f));
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* A record of the current version naming p with the given start time and boot, of a runner
 * that is gone (PID 999999 at start time 0). */
static void plant_record(pid_t p, long long start, const char *bootid, uid_t owner, mode_t mode)
{
    char text[512], path[256];
    snprintf(text, sizeof(text), "kneebench-session 2\nboot %s\nrunner 999999 0\nproc %ld %lld\n",
             bootid, (long)p, start);
    kb_tmp_put(KB_SANDBOX_SESSION_FILE, text);
    snprintf(path, sizeof(path), "%s/" KB_SANDBOX_SESSION_FILE, kb_tmp);
    ck_assert_int_eq(chown(path, owner, (gid_t)-1), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(records_that_prove_nothing_kill_nothing)
{
    struct kb_sandbox *box = native(1);
    char note[512], text[128], id[64];
    pid_t p = bystander();
    long long start = kb_procs_start_time(p);
    boot(id, sizeof(id));

    /* the first version's record ("runner start leader leader_start"), as a copied run
     * directory, a reboot or another user leaves it: the leader's start time differs */
    snprintf(text, sizeof(text), "999999 0 %ld 1\n", (long)p);
    kb_tmp_put(KB_SANDBOX_SESSION_FILE, text);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0);
    ck_assert_msg(kb_procs_running(p), "an unproved record's session was killed");
    snprintf(text, sizeof(text), "running: pid %ld", (long)p);
    ck_assert_msg(strstr(note, text) && strstr(note, "nothing it names was stopped"), "%s", note);

    /* the right process of this boot, but a record another user wrote, or may write */
    if (geteuid() == 0) {
        plant_record(p, start, id, 65534, 0644);
        ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0);
        ck_assert_msg(kb_procs_running(p), "another user's record was obeyed");
        ck_assert_ptr_nonnull(strstr(note, "owner uid 65534"));
    }
    plant_record(p, start, id, geteuid(), 0666);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0);
    ck_assert_msg(kb_procs_running(p), "a record anyone may write was obeyed");
    ck_assert_ptr_nonnull(strstr(note, "mode 0666"));

    /* this user's own record, but the PID was given to another process (another start
     * time), or the record is of another boot */
    plant_record(p, start + 1, id, geteuid(), 0644);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0);
    ck_assert_msg(kb_procs_running(p), "a reused PID was killed");
    plant_record(p, start, "00000000-0000-0000-0000-000000000000", geteuid(), 0644);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 0);
    ck_assert_msg(kb_procs_running(p), "another boot's record was obeyed");

    /* and the same record, proved: the process is killed */
    plant_record(p, start, id, geteuid(), 0644);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, note, sizeof(note)), 1);
    ck_assert_msg(gone(p), "a proved leftover runs on");
    end_bystander(p);
    kb_sandbox_close(box);
}
END_TEST

/* An engine elsewhere is chosen as the docker CLI would be, its target read from the
 * endpoint or given; opening contacts no engine. */
START_TEST(docker_engine_elsewhere)
{
    const struct kb_sandbox_config ssh = { .backend = "docker",
                                           .docker_host = "ssh://root@192.0.2.7:2222" },
        tcp = { .backend = "docker", .docker_host = "tcp://192.0.2.8:2376",
                .target = "192.0.2.9" },
        badtarget = { .backend = "docker", .docker_host = "tcp://192.0.2.8:2376",
                      .target = "host.example" },
        local = { .backend = "docker", .docker_host = "unix:///var/run/docker.sock",
                  .target = "192.0.2.9" };
    struct kb_sandbox *box = kb_sandbox_open(&ssh, err, sizeof(err));
    char where[600];
    ck_assert_msg(box != NULL, "%s", err);
    ck_assert_str_eq(getenv("DOCKER_HOST"), "ssh://root@192.0.2.7:2222");
    ck_assert_int_eq(kb_sandbox_on_this_host(box), 0);
    ck_assert_str_eq(kb_sandbox_target(box), "192.0.2.7");
    ck_assert_int_eq(kb_sandbox_port_free(box, 1, 0, where, sizeof(where)), 0);
    kb_sandbox_describe(box, where, sizeof(where));
    ck_assert_str_eq(where, " image kneebench:latest engine ssh://root@192.0.2.7:2222 target "
                            "192.0.2.7");
    json_t *keys = kb_sandbox_plan_keys(box);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(keys, "engine"),
                                                       "target")), "192.0.2.7");
    json_decref(keys);
    kb_sandbox_close(box);
    ck_assert_ptr_nonnull(box = kb_sandbox_open(&tcp, err, sizeof(err)));
    ck_assert_str_eq(kb_sandbox_target(box), "192.0.2.9");
    kb_sandbox_close(box);
    ck_assert_ptr_null(kb_sandbox_open(&badtarget, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "IPv4"));
    ck_assert_ptr_null(kb_sandbox_open(&local, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "this host's"));
}
END_TEST

START_TEST(backend_by_name)
{
    const struct kb_sandbox_config none = { 0 }, nosuch = { .backend = "nosuch" },
        docker = { .backend = "docker", .image = "img:1" },
        target = { .backend = "native", .target = "127.0.0.1" };
    struct kb_sandbox *box = kb_sandbox_open(&none, err, sizeof(err));
    char where[300];
    ck_assert_msg(box != NULL, "%s", err);
    ck_assert_str_eq(kb_sandbox_name(box), "native");
    ck_assert_int_eq(kb_sandbox_on_this_host(box), 1);
    ck_assert_str_eq(kb_sandbox_target(box), "127.0.0.1");
    ck_assert_ptr_null(kb_sandbox_runtime_version(box, "go"));   /* this host's to ask */
    kb_sandbox_describe(box, where, sizeof(where));
    ck_assert_str_eq(where, "");
    kb_sandbox_close(box);
    ck_assert_ptr_null(kb_sandbox_open(&nosuch, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "nosuch"));
    ck_assert_ptr_null(kb_sandbox_open(&target, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "are for --backend docker"));
    /* opening asks nothing of the engine: the image is only kept */
    ck_assert_ptr_nonnull(box = kb_sandbox_open(&docker, err, sizeof(err)));
    ck_assert_str_eq(kb_sandbox_name(box), "docker");
    kb_sandbox_describe(box, where, sizeof(where));
    ck_assert_str_eq(where, " image img:1");
    ck_assert_int_eq(kb_sandbox_sweep_stale(box), 0);
    ck_assert_int_eq(kb_sandbox_sweep_rundir(box, kb_tmp, where, sizeof(where)), 0);
    kb_sandbox_close(box);
}
END_TEST

START_TEST(native_identity_hashes_the_files)
{
    struct kb_sandbox *box = native(1);
    char *exe[] = { "sh" }, *src[] = { kb_tmp };
    struct kb_fixture_parts parts = { .exe = exe, .nexe = 1, .src = src, .nsrc = 1 };
    json_t *id = kb_sandbox_identity(box, &parts, err, sizeof(err));
    ck_assert_msg(id != NULL, "%s", err);
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(id, "sha256"))), 64);
    json_decref(id);
    kb_sandbox_close(box);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sandbox");
    TCase *tc = tcase_create("native");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, limits_read_back_equal_contract);
    tcase_add_test(tc, no_limits_tracks_session_and_exit);
    tcase_add_test(tc, no_limits_follows_new_sessions_and_pins);
    tcase_add_test(tc, fixture_dies_with_its_runner);
    tcase_add_test(tc, session_left_by_a_dead_runner_is_swept);
    tcase_add_test(tc, cgroups_of_a_zombie_runner_are_swept);
    tcase_add_test(tc, records_that_prove_nothing_kill_nothing);
    tcase_add_test(tc, backend_by_name);
    tcase_add_test(tc, docker_engine_elsewhere);
    tcase_add_test(tc, native_identity_hashes_the_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "sandbox");
}
