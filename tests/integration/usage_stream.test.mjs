// Usage accounting through the real binary and the fake upstream: an OpenAI
// stream whose client did not ask for usage reaches the client exactly as
// the upstream would have sent it without include_usage, while the proxy
// asks for usage upstream and logs it. Other providers' usage is logged from
// an untouched relay.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, loadFixture, sseEvents, usageOf, rawRequest} from '../support/index.mjs';

let fake, td, tdOff;
before(async () => {
  fake = await startFakeUpstream();
  const up = `http://127.0.0.1:${fake.port}`;
  const upstreams = {openai: up, gemini: up, anthropic: up};
  td = await startTokendiet({upstreams});
  tdOff = await startTokendiet({upstreams, config: [
    'profiles:',
    '  - name: no-stream-usage',
    '    models: ["*"]',
    '    stream_usage: false',
    '',
  ].join('\n')});
});
after(async () => {
  await td?.stop();
  await tdOff?.stop();
  await fake?.close();
});

const post = (proxy, path, body, headers = {}) => rawRequest({port: proxy.port, method: 'POST', path,
  headers: {'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers},
  body: typeof body === 'string' ? body : JSON.stringify(body), timeoutMs: 10000});

// What the upstream sends without include_usage, derived from what it sends
// with it: no `"usage":null` members, no usage-only chunk. (Plain text edits
// that know how the recording spells them; the unit tests check the scrubber
// against this on every split.)
function withoutUsage(buf) {
  const kept = [];
  for (const ev of sseEvents(buf)) {
    const s = ev.toString('utf8');
    if (s.includes('"choices":[],"usage":{')) continue;
    kept.push(s.replaceAll(',"usage":null', '').replaceAll('"usage":null,', ''));
  }
  return Buffer.from(kept.join(''), 'utf8');
}

// Recorded twice from the same prompt: equal once ids, timestamps and
// OpenAI's random-length padding are masked.
const mask = s => s.replace(/"id":"[^"]*"/g, '"id":"ID"').replace(/"created":\d+/g, '"created":0')
  .replace(/"obfuscation":"[^"]*"/g, '"obfuscation":"PAD"');

// The access log line of the request that carried this marker in its path query.
async function accessLine(proxy, tag) {
  const line = await proxy.waitForLine(new RegExp(`"event":"request".*${tag}"`), 5000);
  return JSON.parse(line);
}

test('OpenAI stream without include_usage: client bytes unchanged, usage asked for and logged', async () => {
  const request = '{"model":"gpt-5.1","messages":[{"role":"user","content":"Count to six."}],"stream":true}';
  const r = await post(td, '/v1/chat/completions?t=plain', request);
  assert.equal(r.status, 200);
  assert.ok(r.complete);
  // Upstream was asked for usage, by one appended member, nothing else changed.
  const sent = fake.last().body.toString('utf8');
  assert.equal(sent, request.slice(0, -1) + ',"stream_options":{"include_usage":true}}');
  assert.equal(fake.last().fixture, 'openai-chat-stream-include-usage');
  // The client got the stream as it would have come without include_usage.
  const upstreamBody = loadFixture('openai-chat-stream-include-usage').body;
  assert.ok(r.body.equals(withoutUsage(upstreamBody)), r.body.toString());
  assert.equal(mask(r.body.toString()), mask(loadFixture('openai-chat-stream').body.toString()));
  assert.ok(!r.body.includes('usage'));
  const log = await accessLine(td, 't=plain');
  assert.equal(log.usage_prompt, 33);
  assert.equal(log.usage_completion, 10);
  assert.equal(log.response_model, 'gpt-5.1-2025-11-13');
});

test('the scrubbed stream is relayed event by event, not buffered', async () => {
  const request = {model: 'gpt-4o', messages: [{role: 'user', content: 'hi'}], stream: true};
  const r = await post(td, '/v1/chat/completions?t=slow', request, {'x-fake-mode': 'slow',
    'x-fake-first-ms': '20', 'x-fake-gap-ms': '30', 'x-fake-fixture': 'openai-chat-stream-long'});
  assert.equal(r.status, 200);
  const upstreamBody = loadFixture('openai-chat-stream-long').body;
  assert.ok(r.body.equals(withoutUsage(upstreamBody)));
  // One upstream event per gap: the client saw them arrive as separate reads.
  const events = sseEvents(upstreamBody).length;
  assert.ok(r.parts.length >= events / 2, `${r.parts.length} reads for ${events} events`);
  const log = await accessLine(td, 't=slow');
  assert.equal(log.usage_prompt, 13102);
  assert.equal(log.usage_cached_read, 12800);
});

test('a client that asked for usage gets the upstream stream byte for byte', async () => {
  const request = '{"model":"gpt-5.1","stream":true,"stream_options":{"include_usage":true},"messages":[]}';
  const r = await post(td, '/v1/chat/completions?t=asked', request);
  assert.equal(fake.last().body.toString('utf8'), request);
  assert.ok(r.body.equals(loadFixture('openai-chat-stream-include-usage').body));
  const log = await accessLine(td, 't=asked');
  assert.equal(log.usage_prompt, 33);
});

test('stream_usage: false forwards the request untouched and records no usage', async () => {
  const request = '{"model":"gpt-5.1","messages":[],"stream":true}';
  const r = await post(tdOff, '/v1/chat/completions?t=off', request);
  assert.equal(fake.last().body.toString('utf8'), request);
  assert.ok(r.body.equals(loadFixture('openai-chat-stream').body));
  const log = await accessLine(tdOff, 't=off');
  assert.equal(log.usage_prompt, undefined);
});

test('Anthropic, Gemini and OpenAI non-stream: relayed untouched, usage logged', async () => {
  const cases = [
    ['/v1/messages?t=an', {model: 'claude-sonnet-4', stream: true, messages: []}, 'anthropic-stream-thinking',
      u => [u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, u.output_tokens]],
    ['/v1/messages?t=anjson', {model: 'claude-sonnet-4', messages: []}, 'anthropic-messages-nonstream',
      u => [u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, u.output_tokens]],
    ['/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse&t=gem', {contents: []},
      'gemini-stream-functioncall-verbatim',
      u => [u.promptTokenCount, u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0)]],
    ['/v1beta/models/gemini-3.5-flash:streamGenerateContent?t=gemarr', {contents: []},
      'gemini-stream-functioncall-verbatim',
      u => [u.promptTokenCount, u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0)]],
    ['/v1/chat/completions?t=oajson', {model: 'gpt-5.1', messages: []}, 'openai-chat-nonstream',
      u => [u.prompt_tokens, u.completion_tokens]],
  ];
  for (const [path, body, fixture, expect] of cases) {
    const r = await post(td, path, body);
    assert.equal(r.status, 200, path);
    assert.equal(fake.last().fixture, fixture, path);
    // The upstream's bytes reach the client unchanged (the array form of
    // Gemini's non-SSE stream is generated by the fake, so compare to what it sent).
    if (!path.includes('gemarr')) assert.ok(r.body.equals(loadFixture(fixture).body), path);
    const fx = loadFixture(fixture);
    const [prompt, completion] = expect(usageOf(fx.body, fx.kind));
    const tag = path.match(/[?&]t=(\w+)/)[1];
    const log = await accessLine(td, `t=${tag}`);
    assert.equal(log.usage_prompt, prompt, path);
    assert.equal(log.usage_completion, completion, path);
  }
});

test('an error answered to an injected request reaches the client as sent', async () => {
  const r = await post(td, '/v1/chat/completions?t=ctx', {model: 'gpt-5.1', stream: true, messages: []},
    {'x-fake-mode': 'context-length'});
  assert.equal(r.status, 400);
  assert.ok(r.body.equals(loadFixture('openai-error-context-length').body));
  const log = await accessLine(td, 't=ctx');
  assert.equal(log.usage_prompt, undefined);
  assert.equal(log.context_length_exceeded, true);
  assert.equal(log.upstream_error, 'context_length_exceeded');
});
