#!/usr/bin/env bash
# Runs a test command and, if it fails, repeats every failure line at the end of the output:
# CI keeps only the tail of a run, and Swift Testing prints a failure where it happens, often
# minutes before the run's last line. The command's exit status is passed on.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/savedesk-test.XXXXXX")
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" != 0 ]; then
  echo
  echo "== failures of: $* (exit $status) =="
  grep -E '✘|Fatal error|Crash|error:|Caught error' "$log" | cut -c1-400 | head -60
fi
exit "$status"
