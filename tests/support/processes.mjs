// Child processes for tests: the tokendiet binary under test and the fake
// upstream as its own process. Everything on 127.0.0.1, ephemeral ports,
// bounded waits, and every process stopped by its own handle.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import url from 'node:url';
import {rawRequest} from './http.mjs';
import {startFakeUpstream} from '../fake_upstream/server.mjs';

const here = path.dirname(url.fileURLToPath(import.meta.url));
export const SOURCE_DIR = process.env.TD_SOURCE_DIR || path.resolve(here, '..', '..');
export const FAKE_SERVER = path.join(SOURCE_DIR, 'tests', 'fake_upstream', 'server.mjs');

export function tokendietBin() {
  const bin = process.env.TOKENDIET_BIN || path.join(SOURCE_DIR, 'build', 'cli', 'tokendiet');
  if (!fs.existsSync(bin)) throw new Error(`tokendiet binary not found at ${bin} (set TOKENDIET_BIN)`);
  return bin;
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// A port nobody listens on right now (the kernel picks it; we release it).
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const {port} = s.address(); s.close(() => resolve(port)); });
  });
}

// A temp dir removed by the returned cleanup().
export function tempDir(prefix = 'td-test-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {dir, cleanup: () => fs.rmSync(dir, {recursive: true, force: true})};
}

// Wraps a child: collects its output lines, knows when it exited.
function supervise(proc, name) {
  const lines = [];
  const listeners = new Set();
  let exited = null;
  const exit = new Promise(r => proc.once('exit', (code, signal) => { exited = {code, signal}; r(exited); }));
  for (const stream of [proc.stdout, proc.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', d => {
      partial += d;
      const parts = partial.split('\n');
      partial = parts.pop();
      for (const l of parts) { lines.push(l); for (const f of listeners) f(l); }
    });
  }
  return {
    proc, lines, exit,
    get exited() { return exited; },
    output: () => lines.join('\n'),
    // Resolves with the first line (already seen or future) matching re.
    // The first line matching `re`, among the lines from index `from` on.
    waitForLine(re, timeoutMs = 5000, from = 0) {
      const hit = lines.slice(from).find(l => re.test(l));
      if (hit !== undefined) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const f = l => { if (re.test(l)) { done(); resolve(l); } };
        const t = setTimeout(() => { done(); reject(new Error(`${name}: no line matching ${re} within ${timeoutMs} ms; output:\n${lines.join('\n')}`)); }, timeoutMs);
        const done = () => { clearTimeout(t); listeners.delete(f); };
        listeners.add(f);
        exit.then(() => setTimeout(() => { if (listeners.has(f)) { done(); reject(new Error(`${name} exited (${JSON.stringify(exited)}) before a line matching ${re}; output:\n${lines.join('\n')}`)); } }, 50));
      });
    },
    async stop(timeoutMs = 5000) {
      if (exited) return exited;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const r = await exit;
      clearTimeout(t);
      return r;
    },
  };
}

// Starts `tokendiet serve` on a free 127.0.0.1 port and waits for /healthz.
//   upstreams: {openai: url, gemini: url, anthropic: url} → --upstream flags
//   config: YAML text written to a temp file and passed as --config
//   args: extra arguments; env: extra environment
// Returns {port, url, lines, output(), waitForLine(re), stop(), exit, proc}.
export async function startTokendiet({upstreams = {}, config = null, args = [], env = {}, healthTimeoutMs = 10000} = {}) {
  const bin = tokendietBin();
  let configDir = null;
  // The usage ledger and anything else stateful goes to a temp dir, never $HOME.
  const state = tempDir('td-state-');
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const argv = ['serve', '--listen', `127.0.0.1:${port}`];
    if (config != null) {
      configDir ??= tempDir('td-config-');
      const file = path.join(configDir.dir, 'tokendiet.yaml');
      fs.writeFileSync(file, config);
      argv.push('--config', file);
    }
    for (const [p, u] of Object.entries(upstreams)) argv.push('--upstream', `${p}=${u}`);
    argv.push(...args);
    const proc = spawn(bin, argv, {stdio: ['ignore', 'pipe', 'pipe'],
      env: {...process.env, XDG_STATE_HOME: state.dir, STATE_DIRECTORY: state.dir, ...env}});
    const s = supervise(proc, 'tokendiet');
    const deadline = Date.now() + healthTimeoutMs;
    let healthy = false;
    while (!s.exited && Date.now() < deadline) {
      try {
        const r = await rawRequest({port, path: '/healthz', timeoutMs: 1000});
        if (r.status === 200) { healthy = true; break; }
      } catch { /* not listening yet */ }
      await sleep(25);
    }
    if (healthy) {
      const stop = s.stop;
      return Object.assign(s, {port, url: `http://127.0.0.1:${port}`, argv, stateDir: state.dir,
        stop: async (ms) => { const r = await stop(ms); configDir?.cleanup(); state.cleanup(); return r; }});
    }
    await s.stop();
    // Someone took the port between freePort() and bind: try another.
    if (/address already in use|EADDRINUSE/i.test(s.output()) && attempt < 2) continue;
    configDir?.cleanup();
    state.cleanup();
    throw new Error(`tokendiet ${argv.join(' ')} did not become healthy (${JSON.stringify(s.exited)}); output:\n${s.output()}`);
  }
}

// The in-process fake upstream and a tokendiet with `config` sending every
// provider to it, for a test file's before(); stop() in its after().
export async function startFakeAndProxy(config) {
  const fake = await startFakeUpstream();
  const td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}, config});
  return {fake, td, stop: async () => { await td.stop(); await fake.close(); }};
}

// The fake upstream in its own process (for load: the test process stays free).
// args: extra server.mjs arguments. Returns {port, url, stop(), lines, ...}.
export async function startFakeProcess(args = [], {timeoutMs = 5000} = {}) {
  const proc = spawn(process.execPath, [FAKE_SERVER, ...args], {stdio: ['ignore', 'pipe', 'pipe']});
  const s = supervise(proc, 'fake upstream');
  const line = await s.waitForLine(/^LISTENING \d+$/, timeoutMs);
  const port = Number(line.split(' ')[1]);
  const tlsOn = args.includes('--tls-cert');
  return Object.assign(s, {port, url: `${tlsOn ? 'https' : 'http'}://127.0.0.1:${port}`});
}

// The TCP sockets process `pid` holds, from /proc: [{localPort, remotePort,
// state}], state as the kernel's hex code ('01' established, '08'
// CLOSE_WAIT, '0A' listening).
export function tcpSocketsOf(pid) {
  const inodes = new Set();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  const out = [];
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try { text = fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9])) continue;
      out.push({localPort: parseInt(f[1].split(':')[1], 16), remotePort: parseInt(f[2].split(':')[1], 16), state: f[3]});
    }
  }
  return out;
}

// A chat body of `size` bytes whose one user message is one letter repeated:
// a single pre-token piece as big as the body (the big-body probe).
export function letterChatBody(size, model = 'gpt-4o') {
  const head = `{"model":"${model}","messages":[{"role":"user","content":"`;
  const tail = '"}]}';
  return Buffer.concat([Buffer.from(head), Buffer.alloc(size - head.length - tail.length, 'a'), Buffer.from(tail)]);
}

// Starts tests/support/recall_test_proxy (the recall loop's proxy: the real
// network core and filters, the tool offered over the entries in `dir`, one
// file per id) in front of the fake upstream on `fakePort`; `bin` another
// build of it. Returns {proc, port}.
export async function startRecallTestProxy(fakePort, dir, bin = null) {
  const exe = bin || process.env.RECALL_TEST_PROXY || path.join(SOURCE_DIR, 'build', 'tests', 'recall_test_proxy');
  const proc = spawn(exe, [String(fakePort), dir], {stdio: ['ignore', 'pipe', 'inherit']});
  const port = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', d => {
      out += d;
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', code => reject(new Error(`recall_test_proxy exited ${code}`)));
  });
  return {proc, port};
}
