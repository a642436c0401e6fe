#!/usr/bin/env bash
# `make postgres-demo`: the backend on a throwaway PostgreSQL cluster (in a temporary folder, on
# 127.0.0.1:PORT, owned by the unprivileged `postgres` user when run as root), with the demo
# config, customers and test clock. Ctrl-C stops the server, then the cluster, and removes it.
# Point more instances at the same database with the URL it prints (each on its own --port).
set -euo pipefail
savedesk=${1:?path to the savedesk binary}
port=${PORT:-8080}
pgport=${PGPORT:-55432}
here=$(cd "$(dirname "$0")" && pwd)
demo="$here/../Sources/SaveDeskServer/Demo"
dir=$(mktemp -d "${TMPDIR:-/tmp}/savedesk-postgres-demo.XXXXXX")
chmod 755 "$dir"
cleanup() { "$here/postgres.sh" stop "$dir/cluster"; rm -rf "$dir"; }
trap cleanup EXIT
url="$("$here/postgres.sh" start "$dir/cluster" "$pgport")/postgres"
echo "PostgreSQL: $url"
echo "A second instance: $savedesk serve --config $demo/demo-config.toml --db $url --data-dir $dir/data --test-clock --port $((port + 1))"
"$savedesk" serve --config "$demo/demo-config.toml" --db "$url" --data-dir "$dir/data" \
  --seed "$demo/demo-seed.toml" --test-clock --port "$port"
