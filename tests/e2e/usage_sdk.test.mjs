// The official SDKs of all three providers, streamed and not, through
// tokendiet to the fake upstream: every SDK gets the answer it would get
// directly (an OpenAI stream without include_usage shows no usage), and the
// usage logged and written to the ledger for each request equals what the
// fake upstream reported.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFile} from 'node:child_process';
import path from 'node:path';
import {promisify} from 'node:util';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {GoogleGenAI} from '@google/genai';
import {startFakeUpstream, startTokendiet, tokendietBin, loadFixture, usageOf} from '../support/index.mjs';

const run = promisify(execFile);
let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  const up = `http://127.0.0.1:${fake.port}`;
  td = await startTokendiet({upstreams: {openai: up, gemini: up, anthropic: up}});
});
after(async () => {
  await td?.stop();
  await fake?.close();
});

const openai = () => new OpenAI({apiKey: 'sk-test', baseURL: `${td.url}/v1`, maxRetries: 0});
const anthropic = () => new Anthropic({apiKey: 'sk-ant-test', baseURL: td.url, maxRetries: 0});
const gemini = () => new GoogleGenAI({apiKey: 'gm-test', httpOptions: {baseUrl: td.url}});

// The provider's usage normalised as tokendiet documents it (README, Usage accounting).
function normalised(u) {
  if ('promptTokenCount' in u || 'candidatesTokenCount' in u) {
    return {prompt: (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0),
      completion: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
      cached: u.cachedContentTokenCount ?? 0, reasoning: u.thoughtsTokenCount ?? 0};
  }
  if ('prompt_tokens' in u) {
    return {prompt: u.prompt_tokens, completion: u.completion_tokens,
      cached: u.prompt_tokens_details?.cached_tokens ?? 0,
      reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0};
  }
  if ('cache_read_input_tokens' in u || 'cache_creation_input_tokens' in u) {
    const read = u.cache_read_input_tokens ?? 0, write = u.cache_creation_input_tokens ?? 0;
    return {prompt: u.input_tokens + read + write, completion: u.output_tokens, cached: read, reasoning: 0};
  }
  return {prompt: u.input_tokens, completion: u.output_tokens,
    cached: u.input_tokens_details?.cached_tokens ?? 0,
    reasoning: u.output_tokens_details?.reasoning_tokens ?? 0};
}

// model name (each call uses its own) → the fixture the fake served for it.
const served = new Map();
const remember = model => served.set(model, fake.last().fixture);

test('OpenAI SDK, stream without include_usage: the chunks carry no usage', async () => {
  const model = 'gpt-5.1-e2e-stream';
  const stream = await openai().chat.completions.create({model, stream: true,
    messages: [{role: 'user', content: 'Count to six.'}]});
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  remember(model);
  assert.equal(chunks.map(c => c.choices[0]?.delta?.content ?? '').join(''), 'six');
  assert.ok(chunks.every(c => !('usage' in c)), 'a chunk has a usage member');
  assert.ok(chunks.every(c => c.choices.length === 1), 'a usage-only chunk reached the SDK');
  assert.equal(JSON.parse(fake.last().body).stream_options.include_usage, true);
});

test('OpenAI SDK, stream with include_usage and non-stream: usage as the upstream sent it', async () => {
  const model = 'gpt-5.1-e2e-asked';
  const stream = await openai().chat.completions.create({model, stream: true,
    stream_options: {include_usage: true}, messages: [{role: 'user', content: 'Count to six.'}]});
  let usage = null;
  for await (const c of stream) if (c.usage) usage = c.usage;
  remember(model);
  assert.equal(usage.prompt_tokens, 33);
  const r = await openai().chat.completions.create({model: 'gpt-5.1-e2e-json', messages: [{role: 'user', content: 'hi'}]});
  remember('gpt-5.1-e2e-json');
  assert.equal(r.usage.completion_tokens, 10);
});

test('Anthropic SDK, streamed and not', async () => {
  const client = anthropic();
  const stream = client.messages.stream({model: 'claude-e2e-stream', max_tokens: 1024,
    messages: [{role: 'user', content: 'How do I cross the street?'}]});
  const final = await stream.finalMessage();
  remember('claude-e2e-stream');
  assert.equal(final.usage.output_tokens, 282);
  const msg = await client.messages.create({model: 'claude-e2e-json', max_tokens: 1024,
    messages: [{role: 'user', content: 'hi'}]});
  remember('claude-e2e-json');
  assert.equal(msg.usage.output_tokens, 321);
});

test('Gemini SDK, streamed and not', async () => {
  const ai = gemini();
  let last = null;
  for await (const c of await ai.models.generateContentStream({model: 'gemini-e2e-stream', contents: 'hello'}))
    if (c.usageMetadata) last = c.usageMetadata;
  remember('gemini-e2e-stream');
  assert.equal(last.promptTokenCount, 148);
  const r = await ai.models.generateContent({model: 'gemini-e2e-json', contents: 'hello'});
  remember('gemini-e2e-json');
  assert.equal(r.usageMetadata.thoughtsTokenCount, 125);
});

// The access log line carries the same numbers the ledger row gets (both
// read the request context the usage filter filled).
test('the logged usage of every request equals what the fake upstream reported', async () => {
  assert.equal(served.size, 7);
  for (const [model, fixture] of served) {
    const fx = loadFixture(fixture);
    const want = normalised(usageOf(fx.body, fx.kind));
    const line = JSON.parse(await td.waitForLine(new RegExp(`"event":"request".*"model":"${model}"`), 5000));
    assert.deepEqual({prompt: line.usage_prompt, completion: line.usage_completion,
      cached: line.usage_cached_read ?? 0, reasoning: line.usage_reasoning ?? 0}, want, `${model} (${fixture})`);
  }
});

test('the usage ledger rows equal what the fake upstream reported', async () => {
  const ledger = path.join(td.stateDir, 'usage.db');
  let report = null;
  // Rows go through the ledger's writer thread: wait (bounded) for all of them.
  for (let i = 0; i < 100; i++) {
    try {
      const {stdout} = await run(tokendietBin(), ['usage', '--json', '--by', 'model', '--ledger', ledger]);
      report = JSON.parse(stdout);
      if (report.total.requests >= served.size) break;
    } catch { /* not created yet */ }
    await new Promise(r => setTimeout(r, 50));
  }
  assert.ok(report, 'no ledger');
  for (const [model, fixture] of served) {
    const fx = loadFixture(fixture);
    const want = normalised(usageOf(fx.body, fx.kind));
    const row = report.groups.find(g => g.key === model);
    assert.ok(row, `no ledger group for ${model}: ${JSON.stringify(report.groups.map(g => g.key))}`);
    assert.equal(row.requests, 1, model);
    assert.deepEqual({prompt: row.upstream_prompt_tokens, completion: row.upstream_completion_tokens,
      cached: row.upstream_cached_tokens, reasoning: row.upstream_reasoning_tokens}, want, `${model} (${fixture})`);
  }
});
