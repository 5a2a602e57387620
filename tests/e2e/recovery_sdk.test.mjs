// Context-overflow recovery end to end (F21; proxy/filters/recovery_filter.hpp):
// for each provider, an official SDK sends a long agent history through
// `tokendiet serve` to a fake whose model holds fewer tokens than the request
// (x-fake-context-window): the fake answers its context-length error, tokendiet
// retries exactly once, compressed to fit with the note last, and the SDK gets
// the normal answer; the session's next request then goes compressed under
// what the retry fitted in, with no failed attempt first; a request no level
// makes fit gets the upstream's error unchanged, after one upstream request.
// The log line and /metrics record it.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {GoogleGenAI} from '@google/genai';
import {startFakeUpstream, startTokendiet, rawRequest, recordedHistory, agentRequest} from '../support/index.mjs';

const NOTE = "[tokendiet: older history was compressed to fit the model's context window; re-read or re-run what you need.]";

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  // Survival off: the fixtures' recorded rate-limit headers must not move the
  // first attempt to a harder level between the measurement and the test.
  td = await startTokendiet({upstreams: {openai: fake.url, gemini: fake.url, anthropic: fake.url},
    config: 'profiles:\n  - name: default\n    survival: false\n'});
});
after(async () => { await td?.stop(); await fake?.close(); });

const history = recordedHistory();
const fakeTokens = req => Math.ceil(req.bodyBytes / 4);
const windows = {};  // provider -> the window its first test's fake held

// Each provider: the SDK call with extra headers, what its answer must hold,
// and where the last user text sits in the body the fake received.
const PROVIDERS = [
  {provider: 'openai', format: 'openai_chat',
    call: async headers => {
      const b = JSON.parse(agentRequest('openai_chat', history, 'Carry on.').body);
      return new OpenAI({apiKey: 'sk-test-e2e', baseURL: `${td.url}/v1`, maxRetries: 0, defaultHeaders: headers})
        .chat.completions.create(b);
    },
    answered: r => r.object === 'chat.completion' && r.choices.length > 0,
    lastText: b => b.messages.at(-1).content},
  {provider: 'anthropic', format: 'anthropic',
    call: async headers => {
      const b = JSON.parse(agentRequest('anthropic', history, 'Carry on.').body);
      return new Anthropic({apiKey: 'sk-ant-test-e2e', baseURL: td.url, maxRetries: 0, defaultHeaders: headers}).messages.create(b);
    },
    answered: r => r.type === 'message' && r.content.length > 0,
    lastText: b => {
      const c = b.messages.at(-1).content;
      return typeof c === 'string' ? c : c.map(x => x.text ?? '').join('');
    }},
  {provider: 'gemini', format: 'gemini',
    call: async headers => {
      const b = JSON.parse(agentRequest('gemini', history, 'Carry on.').body);
      return new GoogleGenAI({apiKey: 'AIza-test-e2e', httpOptions: {baseUrl: td.url, headers}}).models.generateContent(
        {model: 'gemini-2.5-pro', contents: b.contents, config: {systemInstruction: b.systemInstruction, tools: b.tools}});
    },
    answered: r => r.candidates?.length > 0,
    lastText: b => b.contents.at(-1).parts.map(p => p.text ?? '').join('')},
];


async function metrics() {
  return (await rawRequest({port: td.port, path: '/metrics'})).body.toString('utf8');
}

for (const p of PROVIDERS) {
  test(`${p.provider}: a context-length error is retried once, compressed to fit; the SDK gets a normal answer`, async () => {
    // What the first attempt sends (the diet is stable: the same request, the same bytes).
    fake.clear();
    assert.ok(p.answered(await p.call({})));
    const firstTokens = fakeTokens(fake.last());
    const window = Math.floor(firstTokens * 0.6);
    windows[p.provider] = window;

    fake.clear();
    const from = td.lines.length;
    const r = await p.call({'x-fake-context-window': String(window)});
    assert.ok(p.answered(r), JSON.stringify(r).slice(0, 300));
    assert.equal(fake.requests.length, 2, 'the attempt and exactly one retry');
    const [first, retry] = fake.requests;
    assert.equal(first.status, 400);
    assert.equal(fakeTokens(first), firstTokens);
    assert.equal(retry.status, 200);
    assert.ok(fakeTokens(retry) <= window, `the retry fits: ${fakeTokens(retry)} of ${window}`);
    assert.equal(p.lastText(JSON.parse(retry.body)), NOTE);

    const line = JSON.parse(await td.waitForLine(new RegExp(`"provider":"${p.provider}".*"recovery":"retried"`), 10000, from));
    assert.equal(line.retries, 1);
    assert.equal(line.status, 200);
    assert.ok(line.tokens_after < line.tokens_before, JSON.stringify(line));
    assert.match(await metrics(), new RegExp(`tokendiet_recovery_total\\{provider="${p.provider}",[^}]*outcome="retried"\\} 1`));
  });

  test(`${p.provider}: once the session overflowed, its next request goes compressed, with no failed attempt`, async () => {
    const window = windows[p.provider];
    assert.ok(window, 'the retry test ran first');
    fake.clear();
    const from = td.lines.length;
    const r = await p.call({'x-fake-context-window': String(window)});
    assert.ok(p.answered(r), JSON.stringify(r).slice(0, 300));
    assert.equal(fake.requests.length, 1, 'no context-length error first');
    assert.equal(fake.last().status, 200);
    assert.ok(fakeTokens(fake.last()) <= window, `it fits: ${fakeTokens(fake.last())} of ${window}`);
    const line = JSON.parse(await td.waitForLine(new RegExp(`"provider":"${p.provider}"`), 10000, from));
    assert.equal(line.recovery, undefined);
    assert.ok(line.tokens_after < line.tokens_before, JSON.stringify(line));
  });

  test(`${p.provider}: a request no level makes fit gets the upstream's error unchanged, after one attempt`, async () => {
    fake.clear();
    const from = td.lines.length;
    let error;
    // A session of its own: the overflow the session above remembers does not apply.
    const session = {'x-tokendiet-session': `no-fit-${p.provider}`};
    try { await p.call({'x-fake-context-window': '50', ...session}); } catch (e) { error = e; }
    assert.ok(error, 'the SDK raised the error');
    assert.equal(error.status ?? error.code, 400);
    assert.equal(fake.requests.length, 1, 'no retry');
    // The body the client got is the one the fake sent: ask the fake the same directly.
    const sent = fake.last();
    const direct = await rawRequest({port: fake.port, method: 'POST', path: sent.url, body: sent.body,
      headers: {'content-type': 'application/json', 'x-fake-context-window': '50'}});
    const proxied = await rawRequest({port: td.port, method: 'POST', path: sent.url, body: sent.body,
      headers: {'content-type': 'application/json', 'x-fake-context-window': '50', ...session}});
    assert.equal(proxied.status, 400);
    assert.ok(proxied.body.equals(direct.body), 'the error body, byte for byte');
    const line = JSON.parse(await td.waitForLine(new RegExp(`"provider":"${p.provider}".*"recovery":"no_fit"`), 10000, from));
    assert.equal(line.retries, undefined);
    assert.equal(line.context_length_exceeded, true);
  });
}
