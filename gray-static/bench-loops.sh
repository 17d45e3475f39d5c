#!/usr/bin/env bash
# bench-loops.sh -- compare gray-static's event-loop choices side by side, in one run.
#
#   gray-static/bench-loops.sh [ROUNDS] [SECONDS] [LOOPS...]
#
# For each round, each route and each loop: start build/gray-static on a free port pinned to
# CPU 0, drive it with Debian's wrk pinned to CPU 1 (-t2 -c256, closed loop), print one line
# "round route loop req/s non2xx+errors", stop the server with SIGTERM and check it exited 0.
# Rounds interleave the loops so that noise from a shared host spreads over all of them.
#
# GS_CPU_QUOTA=P (percent, cgroup v1 cpu controller) caps the server at P% of CPU 0 in a cgroup
# made for this run and removed at exit: then the server, not wrk, is the bottleneck and req/s
# compares the loops' efficiency. Without it, on a 2-CPU host wrk's one CPU is usually the
# limit (see the server-cpu column), and us/req (server CPU per request) is the fairer figure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-2}
SECS=${2:-5}
shift 2 2>/dev/null || shift $#
LOOPS=("$@")
[ ${#LOOPS[@]} -gt 0 ] || LOOPS=(epoll epoll+turbo mhd-epoll poll select)
BIN=${GS_BIN:-build/gray-static}
command -v wrk >/dev/null || { echo "wrk missing (apt-get install wrk)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "$BIN missing (make)" >&2; exit 1; }

# utime+stime of a process, in clock ticks
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
CG=
cleanup() { [ -n "$CG" ] && rmdir "$CG" 2>/dev/null; true; }
trap cleanup EXIT
if [ -n "${GS_CPU_QUOTA:-}" ]; then
    CG=/sys/fs/cgroup/cpu/gs-bench-$$
    mkdir "$CG"
    echo 100000 >"$CG/cpu.cfs_period_us"
    echo $((GS_CPU_QUOTA * 1000)) >"$CG/cpu.cfs_quota_us"
fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

run_one() { # round route loop
    local round=$1 route=$2 loop=$3 port out pid args rps errs st
    port=$(free_port)
    args=(--port "$port" --loop "${loop%+turbo}")
    [[ $loop == *+turbo ]] && args+=(--turbo)
    taskset -c 0 "$BIN" "${args[@]}" >/dev/null 2>&1 &
    pid=$!
    [ -n "$CG" ] && echo "$pid" >"$CG/cgroup.procs"
    for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/plaintext" >/dev/null && break; sleep 0.1; done
    t0=$(cpu_ticks "$pid")
    out=$(taskset -c 1 wrk -t2 -c256 -d"${SECS}s" "http://127.0.0.1:$port/$route" 2>&1 || true)
    t1=$(cpu_ticks "$pid")
    kill -TERM "$pid"
    st=0; wait "$pid" || st=$?
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    errs=$(awk '/Non-2xx/ {n+=$NF} /Socket errors/ {gsub(",","");n+=$4+$6+$8+$10} END {print n+0}' <<<"$out")
    # server CPU per request, in microseconds: what one CPU can serve when the client is not
    # the limit (1e6 / this), independent of how busy the shared host was
    cpu=$(awk -v a="$t0" -v b="$t1" -v r="${rps:-0}" -v s="$SECS" -v hz="$(getconf CLK_TCK)" \
          'BEGIN { if (r > 0) printf "%.2f", (b - a) / hz * 1e6 / (r * s); else print "-" }')
    srv=$(awk -v a="$t0" -v b="$t1" -v s="$SECS" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", (b - a) / hz / s * 100 }')
    printf '%s %-9s %-12s %10s %6s %7s %5s%% exit=%s\n' "$round" "$route" "$loop" "${rps:-0}" "$errs" "$cpu" "$srv" "$st"
}

echo "# $(date -u +%FT%TZ) $(nproc) cpus; server taskset -c 0${CG:+ cpu quota ${GS_CPU_QUOTA}%}, wrk taskset -c 1 -t2 -c256 -d${SECS}s"
echo "# round route     loop            req/s errors us/req server-cpu"
for r in $(seq "$ROUNDS"); do
    for route in plaintext json; do
        for loop in "${LOOPS[@]}"; do run_one "$r" "$route" "$loop"; done
    done
done
