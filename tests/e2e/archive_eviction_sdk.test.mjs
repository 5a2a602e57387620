// The recall loop of an evicted task through `tokendiet serve` with the official
// SDKs (docs/design.md §The archive, §Recall): a session whose completed task
// the semantic mode evicts (tests/support/eviction_sessions.mjs), the fake's
// model calls tokendiet_recall on a tombstone (x-fake-mode: recall), the proxy
// answers it from the archive and continues upstream, and the SDK gets one
// well-formed answer that quotes the evicted text, with no trace of the call,
// for Anthropic Messages, OpenAI Responses and Gemini, streamed and not.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {GoogleGenAI} from '@google/genai';
import {startFakeUpstream, startTokendiet, tempDir} from '../support/index.mjs';
import {PROVIDERS, steps, evictionConfig, TOMBSTONE, RECALL, idOf} from '../support/eviction_sessions.mjs';

const KEY = 'sk-archive-sdk';
const HEADERS = {'x-fake-mode': 'recall'};

let fake, td, tmp;
before(async () => {
  fake = await startFakeUpstream();
  tmp = tempDir('td-archive-sdk-');
  td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url},
    config: evictionConfig(path.join(tmp.dir, 'archive'))});
});
after(async () => { await td?.stop(); await fake?.close(); tmp?.cleanup(); });

const outputText = r => r.output.flatMap(o => o.content ?? []).map(c => c.text ?? '').join('');

// Each provider's SDK call of the session's body: {text, raw, calls} of the answer.
const CALLS = {
  async anthropic(body, stream) {
    const client = new Anthropic({apiKey: KEY, baseURL: td.url, maxRetries: 0, defaultHeaders: HEADERS});
    const r = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
    assert.equal(r.stop_reason, 'end_turn');
    return {text: r.content.map(b => b.text ?? '').join(''), raw: r, calls: r.content.filter(b => b.type === 'tool_use').length};
  },
  async responses(body, stream) {
    const client = new OpenAI({apiKey: KEY, baseURL: `${td.url}/v1`, maxRetries: 0, defaultHeaders: HEADERS});
    const r = stream ? await client.responses.stream(body).finalResponse() : await client.responses.create(body);
    return {text: outputText(r), raw: r, calls: r.output.filter(o => o.type === 'function_call').length};
  },
  async gemini(body, stream) {
    const ai = new GoogleGenAI({apiKey: KEY, httpOptions: {baseUrl: td.url, headers: HEADERS}});
    const params = {model: 'gemini-2.5-pro', contents: body.contents,
      config: {systemInstruction: body.systemInstruction, tools: body.tools}};
    if (!stream) {
      const r = await ai.models.generateContent(params);
      return {text: r.text, raw: r, calls: r.functionCalls?.length ?? 0};
    }
    let text = '', calls = 0;
    const chunks = [];
    for await (const c of await ai.models.generateContentStream(params)) {
      text += c.text ?? '';
      calls += c.functionCalls?.length ?? 0;
      chunks.push(c);
    }
    return {text, raw: chunks, calls};
  },
};

for (const [provider, p] of Object.entries(PROVIDERS)) {
  for (const stream of [false, true]) {
    test(`${provider}${stream ? ', streamed' : ''}: an evicted output read back through tokendiet_recall, one answer quoting it`, async () => {
      const {list, evicted} = steps(p.todo);
      fake.clear();
      const r = await CALLS[provider](p.body(list, false), stream);
      assert.equal(fake.requests.length, 2, 'the recall round and its continuation');
      const first = JSON.parse(fake.requests[0].body.toString('utf8'));
      assert.ok(p.offersRecall(first));
      const tombstones = p.results(first).filter(t => TOMBSTONE.test(t));
      assert.equal(tombstones.length, 2, 'the completed task\'s outputs were evicted');
      const c = p.continuation(JSON.parse(fake.requests[1].body.toString('utf8')));
      assert.equal(c.callId, idOf(tombstones[0]));
      assert.equal(c.result, evicted[0], 'the archived text went upstream as the recall\'s result');
      assert.ok(r.text.startsWith('Let me read the archived output.'), r.text.slice(0, 200));
      assert.ok(r.text.includes(`Recalled: ${evicted[0].slice(0, 200)}`), r.text.slice(0, 300));
      assert.equal(r.calls, 0);
      assert.ok(!JSON.stringify(r.raw).includes(RECALL), 'no trace of the recall call');
    });
  }
}
