#!/usr/bin/env bash
# Benchmarks tokendiet as a plain proxy (the targets of docs/benchmarks.md §Proxy), on 127.0.0.1 only:
#
#   load       scripts/bench/proxy/bench.sh: direct vs nginx vs Portkey vs tokendiet, wrk -c32,
#              bodies 2k/50k/500k, ROUNDS rounds, tokendiet --threads 1 like NGINX_WORKERS=1;
#              plus the slow-stream time-to-first-event check and idle/peak RSS
#   latency    the same at --connections 1 (bodies 2k, 50k; LAT_ROUNDS=7 rounds of LAT_DURATION=5 s):
#              added p99 over direct, per-round pairs; plus tokendiet-relay (diet and ledger off)
#   slow       scripts/bench/slow_streams.mjs: 512 concurrent slow SSE streams, largest gap between
#              events vs the upstream's 50 ms, idle RSS
#   callgrind  instructions per proxied request (valgrind --tool=callgrind, counters zeroed after a
#              warm-up, then a fixed number of requests): the stable figure
#
#   scripts/bench/proxy.sh [--quick] [--rounds N] [--phases load,latency,slow,callgrind]
#                          [--no-portkey] [--out DIR]
#
# --quick is a smoke run (seconds per phase, not numbers to quote). Results:
# scripts/bench/proxy/results/proxy-<timestamp>/summary.md (git-ignored), with
# every raw output beside it. Needs `scripts/setup.sh --bench` once (nginx +
# Lua module, wrk, valgrind, the pinned Portkey gateway) and a built binary
# (scripts/build.sh; TOKENDIET_BIN overrides). The machine is shared: run the
# full benchmark only when asked, not in a loop.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
HARNESS=$ROOT/scripts/bench/proxy
BIN=${TOKENDIET_BIN:-$ROOT/${BUILD_DIR:-build}/cli/tokendiet}
ROUNDS=${ROUNDS:-2}
LAT_ROUNDS=${LAT_ROUNDS:-7}
PHASES=load,latency,slow,callgrind
PORTKEY=1
QUICK=0
OUT=""
TD_PORT=${TD_PORT:-18090}

while (($#)); do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --phases) PHASES=$2; shift 2 ;;
    --no-portkey) PORTKEY=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$HARNESS/results/proxy-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
log() { printf '[proxy.sh %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
has() { [[ ",$PHASES," == *",$1,"* ]]; }

[[ -x $BIN ]] || { echo "no tokendiet binary at $BIN: run scripts/build.sh" >&2; exit 1; }
if has load || has latency; then
  for tool in nginx wrk curl python3; do command -v $tool >/dev/null || { echo "missing $tool: run scripts/setup.sh --bench" >&2; exit 1; }; done
  [[ -f /usr/lib/nginx/modules/ngx_http_lua_module.so ]] || { echo "missing libnginx-mod-http-lua: run scripts/setup.sh --bench" >&2; exit 1; }
fi
if has callgrind; then
  command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || { echo "missing valgrind: run scripts/setup.sh --bench" >&2; exit 1; }
fi

if ((QUICK)); then
  export DURATION=${DURATION:-2} WARMUP=${WARMUP:-0} TTFB_RUNS=${TTFB_RUNS:-1}
  SIZES=${SIZES:-2k}; ROUNDS=1; LAT_ROUNDS=1; LAT_SIZES=${LAT_SIZES:-2k}
  STREAMS=${STREAMS:-64}; EVENTS=${EVENTS:-10}; CG_REQUESTS=${CG_REQUESTS:-100}
else
  SIZES=${SIZES:-2k,50k,500k}; LAT_SIZES=${LAT_SIZES:-2k,50k}
  STREAMS=${STREAMS:-512}; EVENTS=${EVENTS:-40}; CG_REQUESTS=${CG_REQUESTS:-2000}
fi
export NGINX_WORKERS=${NGINX_WORKERS:-1}

# tokendiet as bench.sh starts it: one I/O thread (nginx runs one worker), its
# ledger in the run's scratch dir, `exec` so the measured PID is the proxy's.
TD_START="env XDG_STATE_HOME={RUN}/tokendiet $BIN serve --threads 1 --listen 127.0.0.1:{PORT} --upstream openai={UPSTREAM}"
# The proxy core beside it: the same binary with a profile `enabled: false`,
# so chat bodies are neither parsed nor counted (the usage tee, ledger row,
# metrics and log line stay): what the targets of docs/benchmarks.md §Proxy are about.
printf 'profiles:\n  - name: off\n    models: ["*"]\n    enabled: false\n' >"$OUT/diet-off.yaml"
CORE_START="env XDG_STATE_HOME={RUN}/core $BIN serve --config $OUT/diet-off.yaml --threads 1 --listen 127.0.0.1:{PORT} --upstream openai={UPSTREAM}"
CORE_PORT=$((TD_PORT + 1))
# The relay alone, for the latency phase: the core's config with the usage
# ledger off too. At one connection the ledger's SQLite writer, though niced
# and under 3 % of a core at 10k req/s, is what separates the core's p99 from
# nginx's (README, "Latency at one connection"); this shows each part's share.
printf 'ledger:\n  enabled: false\n' | cat - "$OUT/diet-off.yaml" >"$OUT/relay.yaml"
RELAY_START="env XDG_STATE_HOME={RUN}/relay $BIN serve --config $OUT/relay.yaml --threads 1 --listen 127.0.0.1:{PORT} --upstream openai={UPSTREAM}"
RELAY_PORT=$((TD_PORT + 2))
targets=(direct nginx)
((PORTKEY)) && [[ -f $HARNESS/portkey/node_modules/@portkey-ai/gateway/build/start-server.js ]] && targets+=(portkey)
((PORTKEY)) && [[ ! -f $HARNESS/portkey/node_modules/@portkey-ai/gateway/build/start-server.js ]] &&
  log "Portkey not installed (scripts/setup.sh --bench): measuring without it"

{
  echo "# tokendiet proxy benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "$(nproc) cores, $(uname -r), $("$BIN" version 2>/dev/null || echo 'tokendiet ?') ($(git rev-parse --short HEAD 2>/dev/null || echo '?')), $(nginx -v 2>&1 | sed 's|.*/|nginx |'), node $(node -v)$( ((QUICK)) && echo ', QUICK SMOKE RUN: not numbers to quote')."
} >"$OUT/summary.md"

if has load; then
  log "load: ${targets[*]} tokendiet, sizes $SIZES, $ROUNDS rounds"
  "$HARNESS/bench.sh" --rounds "$ROUNDS" --sizes "$SIZES" --out "$OUT/load" \
    --start tokendiet="$TD_START" --start tokendiet-core="$CORE_START" \
    "${targets[@]}" tokendiet=http://127.0.0.1:$TD_PORT tokendiet-core=http://127.0.0.1:$CORE_PORT >"$OUT/load.log" 2>&1 ||
    { log "load phase failed; see $OUT/load.log"; tail -20 "$OUT/load.log" >&2; exit 1; }
  { echo; echo "## Throughput (wrk -c32) and slow-stream first event"; sed '1,/^$/d' "$OUT/load/results.md"; } >>"$OUT/summary.md"
fi

if has latency; then
  log "latency: --connections 1, sizes $LAT_SIZES, $LAT_ROUNDS rounds"
  # Many short rounds: a p99 at one connection swings by hundreds of µs
  # between runs on a shared box, and the targets compare per-round pairs.
  CONNECTIONS=1 DURATION=${LAT_DURATION:-${DURATION:-5}} "$HARNESS/bench.sh" --connections 1 --rounds "$LAT_ROUNDS" --sizes "$LAT_SIZES" --no-ttfb --out "$OUT/latency" \
    --start tokendiet="$TD_START" --start tokendiet-core="$CORE_START" --start tokendiet-relay="$RELAY_START" \
    direct nginx tokendiet=http://127.0.0.1:$TD_PORT tokendiet-core=http://127.0.0.1:$CORE_PORT \
    tokendiet-relay=http://127.0.0.1:$RELAY_PORT >"$OUT/latency.log" 2>&1 ||
    { log "latency phase failed; see $OUT/latency.log"; tail -20 "$OUT/latency.log" >&2; exit 1; }
  { echo; echo "## Added latency at concurrency 1 (wrk -c1)"; sed '1,/^$/d' "$OUT/latency/results.md"; } >>"$OUT/summary.md"
fi

if has slow; then
  log "slow streams: $STREAMS x $EVENTS events"
  node "$ROOT/scripts/bench/slow_streams.mjs" --tokendiet "$BIN" --threads 1 --streams "$STREAMS" --events "$EVENTS" --json \
    >"$OUT/slow_streams.json" 2>"$OUT/slow_streams.log" || log "slow streams: some streams failed (see $OUT/slow_streams.json)"
  { echo; echo "## $STREAMS concurrent slow SSE streams"; echo; python3 "$ROOT/scripts/bench/proxy_summary.py" slow "$OUT/slow_streams.json"; } >>"$OUT/summary.md"
fi

if has callgrind; then
  log "callgrind: $CG_REQUESTS requests per kind under valgrind"
  CG=$OUT/callgrind; mkdir -p "$CG"
  python3 "$HARNESS/gen_bodies.py" --out "$CG/bodies" --sizes 2k,50k >/dev/null
  fake_pid=""; vg_pid=""
  cg_cleanup() {
    [[ -n $vg_pid ]] && kill -TERM "$vg_pid" 2>/dev/null
    [[ -n $fake_pid ]] && kill -TERM "$fake_pid" 2>/dev/null
    wait 2>/dev/null || true
  }
  trap cg_cleanup EXIT
  node "$ROOT/tests/fake_upstream/server.mjs" --no-record --port-file "$CG/fake.port" >"$CG/fake.log" 2>&1 &
  fake_pid=$!
  for _ in $(seq 100); do [[ -s $CG/fake.port ]] && break; sleep 0.1; done
  fake_port=$(cat "$CG/fake.port")
  # Twice: as shipped (the diet parses and counts every chat request) and with
  # the core's config (a profile with enabled: false, written above).
  printf '| config | request kind | requests | instructions (Ir) | Ir per request |\n|---|---|--:|--:|--:|\n' >"$CG/table.md"
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
  n=0
  # cg_kinds NAME PORT: for each request kind, warm up, zero the counters of
  # the callgrind process $vg_pid, send $CG_REQUESTS requests, dump, and add
  # NAME's instructions per request to the table (dumps: callgrind-NAME.out.*).
  cg_kinds() {
    local name=$1 url=http://127.0.0.1:$2/v1/chat/completions kind label body dump ir
    for kind in "json 2k:body-2k.json" "json 50k:body-50k.json" "sse 2k:body-2k-stream.json"; do
      label=${kind%%:*}; body=$CG/bodies/${kind#*:}
      node "$ROOT/scripts/bench/load.mjs" "$url" "$body" 50 >/dev/null     # warm-up: pools, caches
      callgrind_control -z "$vg_pid" >/dev/null
      node "$ROOT/scripts/bench/load.mjs" "$url" "$body" "$CG_REQUESTS" >"$CG/load-$n.txt"
      callgrind_control --dump="kind$n" "$vg_pid" >/dev/null
      n=$((n + 1))
      sleep 0.5
      dump=$(ls -t "$CG"/callgrind-$name.out.* 2>/dev/null | head -1)
      ir=$(grep -E '^(summary|totals):' "$dump" | head -1 | awk '{print $2}')
      printf '| %s | %s | %s | %s | %s |\n' "$name" "$label" "$CG_REQUESTS" "$ir" "$((ir / CG_REQUESTS))" >>"$CG/table.md"
    done
  }
  for variant in default diet-off; do
    cfg=(); [[ $variant == diet-off ]] && cfg=(--config "$OUT/diet-off.yaml")
    cg_port=$(free_port)
    XDG_STATE_HOME=$CG valgrind --tool=callgrind --callgrind-out-file="$CG/callgrind-$variant.out" \
      "$BIN" serve "${cfg[@]}" --threads 1 --listen 127.0.0.1:$cg_port --upstream openai=http://127.0.0.1:$fake_port >"$CG/tokendiet-$variant.log" 2>&1 &
    vg_pid=$!
    for _ in $(seq 600); do curl -fs "http://127.0.0.1:$cg_port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
    curl -fs "http://127.0.0.1:$cg_port/healthz" >/dev/null || { log "tokendiet under valgrind did not start"; tail "$CG/tokendiet-$variant.log" >&2; exit 1; }
    cg_kinds "$variant" "$cg_port"
    kill -TERM "$vg_pid" 2>/dev/null; wait "$vg_pid" 2>/dev/null || true; vg_pid=""
  done
  # nginx, the floor, under the same load and upstream: one process
  # (master_process off) so callgrind sees all of its work.
  ng=$CG/nginx; mkdir -p "$ng"
  cg_port=$(free_port)
  sed -e "s#@WORKERS@#1#; s#@RUN@#$ng#g; s#@PORT@#$cg_port#; s#@UPSTREAM_PORT@#$fake_port#" \
    "$HARNESS/conf/nginx_proxy.nginx.conf.in" >"$ng/nginx.conf"
  mkdir -p "$ng/nginx_proxy_body" "$ng/nginx_proxy_temp"
  valgrind --tool=callgrind --callgrind-out-file="$CG/callgrind-nginx.out" \
    nginx -p "$ng" -c "$ng/nginx.conf" -g 'daemon off; master_process off;' >"$CG/nginx.log" 2>&1 &
  vg_pid=$!
  for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$cg_port/healthz" 2>/dev/null && break; sleep 0.1; done
  cg_kinds nginx "$cg_port"
  kill -TERM "$vg_pid" 2>/dev/null; wait "$vg_pid" 2>/dev/null || true; vg_pid=""
  cg_cleanup; vg_pid=""; fake_pid=""
  trap - EXIT
  { echo; echo "## Instructions per proxied request (callgrind, tokendiet --threads 1, all threads)"; echo
    echo "Counters zeroed after 50 warm-up requests; then $CG_REQUESTS sequential keep-alive requests (scripts/bench/load.mjs) to the fake upstream's recorded chat completion / stream. \`default\` = tokendiet as shipped (the diet parses, counts and prunes each chat request); \`diet-off\` = a profile with \`enabled: false\` (the proxy core: bodies neither parsed nor counted; usage tee, ledger row, metrics and log line as always); \`nginx\` = nginx, 1 worker, \`proxy_pass\` with \`access_log off\` (the floor)."
    echo; cat "$CG/table.md"; } >>"$OUT/summary.md"
fi

{ echo; echo "## Targets (docs/benchmarks.md §Proxy)"; echo; python3 "$ROOT/scripts/bench/proxy_summary.py" targets "$OUT"; } >>"$OUT/summary.md"
cat "$OUT/summary.md"
log "results in $OUT"
