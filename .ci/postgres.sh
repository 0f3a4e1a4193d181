#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for the pgindex tests.
#
#   eval "$(bash .ci/postgres.sh start)"   # prints export lines on stdout
#   bash .ci/postgres.sh stop              # stops it and removes its directory
#
# start installs Debian's postgresql when no server binaries are found, runs
# initdb in a new directory under ${URLHASH_PG_TMP:-/tmp} (as the postgres user when run as
# root: the server refuses to run as root), listens on 127.0.0.1 only, on
# the first free port from $URLHASH_PG_PORT (default 54329), with trust
# authentication, creates the database urlhash_test, and prints
#
#   export URLHASH_PG_DIR=/tmp/urlhash-pg.XXXXXX
#   export URLHASH_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/urlhash_test?sslmode=disable
#
# The cluster runs with fsync off: it is thrown away, and commits then reach
# the operating system but not the disk, as Badger's writes without
# SyncWrites do, so benchmarks compare like with like.
#
# stop takes the directory from its argument or $URLHASH_PG_DIR.
# Diagnostics go to stderr; the server log is $URLHASH_PG_DIR/server.log.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

bindir() {
  # The newest version directory that has the server tools (sort -V: 9 < 10).
  local d
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
      echo "$d"
    fi
  done | sort -V | tail -n 1
}

# as runs a command as the cluster's owner.
as() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  local bin
  bin=$(bindir)
  if [ -z "$bin" ]; then
    log "no PostgreSQL server found; installing Debian's postgresql"
    if [ "$(id -u)" -ne 0 ]; then
      log "error: not root, cannot install postgresql"
      exit 2
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends postgresql >&2
    bin=$(bindir)
    if [ -z "$bin" ]; then
      log "error: postgresql installed but no initdb under /usr/lib/postgresql/*/bin"
      exit 2
    fi
  fi
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    log "error: running as root and there is no postgres user to own the cluster"
    exit 2
  fi

  local dir port
  # Not $TMPDIR: the postgres user must be able to reach the directory.
  dir=$(mktemp -d "${URLHASH_PG_TMP:-/tmp}/urlhash-pg.XXXXXX")
  chmod 0755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
  fi
  port=${URLHASH_PG_PORT:-54329}
  local tries=0
  until port_free "$port"; do
    port=$((port + 1))
    tries=$((tries + 1))
    if [ "$tries" -ge 50 ]; then
      log "error: no free port from ${URLHASH_PG_PORT:-54329}"
      rm -rf "$dir"
      exit 2
    fi
  done

  log "initdb in $dir with $bin"
  if ! as "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    exit 2
  fi
  local opts="-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
  if ! as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >&2; then
    cat "$dir/server.log" >&2 || true
    rm -rf "$dir"
    exit 2
  fi
  if ! as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 \
    -c 'CREATE DATABASE urlhash_test' >&2; then
    as "$bin/pg_ctl" -D "$dir/data" -m immediate stop >&2 || true
    rm -rf "$dir"
    exit 2
  fi
  log "listening on 127.0.0.1:$port"
  echo "export URLHASH_PG_DIR=$dir"
  echo "export URLHASH_TEST_POSTGRES='postgres://postgres@127.0.0.1:$port/urlhash_test?sslmode=disable'"
}

stop() {
  local dir=${1:-${URLHASH_PG_DIR:-}}
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    log "nothing to stop (no directory given and \$URLHASH_PG_DIR unset or gone)"
    return 0
  fi
  case $dir in
  */urlhash-pg.*) ;;
  *)
    log "error: $dir is not a directory this script created"
    exit 2
    ;;
  esac
  local bin
  bin=$(bindir)
  if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >&2 || log "pg_ctl stop failed"
  fi
  rm -rf "$dir"
  log "stopped and removed $dir"
}

case ${1:-start} in
start) start ;;
stop) stop "${2:-}" ;;
*)
  log "usage: postgres.sh [start|stop [dir]]"
  exit 2
  ;;
esac
