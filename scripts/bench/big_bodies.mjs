// Big request bodies against everyone else: N bodies of SIZE bytes in flight
// at once through tokendiet while other connections ask /healthz every few
// ms; tokendiet's RSS is sampled throughout and again after an idle wait.
//
//   node scripts/bench/big_bodies.mjs [--bodies 4] [--mb 31] [--kind letter|trajectory|agent]
//        [--idle-s 30] [--rounds 1] [--probes 1] [--every-ms 10] [--threads 0]
//
// letter:     one user message of SIZE copies of one letter (the probe)
// trajectory: a recorded agent session (tests/fixtures/replay) whose turns are
//             repeated up to SIZE: tool outputs to snip, counted by a real tokenizer
// agent:      the same session as an agent sends it: its tool calls and their
//             ids (made unique per repetition) and the tool definition kept
//
// --probes P keep-alive connections, each asking /healthz, one at a time,
// --every-ms apart (connections go round-robin to the I/O threads, so P >= the
// thread count watches every thread); --threads: serve's --threads (0: its default);
// --budget-mb: limits.big_bodies_in_flight_bytes in MiB (-1: the default; 0: no bound);
// --stream 1: the agent body asks for a stream (as agents do), without include_usage.
//
// Prints one JSON object: healthz latency over all probes (p50, p99, max ms
// while the bodies were in flight, and how many waits passed 50 and 200 ms),
// peak RSS (VmHWM), RSS after the bodies and after the idle wait, and the
// bodies' statuses and times. TOKENDIET_BIN picks the binary.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {startTokendiet, startFakeProcess, letterChatBody, SOURCE_DIR} from '../../tests/support/index.mjs';

const opts = {bodies: 4, mb: 31, kind: 'letter', 'idle-s': 30, rounds: 1, probes: 1, 'every-ms': 10, threads: 0, 'budget-mb': -1, stream: 0};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const k = argv[i].replace(/^--/, '');
  if (!(k in opts) || i + 1 >= argv.length) { console.error(`usage: big_bodies.mjs [--bodies N] [--mb M] [--kind letter|trajectory|agent] [--idle-s S] [--rounds R] [--probes P] [--every-ms MS] [--threads T] [--budget-mb B] [--stream 0|1]`); process.exit(2); }
  opts[k] = k === 'kind' ? argv[++i] : Number(argv[++i]);
}
const size = Math.round(opts.mb * 1024 * 1024);

function trajectoryBody() {
  const file = path.join(SOURCE_DIR, 'tests', 'fixtures', 'replay', 'mini-swe-agent-1.json');
  const messages = JSON.parse(fs.readFileSync(file, 'utf8')).messages.map(m => ({role: m.role, content: m.content}));
  const [system, task, ...turns] = messages;
  const out = [system, task];
  let bytes = JSON.stringify(out).length + 40;
  for (let i = 0; bytes < size; i = (i + 1) % turns.length) {
    const m = turns[i];
    if (i === 0 && out.length > 2 && out[out.length - 1].role === m.role) continue;
    out.push(m);
    bytes += JSON.stringify(m).length + 1;
  }
  if (out[out.length - 1].role !== 'user') out.push({role: 'user', content: 'go on'});
  return Buffer.from(JSON.stringify({model: 'gpt-4o', messages: out}));
}

// The session as an agent sends it (OpenAI chat): assistant tool calls, tool
// results answering them by id, the shell tool defined; repeated up to SIZE.
function agentBody() {
  const file = path.join(SOURCE_DIR, 'tests', 'fixtures', 'replay', 'mini-swe-agent-1.json');
  const [system, task, ...turns] = JSON.parse(fs.readFileSync(file, 'utf8')).messages;
  const first = turns.findIndex(m => m.role === 'assistant');
  const cycle = turns.slice(first);
  const out = [system, task, ...turns.slice(0, first)];
  let bytes = JSON.stringify(out).length + 400;
  for (let rep = 0; bytes < size; rep++) {
    for (const m of cycle) {
      const c = {...m};
      if (c.tool_calls) c.tool_calls = c.tool_calls.map(t => ({...t, id: `${t.id}_${rep}`}));
      if (c.tool_call_id) c.tool_call_id = `${c.tool_call_id}_${rep}`;
      out.push(c);
      bytes += JSON.stringify(c).length + 1;
      if (bytes >= size && c.role !== 'assistant') break;
    }
  }
  if (out[out.length - 1].role !== 'user' && out[out.length - 1].role !== 'tool') out.push({role: 'user', content: 'go on'});
  const tools = [{type: 'function', function: {name: 'bash', description: 'Run a shell command',
    parameters: {type: 'object', properties: {command: {type: 'string'}}, required: ['command']}}}];
  return Buffer.from(JSON.stringify({model: 'gpt-4o', messages: out, tools}));
}

// 0 once the process is gone (the run then reports how tokendiet ended).
function rssKb(pid, field) {
  let text = '';
  try { text = fs.readFileSync(`/proc/${pid}/status`, 'utf8'); } catch { return 0; }
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

function post(port, body) {
  return new Promise(resolve => {
    const t0 = performance.now();
    const req = http.request({host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST',
      headers: {'content-type': 'application/json', 'content-length': body.length, authorization: 'Bearer sk-bench-0000'},
      agent: false}, res => {
      res.on('data', () => {});
      res.on('end', () => resolve({status: res.statusCode, ms: Math.round(performance.now() - t0)}));
    });
    req.on('error', e => resolve({status: 0, error: e.message, ms: Math.round(performance.now() - t0)}));
    req.end(body);
  });
}

// /healthz on P keep-alive connections, each one request at a time, EVERY ms
// apart, until stopped, from a process of its own: this one is busy sending
// the bodies. The connections are opened before the bodies.
const PROBE = `
const http = require('node:http');
const [port, probes, every] = process.argv.slice(1).map(Number);
const times = [];
let running = true;
process.stdin.on('data', () => { running = false; });
async function probe() {
  const agent = new http.Agent({keepAlive: true, maxSockets: 1});
  while (running) {
    const t0 = performance.now();
    await new Promise(resolve => {
      http.get({host: '127.0.0.1', port, path: '/healthz', agent}, res => {
        res.on('data', () => {});
        res.on('end', resolve);
      }).on('error', resolve);
    });
    times.push(performance.now() - t0);
    await new Promise(r => setTimeout(r, every));
  }
}
Promise.all(Array.from({length: probes}, probe)).then(() => {
  // Exit once written: a pipe takes the output asynchronously.
  process.stdout.write(JSON.stringify(times.map(t => +t.toFixed(2))), () => process.exit(0));
});`;

function pollHealth(port) {
  const child = spawn(process.execPath, ['-e', PROBE, String(port), String(opts.probes), String(opts['every-ms'])],
                      {stdio: ['pipe', 'pipe', 'inherit']});
  let out = '';
  child.stdout.on('data', d => { out += d; });
  const exited = new Promise(resolve => child.on('exit', resolve));
  return {stop: async () => { child.stdin.write('stop\n'); await exited; return JSON.parse(out || '[]'); }};
}

const pct = (sorted, p) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : 0;
const mb = kb => Math.round(kb / 1024);

const fake = await startFakeProcess(['--no-record']);
const td = await startTokendiet({upstreams: {openai: fake.url}, args: opts.threads ? ['--threads', String(opts.threads)] : [],
  config: opts['budget-mb'] >= 0 ? `limits:\n  big_bodies_in_flight_bytes: ${opts['budget-mb']}MiB\n` : null});
const pid = td.proc.pid;
try {
  const body = opts.kind === 'trajectory' ? trajectoryBody() : opts.kind === 'agent' ? agentBody() : letterChatBody(size);
  const rssStart = rssKb(pid, 'VmRSS');
  const rounds = [];
  let sampledPeak = 0;
  for (let r = 0; r < opts.rounds; r++) {
    const sampler = setInterval(() => { sampledPeak = Math.max(sampledPeak, rssKb(pid, 'VmRSS')); }, 20);
    const health = pollHealth(td.port);
    await new Promise(res => setTimeout(res, 300));
    const t0 = performance.now();
    const results = await Promise.all(Array.from({length: opts.bodies}, () => post(td.port, body)));
    const wall = Math.round(performance.now() - t0);
    const times = (await health.stop()).sort((a, b) => a - b);
    clearInterval(sampler);
    rounds.push({statuses: results.map(x => x.status), body_ms: results.map(x => x.ms), wall_ms: wall,
      healthz: {n: times.length, p50_ms: +pct(times, 0.5).toFixed(1), p99_ms: +pct(times, 0.99).toFixed(1),
        max_ms: +(times[times.length - 1] ?? 0).toFixed(1),
        over_50_ms: times.filter(t => t > 50).length, over_200_ms: times.filter(t => t > 200).length}});
  }
  const rssAfter = rssKb(pid, 'VmRSS');
  await new Promise(res => setTimeout(res, opts['idle-s'] * 1000));
  console.log(JSON.stringify({
    kind: opts.kind, bodies: opts.bodies, probes: opts.probes, every_ms: opts['every-ms'], budget_mb: opts['budget-mb'], body_mb: +(body.length / 1048576).toFixed(1), rounds,
    rss_mb: {start: mb(rssStart), peak_hwm: mb(rssKb(pid, 'VmHWM')), peak_sampled: mb(sampledPeak),
      after: mb(rssAfter), [`after_idle_${opts['idle-s']}s`]: mb(rssKb(pid, 'VmRSS'))},
    peak_per_body_byte: +((rssKb(pid, 'VmHWM') - rssStart) * 1024 / (body.length * opts.bodies)).toFixed(2),
  }, null, 1));
} finally {
  if (td.exited) console.error(`tokendiet ended during the run: ${JSON.stringify(td.exited)}\n${td.output().slice(-4000)}`);
  await td.stop();
  await fake.stop();
}
