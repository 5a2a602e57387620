// Thinking lowered under quota pressure (docs/design.md §Policy, §Thinking
// budget), with the official SDKs of all three providers through `tokendiet
// serve` to the fake upstream in quota mode. A key whose runway a big request
// has drained (under min(thinking_budget_runway_tokens, limit / 2) left) gets
// its reasoning effort, thinking level or thinking budget lowered: the
// upstream receives the SDK's bytes with only that value changed, and the SDK
// parses the upstream's answer as if it had called the upstream directly. A
// request without a thinking field gets none added; a key with its runway full
// gets nothing lowered.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {GoogleGenAI} from '@google/genai';
import {startFakeUpstream, startTokendiet, quotaConfig, post, explain, logLineOf, metricSamples, metricSum} from '../support/index.mjs';

// 20,000 tokens a minute: thinking is lowered under 10,000 left (half the
// limit). A minute-long window refills ~330 tokens a second, so a drained
// key stays under the threshold for the whole test even on a slow machine.
const LIMIT = 20000, WINDOW_MS = 60000;
const QUOTA = {tpm: LIMIT, itpm: LIMIT, otpm: 200000, windowMs: WINDOW_MS};

let fake, reference, td;
before(async () => {
  fake = await startFakeUpstream({quota: QUOTA});
  reference = await startFakeUpstream();  // the same answers, no quota: what the SDK gets directly
  td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url},
    config: quotaConfig({tpm_limit: LIMIT, otpm_limit: 200000, quota_window_ms: WINDOW_MS})});
});
after(async () => { await td?.stop(); await fake?.close(); await reference?.close(); });

// Served with the fixture's own usage, so the reference fake's answer is the same bytes.
const RECORDED = {'x-fake-usage': 'as-recorded'};
const openai = (origin, key) => new OpenAI({apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0, defaultHeaders: RECORDED});
const anthropic = (origin, key, fixture) => new Anthropic({apiKey: key, baseURL: origin, maxRetries: 0,
  defaultHeaders: {...RECORDED, ...(fixture ? {'x-fake-fixture': fixture} : {})}});
const gemini = (origin, key) => new GoogleGenAI({apiKey: key,
  httpOptions: {baseUrl: origin, headers: {...RECORDED, 'x-fake-fixture': 'gemini-generatecontent-thinking'}}});

// An SDK result as plain data, without the HTTP response the Gemini SDK hands back.
const plain = x => JSON.parse(JSON.stringify(x, (k, v) => (k === 'sdkHttpResponse' ? undefined : v)));

// Prose (not one repeated letter) so tokendiet's count and the fake's agree roughly.
const filler = tokens => Array.from({length: Math.ceil(tokens * 4 / 60)}, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog.`).join('\n');

// Uses up most of the runway of (key, model): one request of ~16,000 tokens.
async function drain(provider, key, model) {
  const text = filler(16000);
  let r;
  if (provider === 'openai') {
    r = await post(td, '/v1/chat/completions', JSON.stringify({model, messages: [{role: 'user', content: text}]}),
      {authorization: `Bearer ${key}`});
  } else if (provider === 'anthropic') {
    r = await post(td, '/v1/messages', JSON.stringify({model, max_tokens: 10, messages: [{role: 'user', content: text}]}),
      {'x-api-key': key});
  } else {
    r = await post(td, `/v1beta/models/${model}:generateContent`, JSON.stringify({contents: [{role: 'user', parts: [{text}]}]}),
      {'x-goog-api-key': key});
  }
  assert.equal(r.status, 200, `draining ${provider} ${model}: ${r.body}`);
  const left = Number(explain(r.headers)['runway-tokens']);
  assert.ok(left < LIMIT / 2, `${provider} ${model}: ${left} tokens left after the drain`);
}

// Calls `call(origin)` through tokendiet and straight at the reference fake;
// returns the upstream request both times, the proxied answer's explain
// headers, and asserts the SDK read the same answer both ways.
async function bothWays(label, call) {
  reference.clear();
  const direct = await call(reference.url);
  const n = fake.requests.length;
  const proxied = await call(td.url);
  assert.deepEqual(plain(proxied.result), plain(direct.result), `${label}: the SDK's result differs through tokendiet`);
  assert.equal(fake.requests.length, n + 1, `${label}: one upstream request`);
  const up = fake.last();
  assert.equal(up.status, 200, `${label}: the upstream answered ${up.status}`);
  assert.equal(up.quota.admitted, true, label);
  return {sent: reference.last().body.toString('utf8'), received: up.body.toString('utf8'), headers: explain(proxied.headers)};
}

// Each SDK call returns {result, headers}.
const viaOpenAIChat = (key, extra) => async o => {
  const {data, response} = await openai(o, key).chat.completions.create(
    {model: 'gpt-5', messages: [{role: 'user', content: 'How many letters are in Python?'}], ...extra}).withResponse();
  return {result: data, headers: response.headers};
};
const viaOpenAIResponses = (key, extra) => async o => {
  const {data, response} = await openai(o, key).responses.create({model: 'gpt-5', input: 'Say hi.', ...extra}).withResponse();
  return {result: data, headers: response.headers};
};
const viaAnthropic = (key, model, extra) => async o => {
  const {data, response} = await anthropic(o, key, 'anthropic-messages-thinking').messages.create(
    {model, max_tokens: 20000, messages: [{role: 'user', content: 'Are there infinitely many primes?'}], ...extra}).withResponse();
  return {result: data, headers: response.headers};
};
const viaGemini = (key, model, thinkingConfig) => async o => {
  const r = await gemini(o, key).models.generateContent({model, contents: 'Why is the sky blue?',
    ...(thinkingConfig ? {config: {thinkingConfig}} : {})});
  return {result: r, headers: new Headers(r.sdkHttpResponse?.headers ?? {})};
};

// The lowered cases: [label, provider, model, call(key), the SDK's bytes -> the bytes expected upstream, the header's reason].
const LOWERED = [
  ['OpenAI chat reasoning_effort', 'openai', 'gpt-5', k => viaOpenAIChat(k, {reasoning_effort: 'high'}),
    s => s.replace('"reasoning_effort":"high"', '"reasoning_effort":"low"'), /^reasoning_effort high -> low/],
  ['OpenAI Responses reasoning.effort', 'openai', 'gpt-5', k => viaOpenAIResponses(k, {reasoning: {effort: 'high'}}),
    s => s.replace('"reasoning":{"effort":"high"}', '"reasoning":{"effort":"low"}'), /^reasoning_effort high -> low/],
  ['Anthropic manual thinking budget', 'anthropic', 'claude-haiku-4-5', k => viaAnthropic(k, 'claude-haiku-4-5',
    {thinking: {type: 'enabled', budget_tokens: 16000}}),
  s => s.replace('"budget_tokens":16000', '"budget_tokens":8192'), /^thinking_budget 16000 -> 8192/],
  ['Anthropic adaptive effort', 'anthropic', 'claude-opus-4-6', k => viaAnthropic(k, 'claude-opus-4-6',
    {thinking: {type: 'adaptive'}, output_config: {effort: 'high'}}),
  s => s.replace('"output_config":{"effort":"high"}', '"output_config":{"effort":"low"}'), /high -> low/],
  ['Gemini 3 thinkingLevel', 'gemini', 'gemini-3-pro-preview', k => viaGemini(k, 'gemini-3-pro-preview', {thinkingLevel: 'HIGH'}),
    s => s.replace('"thinkingLevel":"HIGH"', '"thinkingLevel":"LOW"'), /^thinking_level HIGH -> LOW/i],
  ['Gemini 2.5 thinkingBudget', 'gemini', 'gemini-2.5-pro', k => viaGemini(k, 'gemini-2.5-pro', {thinkingBudget: -1}),
    s => s.replace('"thinkingBudget":-1', '"thinkingBudget":8192'), /^thinking_budget -1 -> 8192/],
];

test('under pressure each provider\'s thinking setting arrives upstream lowered, only its bytes changed; the SDK reads the upstream\'s answer', async () => {
  const drained = new Set();
  for (const [label, provider, model, call, lowered, reason] of LOWERED) {
    const key = `drained-${provider}`;
    if (!drained.has(`${provider}|${model}`)) { await drain(provider, key, model); drained.add(`${provider}|${model}`); }
    const {sent, received, headers} = await bothWays(label, call(key));
    assert.notEqual(lowered(sent), sent, `${label}: the SDK did not send the setting: ${sent}`);
    assert.equal(received, lowered(sent), `${label}: the upstream got something else than the lowered bytes`);
    assert.match(headers.thinking ?? '', reason, `${label}: ${JSON.stringify(headers)}`);
    assert.equal(headers.mode, 'standard', label);
    assert.ok(Number(headers['runway-tokens']) < LIMIT / 2, `${label}: ${JSON.stringify(headers)}`);
    const log = await logLineOf(td, headers['request-id']);
    assert.equal(log.thinking, headers.thinking, label);
  }
});

test('under pressure a request without a thinking field gets none added', async () => {
  const cases = [
    ['OpenAI chat', viaOpenAIChat('drained-openai', {})],
    ['OpenAI Responses', viaOpenAIResponses('drained-openai', {})],
    ['Anthropic', viaAnthropic('drained-anthropic', 'claude-haiku-4-5', {})],
    ['Gemini 2.5', viaGemini('drained-gemini', 'gemini-2.5-pro', null)],
  ];
  for (const [label, call] of cases) {
    const {sent, received, headers} = await bothWays(label, call);
    assert.equal(received, sent, `${label}: the body changed`);
    assert.equal(headers.thinking, undefined, label);
    assert.ok(Number(headers['runway-tokens']) < LIMIT / 2, `${label}: not under pressure: ${JSON.stringify(headers)}`);
  }
});

test('without pressure nothing is lowered', async () => {
  for (const [label, provider, model, call] of LOWERED) {
    const {sent, received, headers} = await bothWays(label, call(`fresh-${provider}-${model}`));
    assert.equal(received, sent, `${label}: the body changed with the runway full`);
    assert.equal(headers.thinking, undefined, label);
    assert.ok(Number(headers['runway-tokens']) > LIMIT / 2, `${label}: ${JSON.stringify(headers)}`);
  }
});

test('/metrics has the modes and the runway per quota group after them', async () => {
  const m = await metricSamples(td);
  for (const provider of ['openai', 'anthropic', 'gemini']) {
    assert.ok(metricSum(m, 'tokendiet_mode_requests_total', {provider, mode: 'standard'}) >= 3, provider);
    const g = m.filter(s => s.name === 'tokendiet_runway_tokens' && s.labels.provider === provider);
    assert.ok(g.length >= 1, `${provider}: no runway gauge`);
  }
  const gpt5 = m.find(s => s.name === 'tokendiet_runway_tokens' && s.labels.quota_group === 'gpt-5');
  assert.ok(gpt5 && gpt5.value >= 0 && gpt5.value <= LIMIT, JSON.stringify(gpt5));
});
