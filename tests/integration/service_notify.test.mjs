// `tokendiet serve` under a service manager (docs/design.md §Network): what it
// tells systemd through NOTIFY_SOCKET (a unix datagram socket this test binds
// with tests/support/notify_socket.cpp, as systemd would), and GET /readyz for
// load balancers: 200 while serving, 503 while a reload is applied and from
// SIGTERM on, while requests are still served for limits.drain_grace_ms.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {startFakeUpstream, startTokendiet, rawRequest, loadFixture, letterChatBody, tokendietBin, freePort, tempDir, SOURCE_DIR} from '../support/index.mjs';

const NOTIFY_SOCKET_BIN = process.env.NOTIFY_SOCKET_BIN || path.join(SOURCE_DIR, 'build', 'tests', 'notify_socket');
const sleep = ms => new Promise(r => setTimeout(r, ms));
const monotonicUsec = () => process.hrtime.bigint() / 1000n;  // CLOCK_MONOTONIC, as MONOTONIC_USEC

// systemd's end of the socket: every datagram as {raw, fields}.
async function notifySocket() {
  const {dir, cleanup} = tempDir('td-notify-');
  const socketPath = path.join(dir, 'notify.sock');
  const proc = spawn(NOTIFY_SOCKET_BIN, [socketPath], {stdio: ['pipe', 'pipe', 'inherit']});
  const messages = [];
  const waiters = new Set();
  const lines = readline.createInterface({input: proc.stdout});
  await new Promise((resolve, reject) => {
    proc.once('exit', code => reject(new Error(`notify_socket exited ${code}`)));
    lines.on('line', line => {
      if (line === 'BOUND') return resolve();
      const raw = line.split('\\n');
      const fields = Object.fromEntries(raw.map(kv => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
      messages.push({raw, fields, at: Date.now()});
      for (const w of waiters) w();
    });
  });
  return {
    path: socketPath, messages,
    // The first message from index `from` on for which pred(fields) holds.
    async next(pred, from = 0, timeoutMs = 10000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = messages.findIndex((m, j) => j >= from && pred(m.fields));
        if (i >= 0) return {index: i, ...messages[i]};
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no notify message matching ${pred} after #${from}; got:\n${messages.map(m => m.raw.join(' | ')).join('\n')}`);
        await new Promise(r => { const f = () => { waiters.delete(f); clearTimeout(t); r(); }; const t = setTimeout(f, left); waiters.add(f); });
      }
    },
    async stop() { proc.stdin.end(); proc.kill(); cleanup(); },
  };
}

// The log arrives through a pipe of its own: give it a moment.
async function logged(text, re) {
  for (let i = 0; i < 100 && !re.test(text()); i++) await sleep(20);
  assert.match(text(), re);
}

const readyz = port => rawRequest({port, path: '/readyz', timeoutMs: 5000});

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake?.close(); });

test('READY=1 once the listener accepts; RELOADING=1 + MONOTONIC_USEC then READY=1 around a valid and an invalid reload', async () => {
  const notify = await notifySocket();
  const {dir, cleanup} = tempDir('td-svc-');
  const config = path.join(dir, 'tokendiet.yaml');
  fs.writeFileSync(config, 'limits:\n  drain_timeout_ms: 5s\n');
  const port = await freePort();
  const proc = spawn(tokendietBin(), ['serve', '--config', config, '--listen', `127.0.0.1:${port}`, '--upstream', `openai=${fake.url}`],
    {stdio: ['ignore', 'ignore', 'pipe'], env: {...process.env, NOTIFY_SOCKET: notify.path, XDG_STATE_HOME: dir, STATE_DIRECTORY: dir}});
  let log = '';
  proc.stderr.on('data', d => { log += d; });
  const exit = new Promise(r => proc.once('exit', (code, signal) => r({code, signal})));
  try {
    const ready = await notify.next(f => f.READY === '1');
    // No retry: when READY=1 arrives, the listener takes the connection.
    const r = await readyz(port);
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'ok');
    assert.match(ready.fields.STATUS, new RegExp(`^serving on 127\\.0\\.0\\.1:${port} with \\d+ I/O threads?$`));
    assert.equal(ready.index, 0, 'READY=1 is the first message');

    // A valid file: applied, then READY=1 again.
    fs.writeFileSync(config, 'limits:\n  drain_timeout_ms: 6s\n');
    let before = monotonicUsec();
    proc.kill('SIGHUP');
    let reloading = await notify.next(f => f.RELOADING === '1', ready.index + 1);
    let after = monotonicUsec();
    const usec = BigInt(reloading.fields.MONOTONIC_USEC);
    assert.ok(usec >= before && usec <= after, `MONOTONIC_USEC ${usec} not within [${before}, ${after}]`);
    assert.match(reloading.fields.STATUS, /^reloading .*tokendiet\.yaml$/);
    let done = await notify.next(f => f.READY === '1', reloading.index + 1);
    assert.match(done.fields.STATUS, /; configuration reloaded$/);
    await logged(() => log, /"event":"reload".*"configuration reloaded"/);
    assert.equal((await readyz(port)).status, 200);

    // A file with an error: rejected, the running config kept, READY=1 all the same.
    fs.writeFileSync(config, 'limits:\n  drain_timeout_ms: 6s\nbogus: 1\n');
    before = monotonicUsec();
    proc.kill('SIGHUP');
    reloading = await notify.next(f => f.RELOADING === '1', done.index + 1);
    after = monotonicUsec();
    assert.ok(BigInt(reloading.fields.MONOTONIC_USEC) >= before && BigInt(reloading.fields.MONOTONIC_USEC) <= after);
    done = await notify.next(f => f.READY === '1', reloading.index + 1);
    assert.match(done.fields.STATUS, /reload rejected, running config kept: .*tokendiet\.yaml:3:1: unknown key 'bogus'/);
    await logged(() => log, /"event":"reload".*tokendiet\.yaml:3:1: unknown key 'bogus'/);
    assert.equal((await readyz(port)).status, 200);
    const proxied = await rawRequest({port, method: 'POST', path: '/v1/chat/completions', body: '{}', headers: {'content-type': 'application/json'}});
    assert.equal(proxied.status, 200, 'still serving with the running config');

    proc.kill('SIGTERM');
    assert.deepEqual(await exit, {code: 0, signal: null});
    const stopping = await notify.next(f => f.STOPPING === '1', done.index + 1);
    assert.match(stopping.fields.STATUS, /^draining: \d+ open connections, at most 6000 ms$/);
    assert.ok(!notify.messages.some(m => m.fields.WATCHDOG), 'no WATCHDOG=1 without WATCHDOG_USEC');
  } finally {
    proc.kill('SIGKILL');
    await notify.stop();
    cleanup();
  }
});

test('/readyz answers 503 while a reload is applied; /healthz and requests go on', async () => {
  const notify = await notifySocket();
  const {dir, cleanup} = tempDir('td-svc-');
  // The config is a FIFO: the reload waits, reading it, until the test writes.
  const fifo = path.join(dir, 'tokendiet.yaml');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const port = await freePort();
  const proc = spawn(tokendietBin(), ['serve', '--config', fifo, '--listen', `127.0.0.1:${port}`, '--upstream', `openai=${fake.url}`],
    {stdio: ['ignore', 'ignore', 'inherit'], env: {...process.env, NOTIFY_SOCKET: notify.path, XDG_STATE_HOME: dir, STATE_DIRECTORY: dir}});
  try {
    await fs.promises.writeFile(fifo, 'threads: 1\n');
    const ready = await notify.next(f => f.READY === '1');
    assert.equal((await readyz(port)).status, 200);
    proc.kill('SIGHUP');
    const reloading = await notify.next(f => f.RELOADING === '1', ready.index + 1);
    const during = await readyz(port);
    assert.equal(during.status, 503);
    assert.equal(during.body.toString(), 'reloading');
    assert.equal((await rawRequest({port, path: '/healthz'})).status, 200, 'liveness is not readiness');
    const proxied = await rawRequest({port, method: 'POST', path: '/v1/chat/completions', body: '{}', headers: {'content-type': 'application/json'}});
    assert.equal(proxied.status, 200, 'requests are served during a reload');
    await fs.promises.writeFile(fifo, 'threads: 1\n');
    await notify.next(f => f.READY === '1', reloading.index + 1);
    assert.equal((await readyz(port)).status, 200);
  } finally {
    proc.kill('SIGKILL');
    await notify.stop();
    cleanup();
  }
});

test('SIGTERM: STOPPING=1, /readyz 503 through drain_grace_ms while requests are still served, then the drain; the stream finishes, exit 0', async () => {
  const notify = await notifySocket();
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: 'limits:\n  drain_grace_ms: 1s\n',
    env: {NOTIFY_SOCKET: notify.path}});
  try {
    const ready = await notify.next(f => f.READY === '1');
    // A stream of about 3 s, longer than the grace.
    const pending = rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: '{"stream":true,"stream_options":{"include_usage":true}}',
      headers: {'content-type': 'application/json', 'x-fake-mode': 'slow', 'x-fake-first-ms': '50', 'x-fake-gap-ms': '100',
        'x-fake-fixture': 'openai-chat-stream-long'}, timeoutMs: 20000});
    await fake.waitForRequests(1);
    const sent = Date.now();
    td.proc.kill('SIGTERM');
    const grace = await notify.next(f => f.STOPPING === '1', ready.index + 1);
    assert.match(grace.fields.STATUS, /^stopping: not ready, still serving for 1000 ms, then draining$/);
    const r = await readyz(td.port);
    assert.equal(r.status, 503);
    assert.equal(r.body.toString(), 'stopping');
    assert.equal(r.headers.connection, 'close');
    assert.equal((await rawRequest({port: td.port, path: '/healthz'})).status, 200);
    // Still served during the grace, each answer closing its connection.
    const served = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: '{}', headers: {'content-type': 'application/json'}});
    assert.equal(served.status, 200);
    assert.equal(served.headers.connection, 'close');
    const drain = await notify.next(f => f.STOPPING === '1', grace.index + 1);
    assert.ok(Date.now() - sent >= 900, `the drain began ${Date.now() - sent} ms after SIGTERM, before the grace`);
    assert.match(drain.fields.STATUS, /^draining: 1 open connections, at most 30000 ms$/);
    await assert.rejects(readyz(td.port), 'the listener is closed once draining');
    const stream = await pending;
    assert.ok(stream.complete, `stream cut by the stop: ${stream.error}`);
    assert.ok(stream.body.equals(loadFixture('openai-chat-stream-long').body));
    let timer;
    const exit = await Promise.race([td.exit, new Promise(res => { timer = setTimeout(() => res('still running'), 10000); })]);
    clearTimeout(timer);
    assert.deepEqual(exit, {code: 0, signal: null});
  } finally {
    await td.stop();
    await notify.stop();
  }
});

test('WATCHDOG=1 every half WATCHDOG_USEC from the event loops', async () => {
  const notify = await notifySocket();
  const td = await startTokendiet({upstreams: {openai: fake.url}, args: ['--threads', '2'],
    env: {NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '200000'}});
  try {
    let last = await notify.next(f => f.WATCHDOG === '1');
    const first = last;
    for (let i = 0; i < 4; i++) last = await notify.next(f => f.WATCHDOG === '1', last.index + 1);
    // Five pings 100 ms apart: not a burst.
    assert.ok(last.at - first.at >= 300, `five pings within ${last.at - first.at} ms`);
  } finally {
    await td.stop();
    await notify.stop();
  }
});

test('a wedged I/O thread stops the WATCHDOG=1 pings until it runs again', async () => {
  const notify = await notifySocket();
  // A big body dieted on the I/O thread itself (no diet-thread offload): the
  // thread runs nothing else for about a second.
  const td = await startTokendiet({upstreams: {openai: fake.url}, args: ['--threads', '2'],
    config: 'limits:\n  diet_offload_bytes: 64GiB\n', env: {NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '200000'}});
  try {
    await notify.next(f => f.WATCHDOG === '1');
    // Two connections, accepted one after the other: one lands on each I/O
    // thread, so one wedges a thread other than the one sending the pings.
    for (let i = 0; i < 2; i++) {
      // Each its own letter: the diet's caches would make a repeat quick.
      const body = letterChatBody(24 << 20);
      body.fill('ab'[i], body.indexOf('"content":"') + 11, body.length - 4);
      const from = notify.messages.length;
      const start = Date.now();
      const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body,
        headers: {'content-type': 'application/json'}, timeoutMs: 60000});
      assert.equal(r.status, 200);
      const times = [start, ...notify.messages.slice(from).filter(m => m.fields.WATCHDOG === '1').map(m => m.at), Date.now()];
      const gap = Math.max(...times.slice(1).map((t, j) => t - times[j]));
      if (process.env.TD_DEBUG) console.error(i, gap, times.length, td.lines.filter(l => l.includes('"request"')).at(-1));
      assert.ok(gap >= 400, `request ${i}: the pings went on every ${gap} ms at most while a thread was wedged`);
      // And they resume.
      await notify.next(f => f.WATCHDOG === '1', notify.messages.length);
    }
    await logged(() => td.output(), /"event":"watchdog".*I\/O thread 1 has not run what was posted to it 100 ms ago/);
  } finally {
    await td.stop();
    await notify.stop();
  }
});
