// Responses go through tokendiet untouched: JSON and SSE, chunked and
// content-length, errors with their headers, streamed as they arrive, and a
// reset upstream ends the client's response without taking the proxy down.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {
  startFakeUpstream, startTokendiet, loadFixture, sseEvents, rawRequest, sameThroughProxy,
} from '../support/index.mjs';

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, gemini: fake.url, anthropic: fake.url}});
});
after(async () => { await td?.stop(); await fake?.close(); });

const json = {'content-type': 'application/json'};
const both = (req, label) => sameThroughProxy(req, {directPort: fake.port, proxyPort: td.port, label});

// [label, path, body, fixture]: the fixture is named explicitly so a later
// request rewrite (e.g. include_usage) cannot change what the fake answers.
const CASES = [
  ['openai chat json', '/v1/chat/completions', {model: 'gpt-5.1', messages: [{role: 'user', content: 'hi'}]}, 'openai-chat-nonstream'],
  ['openai chat json tool calls', '/v1/chat/completions', {model: 'gpt-5.1', messages: []}, 'openai-chat-nonstream-tool-calls-verbatim'],
  ['openai chat sse', '/v1/chat/completions', {model: 'gpt-5.1', stream: true, stream_options: {include_usage: true}, messages: []}, 'openai-chat-stream-include-usage'],
  ['openai chat sse tool calls', '/v1/chat/completions', {model: 'gpt-5.1', stream: true, stream_options: {include_usage: true}, messages: []}, 'openai-chat-stream-tool-calls-include-usage-verbatim'],
  ['openai responses json', '/v1/responses', {model: 'gpt-5.1', input: 'hi'}, 'openai-responses-nonstream'],
  ['openai responses sse', '/v1/responses', {model: 'gpt-5.1', input: 'hi', stream: true}, 'openai-responses-stream'],
  ['anthropic json', '/v1/messages', {model: 'claude-sonnet-4-5', max_tokens: 100, messages: []}, 'anthropic-messages-nonstream'],
  ['anthropic sse thinking', '/v1/messages', {model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: []}, 'anthropic-stream-thinking'],
  ['anthropic sse tool use', '/v1/messages', {model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: []}, 'anthropic-stream-tool-use'],
  ['gemini json', '/v1beta/models/gemini-3.5-flash:generateContent', {contents: []}, 'gemini-generatecontent-verbatim'],
  ['gemini sse', '/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse', {contents: []}, 'gemini-stream-functioncall-verbatim'],
  ['gemini sse thinking', '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', {contents: []}, 'gemini-stream-thinking'],
  ['gemini sse vertex', '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', {contents: []}, 'gemini-stream-vertex-verbatim'],
];

for (const framing of ['chunked', 'length']) {
  test(`byte for byte, ${framing} framing: every provider, JSON and SSE`, async () => {
    for (const [label, path, body, fixture] of CASES) {
      const {proxied} = await both({method: 'POST', path, body,
        headers: {...json, 'x-fake-fixture': fixture, 'x-fake-framing': framing}}, `${label} (${framing})`);
      assert.ok(proxied.body.equals(loadFixture(fixture).body), `${label}: not the fixture's bytes`);
    }
  });
}

test('default fixtures (no x-fake-fixture) relay unchanged too', async () => {
  for (const [label, path, body] of CASES) await both({method: 'POST', path, body, headers: json}, label);
  // Gemini's non-SSE stream: one JSON array, chunked.
  await both({method: 'POST', path: '/v1beta/models/gemini-3.5-flash:streamGenerateContent', body: {contents: []}, headers: json}, 'gemini array stream');
});

test('an OpenAI stream without include_usage reaches the client as OpenAI would send it (no usage parts)', async () => {
  // tokendiet may ask upstream for usage and splice it back out; the client must not notice.
  for (const fixture of ['openai-chat-stream-include-usage', 'openai-chat-stream-tool-calls-include-usage-verbatim', 'openai-chat-stream-long']) {
    for (const framing of ['chunked', 'length']) {
      const {proxied} = await both({method: 'POST', path: '/v1/chat/completions', body: {model: 'gpt-5.1', stream: true, messages: []},
        headers: {...json, 'x-fake-fixture': fixture, 'x-fake-framing': framing}}, `${fixture} without include_usage (${framing})`);
      assert.ok(!proxied.body.toString().includes('"usage"'), `${fixture}: usage parts reached the client`);
    }
  }
});

test('a long SSE stream (2000 events, ~600 KB) arrives complete and identical', async () => {
  const {proxied} = await both({method: 'POST', path: '/v1/chat/completions', body: {stream: true, stream_options: {include_usage: true}},
    headers: {...json, 'x-fake-fixture': 'openai-chat-stream-long', 'x-fake-repeat': '2000'}}, 'long stream');
  assert.equal(sseEvents(proxied.body).length, 2000);
});

test('429, 529 and 500 are relayed verbatim with their headers', async () => {
  const cases = [
    ['/v1/chat/completions', '429', 429], ['/v1/chat/completions', '500', 500], ['/v1/chat/completions', 'context-length', 400],
    ['/v1/messages', '429', 429], ['/v1/messages', '529', 529], ['/v1/messages', '500', 500],
    ['/v1beta/models/gemini-2.5-flash:generateContent', '429', 429],
    ['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', '500', 500],
    ['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', 'context-length', 400],
  ];
  for (const [path, mode, status] of cases) {
    for (const framing of ['length', 'chunked']) {
      const {proxied} = await both({method: 'POST', path, body: {stream: true}, headers: {...json, 'x-fake-mode': mode, 'x-fake-framing': framing}},
        `${path} ${mode} ${framing}`);
      assert.equal(proxied.status, status);
    }
  }
  const rl = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: {}, headers: {...json, 'x-fake-mode': '429'}});
  assert.equal(rl.headers['retry-after'], '2');
  assert.equal(rl.headers['retry-after-ms'], '1634');
  assert.equal(rl.headers['x-ratelimit-reset-tokens'], '1.634s');
  const an = await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: {}, headers: {...json, 'x-fake-mode': '429'}});
  assert.equal(an.headers['retry-after'], '17');
  assert.equal(an.headers['anthropic-ratelimit-input-tokens-remaining'], '0');
});

test('recorded error bodies (401, 404) pass through for each provider', async () => {
  for (const [path, fixture] of [
    ['/v1/chat/completions', 'openai-error-invalid-api-key'], ['/v1/chat/completions', 'openai-error-model-not-found'],
    ['/v1/messages', 'anthropic-error-model-not-found'],
    ['/v1beta/models/x:generateContent', 'gemini-error-model-not-found'],
    ['/v1beta/models/x:streamGenerateContent?alt=sse', 'gemini-stream-error-invalid-api-key'],
  ]) {
    const {proxied} = await both({method: 'POST', path, body: {}, headers: {...json, 'x-fake-fixture': fixture}}, fixture);
    assert.equal(proxied.status, loadFixture(fixture).status);
  }
});

test('slow upstream: the first event reaches the client long before the stream ends', async () => {
  // 32 events: first after 200 ms, then one every 50 ms: ~1.75 s in all.
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: {stream: true, stream_options: {include_usage: true}},
    headers: {...json, 'x-fake-mode': 'slow', 'x-fake-first-ms': '200', 'x-fake-gap-ms': '50', 'x-fake-fixture': 'openai-chat-stream-long'}});
  assert.ok(r.complete, r.error);
  assert.ok(r.body.equals(loadFixture('openai-chat-stream-long').body));
  const first = r.t.firstBody - r.t.sent, total = r.t.end - r.t.sent;
  assert.ok(total > 1400, `the stream took ${total.toFixed(0)} ms, the upstream paces it over ~1750`);
  // Generous: what matters is that it was not held back until the end.
  assert.ok(first < 900, `first event after ${first.toFixed(0)} ms (upstream sent it at 200)`);
  assert.ok(total - first > 700, `first event only ${(total - first).toFixed(0)} ms before the end`);
  // Events trickled in: many separate arrivals, not one buffered burst.
  const arrivals = new Set(r.parts.map(p => Math.round(p.t / 10))).size;
  assert.ok(arrivals >= 10, `body arrived in only ${arrivals} distinct bursts`);
});

test('slow upstream, content-length framing: the body still trickles through', async () => {
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: {stream: true},
    headers: {...json, 'x-fake-mode': 'slow', 'x-fake-first-ms': '100', 'x-fake-gap-ms': '30', 'x-fake-fixture': 'anthropic-stream-tool-use', 'x-fake-framing': 'length'}});
  assert.ok(r.complete, r.error);
  assert.ok(r.body.equals(loadFixture('anthropic-stream-tool-use').body));
  const first = r.t.firstBody - r.t.sent, total = r.t.end - r.t.sent;
  assert.ok(total - first > 400, `first bytes at ${first.toFixed(0)} ms, end at ${total.toFixed(0)} ms`);
});

test('upstream resets mid-stream: the client sees its response end early, the proxy carries on', async () => {
  for (const framing of ['chunked', 'length']) {
    const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: {stream: true},
      headers: {...json, 'x-fake-mode': 'reset', 'x-fake-reset-after': '3', 'x-fake-framing': framing}, timeoutMs: 10000});
    assert.equal(r.status, 200, framing);
    assert.equal(r.complete, false, `${framing}: the client must not see a complete response after an upstream reset`);
    const ev = sseEvents(loadFixture('anthropic-stream-thinking').body);
    assert.ok(r.body.equals(Buffer.concat(ev.slice(0, 3))), `${framing}: got ${r.body.length} bytes before the end`);
  }
  const h = await rawRequest({port: td.port, path: '/healthz'});
  assert.equal(h.status, 200);
  await both({method: 'POST', path: '/v1/messages', body: {stream: true}, headers: json}, 'after reset');
  assert.equal(td.exited, null, 'tokendiet is still running');
});
