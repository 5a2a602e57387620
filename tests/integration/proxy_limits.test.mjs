// tokendiet's own answers and its edges: /healthz, request limits (413, 400,
// 431), an unreachable upstream (502 in the caller's provider shape), the
// request log (one JSON line per request, never an API key), SIGTERM drain.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, rawRequest, Connection, freePort, loadFixture} from '../support/index.mjs';

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, gemini: fake.url, anthropic: fake.url}});
});
after(async () => { await td?.stop(); await fake?.close(); });
const sleep = ms => new Promise(r => setTimeout(r, ms));

test('/healthz answers 200 without touching an upstream', async () => {
  fake.clear();
  const r = await rawRequest({port: td.port, path: '/healthz'});
  assert.equal(r.status, 200);
  assert.equal(fake.requests.length, 0);
});

// Writes `bytes` without waiting for the write to finish (the proxy may answer
// and close before reading it all), then reads the response.
async function sendAndRead(bytes, timeoutMs = 20000) {
  const c = await Connection.open({port: td.port, timeoutMs});
  try {
    c.sock.write(bytes, () => {});
    return await c.readResponse({});
  } finally { c.close(); }
}

test('a body over the 32 MiB default limit gets 413 and never reaches the upstream', async () => {
  fake.clear();
  const big = Buffer.alloc(32 * 1024 * 1024 + 1024, 0x61);
  const head = Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n`);
  const r = await sendAndRead(Buffer.concat([head, big]));
  assert.equal(r.status, 413);
  // The message names the config key to raise, and its value.
  assert.match(JSON.parse(r.body.toString()).error.message, /limits\.max_body_bytes \(33554432 bytes\)/);
  // Chunked, so the size is only known while reading.
  const chunk = Buffer.alloc(1024 * 1024, 0x62);
  const parts = [Buffer.from('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')];
  for (let i = 0; i < 33; i++) parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  parts.push(Buffer.from('0\r\n\r\n'));
  const rc = await sendAndRead(Buffer.concat(parts));
  assert.equal(rc.status, 413);
  assert.match(JSON.parse(rc.body.toString()).error.message, /limits\.max_body_bytes \(33554432 bytes\)/);
  assert.equal(fake.requests.length, 0, 'an oversized body was forwarded');
  // A body just under the limit still goes through.
  const ok = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: Buffer.alloc(4 * 1024 * 1024, 0x20), headers: {'content-type': 'application/json'}});
  assert.equal(ok.status, 200);
});

test('Content-Length together with Transfer-Encoding is refused with 400', async () => {
  fake.clear();
  const r = await sendAndRead(Buffer.from('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'));
  assert.equal(r.status, 400);
  assert.equal(fake.requests.length, 0);
});

test('oversized request headers are refused (431 or 400), not forwarded', async () => {
  fake.clear();
  const huge = await sendAndRead(Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`));
  assert.ok([431, 400].includes(huge.status) || huge.status === 0, `huge header block: ${huge.status}`);
  const many = Array.from({length: 300}, (_, i) => `X-H${i}: v\r\n`).join('');
  const lots = await sendAndRead(Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${many}Content-Length: 2\r\n\r\n{}`));
  assert.ok([431, 400].includes(lots.status) || lots.status === 0, `300 headers: ${lots.status}`);
  if (lots.status === 431) assert.match(lots.body.toString(), /limits\.max_header_count \(128\)/);
  assert.equal(fake.requests.length, 0);
});

test('upstream unreachable: 502 in the calling provider\'s error shape, and a log line', async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  const down = await startTokendiet({upstreams: {openai: dead, gemini: dead, anthropic: dead}});
  try {
    const call = async path => {
      const r = await rawRequest({port: down.port, method: 'POST', path, body: '{"model":"m","stream":true}', headers: {'content-type': 'application/json'}});
      assert.equal(r.status, 502, path);
      assert.match(String(r.headers['content-type']), /application\/json/, path);
      return JSON.parse(r.body);
    };
    const o = await call('/v1/chat/completions');
    assert.equal(typeof o.error?.message, 'string', `OpenAI shape: ${JSON.stringify(o)}`);
    assert.ok('type' in o.error, `OpenAI shape has error.type: ${JSON.stringify(o)}`);
    const a = await call('/v1/messages');
    assert.equal(a.type, 'error', `Anthropic shape: ${JSON.stringify(a)}`);
    assert.equal(typeof a.error?.type, 'string');
    assert.equal(typeof a.error?.message, 'string');
    const g = await call('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(g.error?.code, 502, `Gemini shape: ${JSON.stringify(g)}`);
    assert.equal(typeof g.error?.message, 'string');
    assert.equal(typeof g.error?.status, 'string');
    await down.waitForLine(/502|refused|unreachable|connect/i, 3000);
  } finally { await down.stop(); }
});

test('one JSON log line per request, and no API key anywhere in the output', async () => {
  const secrets = ['sk-proj-SECRETaaaa1111', 'sk-ant-api03-SECRETbbbb2222', 'AIzaSECRETcccc3333', 'AIzaSECRETdddd4444',
    'AIzaSECRETeeee5555', 'AIzaSECRETffff6666', 'AIzaSECRETgggg7777'];
  const before = td.lines.length;
  await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: '{"model":"gpt-5.1","messages":[]}',
    headers: {'content-type': 'application/json', authorization: `Bearer ${secrets[0]}`}});
  await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: '{"model":"claude-sonnet-4-5","messages":[]}',
    headers: {'content-type': 'application/json', 'x-api-key': secrets[1], 'anthropic-version': '2023-06-01'}});
  await rawRequest({port: td.port, method: 'POST', path: `/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=${secrets[3]}`, body: '{"contents":[]}',
    headers: {'content-type': 'application/json', 'x-goog-api-key': secrets[2]}});
  // The key under names a server decodes to "key", and behind ';'.
  for (const q of [`%6Bey=${secrets[4]}`, `k%65y=${secrets[5]}`, `alt=sse;key=${secrets[6]}`])
    await rawRequest({port: td.port, method: 'POST', path: `/v1beta/models/gemini-2.5-flash:generateContent?${q}`, body: '{"contents":[]}',
      headers: {'content-type': 'application/json'}});
  // Log lines may be written after the response: wait (bounded) for six.
  const logLines = () => td.lines.slice(before).filter(l => { try { return typeof JSON.parse(l) === 'object'; } catch { return false; } });
  for (let i = 0; i < 200 && logLines().length < 6; i++) await sleep(10);
  const lines = logLines().map(l => JSON.parse(l));
  const reqLines = lines.filter(l => l.path !== undefined && l.status !== undefined);
  assert.ok(reqLines.length >= 3, `expected a JSON line per request, got:\n${td.lines.slice(before).join('\n')}`);
  for (const p of ['/v1/chat/completions', '/v1/messages']) {
    const l = reqLines.find(x => String(x.path).startsWith(p));
    assert.ok(l, `no log line for ${p}`);
    assert.equal(l.method, 'POST');
    assert.equal(Number(l.status), 200);
  }
  assert.ok(reqLines.some(x => String(x.path).startsWith('/v1beta/models/gemini-2.5-flash:streamGenerateContent')));
  const all = td.output();
  for (const s of secrets) assert.ok(!all.includes(s), `API key ${s} appears in the log:\n${all.split('\n').filter(l => l.includes(s)).join('\n')}`);
  assert.ok(!/SECRET/.test(all), 'a fragment of an API key appears in the log');
});

test('SIGTERM lets an in-flight stream finish, then exits 0', async () => {
  const t = await startTokendiet({upstreams: {openai: fake.url, gemini: fake.url, anthropic: fake.url}});
  try {
    const pending = rawRequest({port: t.port, method: 'POST', path: '/v1/chat/completions', body: '{"stream":true,"stream_options":{"include_usage":true}}',
      headers: {'content-type': 'application/json', 'x-fake-mode': 'slow', 'x-fake-first-ms': '100', 'x-fake-gap-ms': '30',
        'x-fake-fixture': 'openai-chat-stream-long'}, timeoutMs: 15000});
    await sleep(300);
    t.proc.kill('SIGTERM');
    const r = await pending;
    assert.ok(r.complete, `stream cut by SIGTERM: ${r.error}`);
    assert.ok(r.body.equals(loadFixture('openai-chat-stream-long').body));
    let timer;
    const exit = await Promise.race([t.exit, new Promise(r => { timer = setTimeout(() => r('still running'), 10000); })]);
    clearTimeout(timer);
    assert.deepEqual(exit, {code: 0, signal: null}, `exit after drain: ${JSON.stringify(exit)}`);
  } finally { await t.stop(); }
});
