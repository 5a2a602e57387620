// The fake upstream itself: every other integration test trusts it, so it is
// checked here against the fixture files (no tokendiet involved).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  startFakeUpstream, startFakeProcess, loadFixture, fixtureNames, sseEvents, usageOf, stripOpenAIUsage, sseData,
  rawRequest, Connection, makeTestCA, tempDir,
} from '../support/index.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const post = (p, body, headers = {}) => rawRequest({port: fake.port, method: 'POST', path: p,
  headers: {'content-type': 'application/json', ...headers}, body});

test('every SSE fixture splits into events that concatenate back to the file', () => {
  for (const name of fixtureNames()) {
    const fx = loadFixture(name);
    if (fx.kind !== 'sse') continue;
    const ev = sseEvents(fx.body);
    assert.ok(ev.length >= 2, `${name}: ${ev.length} events`);
    assert.deepEqual(Buffer.concat(ev), fx.body, name);
  }
});

test('default routes serve the recorded fixture byte for byte', async () => {
  const cases = [
    ['/v1/chat/completions', {model: 'gpt-5.1', messages: []}, 'openai-chat-nonstream', 'length'],
    ['/v1/chat/completions', {model: 'gpt-5.1', stream: true}, 'openai-chat-stream', 'chunked'],
    ['/v1/chat/completions', {stream: true, stream_options: {include_usage: true}}, 'openai-chat-stream-include-usage', 'chunked'],
    ['/v1/responses', {model: 'gpt-5.1'}, 'openai-responses-nonstream', 'length'],
    ['/v1/responses', {model: 'gpt-5.1', stream: true}, 'openai-responses-stream', 'chunked'],
    ['/v1/messages', {model: 'claude'}, 'anthropic-messages-nonstream', 'length'],
    ['/v1/messages', {model: 'claude', stream: true}, 'anthropic-stream-thinking', 'chunked'],
    ['/v1beta/models/gemini-3.5-flash:generateContent', {contents: []}, 'gemini-generatecontent-verbatim', 'length'],
    ['/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse', {contents: []}, 'gemini-stream-functioncall-verbatim', 'chunked'],
  ];
  for (const [p, body, name, framing] of cases) {
    const r = await post(p, body);
    const fx = loadFixture(name);
    assert.equal(r.status, fx.status, p);
    assert.equal(r.framing, framing, `${p} framing`);
    assert.ok(r.complete, p);
    assert.ok(r.body.equals(fx.body), `${p}: body differs from ${name}`);
    // Recorded headers come back in order, with repeats (Gemini's three vary lines).
    const got = r.rawHeaders.map(([k, v]) => `${k.toLowerCase()}: ${v}`);
    let at = -1;
    for (const [k, v] of fx.headers) {
      const i = got.indexOf(`${k.toLowerCase()}: ${v}`, at + 1);
      assert.ok(i > at, `${p}: header ${k}: ${v} missing or out of order`);
      at = i;
    }
    assert.equal(fake.last().fixture, name);
  }
});

test('an OpenAI chat stream without include_usage carries no usage parts, as OpenAI sends it', async () => {
  const full = loadFixture('openai-chat-stream-include-usage').body;
  const r = await post('/v1/chat/completions', {model: 'gpt-5.1', stream: true}, {'x-fake-fixture': 'openai-chat-stream-include-usage'});
  const text = r.body.toString();
  assert.ok(!text.includes('"usage"'), text);
  assert.equal(sseEvents(r.body).length, sseEvents(full).length - 1);
  assert.equal(text, full.toString().replaceAll(',"usage":null', '').replace(/data: [^\n]*"choices":\[\],"usage":\{[^\n]*\n\n/, ''));
  assert.ok(Buffer.concat(stripOpenAIUsage(sseEvents(full))).equals(r.body));
  // Same shape as a real stream recorded without include_usage.
  const keys = b => sseData(b).map(d => Object.keys(JSON.parse(d)).join());
  const real = keys(loadFixture('openai-chat-stream').body), ours = keys(r.body);
  assert.deepEqual(ours, real.slice(0, ours.length));
  // Asked for, or with x-fake-usage: as-recorded, the usage parts stay.
  assert.ok((await post('/v1/chat/completions', {stream: true, stream_options: {include_usage: true}})).body.equals(full));
  assert.ok((await post('/v1/chat/completions', {stream: true}, {'x-fake-usage': 'as-recorded', 'x-fake-fixture': 'openai-chat-stream-include-usage'})).body.equals(full));
});

test('framing on demand: chunked JSON and content-length SSE', async () => {
  const json = await post('/v1/chat/completions', {}, {'x-fake-framing': 'chunked'});
  assert.equal(json.framing, 'chunked');
  assert.ok(json.parts.length >= 1);
  assert.ok(json.body.equals(loadFixture('openai-chat-nonstream').body));
  const sse = await post('/v1/chat/completions', {stream: true}, {'x-fake-framing': 'length', 'x-fake-fixture': 'openai-chat-stream'});
  assert.equal(sse.framing, 'length');
  assert.equal(Number(sse.headers['content-length']), loadFixture('openai-chat-stream').body.length);
  assert.ok(sse.body.equals(loadFixture('openai-chat-stream').body));
});

test('x-fake-fixture serves any fixture with its recorded status', async () => {
  for (const name of fixtureNames()) {
    const fx = loadFixture(name);
    const r = await post('/v1/chat/completions', {}, {'x-fake-fixture': name});
    assert.equal(r.status, fx.status, name);
    assert.ok(r.body.equals(fx.body), name);
  }
});

test('error modes answer in the calling provider\'s shape', async () => {
  const cases = [
    ['/v1/chat/completions', '429', 429, b => b.error.code === 'rate_limit_exceeded'],
    ['/v1/chat/completions', '500', 500, b => b.error.type === 'server_error'],
    ['/v1/chat/completions', 'context-length', 400, b => b.error.code === 'context_length_exceeded'],
    ['/v1/messages', '429', 429, b => b.type === 'error' && b.error.type === 'rate_limit_error'],
    ['/v1/messages', '529', 529, b => b.error.type === 'overloaded_error'],
    ['/v1/messages', '500', 500, b => b.error.type === 'api_error'],
    ['/v1/messages', 'context-length', 400, b => /prompt is too long/.test(b.error.message)],
    ['/v1beta/models/m:generateContent', '429', 429, b => b.error.status === 'RESOURCE_EXHAUSTED'],
    ['/v1beta/models/m:streamGenerateContent?alt=sse', '500', 500, b => b.error.status === 'INTERNAL'],
    ['/v1beta/models/m:generateContent', 'context-length', 400, b => b.error.status === 'INVALID_ARGUMENT'],
  ];
  for (const [p, mode, status, check] of cases) {
    const r = await post(p, {stream: true}, {'x-fake-mode': mode});
    assert.equal(r.status, status, `${p} ${mode}`);
    assert.ok(check(JSON.parse(r.body)), `${p} ${mode}: ${r.body}`);
  }
  const rl = await post('/v1/chat/completions', {}, {'x-fake-mode': '429'});
  assert.equal(rl.headers['retry-after'], '2');
  assert.equal(rl.headers['x-ratelimit-remaining-tokens'], '437');
  const an = await post('/v1/messages', {}, {'x-fake-mode': '429'});
  assert.equal(an.headers['retry-after'], '17');
  assert.ok(an.headers['anthropic-ratelimit-input-tokens-reset']);
});

test('x-fake-context-window: over N tokens (ceil(bytes / 4)) the provider\'s context-length error, numbers true; else as usual', async () => {
  const cases = [
    ['/v1/chat/completions', b => b.error.code === 'context_length_exceeded' &&
      b.error.message.includes('maximum context length is 10 tokens. However, your messages resulted in 11 tokens')],
    ['/v1/messages', b => b.error.message === 'prompt is too long: 11 tokens > 10 maximum'],
    ['/v1beta/models/m:generateContent', b => b.error.status === 'INVALID_ARGUMENT' &&
      b.error.message === 'The input token count (11) exceeds the maximum number of tokens allowed (10).'],
  ];
  for (const [p, check] of cases) {
    const over = '{"model":"m","x":"' + 'a'.repeat(44 - 20) + '"}';  // 44 bytes: 11 tokens
    assert.equal(over.length, 44);
    fake.clear();
    const r = await post(p, over, {'x-fake-context-window': '10'});
    assert.equal(r.status, 400, p);
    assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body), p);
    assert.ok(check(JSON.parse(r.body)), `${p}: ${r.body}`);
    assert.equal(fake.last().status, 400);
    const fits = await post(p, over.slice(0, 40 - 2) + '"}', {'x-fake-context-window': '10'});  // 40 bytes: 10 tokens
    assert.equal(fits.status, 200, `${p}: ${fits.body}`);
  }
});

test('Gemini streamGenerateContent without alt=sse answers one JSON array', async () => {
  const r = await post('/v1beta/models/m:streamGenerateContent', {contents: []});
  assert.equal(r.status, 200);
  const arr = JSON.parse(r.body);
  assert.equal(arr.length, sseEvents(loadFixture('gemini-stream-functioncall-verbatim').body).length);
  assert.ok(arr[0].candidates);
});

test('slow mode: headers at once, first event after first-ms, one per gap-ms', async () => {
  const r = await post('/v1/chat/completions', {stream: true, stream_options: {include_usage: true}},
    {'x-fake-mode': 'slow', 'x-fake-first-ms': '150', 'x-fake-gap-ms': '20', 'x-fake-fixture': 'openai-chat-stream-long'});
  assert.ok(r.body.equals(loadFixture('openai-chat-stream-long').body));
  const n = sseEvents(r.body).length;
  assert.ok(r.t.headers - r.t.sent < 120, `headers after ${r.t.headers - r.t.sent} ms`);
  assert.ok(r.t.firstBody - r.t.sent >= 140, `first event after ${r.t.firstBody - r.t.sent} ms`);
  assert.ok(r.t.end - r.t.sent >= 150 + (n - 1) * 20 - 20, `stream took ${r.t.end - r.t.sent} ms for ${n} events`);
});

test('x-fake-repeat cycles or cuts the events and keeps the terminator last', async () => {
  const r = await post('/v1/chat/completions', {stream: true}, {'x-fake-repeat': '10'});
  const ev = sseEvents(r.body);
  assert.equal(ev.length, 10);
  assert.equal(ev[9].toString(), 'data: [DONE]\n\n');
  const cut = sseEvents((await post('/v1/chat/completions', {stream: true}, {'x-fake-repeat': '3', 'x-fake-fixture': 'openai-chat-stream-long'})).body);
  assert.equal(cut.length, 3);
  assert.equal(cut[2].toString(), 'data: [DONE]\n\n');
});

test('reset mode cuts the connection after the first event', async () => {
  const r = await post('/v1/messages', {stream: true}, {'x-fake-mode': 'reset'});
  assert.equal(r.status, 200);
  assert.equal(r.complete, false);
  assert.ok(r.error, 'an error is reported');
  const first = sseEvents(loadFixture('anthropic-stream-thinking').body)[0];
  assert.ok(r.body.equals(first), `got ${r.body.length} bytes`);
});

test('hang mode never answers; the request is marked aborted when the client leaves', async () => {
  fake.clear();
  const c = await Connection.open({port: fake.port, timeoutMs: 300});
  await c.send(Buffer.from('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-fake-mode: hang\r\nContent-Length: 2\r\n\r\n{}'));
  await assert.rejects(c.readResponse({}), /timeout/);
  c.close();
  await fake.waitForRequests(1);
  for (let i = 0; i < 100 && !fake.last().aborted; i++) await new Promise(r => setTimeout(r, 10));
  assert.equal(fake.last().aborted, true);
});

test('requests are recorded: method, path, query, raw headers, body; /__requests and DELETE', async () => {
  fake.clear();
  const body = Buffer.from('{"contents":[{"parts":[{"text":"héllo"}]}]}');
  await rawRequest({port: fake.port, method: 'POST', path: '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=K123',
    headers: [['X-Goog-Api-Key', 'G-KEY'], ['Content-Type', 'application/json'], ['X-Dup', 'a'], ['X-Dup', 'b']], body});
  const e = fake.last();
  assert.equal(e.method, 'POST');
  assert.equal(e.path, '/v1beta/models/gemini-2.5-pro:streamGenerateContent');
  assert.equal(e.query, 'alt=sse&key=K123');
  assert.ok(e.body.equals(body));
  assert.deepEqual(e.rawHeaders.slice(2), ['X-Goog-Api-Key', 'G-KEY', 'Content-Type', 'application/json',
    'X-Dup', 'a', 'X-Dup', 'b', 'Content-Length', String(body.length)]);
  assert.deepEqual(e.usage, usageOf(loadFixture('gemini-stream-functioncall-verbatim').body, 'sse'));
  assert.equal(e.usage.promptTokenCount, 148);
  const list = await rawRequest({port: fake.port, path: '/__requests'});
  const arr = JSON.parse(list.body);
  assert.equal(arr.length, 1);
  assert.ok(Buffer.from(arr[0].body_base64, 'base64').equals(body));
  assert.equal((await rawRequest({port: fake.port, method: 'DELETE', path: '/__requests'})).status, 204);
  assert.equal(JSON.parse((await rawRequest({port: fake.port, path: '/__requests'})).body).length, 0);
});

test('usage is what the fixture says, for each provider', () => {
  const u = name => { const fx = loadFixture(name); return usageOf(fx.body, fx.kind); };
  assert.equal(u('openai-chat-nonstream').total_tokens > 0, true);
  assert.equal(u('openai-chat-stream'), null);  // no include_usage: no usage in the stream
  assert.ok(u('openai-chat-stream-include-usage').prompt_tokens > 0);
  const an = u('anthropic-stream-thinking');
  assert.ok(an.input_tokens > 0 && an.output_tokens > 1, JSON.stringify(an));
  assert.ok(u('gemini-stream-thinking').thoughtsTokenCount > 0);
  assert.equal(u('openai-responses-stream').total_tokens, 29);
});

test('as a child process: LISTENING line, --port-file, TLS with a test CA', async () => {
  const tmp = tempDir();
  try {
    const portFile = path.join(tmp.dir, 'port');
    const ca = makeTestCA(tmp.dir);
    const leaf = ca.issue('server', {dns: ['localhost'], ip: ['127.0.0.1']});
    const p = await startFakeProcess(['--port-file', portFile, '--tls-cert', leaf.cert, '--tls-key', leaf.key]);
    try {
      assert.equal(Number(fs.readFileSync(portFile, 'utf8')), p.port);
      const r = await rawRequest({port: p.port, method: 'POST', path: '/v1/chat/completions', body: '{}',
        tls: {ca: fs.readFileSync(ca.cert), servername: 'localhost'}});
      assert.equal(r.status, 200);
      assert.ok(r.body.equals(loadFixture('openai-chat-nonstream').body));
      await assert.rejects(rawRequest({port: p.port, path: '/healthz', tls: {servername: 'localhost'}}),
        /self[- ]signed|unable to verify|certificate/i);
    } finally { await p.stop(); }
  } finally { tmp.cleanup(); }
});
