#!/usr/bin/env bash
# pgcluster.sh -- a throwaway PostgreSQL cluster for the db route's tests and runs.
# (Lives beside gray-static, not under tests/: kneebench soak and curve start it for real runs.)
#
#   pgcluster.sh start DIR   initdb into DIR/data (first time), start it on a private unix
#                            socket directory and a free port, create and fill the `world`
#                            table; prints the libpq conninfo on stdout
#   pgcluster.sh stop DIR    stop the postmaster this script started in DIR (pg_ctl -m fast)
#                            and remove its socket directory
#   pgcluster.sh env DIR     print the conninfo of the cluster in DIR
#
# The socket directory is DIR/sock, or where that would make the socket's path longer than
# the 107 bytes a unix socket's path holds (DIR under a deep run directory), a short private
# one, /tmp/kb-pg.XXXXXX (as php-fpm/run.sh keeps its FastCGI socket). Either is recorded in
# DIR/sockdir and stays the same across restarts, so that a server's conninfo keeps working
# when the cluster comes back.
# It never touches a system cluster: binaries come from /usr/lib/postgresql/*/bin (highest
# version), nothing listens on TCP (listen_addresses=''), and everything lives under DIR.
# Run as root, the cluster is owned by the `postgres` user (PostgreSQL refuses root).
# The world table's row count comes from contract/contract.json (db.world_rows).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
contract=${KNEEBENCH_CONTRACT:-$root/contract/contract.json}

die() { echo "pgcluster: $*" >&2; exit 1; }

# what PostgreSQL adds under the socket directory, at its longest
KB_PG_SOCKET_TAIL=/sock/.s.PGSQL.65535.lock

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
    echo "host=$(cat "$dir/sockdir") port=$(cat "$dir/port") dbname=kb user=$(cat "$dir/user") connect_timeout=5"
}

# The recorded socket directory made, or checked when it is there: ours (or postgres's when
# we are root) and no one else's to write, never a directory someone planted in /tmp.
sock_dir() {
    local dir=$1 sock owner
    sock=$(cat "$dir/sockdir")
    owner=$( [ "$(id -u)" -eq 0 ] && echo postgres || id -un )
    if [ ! -e "$sock" ]; then
        mkdir -m 700 "$sock" || die "cannot make the socket directory $sock"
        [ "$(id -u)" -eq 0 ] && chown postgres: "$sock"
    fi
    [ -d "$sock" ] && [ ! -L "$sock" ] && [ "$(stat -c %U "$sock")" = "$owner" ] &&
        [ "$(stat -c %a "$sock")" = 700 ] || die "$sock is not a private directory of $owner's"
}

running() {
    local dir=$1 bin=$2
    as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

init_cluster() {
    local dir=$1 bin=$2 user
    user=$( [ "$(id -u)" -eq 0 ] && echo postgres || id -un )
    mkdir -p "$dir/data"
    if [ ${#dir} -le $((107 - ${#KB_PG_SOCKET_TAIL})) ]; then
        mkdir -m 700 "$dir/sock" && echo "$dir/sock" >"$dir/sockdir"
    else
        mktemp -d /tmp/kb-pg.XXXXXX >"$dir/sockdir" || die "cannot make a socket directory in /tmp"
    fi
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir" "$(cat "$dir/sockdir")"
    as_owner "$bin/initdb" -D "$dir/data" -U "$user" -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
        || die "initdb failed, see $dir/initdb.log"
    cat >>"$dir/data/postgresql.conf" <<EOF
# kneebench throwaway cluster: private socket, no TCP, durability off (test data only)
listen_addresses = ''
unix_socket_directories = '$(cat "$dir/sockdir")'
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
    as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$(cat "$dir/sockdir")" -p "$port" -U "$user" -d postgres \
        -c "CREATE DATABASE kb" >/dev/null
    as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$(cat "$dir/sockdir")" -p "$port" -U "$user" -d kb <<EOF >/dev/null
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
        [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/port"
        sock_dir "$dir"
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
    if running "$dir" "$bin"; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 30 stop -m fast >/dev/null
    fi
    # empty once the postmaster is gone: made again, at the same path, by the next start
    [ -s "$dir/sockdir" ] && rmdir "$(cat "$dir/sockdir")" 2>/dev/null
    return 0
}

[ $# -eq 2 ] || die "usage: pgcluster.sh start|stop|env DIR"
case $1 in
    start) cmd_start "$2" ;;
    stop) cmd_stop "$2" ;;
    env) conninfo "$(cd "$2" && pwd)" ;;
    *) die "usage: pgcluster.sh start|stop|env DIR" ;;
esac
