#!/usr/bin/env bash
# The fuzz stage of `make test`: schemathesis generates requests from openapi.yaml against a real
# `savedesk serve` (demo config and customers, test clock on), once with an app's publishable key
# and once with an operator's secret key. It fails on any 5xx, dropped connection or response that
# violates the spec, when fewer than MIN_REQUESTS requests were made, or when the server is not
# alive (and does not stop cleanly) at the end. The seed is fixed, so a run can be repeated.
#   scripts/fuzz.sh SAVEDESK_BINARY SCHEMATHESIS_BINARY
set -euo pipefail
savedesk=$(realpath "$1")
schemathesis=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
min_requests=${MIN_REQUESTS:-2000}
examples=${FUZZ_EXAMPLES:-30}
work=$(mktemp -d /tmp/savedesk-fuzz.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$savedesk" serve --config "$root/Sources/SaveDeskServer/Demo/demo-config.toml" --db "$work/db.sqlite" \
  --seed "$root/Sources/SaveDeskServer/Demo/demo-seed.toml" --port 0 --test-clock --log-level info >"$work/serve.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 200); do
  url=$(grep -o 'address=http://127\.0\.0\.1:[0-9]*' "$work/serve.log" | head -n 1 | cut -d= -f2 || true)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; echo "fuzz: the server did not start"; exit 1; }
  sleep 0.05
done
[ -n "$url" ] || { cat "$work/serve.log"; echo "fuzz: the server did not report its address"; exit 1; }

total=0
for key in pk_test_savedesk_demo_app_0001 sk_test_savedesk_demo_marco_0001; do
  echo "fuzz: schemathesis against $url as ${key%%_demo*}…"
  set +e
  (cd "$work" && "$schemathesis" --config-file "$root/scripts/schemathesis.toml" run "$root/Sources/SaveDeskAPI/openapi.yaml" \
    --url "$url" -H "X-ZeroSettle-Key: $key" \
    --checks all --exclude-checks positive_data_acceptance --max-examples "$examples" --seed 42 --workers 1 \
    --request-timeout 10 --no-color >"$work/run.txt" 2>&1)
  status=$?
  set -e
  sed -n '/^=* SUMMARY/,$p' "$work/run.txt" | grep -v '^$' || tail -20 "$work/run.txt" | cut -c1-300
  if [ $status -ne 0 ]; then
    # Failures quote the request; long generated bodies are cut to keep the log readable.
    sed -n '/^=* \(FAILURES\|ERRORS\)/,/^=* WARNINGS/p' "$work/run.txt" | cut -c1-300 | head -200
    echo "fuzz: schemathesis found problems (exit $status)"
    exit 1
  fi
  generated=$(grep -o '[0-9]* generated' "$work/run.txt" | tail -n 1 | cut -d' ' -f1)
  total=$((total + ${generated:-0}))
done

kill -0 "$server_pid" 2>/dev/null || { tail -50 "$work/serve.log"; echo "fuzz: the server died"; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-ZeroSettle-Key: pk_test_savedesk_demo_app_0001' "$url/v1/iap/cancel-flow/")
[ "$code" = 200 ] || { echo "fuzz: the server answers $code after the run"; exit 1; }
kill -TERM "$server_pid"
wait "$server_pid" || { tail -50 "$work/serve.log"; echo "fuzz: the server did not stop cleanly"; exit 1; }
server_pid=""
echo "fuzz: $total generated requests, 0 failures, the server alive and stopped cleanly"
[ "$total" -ge "$min_requests" ] || { echo "fuzz: fewer than $min_requests requests"; exit 1; }
