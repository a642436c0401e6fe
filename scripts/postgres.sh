#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and demos: `start DIR PORT` creates one in DIR (if
# needed) and starts it on 127.0.0.1:PORT, its socket in DIR, superuser `savedesk`, trust auth on
# loopback only; `stop DIR` stops it. As root, the cluster runs as the `postgres` user (initdb
# refuses root), which then owns DIR. Prints the URL to use on start.
set -euo pipefail
action=${1:?start DIR PORT | stop DIR}
dir=${2:?a directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ]; then echo "PostgreSQL is not installed (apt-get install -y postgresql)" >&2; exit 1; fi
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$action" in
  start)
    port=${3:?a port}
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; fi
    if [ ! -f "$dir/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir" -A trust -U savedesk --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    # fsync stays on: acknowledged writes must survive as they would in production.
    # SAVEDESK_POSTGRES_OPTIONS adds server options (the bench loads pg_stat_statements).
    as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 30 \
      -o "-k $dir -p $port -c listen_addresses=127.0.0.1 -c max_connections=1000 -c shared_buffers=128MB ${SAVEDESK_POSTGRES_OPTIONS:-}" start >/dev/null
    echo "postgres://savedesk@127.0.0.1:$port"
    ;;
  stop)
    if [ -f "$dir/postmaster.pid" ]; then as_owner "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null || true; fi
    ;;
  *) echo "start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
