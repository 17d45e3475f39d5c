#!/usr/bin/env bash
# The php-fpm fixture: nginx in front of PHP-FPM (pm = static, 16 children) over a unix
# socket, both configured from the templates beside this script, rendered into --dir, which
# must be the caller's own directory that no one else may write.
#
#   run.sh --port PORT [--bind ADDR] --dir RUNDIR    serve in the foreground
#   run.sh --version                                 print nginx's and php-fpm's versions
#
# It stays the parent of both servers: SIGTERM/SIGINT are forwarded to both and it exits 0
# once they are gone; if either dies on its own the other is stopped and run.sh exits 1, so
# whoever started it sees the death. A SIGKILL to run.sh
# alone cannot be forwarded, and neither server is in run.sh's process group (php-fpm puts
# itself in a new session, nginx is started in one): where util-linux's setpriv is present,
# both masters get a parent-death signal (SIGTERM) so they never outlive run.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "php-fpm/run.sh: $*" >&2; exit 2; }

# php-fpm8.2 on Debian 12, php-fpm8.3 on Ubuntu 24.04: take the newest that exists.
find_fpm() {
    if [ -n "${KB_PHP_FPM:-}" ]; then echo "$KB_PHP_FPM"; return; fi
    local f
    f=$(ls -1 /usr/sbin/php-fpm* /usr/bin/php-fpm* 2>/dev/null | sort -V | tail -n 1)
    [ -n "$f" ] && [ -x "$f" ] || die "no php-fpm binary under /usr/sbin or /usr/bin"
    echo "$f"
}

find_nginx() {
    command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } \
        || die "no nginx binary"
}

# Escape a value for the replacement side of a sed s||| expression.
sed_escape() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }

# Each file is written to a fresh name mktemp makes (never an existing file, never through a
# link) and renamed over the old one (rename replaces a link, never follows it).
render() {
    local src=$1 dst=$2 tmp
    tmp=$(mktemp "$dst.XXXXXX") || die "cannot make a temporary file beside $dst"
    chmod 0644 "$tmp"
    sed -e "s|@DIR@|$(sed_escape "$dir")|g" \
        -e "s|@BIND@|$(sed_escape "$bind")|g" \
        -e "s|@PORT@|$(sed_escape "$port")|g" \
        -e "s|@FPM_SOCK@|$(sed_escape "$sock")|g" \
        -e "s|@USER@|$(sed_escape "$user")|g" \
        -e "s|@GROUP@|$(sed_escape "$group")|g" \
        -e "s|@NGX_ROOT@|$ngx_root|g" \
        -e "s|@FPM_ROOT@|$fpm_root|g" \
        -e "s|@OPCACHE_EXT@|$opcache_ext|g" \
        "$src" > "$tmp"
    mv -fT "$tmp" "$dst"
}

fpm=$(find_fpm)
nginx=$(find_nginx)

port= bind=127.0.0.1 dir=
while [ $# -gt 0 ]; do
    case $1 in
        --version)
            "$nginx" -v 2>&1
            "$fpm" -v | head -n 1
            exit 0 ;;
        --port) port=${2:?--port needs a value}; shift 2 ;;
        --bind) bind=${2:?--bind needs a value}; shift 2 ;;
        --dir)  dir=${2:?--dir needs a value}; shift 2 ;;
        *) die "unknown argument $1" ;;
    esac
done
[ -n "$port" ] || die "--port is required"
[ -n "$dir" ] || die "--dir is required"
case $port in *[!0-9]*) die "bad --port $port" ;; esac
mkdir -p "$dir"
# Everything below is written into it by name, as root for the servers' root masters: a
# directory another user owns or may write could hold their links, or their nginx.conf.
[ ! -L "$dir" ] && [ -d "$dir" ] && [ -O "$dir" ] \
    || die "$dir must be a directory (not a symlink) of uid $(id -u)"
perm=$(stat -c %a "$dir")
(( (8#$perm & 8#022) == 0 )) || die "$dir must not be writable by others (mode $perm)"
dir=$(cd "$dir" && pwd)

# As root, FPM's children and nginx's worker run as an unprivileged user that owns the
# socket; the run directory must then be traversable by that user. Otherwise everything
# runs as the current user and the root-only lines are commented out.
if [ "$(id -u)" -eq 0 ]; then
    if id -u www-data >/dev/null 2>&1; then user=www-data; else user=nobody; fi
    group=$(id -gn "$user")
    ngx_root= fpm_root=
    chmod 0711 "$dir"
    # The directories above the run directory are the caller's: say so plainly instead of
    # letting nginx answer 502 to every request.
    if command -v setpriv >/dev/null && ! setpriv --reuid="$user" --regid="$group" \
            --clear-groups test -x "$dir"; then
        die "$user cannot reach $dir (make its parent directories o+x)"
    fi
else
    user=$(id -un) group=$(id -gn)
    ngx_root='#' fpm_root=';'
fi

# opcache is a shared extension on Debian/Ubuntu; load it unless this PHP has it built in.
if PHP_INI_SCAN_DIR= "$fpm" -n -m 2>/dev/null | grep -x 'Zend OPcache' >/dev/null; then
    opcache_ext='; opcache is built in'
else
    opcache_ext='zend_extension = opcache'
fi

# The FastCGI socket lives in a private directory of a short fixed prefix: a unix socket's
# path is limited to 107 bytes, which a run directory under a deep checkout exceeds.
sockdir=$(mktemp -d /tmp/kb-fpm.XXXXXX) || die "cannot make a socket directory under /tmp"
sock=$sockdir/php-fpm.sock
trap 'rm -rf "$sockdir"' EXIT
# As root, the unprivileged workers must reach the socket inside it.
if [ "$(id -u)" -eq 0 ]; then chmod 0711 "$sockdir"; fi

rm -rf "$dir/www" && mkdir -p "$dir/www"
cp "$here"/www/*.php "$dir/www/"
chmod 0755 "$dir/www" && chmod 0644 "$dir/www"/*.php
render "$here/nginx.conf.in" "$dir/nginx.conf"
render "$here/php-fpm.conf.in" "$dir/php-fpm.conf"
render "$here/php.ini.in" "$dir/php.ini"

export PHP_INI_SCAN_DIR=
"$fpm" -c "$dir/php.ini" -m | grep -x 'Zend OPcache' >/dev/null || die "opcache is not loaded"

fpm_pid= nginx_pid= stopping=0

show_logs() {
    local f
    for f in "$dir/php-fpm.log" "$dir/nginx-error.log"; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
    done
    return 0
}

# Each server runs in a process group of its own (php-fpm calls setsid itself; nginx is
# started under setsid): a master that dies leaves its workers behind, still holding the
# port or the socket, and only a signal to the group reaches them.
signal_all() {
    local sig=$1 p
    for p in $fpm_pid $nginx_pid; do
        kill -"$sig" -- "-$p" 2>/dev/null || kill -"$sig" "$p" 2>/dev/null || true
    done
}

stop_all() { signal_all TERM; }

# Wait for both masters, then for their groups to empty; KILL what is left after 5 s.
reap_all() {
    local p
    for p in $fpm_pid $nginx_pid; do
        while kill -0 "$p" 2>/dev/null; do wait "$p" || true; done
    done
    for _ in $(seq 100); do
        local left=0
        for p in $fpm_pid $nginx_pid; do kill -0 -- "-$p" 2>/dev/null && left=1; done
        [ "$left" -eq 0 ] && return 0
        sleep 0.05
    done
    signal_all KILL
}

on_signal() { stopping=1; stop_all; }

# Prefix for each server's command line: TERM it when run.sh dies, however it dies.
pdeath=()
if setpriv --help 2>/dev/null | grep -e --pdeathsig >/dev/null; then
    pdeath=(setpriv --pdeathsig TERM --)
fi
own_group=()
command -v setsid >/dev/null && own_group=(setsid)
trap on_signal TERM INT

"${pdeath[@]}" "$fpm" --nodaemonize -c "$dir/php.ini" --fpm-config "$dir/php-fpm.conf" &
fpm_pid=$!

# nginx starts only once FPM listens, so no request of the run meets a 502.
for _ in $(seq 100); do
    [ -S "$sock" ] && break
    kill -0 "$fpm_pid" 2>/dev/null || break
    sleep 0.05
done
if [ "$stopping" -eq 0 ] && [ ! -S "$sock" ]; then
    echo "php-fpm/run.sh: php-fpm did not open its socket" >&2
    show_logs; stop_all; reap_all; exit 1
fi

if [ "$stopping" -eq 0 ]; then
    "${pdeath[@]}" "${own_group[@]}" "$nginx" -p "$dir/" -c "$dir/nginx.conf" -e stderr &
    nginx_pid=$!
fi

# Wait for either to exit; a signal interrupts the wait and sets stopping.
if [ "$stopping" -eq 0 ]; then
    wait -n $fpm_pid $nginx_pid || true
fi
if [ "$stopping" -eq 0 ]; then
    echo "php-fpm/run.sh: a server exited on its own; stopping the other" >&2
    show_logs
    stop_all
fi
reap_all
[ "$stopping" -eq 1 ] && exit 0
exit 1
