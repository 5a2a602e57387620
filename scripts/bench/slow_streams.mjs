// Many concurrent slow SSE streams through tokendiet: does any of them stall?
//
//   node scripts/bench/slow_streams.mjs --tokendiet BUILD/tokendiet [--threads 1]
//        [--streams 512] [--events 40] [--gap-ms 50] [--first-ms 300] [--ramp-ms 1000] [--no-direct]
//   node scripts/bench/slow_streams.mjs --target http://127.0.0.1:PORT   (a proxy already running
//        in front of the fake upstream: tests/fake_upstream/server.mjs)
//
// Starts the fake upstream (tests/fake_upstream/server.mjs, its own process) and,
// with --tokendiet, `tokendiet serve --threads N` in front of it; both on
// 127.0.0.1, ephemeral ports, stopped at the end. Each stream asks the fake for
// an OpenAI chat stream of --events events, the first after --first-ms, then
// one every --gap-ms. For every stream it stamps the arrival of each complete
// event, and reports the largest gap between consecutive events (the upstream's
// own gap is --gap-ms: anything well above it is a stall), percentiles of the
// gaps, time to first event, and the proxy's RSS idle (before any request) and
// at its peak. The same load straight to the fake first gives the baseline: the
// jitter of the client and the fake themselves on this machine.
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';
import {spawn} from 'node:child_process';

const here = path.dirname(url.fileURLToPath(import.meta.url));
const FAKE = path.resolve(here, '..', '..', 'tests', 'fake_upstream', 'server.mjs');

const opt = {streams: 512, events: 40, gapMs: 50, firstMs: 300, rampMs: 1000, threads: 1, direct: true, tokendiet: null, target: null, json: false};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i], v = () => argv[++i];
  if (a === '--streams') opt.streams = Number(v());
  else if (a === '--events') opt.events = Number(v());
  else if (a === '--gap-ms') opt.gapMs = Number(v());
  else if (a === '--first-ms') opt.firstMs = Number(v());
  else if (a === '--ramp-ms') opt.rampMs = Number(v());
  else if (a === '--threads') opt.threads = Number(v());
  else if (a === '--tokendiet') opt.tokendiet = v();
  else if (a === '--target') opt.target = v();
  else if (a === '--no-direct') opt.direct = false;
  else if (a === '--json') opt.json = true;
  else if (a === '--help' || a === '-h') {
    console.log(fs.readFileSync(url.fileURLToPath(import.meta.url), 'utf8').split('\n').filter(l => l.startsWith('//')).map(l => l.slice(3)).join('\n'));
    process.exit(0);
  } else { console.error(`unknown argument ${a}`); process.exit(2); }
}
if (!opt.tokendiet && !opt.target) { console.error('give --tokendiet BIN or --target URL (see --help)'); process.exit(2); }

const sleep = ms => new Promise(r => setTimeout(r, ms));
const children = [];
function start(cmd, args, env = {}) {
  const p = spawn(cmd, args, {stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, ...env}});
  children.push(p);
  let out = '';
  p.stdout.on('data', d => { out += d; });
  p.stderr.on('data', d => { out += d; });
  return {proc: p, output: () => out};
}
function stopAll() { for (const p of children) if (p.exitCode === null) p.kill('SIGTERM'); }
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

function freePort() {
  return new Promise(res => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
}
async function waitFor(check, what, ms = 10000) {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (await check()) return; await sleep(50); }
  throw new Error(`timed out waiting for ${what}`);
}
const canConnect = port => new Promise(res => {
  const s = net.connect(port, '127.0.0.1', () => { s.destroy(); res(true); });
  s.on('error', () => res(false));
});
function rssKb(pid) {
  try { return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]); } catch { return 0; }
}

// One stream: resolves with {ok, firstMs, gaps[], events}.
function stream(port, t0) {
  return new Promise(resolve => {
    const body = '{"model":"gpt-5.1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}';
    const req = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      `Authorization: Bearer sk-bench-0000000000000000\r\nx-fake-mode: slow\r\nx-fake-fixture: openai-chat-stream-long\r\n` +
      `x-fake-repeat: ${opt.events}\r\nx-fake-first-ms: ${opt.firstMs}\r\nx-fake-gap-ms: ${opt.gapMs}\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const s = net.connect(port, '127.0.0.1');
    let sentAt = 0, last = 0, events = 0, status = 0, first = null;
    let head = '', chunked = null, buf = '', tail = '';
    const gaps = [];
    // Counts complete events (blank-line terminated) in de-chunked body text.
    const onBody = (text, now) => {
      text = tail + text;
      let n = 0, at = 0;
      for (;;) { const j = text.indexOf('\n\n', at); if (j < 0) break; n++; at = j + 2; }
      tail = text.slice(Math.max(at, text.length - 1));
      for (let k = 0; k < n; k++) {
        if (events === 0) first = now - sentAt; else gaps.push(now - last);
        events++;
        last = now;
      }
    };
    let left = 0;  // bytes left in the current chunk
    s.on('connect', () => { sentAt = performance.now(); s.write(req); });
    s.setEncoding('latin1');
    s.on('data', d => {
      const now = performance.now();
      if (chunked === null) {
        head += d;
        const i = head.indexOf('\r\n\r\n');
        if (i < 0) return;
        status = Number(head.slice(9, 12));
        chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head.slice(0, i));
        d = head.slice(i + 4);
      }
      if (!chunked) return onBody(d, now);
      buf += d;
      let out = '';
      for (;;) {
        if (left > 0) {
          const take = buf.slice(0, left);
          out += take; left -= take.length; buf = buf.slice(take.length);
          if (left > 0) break;
          left = -2;  // the CRLF after the chunk
        }
        if (left < 0) { if (buf.length < 2) break; buf = buf.slice(2); left = 0; }
        const j = buf.indexOf('\r\n');
        if (j < 0) break;
        const size = parseInt(buf.slice(0, j), 16);
        buf = buf.slice(j + 2);
        if (!(size > 0)) { buf = ''; break; }
        left = size;
      }
      onBody(out, now);
    });
    const done = err => resolve({ok: !err && status === 200 && events === opt.events, status, events, firstMs: first, gaps, err});
    s.on('error', e => done(e.code || String(e)));
    s.on('close', () => done(null));
  });
}

async function run(port, label, pid) {
  const t0 = performance.now();
  const all = [];
  let peak = pid ? rssKb(pid) : 0;
  const sampler = pid ? setInterval(() => { peak = Math.max(peak, rssKb(pid)); }, 100) : null;
  for (let i = 0; i < opt.streams; i++) {
    all.push(stream(port, t0));
    if (opt.rampMs > 0 && i % 16 === 15) await sleep(opt.rampMs * 16 / opt.streams);
  }
  const res = await Promise.all(all);
  if (sampler) clearInterval(sampler);
  const gaps = res.flatMap(r => r.gaps).sort((a, b) => a - b);
  const firsts = res.map(r => r.firstMs).filter(x => x != null).sort((a, b) => a - b);
  const pct = (arr, p) => arr.length ? arr[Math.min(arr.length - 1, Math.floor(p * arr.length))] : NaN;
  const errs = {};
  for (const r of res) if (!r.ok) { const k = r.err || `status ${r.status}, ${r.events}/${opt.events} events`; errs[k] = (errs[k] || 0) + 1; }
  return {
    label, streams: opt.streams, ok: res.filter(r => r.ok).length, events: res.reduce((n, r) => n + r.events, 0),
    expected_events: opt.streams * opt.events, gap_ms: opt.gapMs,
    max_gap_ms: gaps.at(-1) ?? NaN, p999_gap_ms: pct(gaps, 0.999), p99_gap_ms: pct(gaps, 0.99), p50_gap_ms: pct(gaps, 0.5),
    first_event_p50_ms: pct(firsts, 0.5), first_event_max_ms: firsts.at(-1) ?? NaN,
    wall_ms: performance.now() - t0, rss_peak_kb: peak || null, errors: errs,
  };
}

const fmt = x => (typeof x === 'number' ? x.toFixed(1) : String(x));
const results = [];
let tdPid = null, idleKb = null;
try {
  const fakePort = await freePort();
  const fake = start(process.execPath, [FAKE, '--port', String(fakePort), '--no-record']);
  await waitFor(() => /LISTENING/.test(fake.output()), 'the fake upstream');
  let proxyPort;
  if (opt.tokendiet) {
    proxyPort = await freePort();
    const stateDir = fs.mkdtempSync('/tmp/td-slow-');
    process.on('exit', () => fs.rmSync(stateDir, {recursive: true, force: true}));
    const td = start(opt.tokendiet, ['serve', '--listen', `127.0.0.1:${proxyPort}`, '--threads', String(opt.threads),
      '--upstream', `openai=http://127.0.0.1:${fakePort}`], {XDG_STATE_HOME: stateDir});
    tdPid = td.proc.pid;
    await waitFor(() => canConnect(proxyPort), `tokendiet on ${proxyPort}\n${td.output()}`);
    await sleep(500);
    idleKb = rssKb(tdPid);
  } else {
    proxyPort = Number(new URL(opt.target).port);
  }
  if (opt.direct) results.push(await run(fakePort, 'direct (fake upstream)', null));
  results.push(await run(proxyPort, opt.tokendiet ? `tokendiet --threads ${opt.threads}` : opt.target, tdPid));
} finally { stopAll(); }

if (opt.json) console.log(JSON.stringify({idle_rss_kb: idleKb, results}, null, 1));
else {
  console.log(`${opt.streams} concurrent streams x ${opt.events} events, first after ${opt.firstMs} ms, then every ${opt.gapMs} ms (upstream pace)`);
  console.log('| target | streams ok | events | max gap ms | p99.9 gap ms | p99 gap ms | p50 gap ms | first event p50 / max ms | RSS peak MB |');
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of results)
    console.log(`| ${r.label} | ${r.ok}/${r.streams} | ${r.events}/${r.expected_events} | ${fmt(r.max_gap_ms)} | ${fmt(r.p999_gap_ms)} | ${fmt(r.p99_gap_ms)} | ${fmt(r.p50_gap_ms)} | ${fmt(r.first_event_p50_ms)} / ${fmt(r.first_event_max_ms)} | ${r.rss_peak_kb ? (r.rss_peak_kb / 1024).toFixed(1) : '-'} |`);
  if (idleKb != null) console.log(`\ntokendiet idle RSS (after start, before any request): ${(idleKb / 1024).toFixed(1)} MB`);
  for (const r of results) if (Object.keys(r.errors).length) console.log(`${r.label} failures: ${JSON.stringify(r.errors)}`);
}
process.exit(results.every(r => r.ok === r.streams) ? 0 : 1);
