// The fake upstream's billing mode (tests/fake_upstream/billing.mjs), which the
// realcli suite bills each CLI's session with: per provider, the prompt cache
// as the provider documents it, the cached counts in the usage each format
// reports, and the bill; and the scripted mode's answer to a client's own
// compaction request, from which a compacted session counts its turns on.
import {test, beforeEach, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, rawRequest, usageOf} from '../support/index.mjs';

const turns = Array.from({length: 10}, (_, i) => ({tool_calls: [{name: 'shell', input: {cmd: `step ${i}`}}]}));
let fake;
beforeEach(async () => { await fake?.close(); fake = await startFakeUpstream({script: {turns}, billing: true}); });
after(async () => { await fake?.close(); });

async function post(p, body) {
  const r = await rawRequest({port: fake.port, method: 'POST', path: p,
    headers: {'content-type': 'application/json', authorization: 'Bearer sk-billing-test'}, body: JSON.stringify(body)});
  assert.equal(r.status, 200, r.body.toString());
  return {usage: usageOf(r.body, body.stream || /stream/.test(p) ? 'sse' : 'json'), charge: fake.last().billing,
    tokens: Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4)};
}

// n bytes of distinct text (no two lines alike).
const text = (n, tag) => Array.from({length: Math.ceil(n / 40)}, (_, i) => `${tag} line ${i} `.padEnd(39, '.')).join('\n').slice(0, n);
const bytes = v => Buffer.byteLength(JSON.stringify(v ?? null));
// The automatic caches' reading: whole 128-token (512-byte) steps of the prompt
// (tools, instructions, then the conversation) the earlier request sent.
const steps = promptBytes => Math.floor(promptBytes / 512) * 128;

const TOOLS = [{type: 'function', name: 'shell', parameters: {type: 'object'}}];
const responsesItems = n => Array.from({length: n}, (_, i) => ({type: 'function_call_output', call_id: `c${i}`, output: text(3000, `out${i}`)}));

for (const stream of [false, true])
  test(`openai Responses${stream ? ' streamed' : ''}: the longest prefix seen, from 1,024 tokens in 128-token steps, in input_tokens_details`, async () => {
    const first = responsesItems(6), body1 = {model: 'gpt-5.1-codex', stream, tools: TOOLS, input: first};
    const a = await post('/v1/responses', body1);
    assert.equal(a.charge.cached, 0);
    assert.equal(a.usage.input_tokens, a.tokens);
    assert.equal(a.usage.input_tokens_details.cached_tokens, 0);
    // The same conversation, two items longer: all of the first prompt in whole steps.
    const b = await post('/v1/responses', {...body1, input: [...first, ...responsesItems(8).slice(6)]});
    const firstPrompt = bytes(TOOLS) + bytes(null) + first.reduce((n, it) => n + bytes(it), 0);
    assert.equal(b.charge.cached, steps(firstPrompt));
    assert.ok(b.charge.cached >= 1024 && b.charge.cached % 128 === 0);
    assert.equal(b.usage.input_tokens_details.cached_tokens, b.charge.cached);
    assert.equal(b.usage.input_tokens, b.tokens);
    assert.equal(b.charge.cache_break, false);
    // The first item changed: only the tools are alike, under 1,024 tokens: nothing read, a cache break.
    const c = await post('/v1/responses', {...body1, input: [{...first[0], output: 'changed'}, ...first.slice(1)]});
    assert.equal(c.charge.cached, 0);
    assert.equal(c.charge.cache_break, true);
  });

test('openai chat: a repeated prompt under 1,024 tokens is not cached; over it, prompt_tokens_details says what was', async () => {
  const small = {model: 'gpt-5.1-codex', messages: [{role: 'user', content: text(3000, 'small')}], tools: [{type: 'function', function: {name: 'shell'}}]};
  await post('/v1/chat/completions', small);
  assert.equal((await post('/v1/chat/completions', small)).charge.cached, 0);
  const big = {...small, messages: [{role: 'user', content: text(9000, 'big')}]};
  await post('/v1/chat/completions', big);
  const again = await post('/v1/chat/completions', big);
  assert.equal(again.charge.cached, steps(bytes(big.tools) + bytes(big.messages[0])));
  assert.equal(again.usage.prompt_tokens_details.cached_tokens, again.charge.cached);
  assert.equal(again.usage.prompt_tokens, again.tokens);
});

test('gemini: implicit caching from the model\'s minimum (2,048 tokens on 2.5 Flash), in cachedContentTokenCount', async () => {
  const p = '/v1beta/models/gemini-2.5-flash:generateContent';
  const tools = [{functionDeclarations: [{name: 'shell'}]}];
  const contents = n => Array.from({length: n}, (_, i) => ({role: i % 2 ? 'model' : 'user', parts: [{text: text(3000, `g${i}`)}]}));
  // About 1,500 tokens: over OpenAI's minimum, under this model's.
  const small = {contents: contents(2), tools};
  await post(p, small);
  const s = await post(p, small);
  assert.equal(s.charge.cached, 0);
  assert.equal(s.usage.cachedContentTokenCount, undefined);
  const body = {contents: contents(5), tools};
  await post(p, body);
  const g = await post(p, {...body, contents: contents(7)});
  assert.equal(g.charge.cached, steps(bytes(tools) + bytes(null) + body.contents.reduce((n, c) => n + bytes(c), 0)));
  assert.equal(g.usage.cachedContentTokenCount, g.charge.cached);
  assert.equal(g.usage.promptTokenCount, g.tokens);
});

// Anthropic messages: system marked, then `pairs` tool rounds, the newest block marked.
function anthropicBody(pairs, {mark = true, model = 'claude-sonnet-4-5'} = {}) {
  const cc = mark ? {cache_control: {type: 'ephemeral'}} : {};
  const messages = [{role: 'user', content: [{type: 'text', text: text(6000, 'task')}]}];
  for (let i = 0; i < pairs; i++) messages.push(
    {role: 'assistant', content: [{type: 'tool_use', id: `t${i}`, name: 'shell', input: {cmd: `c${i}`}}]},
    {role: 'user', content: [{type: 'tool_result', tool_use_id: `t${i}`, content: text(400, `r${i}`)}]});
  Object.assign(messages.at(-1).content.at(-1), cc);
  return {model, max_tokens: 100, stream: true, tools: [{name: 'shell', input_schema: {type: 'object'}}],
    system: [{type: 'text', text: text(6000, 'system'), ...cc}], messages};
}

test('anthropic: reads what an earlier breakpoint wrote (up to 20 blocks back), writes up to its last breakpoint, in the usage fields', async () => {
  const a = await post('/v1/messages', anthropicBody(1));
  assert.equal(a.charge.cached, 0);
  assert.ok(a.charge.creation > 3000);
  assert.equal(a.usage.cache_creation_input_tokens, a.charge.creation);
  assert.equal(a.usage.cache_creation.ephemeral_5m_input_tokens, a.charge.creation);
  assert.equal(a.usage.input_tokens, a.tokens - a.charge.creation);
  // Two blocks later, the breakpoint moved to the newest one: the first request's
  // whole prefix is read; what follows it is written.
  const b = await post('/v1/messages', anthropicBody(2));
  assert.equal(b.charge.cached, a.charge.creation);
  assert.equal(b.usage.cache_read_input_tokens, b.charge.cached);
  assert.ok(b.charge.creation > 100 && b.charge.creation < 300, String(b.charge.creation));
  assert.equal(b.usage.input_tokens, b.tokens - b.charge.cached - b.charge.creation);
  assert.equal(b.charge.cache_break, false);
  // 24 blocks later: past the lookback, only the system prompt's breakpoint is found.
  const c = await post('/v1/messages', anthropicBody(14));
  assert.ok(c.charge.cached > 1000 && c.charge.cached < a.charge.creation / 2, String(c.charge.cached));
  assert.equal(c.charge.cache_break, true);
  // A client that marks nothing caches nothing.
  const d = await post('/v1/messages', anthropicBody(14, {mark: false}));
  assert.deepEqual([d.charge.cached, d.charge.creation, d.usage.input_tokens], [0, 0, d.tokens]);
  // A prefix under the model's minimum (4,096 tokens on Opus) is not written.
  const e = await post('/v1/messages', anthropicBody(1, {model: 'claude-opus-4-5'}));
  assert.ok(e.tokens < 4096 * 1.2 && e.tokens > 3000);
  assert.equal(e.charge.creation, 0);
});

test('the bill: each request at its model\'s prices, cache breaks counted', async () => {
  const first = responsesItems(6), body = {model: 'gpt-5.1-codex', tools: TOOLS, input: first};
  await post('/v1/responses', body);
  await post('/v1/responses', {...body, input: [...first, ...responsesItems(7).slice(6)]});
  await post('/v1/responses', {...body, input: first.slice(1)});
  const s = fake.billing.summary();
  const charges = fake.requests.map(r => r.billing);
  // gpt-5.1-codex: $1.25 input, $0.125 cached, $10 output per million tokens.
  const want = charges.reduce((n, c) => n + ((c.input - c.cached) * 1.25 + c.cached * 0.125 + 20 * 10) / 1e6, 0);
  assert.ok(Math.abs(s.cost - want) < 1e-12, `${s.cost} != ${want}`);
  assert.deepEqual([s.requests, s.output, s.cache_breaks], [3, 60, 1]);
  assert.equal(s.cached, charges[1].cached);
  assert.ok(charges[1].cached > 0);
});

test('scripted mode: a client\'s compaction request gets a summary naming the turn reached; the turns after it count on from there', async () => {
  const turnsOf = n => Array.from({length: n}, (_, i) => [
    {type: 'function_call', call_id: `c${i}`, name: 'shell', arguments: '{}'}, {type: 'function_call_output', call_id: `c${i}`, output: 'ok'}]).flat();
  const user = t => ({type: 'message', role: 'user', content: [{type: 'input_text', text: t}]});
  const r = await rawRequest({port: fake.port, method: 'POST', path: '/v1/responses', headers: {'content-type': 'application/json'},
    body: JSON.stringify({model: 'gpt-5.1-codex', input: [user('go'), ...turnsOf(4), user('You are performing a CONTEXT CHECKPOINT COMPACTION. Summarize.')]})});
  const summary = JSON.parse(r.body).output.find(i => i.type === 'message').content[0].text;
  assert.equal(summary, 'Scripted summary: the session had reached turn 4.');
  assert.equal(fake.last().scriptTurn, -1);
  // The compacted history: the task, the summary, then one more turn: turn 5.
  await post('/v1/responses', {model: 'gpt-5.1-codex', tools: TOOLS, input: [user('go'), user(`Another model wrote: ${summary}`), ...turnsOf(1)]});
  assert.equal(fake.last().scriptTurn, 5);
  // Without billing mode, usage counts the body and nothing cached, as before.
  const plain = await startFakeUpstream({script: {turns}});
  try {
    const body = {model: 'gpt-5.1-codex', tools: TOOLS, input: responsesItems(6)};
    for (let i = 0; i < 2; i++) {
      const p = await rawRequest({port: plain.port, method: 'POST', path: '/v1/responses', headers: {'content-type': 'application/json'}, body: JSON.stringify(body)});
      assert.equal(usageOf(p.body, 'json').input_tokens_details.cached_tokens, 0);
    }
    assert.equal(plain.billing, null);
  } finally {
    await plain.close();
  }
});
