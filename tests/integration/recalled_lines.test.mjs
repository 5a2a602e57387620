// Recalled lines stay, through `tokendiet serve` (docs/design.md §Recall,
// "Recalled lines stay"; profile key recalled_lines): a scripted model
// (the fake upstream's recall mode) recalls the hidden lines of a snipped
// output; the client's next request, whose history holds no trace of the
// recall (as real clients send it), reaches the upstream with those lines
// visible in that output's cut, once the session's frontier has stepped past
// the request that recalled. The memory is the session's: kept by the
// replica, and with two replicas sharing a real redis-server the other
// replica sends the same bytes.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, startRedis, post} from '../support/index.mjs';

const NOTICE = /\[… (t[0-9a-f]{8}):(\d+)-(\d+) hidden\]/;
const CHAT = '/v1/chat/completions';
const sleep = ms => new Promise(r => setTimeout(r, ms));

let fake, redis;
before(async () => { fake = await startFakeUpstream(); redis = await startRedis(); });
after(async () => { await fake.close(); await redis?.kill(); });

// Every stale output cut at once, on a short session; no semantic mode.
const profile = lines => `profiles:
  - name: cut
    trigger_tokens: 0
    payback_turn_fraction: 1
    max_loss: 1
    completed_tasks: false
    recalled_lines: ${lines}
`;

// 60 lines that differ in their words (nothing for low_entropy to fold).
const word = i => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + ((i * 7) % 26)) + 'x';
const output = k => {
  let s = '';
  for (let i = 1; i <= 60; i++) s += `step ${k} ${word(i)} ${word(i + k)}: value ${(i * 7919) % 1000} of the listing\n`;
  return s;
};
const body = steps => {
  const messages = [{role: 'system', content: 'You are an agent.'}, {role: 'user', content: 'Fix the parser.'}];
  for (let n = 0; n < steps; n++) {
    messages.push({role: 'assistant', content: null,
      tool_calls: [{id: `call_${n}`, type: 'function', function: {name: 'bash', arguments: JSON.stringify({command: `run ${n}`})}}]});
    messages.push({role: 'tool', tool_call_id: `call_${n}`, content: output(n)});
  }
  return JSON.stringify({model: 'gpt-4o', messages, tools: [{type: 'function', function: {name: 'bash',
    description: 'Run a command', parameters: {type: 'object', properties: {command: {type: 'string'}}}}}]});
};
const results = req => JSON.parse(req.body.toString('utf8')).messages.filter(m => m.role === 'tool').map(m => String(m.content));
const linesOf = (text, a, b) => text.split(/(?<=\n)/).slice(a - 1, b).join('');
const headers = key => ({authorization: `Bearer ${key}`});

// The first request: a cut output's notice, and the model recalls its lines.
async function cutAndRecall(td, key) {
  fake.clear();
  const first = await post(td, CHAT, body(16), headers(key));
  assert.equal(first.status, 200, first.body.toString());
  const sent = results(fake.last());
  const k = sent.findIndex(r => NOTICE.test(r));
  assert.ok(k >= 0, `a snip notice names its lines: ${sent[0].slice(0, 300)}`);
  const [, handle, a, b] = NOTICE.exec(sent[k]);
  fake.clear();
  const r = await post(td, CHAT, body(16), {...headers(key), 'x-fake-mode': 'recall', 'x-fake-recall-id': `${handle}:${a}-${b}`});
  assert.equal(r.status, 200, r.body.toString());
  assert.equal(fake.requests.length, 2, 'the round that called the tool and its continuation');
  return {k, hidden: linesOf(output(k), Number(a), Number(b)), notice: NOTICE.exec(sent[k])[0]};
}

// The client's next request (more steps: the frontier moves on), as it goes upstream.
async function next(td, key) {
  fake.clear();
  const r = await post(td, CHAT, body(24), headers(key));
  assert.equal(r.status, 200, r.body.toString());
  return fake.last().body.toString('utf8');
}

test('a recalled range stays visible in the cut output on the session\'s next requests', async () => {
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: profile('answered')});
  try {
    const {k, hidden, notice} = await cutAndRecall(td, 'sk-recalled-1');
    const sent = await next(td, 'sk-recalled-1');
    const out = JSON.parse(sent).messages.filter(m => m.role === 'tool')[k].content;
    assert.ok(out.includes(hidden), `the recalled lines are in the cut:\n${out}`);
    assert.ok(!out.includes(notice), 'their notice is gone');
    assert.ok(out.length < output(k).length + 64, 'the rest of the output is still cut or short');
    // Another session (another key) has recalled nothing: its cut keeps the notice.
    const other = await next(td, 'sk-recalled-2');
    const theirs = JSON.parse(other).messages.filter(m => m.role === 'tool')[k].content;
    assert.ok(theirs.includes(notice), theirs);
    // A later request of the first session sends the same bytes again (the form changed once).
    assert.equal(await next(td, 'sk-recalled-1'), sent);
  } finally {
    await td.stop();
  }
});

test('recalled_lines: off (the default) keeps nothing', async () => {
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: profile('off')});
  try {
    const {k, notice} = await cutAndRecall(td, 'sk-recalled-off');
    const out = JSON.parse(await next(td, 'sk-recalled-off')).messages.filter(m => m.role === 'tool')[k].content;
    assert.ok(out.includes(notice), out);
  } finally {
    await td.stop();
  }
});

test('two replicas sharing a redis-server: the one that did not answer the recall sends the same bytes', async () => {
  redis.cli('FLUSHALL');
  const config = `quota_store: ${redis.url}\nquota_store_timeout_ms: 1000\n` + profile('answered');
  const a = await startTokendiet({upstreams: {openai: fake.url}, config});
  const b = await startTokendiet({upstreams: {openai: fake.url}, config});
  try {
    for (const td of [a, b]) await td.waitForLine(/"shared_state".*sharing the runway/, 10000);
    const {k, hidden} = await cutAndRecall(a, 'sk-recalled-shared');
    await sleep(200);  // the memory is written after the answer, not waited for
    const fromB = await next(b, 'sk-recalled-shared');
    const fromA = await next(a, 'sk-recalled-shared');
    assert.ok(JSON.parse(fromB).messages.filter(m => m.role === 'tool')[k].content.includes(hidden));
    assert.equal(fromB, fromA, 'both replicas send the same bytes');
  } finally {
    await a.stop();
    await b.stop();
  }
});
