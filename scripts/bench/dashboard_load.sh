#!/usr/bin/env bash
# The proxy's requests/s with the dashboard open and polling, beside without
# (docs/benchmarks.md §Usage ledger): `tokendiet serve --threads 1` in front
# of the proxy benchmark's nginx fake upstream (scripts/bench/proxy/conf),
# wrk -c32 posting a 2 kB chat body (BODY_WORDS=10000: 50 kB) for DURATION s per round, ROUNDS rounds
# of each, interleaved (off, on, off, on, ...). "On" is a client fetching
# /v1/tokendiet/stats every POLL s (the page polls every 5 s: 1 s is five
# pages). The ledger grows with the load, as a real one would. CATCH_UP=1:
# a "with" round starts after one answer (kept out of its figures) has read
# the rows of the round without, as a page polling all along would have:
# the round's share is then the steady one, not that plus the catch-up.
# At the end: the stats' thread's CPU over the whole run per ledger row
# (each row is read once, however the answers fell into rounds or the cache).
# Besides requests/s, each round prints the proxy process's CPU time per
# request (utime + stime from /proc, all its threads, the stats query's
# included), the share of it the dashboard's own thread (td-dashboard)
# took: the stats' cost, read apart from the noise of the box; that thread's
# CPU per request (each request writes a ledger row), and the ledger
# writer's (td-ledger) share, which hands the rows it commits to the stats
# while a page polls (docs/design.md §Dashboard).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=$PWD/scripts/bench/proxy
BIN=${TOKENDIET_BIN:-$PWD/${BUILD_DIR:-build}/cli/tokendiet}
ROUNDS=${ROUNDS:-4} DURATION=${DURATION:-10} POLL=${POLL:-1}
UP=${UP_PORT:-18941} TD=${TD_PORT:-18942}
RUN=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; nginx -c "$RUN/fake.conf" -s stop 2>/dev/null || true; rm -rf "$RUN"' EXIT
sed -e "s|@PORT@|$UP|g; s|@WORKERS@|1|g; s|@RUN@|$RUN|g; s|@FIXTURES@|$HERE/fixtures|g" \
    -e "s|@UPSTREAM_PORT@|$UP|g; s|@SLOW_FIRST_MS@|50|g; s|@SLOW_GAP_MS@|50|g" \
    "$HERE/conf/fake_upstream.nginx.conf.in" >"$RUN/fake.conf"
nginx -c "$RUN/fake.conf"
python3 -c "
import json; msgs=[{'role':'user','content':'word '*${BODY_WORDS:-180}},{'role':'assistant','content':'ok '*100},{'role':'user','content':'go on'}]
open('$RUN/body.json','w').write(json.dumps({'model':'gpt-4o','messages':msgs}))"
XDG_STATE_HOME=$RUN STATE_DIRECTORY=$RUN "$BIN" serve --threads 1 --listen "127.0.0.1:$TD" \
  --upstream "openai=http://127.0.0.1:$UP" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$TD/healthz" >/dev/null && break; sleep 0.1; done
TD_PID=${pids[0]}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$TD_PID/stat"; }
# A thread's ticks by name (0 before it starts: the dashboard's starts with
# its first answer).
thread_ticks() {
  local t
  for t in /proc/"$TD_PID"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = "$1" ] && { awk '{print $14 + $15}' "$t/stat"; return; }
  done
  echo 0
}
# One round: "REQ_PER_S CPU_US_PER_REQUEST STATS_SHARE_PERCENT
# STATS_US_PER_REQUEST WRITER_SHARE_PERCENT".
load() {
  local before after s0 s1 w0 w1 out
  before=$(cpu_ticks) s0=$(thread_ticks td-dashboard) w0=$(thread_ticks td-ledger)
  out=$(BODY_FILE=$RUN/body.json wrk -t1 -c32 -d"${DURATION}s" -s "$HERE/post.lua" "http://127.0.0.1:$TD")
  after=$(cpu_ticks) s1=$(thread_ticks td-dashboard) w1=$(thread_ticks td-ledger)
  awk -v t0="$before" -v t1="$after" -v s0="$s0" -v s1="$s1" -v w0="$w0" -v w1="$w1" -v hz="$(getconf CLK_TCK)" '
    /requests in/ {n = $1} /^Requests\/sec:/ {rps = $2}
    END {printf "%s %.1f %.2f %.2f %.2f\n", rps, (t1 - t0) / hz * 1e6 / n, 100 * (s1 - s0) / (t1 - t0),
                (s1 - s0) / hz * 1e6 / n, 100 * (w1 - w0) / (t1 - t0)}' <<<"$out"
}
for r in $(seq "$ROUNDS"); do
  read -r off off_cpu _ _ off_writer < <(load)
  first=0
  if [[ ${CATCH_UP:-0} == 1 ]]; then
    curl -s -o /dev/null "http://127.0.0.1:$TD/v1/tokendiet/stats"
    first=$POLL
  fi
  ( sleep "$first"; while :; do curl -s -o /dev/null "http://127.0.0.1:$TD/v1/tokendiet/stats"; sleep "$POLL"; done ) &
  poller=$!
  read -r on on_cpu on_stats on_stats_us on_writer < <(load)
  kill "$poller"; wait "$poller" 2>/dev/null || true
  echo "round $r: without $off req/s ($off_cpu µs CPU a request, $off_writer % the ledger writer's)," \
    "with the dashboard polling $on req/s ($on_cpu µs, $on_stats % of it the stats' thread:" \
    "$on_stats_us µs a request; $on_writer % the ledger writer's)"
done
# The last answer's query may still run: wait for the thread to go idle.
while :; do t=$(thread_ticks td-dashboard); sleep 1; [[ $(thread_ticks td-dashboard) == "$t" ]] && break; done
rows=$(sqlite3 "$RUN/usage.db" 'SELECT COUNT(*) FROM requests')
echo "ledger rows: $rows; the stats' thread over the run: $(awk -v t="$t" -v n="$rows" -v hz="$(getconf CLK_TCK)" \
  'BEGIN {printf "%.2f s of CPU, %.2f µs a row", t / hz, t / hz * 1e6 / n}')"
