// End to end with the official SDKs (pinned in package-lock.json): each call
// made through tokendiet must give the SDK the same result as the same call
// made straight to the fake upstream, and the upstream must receive the same
// request both ways.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {GoogleGenAI} from '@google/genai';
import {startFakeUpstream, startTokendiet} from '../support/index.mjs';

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, gemini: fake.url, anthropic: fake.url}});
});
after(async () => { await td?.stop(); await fake?.close(); });

// Headers that legitimately differ between a direct and a proxied request.
const PER_HOP = new Set(['host', 'connection', 'keep-alive', 'accept-encoding', 'content-length', 'transfer-encoding']);
const e2eHeaders = h => Object.fromEntries(Object.entries(h).filter(([k]) => !PER_HOP.has(k)));
// An SDK result as plain data, minus the explain headers tokendiet adds to
// every response (x-tokendiet-*; @google/genai hands response headers back).
const plain = x => JSON.parse(JSON.stringify(x), (k, v) => (k.startsWith('x-tokendiet-') ? undefined : v));

// Runs fn(baseOrigin) direct and through the proxy; asserts both results and
// both upstream requests are equal; returns the proxied result.
// The one documented request change (docs/design.md §Principles (1)): an OpenAI stream
// whose client did not ask for usage is sent upstream with
// stream_options.include_usage, and the usage parts are spliced back out of the
// answer. And an agent's request (one with tools of its own) gets the
// tokendiet_recall tool after its last tool (docs/design.md §Recall).
// Anything else in the body must be byte-identical.
function sameRequestBody(p, d, label) {
  if (p.body.equals(d.body)) return;
  const pj = JSON.parse(p.body), dj = JSON.parse(d.body);
  if (Array.isArray(dj.tools) && dj.tools.length > 0) {
    const added = pj.tools?.at(-1);
    assert.equal(added?.function?.name ?? added?.name, 'tokendiet_recall', `${label}: the recall tool appended`);
    assert.deepEqual(pj.tools.slice(0, -1), dj.tools, `${label}: the client's tools as sent`);
    pj.tools = dj.tools;
    if (JSON.stringify(pj) === JSON.stringify(dj)) return;
  }
  assert.ok(dj.stream === true && dj.stream_options?.include_usage !== true, `${label}: request body differs`);
  const {stream_options: so, ...rest} = pj;
  const {stream_options: dso, ...drest} = dj;
  assert.deepEqual(rest, drest, `${label}: request body differs beyond include_usage`);
  assert.deepEqual(so, {...(dso || {}), include_usage: true}, `${label}: stream_options`);
}

async function sameBothWays(label, fn) {
  fake.clear();
  const direct = await fn(fake.url);
  const proxied = await fn(td.url);
  assert.deepEqual(plain(proxied), plain(direct), `${label}: SDK result differs through tokendiet`);
  const [d, p] = fake.requests;
  assert.ok(d && p && fake.requests.length === 2, `${label}: expected 2 upstream requests, got ${fake.requests.length}`);
  assert.equal(p.method, d.method, label);
  assert.equal(p.url, d.url, `${label}: path+query`);
  sameRequestBody(p, d, label);
  assert.deepEqual(e2eHeaders(p.headers), e2eHeaders(d.headers), `${label}: request headers differ`);
  return proxied;
}

async function collect(stream) {
  const out = [];
  for await (const x of stream) out.push(x);
  return out;
}

const openai = (origin, opts = {}) => new OpenAI({apiKey: 'sk-test-e2e', baseURL: `${origin}/v1`, maxRetries: 0, ...opts});
const anthropic = (origin, opts = {}) => new Anthropic({apiKey: 'sk-ant-test-e2e', baseURL: origin, maxRetries: 0, ...opts});
const genai = (origin, headers = {}) => new GoogleGenAI({apiKey: 'AIza-test-e2e', httpOptions: {baseUrl: origin, headers}});
const messages = [{role: 'system', content: 'You are a text parser.'}, {role: 'user', content: 'How many letters are in the word Python?'}];

test('openai chat.completions.create, not streamed', async () => {
  const r = await sameBothWays('openai json', o => openai(o).chat.completions.create({model: 'gpt-5.1', messages}));
  assert.equal(r.object, 'chat.completion');
  assert.ok(r.usage.total_tokens > 0);
  const t = await sameBothWays('openai tool calls', o => openai(o, {defaultHeaders: {'x-fake-fixture': 'openai-chat-nonstream-tool-calls-verbatim'}})
    .chat.completions.create({model: 'gpt-5.1', messages, tools: [{type: 'function', function: {name: 'get_weather', parameters: {type: 'object', properties: {}}}}]}));
  assert.ok(t.choices[0].message.tool_calls.length > 0);
});

test('openai chat.completions.create, streamed (with and without usage)', async () => {
  // One recording for both calls (the fake cuts its usage parts when they were not asked for),
  // so the comparison holds whether or not tokendiet asks upstream for usage.
  const oneRecording = {defaultHeaders: {'x-fake-fixture': 'openai-chat-stream-include-usage'}};
  const chunks = await sameBothWays('openai stream', async o =>
    collect(await openai(o, oneRecording).chat.completions.create({model: 'gpt-5.1', messages, stream: true})));
  assert.ok(chunks.length >= 3);
  assert.equal(chunks.map(c => c.choices[0]?.delta?.content ?? '').join(''), 'six');
  const withUsage = await sameBothWays('openai stream include_usage', async o =>
    collect(await openai(o, oneRecording).chat.completions.create({model: 'gpt-5.1', messages, stream: true, stream_options: {include_usage: true}})));
  assert.ok(withUsage.at(-1).usage.total_tokens > 0);
});

test('openai errors reach the SDK unchanged (429 with retry-after, 400 context length)', async () => {
  for (const mode of ['429', 'context-length']) {
    const err = await sameBothWays(`openai ${mode}`, async o => {
      try { await openai(o).chat.completions.create({model: 'gpt-5.1', messages}, {headers: {'x-fake-mode': mode}}); }
      catch (e) { return {status: e.status, error: e.error, code: e.code, retryAfter: e.headers?.get?.('retry-after') ?? null, name: e.constructor.name}; }
      throw new Error('no error');
    });
    assert.equal(err.status, mode === '429' ? 429 : 400);
    if (mode === '429') assert.equal(err.retryAfter, '2');
    else assert.equal(err.code, 'context_length_exceeded');
  }
});

test('@google/genai generateContent', async () => {
  const r = await sameBothWays('gemini json', async o => {
    const res = await genai(o).models.generateContent({model: 'gemini-3.5-flash', contents: 'Take the word hello, capitalize it.'});
    const {sdkHttpResponse, ...rest} = res;
    return {...plain(rest), text: res.text, headers: e2eHeaders(sdkHttpResponse?.headers ?? {})};
  });
  assert.ok(r.usageMetadata.totalTokenCount > 0);
});

test('@google/genai generateContentStream (alt=sse)', async () => {
  const chunks = await sameBothWays('gemini stream', async o => {
    const out = [];
    for await (const c of await genai(o).models.generateContentStream({model: 'gemini-3.5-flash', contents: 'Take the word hello, capitalize it.'})) {
      const {sdkHttpResponse, ...rest} = c;
      out.push(plain(rest));
    }
    return out;
  });
  assert.ok(chunks.length >= 2);
  assert.ok(chunks[0].candidates[0].content.parts[0].functionCall);
  assert.match(fake.last().url, /:streamGenerateContent\?alt=sse$/);
  assert.equal(fake.last().headers['x-goog-api-key'], 'AIza-test-e2e');
  const thinking = await sameBothWays('gemini stream thinking', async o => {
    const out = [];
    for await (const c of await genai(o, {'x-fake-fixture': 'gemini-stream-thinking'}).models.generateContentStream({model: 'gemini-2.5-pro', contents: 'hi'})) out.push(c.usageMetadata);
    return out;
  });
  assert.ok(thinking.at(-1).thoughtsTokenCount > 0);
});

test('@google/genai error (429 RESOURCE_EXHAUSTED) reaches the SDK unchanged', async () => {
  const err = await sameBothWays('gemini 429', async o => {
    try { await genai(o, {'x-fake-mode': '429'}).models.generateContent({model: 'gemini-2.5-flash', contents: 'hi'}); }
    catch (e) { return {status: e.status, message: e.message, name: e.name}; }
    throw new Error('no error');
  });
  assert.equal(err.status, 429);
  assert.match(err.message, /RESOURCE_EXHAUSTED/);
});

test('anthropic messages.create, not streamed', async () => {
  const r = await sameBothWays('anthropic json', o => anthropic(o).messages.create({model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{role: 'user', content: 'How do I cross the street?'}]}));
  assert.equal(r.type, 'message');
  assert.equal(r.content[0].type, 'thinking');
  const tool = await sameBothWays('anthropic tool use', o => anthropic(o, {defaultHeaders: {'x-fake-fixture': 'anthropic-messages-tool-use-nonstream'}})
    .messages.create({model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{role: 'user', content: 'hi'}]}));
  assert.equal(tool.stop_reason, 'tool_use');
});

test('anthropic messages.create, streamed (raw events and the stream helper)', async () => {
  const events = await sameBothWays('anthropic stream', async o =>
    collect(await anthropic(o).messages.create({model: 'claude-sonnet-4-6', max_tokens: 1024, stream: true, messages: [{role: 'user', content: 'hi'}]})));
  assert.equal(events[0].type, 'message_start');
  assert.equal(events.at(-1).type, 'message_stop');
  const final = await sameBothWays('anthropic stream helper', o =>
    anthropic(o, {defaultHeaders: {'x-fake-fixture': 'anthropic-stream-tool-use'}}).messages
      .stream({model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{role: 'user', content: 'hi'}]}).finalMessage());
  assert.ok(final.content.some(b => b.type === 'tool_use' || b.type === 'server_tool_use'));
});

test('anthropic errors reach the SDK unchanged (529 overloaded, 429)', async () => {
  for (const mode of ['529', '429']) {
    const err = await sameBothWays(`anthropic ${mode}`, async o => {
      try { await anthropic(o).messages.create({model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{role: 'user', content: 'hi'}]}, {headers: {'x-fake-mode': mode}}); }
      catch (e) { return {status: e.status, error: e.error, name: e.constructor.name, retryAfter: e.headers?.get?.('retry-after') ?? null}; }
      throw new Error('no error');
    });
    assert.equal(err.status, Number(mode));
  }
});
