// Flow control: tokendiet never reads from the upstream much faster than the
// client drains (backpressure), and its header / idle timeouts end exchanges
// whose upstream went silent.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import {startFakeUpstream, startTokendiet, rawRequest} from '../support/index.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake?.close(); });
const sleep = ms => new Promise(r => setTimeout(r, ms));
const rssMb = pid => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

test('backpressure: a client that stops reading stops the upstream, nothing is buffered whole', async () => {
  // Under AddressSanitizer (scripts/sanitize.sh), freed memory sits in a
  // quarantine instead of being reused: off here, so RSS measures what the
  // proxy holds, not what ASan keeps.
  const asan = process.env.ASAN_OPTIONS ? `${process.env.ASAN_OPTIONS}:quarantine_size_mb=0` : 'quarantine_size_mb=0';
  const td = await startTokendiet({upstreams: {openai: fake.url}, env: {ASAN_OPTIONS: asan}});
  try {
    fake.clear();
    // ~48 MB of SSE, as fast as the fake can write it: several times what the
    // kernel's socket buffers on the way can hold (loopback autotuning grows
    // them to 10-15 MB in all on some machines).
    const events = 160000;
    const body = '{"stream":true,"stream_options":{"include_usage":true}}';
    const sock = net.connect(td.port, '127.0.0.1');
    await new Promise((res, rej) => { sock.once('connect', res); sock.once('error', rej); });
    sock.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `x-fake-fixture: openai-chat-stream-long\r\nx-fake-repeat: ${events}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    let received = 0, tail = '';
    sock.on('data', d => { received += d.length; tail = (tail + d.toString('latin1', Math.max(0, d.length - 64))).slice(-64); });
    sock.pause();  // read nothing for a while
    const rss0 = rssMb(td.proc.pid);
    await fake.waitForRequests(1);
    // Wait until the upstream stalls: no byte written for 400 ms (or 8 s pass).
    let sent = -1;
    for (let i = 0; i < 20 && fake.last().bytesSent !== sent; i++) { sent = fake.last().bytesSent; await sleep(400); }
    const rss1 = rssMb(td.proc.pid);
    if (process.env.TD_DEBUG) console.error(`paused: upstream wrote ${(sent / 1048576).toFixed(1)} of ~48 MB, RSS +${(rss1 - rss0).toFixed(1)} MB`);
    // Kernel socket buffers on both sides hold some; user space must not.
    assert.ok(!fake.last().finished && sent < 24 * 1024 * 1024,
      `the upstream wrote ${(sent / 1048576).toFixed(1)} MB of ~48 MB while the client read nothing`);
    assert.equal(fake.last().bytesSent, sent, 'the upstream kept writing while the client read nothing');
    // Under the sanitizers every allocation carries redzones and shadow memory
    // besides what the proxy holds: twice the bound (still far below the ~48 MB).
    const bound = process.env.TD_SANITIZED ? 20 : 10;
    assert.ok(rss1 - rss0 < bound, `tokendiet's RSS grew by ${(rss1 - rss0).toFixed(1)} MB while the client read nothing`);
    // Then the client drains and gets everything, up to the data: [DONE] event.
    sock.resume();
    for (let i = 0; i < 3000 && !/data: \[DONE\]\n\n(\r\n0\r\n\r\n)?$/.test(tail); i++) await sleep(10);
    assert.ok(fake.last().finished, 'the upstream did not finish after the client resumed');
    assert.match(tail, /data: \[DONE\]\n\n(\r\n0\r\n\r\n)?$/, `stream incomplete: ${received} bytes received of ${fake.last().bytesSent}`);
    assert.ok(received > fake.last().bytesSent, `client got ${received} bytes of ${fake.last().bytesSent}`);
    sock.destroy();
  } finally { await td.stop(); }
});

test('header and idle timeouts end a silent upstream exchange (shape of the provider, upstream cancelled)', async () => {
  const td = await startTokendiet({
    upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url},
    config: 'limits:\n  header_timeout_ms: 400ms\n  idle_timeout_ms: 600ms\n',
  });
  try {
    fake.clear();
    const t0 = performance.now();
    const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: '{}', headers: {'content-type': 'application/json', 'x-fake-mode': 'hang'}, timeoutMs: 10000});
    const ms = performance.now() - t0;
    assert.ok(r.status >= 500 && r.status < 600, `status ${r.status}`);
    assert.ok(ms < 5000, `answered after ${ms.toFixed(0)} ms with header_timeout_ms 400`);
    assert.equal(JSON.parse(r.body).type, 'error', `Anthropic error shape: ${r.body}`);
    for (let i = 0; i < 200 && !fake.last().aborted; i++) await sleep(10);
    assert.ok(fake.last().aborted, 'the upstream request was not cancelled');

    // A stream that goes quiet after its first event is cut after idle_timeout_ms.
    const t1 = performance.now();
    const s = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: '{"stream":true,"stream_options":{"include_usage":true}}',
      headers: {'content-type': 'application/json', 'x-fake-mode': 'slow', 'x-fake-first-ms': '0', 'x-fake-gap-ms': '5000'}, timeoutMs: 15000});
    const sms = performance.now() - t1;
    assert.equal(s.status, 200);
    assert.equal(s.complete, false, 'an idle stream must end incomplete, not look finished');
    assert.ok(s.body.length > 0, 'the first event got through');
    assert.ok(sms < 4000, `idle stream cut after ${sms.toFixed(0)} ms with idle_timeout_ms 600`);
    assert.equal((await rawRequest({port: td.port, path: '/healthz'})).status, 200);
  } finally { await td.stop(); }
});
