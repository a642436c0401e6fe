#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster: started on a free loopback port in a new
# temporary folder, its URL in SAVEDESK_TEST_POSTGRES (postgres://savedesk@127.0.0.1:PORT), and
# stopped and removed when the command ends, however it ends. Nothing survives the run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/savedesk-pg.XXXXXX")
chmod 755 "$dir"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() { "$here/postgres.sh" stop "$dir/cluster"; rm -rf "$dir"; }
trap cleanup EXIT
url=$("$here/postgres.sh" start "$dir/cluster" "$port")
echo "PostgreSQL for this run: $url (in $dir)"
SAVEDESK_TEST_POSTGRES="$url" "$@"
