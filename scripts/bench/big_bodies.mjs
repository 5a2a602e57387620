// Big request bodies against everyone else: N bodies of SIZE bytes in flight
// at once through tokendiet while another connection asks /healthz every
// 10 ms; tokendiet's RSS is sampled throughout and again after an idle wait.
//
//   node scripts/bench/big_bodies.mjs [--bodies 4] [--mb 31] [--kind letter|trajectory]
//        [--idle-s 30] [--rounds 1]
//
// letter:     one user message of SIZE copies of one letter (the probe)
// trajectory: a recorded agent session (tests/fixtures/replay) whose turns are
//             repeated up to SIZE: tool outputs to snip, counted by a real tokenizer
//
// Prints one JSON object: healthz latency (p50, p99, max ms while the bodies
// were in flight), peak RSS (VmHWM), RSS after the bodies and after the idle
// wait, and the bodies' statuses and times. TOKENDIET_BIN picks the binary.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {startTokendiet, startFakeProcess, letterChatBody, SOURCE_DIR} from '../../tests/support/index.mjs';

const opts = {bodies: 4, mb: 31, kind: 'letter', 'idle-s': 30, rounds: 1};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const k = argv[i].replace(/^--/, '');
  if (!(k in opts) || i + 1 >= argv.length) { console.error(`usage: big_bodies.mjs [--bodies N] [--mb M] [--kind letter|trajectory] [--idle-s S] [--rounds R]`); process.exit(2); }
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

function rssKb(pid, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
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

// /healthz on one keep-alive connection, one at a time, every 10 ms until
// stopped, from a process of its own: this one is busy sending the bodies.
const PROBE = `
const http = require('node:http');
const agent = new http.Agent({keepAlive: true, maxSockets: 1});
const times = [];
let running = true;
process.stdin.on('data', () => { running = false; });
(async () => {
  while (running) {
    const t0 = performance.now();
    await new Promise(resolve => {
      http.get({host: '127.0.0.1', port: Number(process.argv[1]), path: '/healthz', agent}, res => {
        res.on('data', () => {});
        res.on('end', resolve);
      }).on('error', resolve);
    });
    times.push(performance.now() - t0);
    await new Promise(r => setTimeout(r, 10));
  }
  process.stdout.write(JSON.stringify(times));
  process.exit(0);
})();`;

function pollHealth(port) {
  const child = spawn(process.execPath, ['-e', PROBE, String(port)], {stdio: ['pipe', 'pipe', 'inherit']});
  let out = '';
  child.stdout.on('data', d => { out += d; });
  const exited = new Promise(resolve => child.on('exit', resolve));
  return {stop: async () => { child.stdin.write('stop\n'); await exited; return JSON.parse(out || '[]'); }};
}

const pct = (sorted, p) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : 0;
const mb = kb => Math.round(kb / 1024);

const fake = await startFakeProcess(['--no-record']);
const td = await startTokendiet({upstreams: {openai: fake.url}});
const pid = td.proc.pid;
try {
  const body = opts.kind === 'trajectory' ? trajectoryBody() : letterChatBody(size);
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
        max_ms: +(times[times.length - 1] ?? 0).toFixed(1)}});
  }
  const rssAfter = rssKb(pid, 'VmRSS');
  await new Promise(res => setTimeout(res, opts['idle-s'] * 1000));
  console.log(JSON.stringify({
    kind: opts.kind, bodies: opts.bodies, body_mb: +(body.length / 1048576).toFixed(1), rounds,
    rss_mb: {start: mb(rssStart), peak_hwm: mb(rssKb(pid, 'VmHWM')), peak_sampled: mb(sampledPeak),
      after: mb(rssAfter), [`after_idle_${opts['idle-s']}s`]: mb(rssKb(pid, 'VmRSS'))},
    peak_per_body_byte: +((rssKb(pid, 'VmHWM') - rssStart) * 1024 / (body.length * opts.bodies)).toFixed(2),
  }, null, 1));
} finally {
  await td.stop();
  await fake.stop();
}
