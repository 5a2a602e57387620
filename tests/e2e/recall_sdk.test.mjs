// The recall loop end to end (docs/design.md §Recall) with the official SDKs:
// the fake's model calls tokendiet_recall (x-fake-mode: recall), the proxy
// answers the call from the archive and continues upstream, and the SDK gets
// one well-formed answer (streamed or not) that quotes the archived text, with
// no trace of the call, usage summed over both rounds.
// The proxy here is tests/support/recall_test_proxy.cpp: the real network
// core, recall and usage filters, behind a test filter that adds the tool over
// a directory of entries, so each case of the loop needs no eviction first.
// The same loop after a real eviction through `tokendiet serve`:
// archive_eviction_sdk.test.mjs.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {GoogleGenAI} from '@google/genai';
import {startFakeUpstream, startRecallTestProxy, tempDir} from '../support/index.mjs';

const ENTRY = 'td-0123456789abcdef0123456789abcdef';
const ARCHIVED = 'pytest output:\nFAILED tests/test_parser.py::test_nested - KeyError: "depth"\n3 passed, 1 failed';
const RECALLED = `Recalled: ${ARCHIVED}`;

let fake, proxy, archive, url;
before(async () => {
  fake = await startFakeUpstream();
  archive = tempDir('td-recall-');
  fs.writeFileSync(path.join(archive.dir, ENTRY), ARCHIVED);
  const started = await startRecallTestProxy(fake.port, archive.dir);
  proxy = started.proc;
  const port = started.port;
  url = `http://127.0.0.1:${port}`;
});
after(async () => { proxy?.kill('SIGTERM'); await fake?.close(); archive?.cleanup(); });

const headers = (extra = {}) => ({'x-fake-mode': 'recall', 'x-fake-recall-id': ENTRY, ...extra});
const task = 'Why did the parser test fail? The output was archived as ' + ENTRY + '.';

// A Response's text, every output message's (the stream's final response has no output_text).
const outputText = r => r.output.flatMap(o => o.content ?? []).map(c => c.text ?? '').join('');

// Each provider and shape: the SDK call, its answer's text, its usage (prompt, completion).
const CASES = [
  {name: 'openai chat, streamed', async call(h) {
    const client = new OpenAI({apiKey: 'sk-test', baseURL: `${url}/v1`, maxRetries: 0, defaultHeaders: h});
    const s = client.chat.completions.stream({model: 'gpt-5.1', messages: [{role: 'user', content: task}],
      stream_options: {include_usage: true}});
    const ids = new Set();
    s.on('chunk', c => ids.add(c.id));
    const r = await s.finalChatCompletion();
    assert.equal(ids.size, 1, 'one chunk id');
    assert.equal(r.choices[0].finish_reason, 'stop');
    assert.equal(r.choices[0].message.tool_calls, undefined);
    return {text: r.choices[0].message.content, usage: [r.usage.prompt_tokens, r.usage.completion_tokens], raw: r};
  }},
  {name: 'openai chat, not streamed', async call(h) {
    const client = new OpenAI({apiKey: 'sk-test', baseURL: `${url}/v1`, maxRetries: 0, defaultHeaders: h});
    const r = await client.chat.completions.create({model: 'gpt-5.1', messages: [{role: 'user', content: task}]});
    assert.equal(r.choices[0].finish_reason, 'stop');
    return {text: r.choices[0].message.content, usage: [r.usage.prompt_tokens, r.usage.completion_tokens], raw: r};
  }},
  {name: 'responses, streamed', async call(h) {
    const client = new OpenAI({apiKey: 'sk-test', baseURL: `${url}/v1`, maxRetries: 0, defaultHeaders: h});
    const s = client.responses.stream({model: 'gpt-5.1', input: task});
    const seq = [];
    const created = [];
    s.on('event', e => { seq.push(e.sequence_number); if (e.type === 'response.created') created.push(e); });
    const r = await s.finalResponse();
    assert.deepEqual(seq, seq.map((_, i) => i), 'sequence numbers consecutive');
    assert.equal(created.length, 1);
    assert.ok(r.output.every(o => o.type !== 'function_call'));
    return {text: outputText(r), usage: [r.usage.input_tokens, r.usage.output_tokens], raw: r};
  }},
  {name: 'responses, not streamed', async call(h) {
    const client = new OpenAI({apiKey: 'sk-test', baseURL: `${url}/v1`, maxRetries: 0, defaultHeaders: h});
    const r = await client.responses.create({model: 'gpt-5.1', input: task});
    return {text: outputText(r), usage: [r.usage.input_tokens, r.usage.output_tokens], raw: r};
  }},
  {name: 'anthropic, streamed', async call(h) {
    const client = new Anthropic({apiKey: 'sk-ant-test', baseURL: url, maxRetries: 0, defaultHeaders: h});
    const s = client.messages.stream({model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{role: 'user', content: task}]});
    const kinds = [];
    s.on('streamEvent', e => kinds.push(e.type === 'content_block_start' ? `start ${e.index}` : e.type));
    const r = await s.finalMessage();
    assert.equal(kinds.filter(k => k === 'message_start').length, 1);
    assert.equal(kinds.filter(k => k === 'message_stop').length, 1);
    assert.deepEqual(kinds.filter(k => k.startsWith('start ')), r.content.map((_, i) => `start ${i}`));
    assert.equal(r.stop_reason, 'end_turn');
    return {text: r.content.map(b => b.text ?? '').join(''), usage: [r.usage.input_tokens, r.usage.output_tokens], raw: r};
  }},
  {name: 'anthropic, not streamed', async call(h) {
    const client = new Anthropic({apiKey: 'sk-ant-test', baseURL: url, maxRetries: 0, defaultHeaders: h});
    const r = await client.messages.create({model: 'claude-sonnet-4-6', max_tokens: 1024, messages: [{role: 'user', content: task}]});
    assert.equal(r.stop_reason, 'end_turn');
    return {text: r.content.map(b => b.text ?? '').join(''), usage: [r.usage.input_tokens, r.usage.output_tokens], raw: r};
  }},
  {name: 'gemini, streamed', async call(h) {
    const ai = new GoogleGenAI({apiKey: 'AIza-test', httpOptions: {baseUrl: url, headers: h}});
    let text = '', last;
    for await (const c of await ai.models.generateContentStream({model: 'gemini-2.5-pro', contents: task})) {
      text += c.text ?? '';
      assert.equal(c.functionCalls, undefined);
      last = c;
    }
    return {text, usage: [last.usageMetadata.promptTokenCount, last.usageMetadata.candidatesTokenCount], raw: last};
  }},
  {name: 'gemini, not streamed', async call(h) {
    const ai = new GoogleGenAI({apiKey: 'AIza-test', httpOptions: {baseUrl: url, headers: h}});
    const r = await ai.models.generateContent({model: 'gemini-2.5-pro', contents: task});
    assert.equal(r.functionCalls, undefined);
    return {text: r.text, usage: [r.usageMetadata.promptTokenCount, r.usageMetadata.candidatesTokenCount], raw: r};
  }},
];

// The fake bills ceil(body bytes / 4) input and 7 output tokens per round.
const billed = reqs => [reqs.reduce((n, r) => n + Math.ceil(r.bodyBytes / 4), 0), 7 * reqs.length];

for (const c of CASES) {
  test(`${c.name}: the recall call answered by the proxy, one answer quoting the archived text`, async () => {
    fake.clear();
    const r = await c.call(headers());
    assert.ok(r.text.startsWith('Let me read the archived output.'), r.text);
    assert.ok(r.text.endsWith(RECALLED), r.text);
    assert.ok(!JSON.stringify(r.raw).includes('tokendiet_recall'), 'no trace of the recall call');
    assert.equal(fake.requests.length, 2, 'the answer and its continuation');
    const second = fake.requests[1].body.toString('utf8');
    assert.ok(second.includes(JSON.stringify(ARCHIVED).slice(1, -1)), 'the archived text went upstream as the tool result');
    assert.deepEqual(r.usage, billed(fake.requests), 'usage summed over the rounds');
  });
}

for (const c of [CASES[0], CASES[4], CASES[6]]) {
  test(`${c.name}: the client's own call beside the recall call is dropped; an unknown id is said so`, async () => {
    fake.clear();
    const r = await c.call(headers({'x-fake-recall-client-call': '1', 'x-fake-recall-id': 'td-nope'}));
    assert.ok(r.text.endsWith('Recalled: tokendiet_recall: nothing hidden or archived is known as td-nope (unknown id)'), r.text);
    assert.ok(!JSON.stringify(r.raw).includes('"bash"'), 'the client call is not in the answer');
    assert.equal(fake.requests.length, 2);
    assert.ok(!fake.requests[1].body.toString('utf8').includes('"bash"'), 'nor in the continued turn');
  });
}
