#!/usr/bin/env bash
# The fuzz stage of `make test`: schemathesis generates requests from openapi.yaml against a real
# `savedesk serve` (demo config and customers, test clock on, every log line at trace level), once
# with an app's publishable key and once with an operator's secret key. Every phase runs
# (examples, coverage, fuzzing, stateful), with every check, `positive_data_acceptance` included,
# and NUL bytes allowed in generated text; scripts/fuzz_checks.py adds that every error code and
# status is one openapi.yaml lists. It fails on any 5xx, dropped connection or response that
# breaks the spec, a valid request refused as invalid, fewer than MIN_REQUESTS requests, a server
# that is not alive (and does not stop cleanly) at the end, or key material in the server's log.
#
# The event stream (streamDeskEvents) is left out: a valid request is answered with a stream that
# stays open, which the fuzzer can only time out on; its parameters and refusals have their own
# tests (DeskEventFeedTests, EventStreamTests).
#
# The seed changes every run and is printed: FUZZ_SEED=N replays a run. FUZZ_EXAMPLES sets the
# examples per operation (60); FUZZ_SECONDS, when set, runs each key's pass for that long instead
# (`make fuzz-long`).
#   scripts/fuzz.sh SAVEDESK_BINARY SCHEMATHESIS_BINARY
set -euo pipefail
savedesk=$(realpath "$1")
schemathesis=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
min_requests=${MIN_REQUESTS:-4000}
examples=${FUZZ_EXAMPLES:-60}
seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
work=$(mktemp -d /tmp/savedesk-fuzz.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
echo "fuzz: seed $seed (replay with FUZZ_SEED=$seed make fuzz)"

# The demo config, with rate limits high enough for one fuzzer on loopback: the limits have their
# own tests; here they would only turn most requests into 429s. User ids are drawn freely from the
# spec (any text of 1–255 characters without NUL), so most writes make a new customer: the
# new-customer budgets are raised too.
cp "$root/Sources/SaveDeskServer/Demo/Files/demo-config.toml" "$work/config.toml"
printf '\n[rate_limits]\naddress_requests_per_second = 100000\naddress_burst_requests = 100000\naddress_bytes_per_second = 1e9\naddress_burst_bytes = 1e9\n' \
  >>"$work/config.toml"
printf 'address_new_customers_per_second = 100000\naddress_new_customers_burst = 100000\nkey_new_customers_per_second = 100000\nkey_new_customers_burst = 100000\n' \
  >>"$work/config.toml"

"$savedesk" serve --config "$work/config.toml" --db "$work/db.sqlite" \
  --seed "$root/Sources/SaveDeskServer/Demo/Files/demo-seed.toml" --port 0 --test-clock --log-level trace >"$work/serve.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 200); do
  url=$(grep -o 'address=http://127\.0\.0\.1:[0-9]*' "$work/serve.log" | head -n 1 | cut -d= -f2 || true)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; echo "fuzz: the server did not start"; exit 1; }
  sleep 0.05
done
[ -n "$url" ] || { cat "$work/serve.log"; echo "fuzz: the server did not report its address"; exit 1; }

if [ -n "${FUZZ_SECONDS:-}" ]; then amount=(--max-time "$FUZZ_SECONDS"); else amount=(--max-examples "$examples"); fi
total=0
for key in pk_test_savedesk_demo_app_0001 sk_test_savedesk_demo_marco_0001; do
  echo "fuzz: schemathesis against $url as ${key%%_demo*}…"
  set +e
  (cd "$work" && SAVEDESK_SPEC="$root/Sources/SaveDeskAPI/openapi.yaml" SCHEMATHESIS_HOOKS="$root/scripts/fuzz_checks.py" \
    "$schemathesis" --config-file "$root/scripts/schemathesis.toml" run "$root/Sources/SaveDeskAPI/openapi.yaml" \
    --url "$url" -H "X-ZeroSettle-Key: $key" --phases examples,coverage,fuzzing,stateful \
    --checks all "${amount[@]}" --seed "$seed" --generation-allow-x00 true --workers 1 \
    --exclude-operation-id streamDeskEvents \
    --request-timeout 10 --no-color >"$work/run.txt" 2>&1)
  status=$?
  set -e
  sed -n '/^=* SUMMARY/,$p' "$work/run.txt" | grep -v '^$' || tail -20 "$work/run.txt" | cut -c1-300
  if [ $status -ne 0 ]; then
    # Failures quote the request; long generated bodies are cut to keep the log readable.
    sed -n '/^=* \(FAILURES\|ERRORS\)/,/^=* WARNINGS/p' "$work/run.txt" | cut -c1-300 | head -200
    echo "fuzz: schemathesis found problems (exit $status); replay with FUZZ_SEED=$seed"
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

# No secret in the log, whatever its level: keys, bearer credentials, portal tokens, webhook
# secrets, client secrets (a redacted one reads sk_test_[redacted]).
lines=$(wc -l <"$work/serve.log")
if grep -nE '(sk|pk|rk)_(test|live)_[A-Za-z0-9]|[Bb]earer [A-Za-z0-9]|/portal/[0-9a-f]{16}|whsec_[A-Za-z0-9]|_secret_[A-Za-z0-9]' \
  "$work/serve.log" | head -5 | cut -c1-300; then
  echo "fuzz: key material in the server's log (above)"
  exit 1
fi
echo "fuzz: $total generated requests, 0 failures, the server alive and stopped cleanly, no key material in $lines log lines"
[ "$total" -ge "$min_requests" ] || { echo "fuzz: fewer than $min_requests requests"; exit 1; }
