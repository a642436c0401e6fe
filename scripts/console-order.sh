#!/usr/bin/env bash
# Usage: scripts/console-order.sh SAVEDESK SAVEDESK_SERVER OUT
#
# Writes OUT: the functions of the console (`savedesk`, a release build) that run when it starts,
# shows the home screen's customers and moves the selection, one symbol a line, for lld's
# --symbol-ordering-file (`make release` relinks the console with it).
#
# Why: Linux maps a binary's code 64 KB at a time around each page it reads (fault-around). The
# ~3,000 functions a start runs (about 0.8 MB) lie spread over 27 MB of code, so a start mapped
# some 200 windows, 12 MB, and took a page fault for each. Laid out together, they take a few.
#
# How: the console runs under Valgrind's callgrind (every function that runs is counted, none
# sampled) in a tmux pane against the demo's server, as a person starts it: the first page
# arrives, ↓ into the list, ten ↓ and ten ↑, q. The demo server and the pane are this script's
# own, and go when it ends.
set -euo pipefail
[ $# = 3 ] || { echo "usage: $0 SAVEDESK SAVEDESK_SERVER OUT" >&2; exit 2; }
console=$(realpath "$1"); server=$(realpath "$2"); out=$3
command -v valgrind >/dev/null || { echo "console-order: valgrind is missing (make deps installs it)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/savedesk-order.XXXXXX")
socket="savedesk-order-$$"
feeder=""; server_pid=""
cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  [ -n "$feeder" ] && kill "$feeder" 2>/dev/null || true
  # Its stdin closed, the server stops; its folder goes after it.
  [ -n "$server_pid" ] && { timeout 30 tail --pid="$server_pid" -f /dev/null || kill "$server_pid"; } 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Within a bound, until a command succeeds.
wait_for() {
  local what=$1 bound=$2; shift 2
  local until=$((SECONDS + bound))
  until "$@"; do
    if [ "$SECONDS" -ge "$until" ]; then
      echo "console-order: no $what within ${bound}s" >&2
      tail -n 20 "$work"/*.log >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.1
  done
}

# The demo's server stops when its stdin closes: a sleep holds it open for this script's run.
mkfifo "$work/stdin"
sleep 600 > "$work/stdin" & feeder=$!
"$server" demo-server --data-dir "$work/server" < "$work/stdin" > "$work/address" 2> "$work/server.log" & server_pid=$!
wait_for "server address" 120 grep -qs '^http' "$work/address"
address=$(head -1 "$work/address")

# Valgrind (3.19) reads DWARF 4 and older; the symbols it needs are in the symbol table.
objcopy --strip-debug "$console" "$work/savedesk"
tmux -L "$socket" new-session -d -x 80 -y 24 \
  "env HOME=$work XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config TERM=xterm-256color \
   valgrind --tool=callgrind --demangle=no --callgrind-out-file=$work/callgrind.out \
   $work/savedesk tui --server $address --key sk_test_savedesk_demo_marco_0001 2> $work/valgrind.log"
wait_for "home screen with customers" 60 sh -c "tmux -L $socket capture-pane -p | grep -q Thompson"
tmux -L "$socket" send-keys -N 11 Down \; send-keys -N 10 Up \; send-keys q
wait_for "console exit" 60 sh -c "! tmux -L $socket has-session 2>/dev/null"
[ -s "$work/callgrind.out" ] || { echo "console-order: callgrind wrote nothing:" >&2; cat "$work/valgrind.log" >&2; exit 1; }

# callgrind's names are compressed: "fn=(7) name" the first time, "fn=(7)" after; "cfn=" (a
# callee) names them too. A function ran when it has costs of its own, that is a "fn=" line; it
# belongs to the object of the "ob=" line before it. Only the console's own functions are kept
# (libc and curses are other files), without callgrind's "'2" marks (a second copy of a name).
awk -v binary="$work/savedesk" '
  /^(c?fn|c?ob)=\(/ {
    kind = substr($0, 1, index($0, "=") - 1); rest = substr($0, index($0, "=") + 1)
    id = substr(rest, 2, index(rest, ")") - 2); name = substr(rest, index(rest, ")") + 2)
    if (kind == "ob" || kind == "cob") { if (name != "") object[id] = name; if (kind == "ob") current = id }
    else {
      if (name != "") fname[id] = name
      if (kind == "fn" && object[current] == binary && !(id in ran)) { ran[id] = 1; order[++count] = id }
    }
  }
  END {
    for (i = 1; i <= count; i++) {
      name = fname[order[i]]; sub(/'"'"'[0-9]+$/, "", name)
      if (name !~ /^0x/ && !(name in written)) { written[name] = 1; print name }
    }
  }' "$work/callgrind.out" > "$out.tmp"
mv "$out.tmp" "$out"
echo "console-order: $(wc -l < "$out") functions of $console ran (written to $out)"
