// The soak: many concurrent clients stream chat responses through tokendiet
// for a bounded time, every response is checked byte for byte, tokendiet's RSS
// and open descriptors are sampled, and the usage ledger must hold one row per
// request sent.
//
//   node scripts/bench/soak.mjs [--concurrency 500] [--seconds 120] [--idle-s 5]
//        [--first-ms 20] [--gap-ms 5] [--fd-slack 10] [--timeout-ms 30000]
//
// The fake upstream (tests/fake_upstream/server.mjs) runs in its own process and
// tokendiet (TOKENDIET_BIN, else build/cli/tokendiet) in front of it for all
// three providers, its ledger in a temp state dir. Each client keeps one
// keep-alive connection and sends, one after another until the time is up:
// OpenAI chat streams with and without stream_options.include_usage, Anthropic
// message streams and Gemini streamGenerateContent?alt=sse, every other one
// slowed by the fake (x-fake-mode: slow). The expected body of each request
// shape is what the fake answers to the identical request sent to it directly:
// for an OpenAI stream whose client did not ask for usage, tokendiet asks the
// upstream for it and must cut it out again, leaving exactly those bytes.
//
// Prints one JSON summary on stdout (progress on stderr). Exit status 1 if a
// request failed or its body differed, if the ledger's rows are not the
// requests sent, or if tokendiet holds more descriptors after the idle wait
// than at the start (plus --fd-slack), not counting the idle upstream
// connections its pool may keep (at most pool_max_idle_per_upstream per I/O
// thread, here all three providers share one upstream).
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {startTokendiet, startFakeProcess, rawRequest, Connection, tokendietBin, tcpSocketsOf, SOURCE_DIR} from '../../tests/support/index.mjs';

const USAGE = 'usage: soak.mjs [--concurrency N] [--seconds S] [--idle-s S] [--first-ms MS] [--gap-ms MS] [--fd-slack N] [--timeout-ms MS]';
const opts = {concurrency: 500, seconds: 120, 'idle-s': 5, 'first-ms': 20, 'gap-ms': 5, 'fd-slack': 10, 'timeout-ms': 30000};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const k = argv[i].replace(/^--/, '');
  const v = Number(argv[i + 1]);
  if (!(k in opts) || i + 1 >= argv.length || !Number.isFinite(v) || v < 0) { console.error(USAGE); process.exit(2); }
  opts[k] = v;
  i++;
}
if (opts.concurrency < 1) { console.error(USAGE); process.exit(2); }

// The default config's pool bound (config/config.hpp, Limits).
const POOL_MAX_IDLE_PER_UPSTREAM = 64;
const sleep = ms => new Promise(r => setTimeout(r, ms));
const log = msg => process.stderr.write(`soak: ${msg}\n`);

function recordedBody(name) {
  const file = path.join(SOURCE_DIR, 'tests', 'fixtures', 'wire', `${name}.request.json`);
  return Buffer.from(JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8')).body));
}

// The request shapes, each fast and slowed; `provider` is the ledger's name.
// The OpenAI ones name the fake's fixture: it otherwise picks its recording by
// include_usage, which tokendiet adds upstream, so the direct request and the
// proxied one would be answered from different recordings.
function requestShapes() {
  const openai = {'content-type': 'application/json', authorization: 'Bearer sk-soak-0000000000000000'};
  const kinds = [
    {name: 'openai-chat-stream', provider: 'openai', path: '/v1/chat/completions',
      headers: {...openai, 'x-fake-fixture': 'openai-chat-stream-include-usage'}, body: recordedBody('openai-chat-stream')},
    {name: 'openai-chat-stream-long', provider: 'openai', path: '/v1/chat/completions',
      headers: {...openai, 'x-fake-fixture': 'openai-chat-stream-long'}, body: recordedBody('openai-chat-stream')},
    {name: 'openai-chat-stream-include-usage', provider: 'openai', path: '/v1/chat/completions',
      headers: {...openai, 'x-fake-fixture': 'openai-chat-stream-include-usage'}, body: recordedBody('openai-chat-stream-include-usage')},
    {name: 'anthropic-messages-stream', provider: 'anthropic', path: '/v1/messages',
      headers: {'content-type': 'application/json', 'x-api-key': 'sk-ant-soak-0000', 'anthropic-version': '2023-06-01'},
      body: recordedBody('anthropic-stream-thinking')},
    {name: 'gemini-stream-sse', provider: 'gemini', path: '/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse',
      headers: {'content-type': 'application/json', 'x-goog-api-key': 'soak-gemini-key'}, body: recordedBody('gemini-stream-functioncall-verbatim')},
  ];
  const slow = {'x-fake-mode': 'slow', 'x-fake-first-ms': String(opts['first-ms']), 'x-fake-gap-ms': String(opts['gap-ms'])};
  return kinds.flatMap(k => [
    {...k, request: {method: 'POST', path: k.path, headers: k.headers, body: k.body}},
    {...k, name: `${k.name}-slow`, request: {method: 'POST', path: k.path, headers: {...k.headers, ...slow}, body: k.body}},
  ]);
}

// ---- tokendiet's process, from /proc ----

function rssKb(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}
// User plus system CPU seconds the process has used (clock ticks of 1/100 s).
function cpuSeconds(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
const fdCount = pid => fs.readdirSync(`/proc/${pid}/fd`).length;

// tokendiet's TCP sockets by role: connections from clients to its listening
// port, connections to the fake upstream, and the rest (the listener).
function socketsByRole(pid, listenPort, upstreamPort) {
  const out = {clients: 0, upstream: 0};
  for (const sock of tcpSocketsOf(pid)) {
    if (sock.state !== '0A' && sock.localPort === listenPort) out.clients++;
    else if (sock.remotePort === upstreamPort) out.upstream++;
  }
  return out;
}

// ---- the load ----

const stats = {requests: 0, ok: 0, mismatches: 0, errors: 0, connections: 0, byProvider: {}, byShape: {}};
const failures = [];  // the first few, for the summary
function fail(kind, shape, detail) {
  if (kind === 'mismatch') stats.mismatches++; else stats.errors++;
  if (failures.length < 10) failures.push({kind, shape: shape?.name ?? null, ...detail});
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

// One client: one keep-alive connection (a new one only when tokendiet closed
// it), requests one after another, shapes in turn from its own offset.
async function client(index, port, shapes, expected, deadline) {
  let conn = null;
  for (let i = index; performance.now() < deadline; i++) {
    const shape = shapes[i % shapes.length];
    if (!conn || conn.closed) {
      conn?.close();
      try { conn = await Connection.open({port, timeoutMs: opts['timeout-ms']}); stats.connections++; } catch (e) {
        fail('connect', null, {error: e.code || e.message});
        await sleep(100);
        conn = null;
        continue;
      }
    }
    stats.requests++;
    stats.byProvider[shape.provider] = (stats.byProvider[shape.provider] ?? 0) + 1;
    stats.byShape[shape.name] = (stats.byShape[shape.name] ?? 0) + 1;
    let res;
    try { res = await conn.request(shape.request); } catch (e) {
      fail('error', shape, {error: e.message});
      conn.close();
      conn = null;
      continue;
    }
    const want = expected.get(shape.name);
    if (res.status !== 200 || !res.complete || res.error) {
      fail('error', shape, {status: res.status, complete: res.complete, error: res.error ?? null, bytes: res.body.length});
    } else if (!res.body.equals(want)) {
      fail('mismatch', shape, {bytes: res.body.length, expected_bytes: want.length, first_difference_at: firstDifference(res.body, want)});
    } else stats.ok++;
    if (/\bclose\b/i.test(String(res.headers.connection ?? '')) || !res.complete) { conn.close(); conn = null; }
  }
  conn?.close();
}

function ledgerRows(ledgerPath) {
  const out = execFileSync(tokendietBin(), ['usage', '--json', '--by', 'provider', '--ledger', ledgerPath], {encoding: 'utf8'});
  const report = JSON.parse(out);
  return {total: report.total.requests, byProvider: Object.fromEntries(report.groups.map(g => [g.key, g.requests]))};
}

// ---- the run ----

// Children are stopped even when this script dies halfway.
const children = [];
process.on('exit', () => { for (const c of children) if (!c.exited) c.proc.kill('SIGKILL'); });
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));
// The whole run is bounded: a hang fails instead of waiting for CI's limit.
const watchdog = setTimeout(() => { log('watchdog: run took too long'); process.exit(3); },
  (opts.seconds + opts['idle-s'] + 120) * 1000 + opts['timeout-ms']);
watchdog.unref();

const fake = await startFakeProcess(['--no-record']);
children.push(fake);
const td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}});
children.push(td);
const pid = td.proc.pid;

const startupLines = td.lines.slice();
const ledgerLine = startupLines.map(l => { try { return JSON.parse(l); } catch { return null; } }).find(e => e?.event === 'ledger');
const ledgerPath = /^writing (.+)$/.exec(ledgerLine?.msg ?? '')?.[1];
if (!ledgerPath) { log(`no ledger line in tokendiet's startup log:\n${startupLines.join('\n')}`); process.exit(1); }
const threads = startupLines.map(l => { try { return JSON.parse(l); } catch { return null; } }).find(e => e?.event === 'listening')?.threads ?? 0;
const poolBound = threads * POOL_MAX_IDLE_PER_UPSTREAM;

// The expected bodies: each shape once, straight to the fake.
const shapes = requestShapes();
const expected = new Map();
for (const s of shapes) {
  const r = await rawRequest({port: fake.port, ...s.request, timeoutMs: 10000});
  if (r.status !== 200 || !r.complete) { log(`direct ${s.name}: status ${r.status}, complete ${r.complete}`); process.exit(1); }
  expected.set(s.name, r.body);
}

const mb = kb => +(kb / 1024).toFixed(1);
const rss = {start: rssKb(pid), peak: 0, end: 0, idle: 0};
const fds = {start: fdCount(pid), peak: 0, end: 0, idle: 0};
rss.peak = rss.start;
fds.peak = fds.start;
// tokendiet logs a line per request; the lines the handle keeps are dropped
// each second (only warnings and errors are counted) so the client's memory stays flat.
const logLevels = {warn: 0, error: 0};
const logExamples = [];
function sample() {
  rss.peak = Math.max(rss.peak, rssKb(pid));
  fds.peak = Math.max(fds.peak, fdCount(pid));
  for (const l of td.lines) {
    const level = /"level":"(warn|error)"/.exec(l)?.[1];
    if (!level) continue;
    logLevels[level]++;
    if (logExamples.length < 5) logExamples.push(l.slice(0, 400));
  }
  td.lines.length = 0;
}
const sampler = setInterval(sample, 1000);

log(`${opts.concurrency} clients for ${opts.seconds} s through tokendiet :${td.port} (pid ${pid}) to the fake :${fake.port}`);
const cpuAtStart = cpuSeconds(pid);
const t0 = performance.now();
const deadline = t0 + opts.seconds * 1000;
// Every 10 s: a progress line, and RSS kept for the summary (a leak climbs, a cache levels off).
const rssEvery10s = [];
const progress = setInterval(() => {
  const kb = rssKb(pid);
  rssEvery10s.push(mb(kb));
  log(`${Math.round((performance.now() - t0) / 1000)} s: ${stats.requests} requests, ${stats.ok} ok, rss ${mb(kb)} MB, ${fdCount(pid)} fds`);
}, 10000);
await Promise.all(Array.from({length: opts.concurrency}, (_, i) => client(i, td.port, shapes, expected, deadline)));
const loadSeconds = (performance.now() - t0) / 1000;
const loadCpu = cpuSeconds(pid) - cpuAtStart;
clearInterval(progress);
await sleep(200);  // the clients' FINs reach tokendiet
sample();
rss.end = rssKb(pid);
fds.end = fdCount(pid);
log(`clients stopped after ${loadSeconds.toFixed(1)} s; idle ${opts['idle-s']} s`);
await sleep(opts['idle-s'] * 1000);
clearInterval(sampler);
sample();
rss.idle = rssKb(pid);
fds.idle = fdCount(pid);
const idleSockets = socketsByRole(pid, td.port, fake.port);

// A graceful stop commits every queued ledger row; the state dir (and the
// ledger in it) goes with stop(), so the rows are counted in between.
td.proc.kill('SIGTERM');
const exit = await Promise.race([td.exit, sleep(40000).then(() => null)]);
let ledger = {total: -1, byProvider: {}};
try { ledger = ledgerRows(ledgerPath); } catch (e) { log(`reading the ledger: ${e.message}`); }
await td.stop();
await fake.stop();

const fdsOverStart = fds.idle - idleSockets.upstream - fds.start;
const summary = {
  concurrency: opts.concurrency, seconds: +loadSeconds.toFixed(1),
  requests: stats.requests, ok: stats.ok, mismatches: stats.mismatches, errors: stats.errors,
  requests_per_s: +(stats.requests / loadSeconds).toFixed(1),
  tokendiet_cpu_s: +loadCpu.toFixed(1), client_connections: stats.connections,
  rss_mb: {start: mb(rss.start), peak: mb(rss.peak), end: mb(rss.end), idle: mb(rss.idle), every_10s: rssEvery10s},
  fds: {start: fds.start, peak: fds.peak, end: fds.end, idle: fds.idle,
    idle_upstream_pool: idleSockets.upstream, idle_client_connections: idleSockets.clients, pool_bound: poolBound},
  ledger_rows: ledger.total, ledger_rows_match: ledger.total === stats.requests,
  ledger_rows_by_provider: ledger.byProvider, requests_by_provider: stats.byProvider, requests_by_shape: stats.byShape,
  tokendiet_exit: exit, log_lines: logLevels, log_examples: logExamples, failures,
};
const problems = [];
if (stats.requests === 0) problems.push('no request was sent');
if (stats.errors) problems.push(`${stats.errors} failed requests`);
if (stats.mismatches) problems.push(`${stats.mismatches} bodies differed from the upstream's`);
if (!summary.ledger_rows_match) problems.push(`ledger has ${ledger.total} rows for ${stats.requests} requests`);
if (fdsOverStart > opts['fd-slack']) problems.push(`${fdsOverStart} descriptors over the start (not counting the idle upstream pool)`);
if (idleSockets.upstream > poolBound) problems.push(`${idleSockets.upstream} idle upstream connections, above the pool's ${poolBound}`);
if (idleSockets.clients) problems.push(`${idleSockets.clients} client connections still open after the clients closed theirs`);
if (!exit || exit.code !== 0) problems.push(`tokendiet did not exit 0 on SIGTERM: ${JSON.stringify(exit)}`);
summary.problems = problems;
console.log(JSON.stringify(summary, null, 1));
process.exit(problems.length ? 1 : 0);
