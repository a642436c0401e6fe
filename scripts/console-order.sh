#!/usr/bin/env bash
# Usage: scripts/console-order.sh SAVEDESK SAVEDESK_SERVER MAP OUT
#
# Writes OUT: a linker script that lays out first the code the console (`savedesk`) runs when it
# starts, shows the home screen's customers and moves the selection (`make release` relinks the
# console with it). MAP is lld's map of SAVEDESK's link (SAVEDESK_CONSOLE_MAP names where).
#
# Why: Linux maps a binary's code 64 KB at a time around each page it reads (fault-around). The
# code a start runs (about 4 MB of sections, 1 MB of it functions) lies spread over 27 MB, so a
# start mapped some 200 windows, 12 MB, and took a page fault for each. Laid out together, they
# take a few.
#
# How: the console runs under Valgrind's callgrind (every instruction that runs is counted, none
# sampled) in a tmux pane against the demo's server, as a person starts it: the first page
# arrives, ↓ into the list, ten ↓ and ten ↑, q. scripts/console-layout.py looks each address that
# ran up in MAP and lists the sections in the order they were reached. The demo server and the
# pane are this script's own, and go when it ends.
set -euo pipefail
[ $# = 4 ] || { echo "usage: $0 SAVEDESK SAVEDESK_SERVER MAP OUT" >&2; exit 2; }
console=$(realpath "$1"); server=$(realpath "$2"); map=$3; out=$4
[ -s "$map" ] || { echo "console-order: no map at $map (link the console with SAVEDESK_CONSOLE_MAP=$map)" >&2; exit 1; }
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
   valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no --callgrind-out-file=$work/callgrind.out \
   $work/savedesk tui --server $address --key sk_test_savedesk_demo_marco_0001 2> $work/valgrind.log"
wait_for "home screen with customers" 60 sh -c "tmux -L $socket capture-pane -p | grep -q Thompson"
tmux -L "$socket" send-keys -N 11 Down \; send-keys -N 10 Up \; send-keys q
wait_for "console exit" 60 sh -c "! tmux -L $socket has-session 2>/dev/null"
[ -s "$work/callgrind.out" ] || { echo "console-order: callgrind wrote nothing:" >&2; cat "$work/valgrind.log" >&2; exit 1; }

scripts=$(dirname "$0")
python3 "$scripts/console-layout.py" "$map" "$work/callgrind.out" "$work/savedesk" "$out.tmp"
mv "$out.tmp" "$out"
