#!/usr/bin/env bash
# pgcluster.sh -- a throwaway PostgreSQL cluster for the db route's tests and runs.
# (Lives beside gray-static, not under tests/: kneebench soak and curve start it for real runs.)
#
#   pgcluster.sh start DIR   initdb into DIR/data (first time), start it on a private unix
#                            socket directory DIR/sock and a free port, create and fill the
#                            `world` table; prints the libpq conninfo on stdout
#   pgcluster.sh stop DIR    stop the postmaster this script started in DIR (pg_ctl -m fast)
#   pgcluster.sh env DIR     print the conninfo of the cluster in DIR
#
# It never touches a system cluster: binaries come from /usr/lib/postgresql/*/bin (highest
# version), nothing listens on TCP (listen_addresses=''), and everything lives under DIR.
# Run as root, the cluster is owned by the `postgres` user (PostgreSQL refuses root).
# The world table's row count comes from fixtures/contract.json (db.world_rows).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
contract=${KNEEBENCH_CONTRACT:-$root/fixtures/contract.json}

die() { echo "pgcluster: $*" >&2; exit 1; }

pgbin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$d" ] && [ -x "$d/initdb" ] || die "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
    echo "$d"
}

# Run a command as the cluster's owner: postgres when we are root, ourselves otherwise.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

world_rows() {
    python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["db"]["world_rows"]))' "$contract"
}

conninfo() {
    local dir=$1
    [ -f "$dir/port" ] || die "no cluster in $dir (run start first)"
    echo "host=$dir/sock port=$(cat "$dir/port") dbname=kb user=$(cat "$dir/user") connect_timeout=5"
}

running() {
    local dir=$1 bin=$2
    as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

init_cluster() {
    local dir=$1 bin=$2 user
    user=$( [ "$(id -u)" -eq 0 ] && echo postgres || id -un )
    mkdir -p "$dir/data" "$dir/sock"
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U "$user" -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
        || die "initdb failed, see $dir/initdb.log"
    cat >>"$dir/data/postgresql.conf" <<EOF
# kneebench throwaway cluster: private socket, no TCP, durability off (test data only)
listen_addresses = ''
unix_socket_directories = '$dir/sock'
max_connections = 300
shared_buffers = 32MB
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
EOF
    echo "$user" >"$dir/user"
}

fill_world() {
    local dir=$1 bin=$2 rows port user
    rows=$(world_rows)
    port=$(cat "$dir/port"); user=$(cat "$dir/user")
    as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" -p "$port" -U "$user" -d postgres \
        -c "CREATE DATABASE kb" >/dev/null
    as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" -p "$port" -U "$user" -d kb <<EOF >/dev/null
CREATE TABLE world (id integer PRIMARY KEY, randomnumber integer NOT NULL);
INSERT INTO world SELECT i, 1 + floor(random() * 10000)::int FROM generate_series(1, $rows) AS i;
ANALYZE world;
EOF
    touch "$dir/filled"
}

cmd_start() {
    local dir=$1 bin
    bin=$(pgbin)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ -d "$dir/data" ] || init_cluster "$dir" "$bin"
    if ! running "$dir" "$bin"; then
        # The port only names the socket file (no TCP), so it stays fixed across restarts
        # and a server's conninfo keeps working when the cluster comes back.
        [ -s "$dir/port" ] || free_port >"$dir/port"
        [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/port" "$dir/sock"
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
            -o "-p $(cat "$dir/port")" start >/dev/null || die "pg_ctl start failed, see $dir/postgres.log"
    fi
    [ -f "$dir/filled" ] || fill_world "$dir" "$bin"
    conninfo "$dir"
}

cmd_stop() {
    local dir=$1 bin
    bin=$(pgbin)
    [ -d "$dir/data" ] || die "no cluster in $dir"
    running "$dir" "$bin" || return 0
    as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 30 stop -m fast >/dev/null
}

[ $# -eq 2 ] || die "usage: pgcluster.sh start|stop|env DIR"
case $1 in
    start) cmd_start "$2" ;;
    stop) cmd_stop "$2" ;;
    env) conninfo "$(cd "$2" && pwd)" ;;
    *) die "usage: pgcluster.sh start|stop|env DIR" ;;
esac
