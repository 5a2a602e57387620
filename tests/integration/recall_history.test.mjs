// Recall from the client's own history through `tokendiet serve`
// (docs/design.md §Recall): a stale output's snip names its hidden lines by a
// handle; a scripted model (the fake upstream's recall mode) calls
// tokendiet_recall for them and the continuation carries exactly those bytes,
// taken from the request the client sent, with nothing stored: the same with
// the proxy restarted between the request that cut and the one that recalls.
// In each format as its agent sends it: Claude Code's Anthropic shape
// streamed, Codex's Responses shape streamed, OpenAI chat, Gemini. The client
// sees one well-formed answer and never the tool. A Responses request that
// continues a server-held conversation (previous_response_id) is not cut.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, post} from '../support/index.mjs';
import {PROVIDERS as EVICTION_PROVIDERS, RECALL} from '../support/eviction_sessions.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const KEY = 'sk-recall-history';
const NOTICE = /\[… (t[0-9a-f]{8}):(\d+)-(\d+) hidden\]/;

// Every stale output is cut at once, on a short session; no semantic mode.
const CONFIG = `profiles:
  - name: cut
    trigger_tokens: 0
    payback_turn_fraction: 1
    max_loss: 1
    completed_tasks: false
`;

// 60 lines that differ in their words (nothing for low_entropy to fold),
// some not ASCII (JSON escapes must not shift a byte).
const word = i => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + ((i * 7) % 26)) + 'x';
const output = k => {
  let s = '';
  for (let i = 1; i <= 60; i++) s += `step ${k} ${word(i)} ${word(i + k)}: value ${(i * 7919) % 1000}${i % 9 === 0 ? ' caf\u00e9 \u2713' : ''} of the listing\n`;
  return s;
};
const list = () => Array.from({length: 16}, (_, k) => ['bash', {command: `run ${k}`}, output(k)]);

const bashTool = {name: 'bash', description: 'Run a command', schema: {type: 'object', properties: {command: {type: 'string'}}}};
const chat = {
  upstreams: url => ({openai: url}),
  body(steps, stream) {
    const messages = [{role: 'system', content: 'You are an agent.'}, {role: 'user', content: 'Fix the parser.'}];
    steps.forEach(([name, args, result], n) => {
      messages.push({role: 'assistant', content: null,
        tool_calls: [{id: `call_${n}`, type: 'function', function: {name, arguments: JSON.stringify(args)}}]});
      messages.push({role: 'tool', tool_call_id: `call_${n}`, content: result});
    });
    return {model: 'gpt-4o', messages, tools: [{type: 'function', function: {name: bashTool.name,
      description: bashTool.description, parameters: bashTool.schema}}], ...(stream ? {stream} : {})};
  },
  path: () => '/v1/chat/completions',
  headers: key => ({authorization: `Bearer ${key}`}),
  results: b => b.messages.filter(m => m.role === 'tool').map(m => String(m.content)),
  offersRecall: b => b.tools.some(t => t.function?.name === RECALL),
  continuation(b) {
    const last = b.messages.at(-1);
    const call = b.messages.at(-2).tool_calls?.find(c => c.function.name === RECALL);
    return {result: last.role === 'tool' ? String(last.content) : null,
      callId: call && JSON.parse(call.function.arguments).id, linked: last.tool_call_id === call?.id};
  },
  answer: j => j.choices[0].message.content ?? '',
  streamText: e => e.choices?.[0]?.delta?.content ?? '',
};

// [label, provider, streamed]: each format as its agent sends it.
const CASES = [
  ['Claude Code (Anthropic, streamed)', EVICTION_PROVIDERS.anthropic, true],
  ['Codex (Responses, streamed)', EVICTION_PROVIDERS.responses, true],
  ['OpenAI chat', chat, false],
  ['Gemini', EVICTION_PROVIDERS.gemini, false],
];

const upstreamBody = req => JSON.parse(req.body.toString('utf8'));
const dataEvents = text => text.split('\n').filter(l => l.startsWith('data: {')).map(l => JSON.parse(l.slice(6)));
const linesOf = (text, a, b) => text.split(/(?<=\n)/).slice(a - 1, b).join('');

for (const [label, p, stream] of CASES) {
  for (const restart of [false, true]) {
    test(`${label}: a snipped output's hidden lines recalled from the client's history${restart ? ', the proxy restarted in between' : ''}`, async () => {
      const steps = list();
      const body = JSON.stringify(p.body(steps, stream));
      const send = (td, extra = {}) => post(td, p.path(stream, KEY), body, {...p.headers(KEY), ...extra});
      let td = await startTokendiet({upstreams: p.upstreams(fake.url), config: CONFIG});
      try {
        fake.clear();
        const first = await send(td);
        assert.equal(first.status, 200, first.body.toString());
        const sent = upstreamBody(fake.last());
        assert.ok(p.offersRecall(sent), 'the tool is offered once a cut is in the request');
        const results = p.results(sent);
        const k = results.findIndex(r => NOTICE.test(r));
        assert.ok(k >= 0, `a snip notice names its lines: ${results[0].slice(0, 300)}`);
        const [, handle, a, b] = NOTICE.exec(results[k]);
        const hidden = linesOf(steps[k][2], Number(a), Number(b));
        assert.ok(!results[k].includes(hidden.split('\n')[1]), 'those lines did not go upstream');

        if (restart) {
          await td.stop();
          td = await startTokendiet({upstreams: p.upstreams(fake.url), config: CONFIG});
        }
        fake.clear();
        const r = await send(td, {'x-fake-mode': 'recall', 'x-fake-recall-id': `${handle}:${a}-${b}`});
        assert.equal(r.status, 200, r.body.toString());
        assert.equal(fake.requests.length, 2, 'the round that called the tool and its continuation');
        assert.deepEqual(p.results(upstreamBody(fake.requests[0])).slice(0, results.length), results,
          'the same bytes as the request before');
        const c = p.continuation(upstreamBody(fake.requests[1]));
        assert.equal(c.result, hidden, 'the continuation carries exactly the hidden lines');
        assert.equal(c.callId, `${handle}:${a}-${b}`);
        assert.ok(c.linked, 'the result answers the recall call');
        const text = r.body.toString('utf8');
        assert.ok(!text.includes(RECALL), 'the client never sees the tool');
        const answer = stream ? dataEvents(text).map(p.streamText).join('') : p.answer(JSON.parse(text));
        assert.ok(answer.includes(`Recalled: ${hidden}`), answer.slice(0, 300));
      } finally {
        await td.stop();
      }
    });
  }
}

test('a handle the request does not hold gets the unknown-id answer', async () => {
  const p = chat;
  const td = await startTokendiet({upstreams: p.upstreams(fake.url), config: CONFIG});
  try {
    fake.clear();
    const r = await post(td, p.path(false, KEY), JSON.stringify(p.body(list(), false)),
      {...p.headers(KEY), 'x-fake-mode': 'recall', 'x-fake-recall-id': 't00000000:1-5'});
    assert.equal(r.status, 200);
    const c = p.continuation(upstreamBody(fake.requests[1]));
    assert.match(c.result, /unknown id/);
  } finally {
    await td.stop();
  }
});

test('Responses with previous_response_id: the client will not resend a cut, so nothing is cut', async () => {
  const p = EVICTION_PROVIDERS.responses;
  const td = await startTokendiet({upstreams: p.upstreams(fake.url), config: CONFIG});
  try {
    const plain = p.body(list(), false);
    fake.clear();
    assert.equal((await post(td, p.path(false, KEY), JSON.stringify(plain), p.headers(KEY))).status, 200);
    assert.ok(p.results(upstreamBody(fake.last())).some(r => / hidden/.test(r)), 'without it, the same input is cut');
    const body = JSON.stringify({...plain, previous_response_id: 'resp_earlier'});
    fake.clear();
    const r = await post(td, p.path(false, KEY), body, p.headers(KEY));
    assert.equal(r.status, 200);
    assert.equal(fake.last().body.toString('utf8'), body, 'the request went byte for byte');
  } finally {
    await td.stop();
  }
});

test('recall: false: the same cuts, notices without handles, no tool', async () => {
  const p = chat;
  const td = await startTokendiet({upstreams: p.upstreams(fake.url), config: CONFIG + '    recall: false\n'});
  try {
    fake.clear();
    const r = await post(td, p.path(false, KEY), JSON.stringify(p.body(list(), false)), p.headers(KEY));
    assert.equal(r.status, 200);
    const sent = upstreamBody(fake.last());
    assert.ok(!p.offersRecall(sent));
    const results = p.results(sent);
    assert.ok(results.some(t => /\[… \d+ lines hidden\]/.test(t)), 'cut as before');
    assert.ok(!results.some(t => /t[0-9a-f]{8}/.test(t)), 'no handle');
  } finally {
    await td.stop();
  }
});
