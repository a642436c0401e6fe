#!/usr/bin/env bash
# Runs a command with TMPDIR set to a new folder of its own, removed when the command succeeds and
# kept (its path printed) when it fails. The tests' servers, databases, files and PostgreSQL
# clusters go there: a test pass makes some 1,500 folders (about half a gigabyte), and each pass
# left them in /tmp for good. The command's exit status is passed on.
set -uo pipefail
dir=$(mktemp -d "${TMPDIR:-/tmp}/savedesk-run.XXXXXX")
# Others may pass through it (as /tmp lets them): PostgreSQL's initdb runs as `postgres` and makes
# the pass's cluster in a folder of its own inside (scripts/with-postgres.sh); what must stay
# private is private where it is made (keys are 0600).
chmod 755 "$dir"
TMPDIR="$dir" "$@"
status=$?
if [ "$status" = 0 ]; then
  rm -rf "$dir"
else
  echo "(the failed run's temporary files are kept in $dir)"
fi
exit "$status"
