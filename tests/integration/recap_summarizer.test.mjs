// The recap written by a model (a profile's `summarizer:`, docs/design.md
// §Policy) through `tokendiet serve` and the fake upstream: the first request
// over token_threshold makes one summarizer request (the provider's own
// shape, the client's credentials) and goes upstream with the model's text in
// its recap; the same request again makes none and sends the same bytes; a
// summarizer that fails (an error status, a timeout) leaves the extractive
// recap and the request still succeeds; a restart keeps the summaries. For OpenAI chat, Responses (an
// OpenAI summarizer), Anthropic and Gemini clients.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, startTokendiet, rawRequest, recordedHistory, agentRequest, tempDir} from '../support/index.mjs';

// The fake answers a chat completion with "six": that is the summary.
const profile = (name, model, extra = '', provider = 'openai') => `  - name: ${name}
    models: ["*-${name}"]
    token_threshold: 30000
    trigger_tokens: 100000000
    cache_write_price: 0
    summarizer:
      provider: ${provider}
      model: ${model}
${extra}`;
const CONFIG = `profiles:
${profile('sum', 'cheap-summarizer')}
${profile('suma', 'cheap-summarizer', '', 'anthropic')}
${profile('sumg', 'cheap-summarizer', '', 'gemini')}
${profile('err', 'fake-mode-500')}
${profile('slow', 'fake-mode-hang', '      timeout_ms: 500\n')}
${profile('plain', 'x').replace(/    summarizer:[\s\S]*$/, '')}
`;

let fake, td, stop;
const history = recordedHistory();
before(async () => { ({fake, td, stop} = await startFakeAndProxy(CONFIG)); });
after(async () => { await stop?.(); });

async function send(model, requests, server = td) {
  const req = agentRequest('openai_chat', history, 'Carry on with the next step.', {model});
  fake.clear();
  const r = await rawRequest({port: server.port, method: 'POST', path: req.path, body: req.body,
    headers: {'content-type': 'application/json', authorization: 'Bearer sk-test-key'}, timeoutMs: 30000});
  assert.equal(r.status, 200, r.body);
  await fake.waitForRequests(requests);
  await new Promise(resolve => setTimeout(resolve, 200));  // nothing more arrives
  assert.equal(fake.requests.length, requests);
  const upstream = JSON.parse(fake.last().body.toString());
  const recap = upstream.messages.map(m => m.content).find(c => typeof c === 'string' && c.startsWith('[tokendiet recap: '));
  return {recap, requests: [...fake.requests]};
}

test('the first request over the threshold is summarized once; the next with the same prefix asks no model', async () => {
  const first = await send('gpt-4o-sum', 2);
  const call = first.requests[0];
  assert.equal(call.path, '/v1/chat/completions');
  assert.equal(call.headers.authorization, 'Bearer sk-test-key');
  const body = JSON.parse(call.body.toString());
  assert.equal(body.model, 'cheap-summarizer');
  assert.equal(body.messages.length, 1);
  assert.match(body.messages[0].content, /^Below is a record of the earlier turns/);
  assert.match(body.messages[0].content, /turn \d+: /);
  assert.ok(body.max_completion_tokens > 0 && body.max_completion_tokens <= 3000);
  assert.ok(first.recap, 'recapped');
  assert.match(first.recap, /\]\nsix\n$/);  // the header, then the model's text
  assert.doesNotMatch(first.recap, /\nturn \d+: /);

  const again = await send('gpt-4o-sum', 1);
  assert.equal(again.recap, first.recap);
});

// The summaries are kept in the ledger: a restarted proxy renders the same
// recap and asks no model (a restart mid-session costs no cache rewrite).
test('after a restart the same prefix renders the same recap and asks no model', async () => {
  const state = tempDir('td-summaries-');
  const start = () => startTokendiet({upstreams: {openai: fake.url}, config: CONFIG,
    env: {STATE_DIRECTORY: state.dir, XDG_STATE_HOME: state.dir}});
  try {
    let server = await start();
    const first = await send('gpt-4o-sum', 2, server);
    await server.stop();
    server = await start();
    try {
      const again = await send('gpt-4o-sum', 1, server);
      assert.equal(again.recap, first.recap);
    } finally {
      await server.stop();
    }
  } finally {
    state.cleanup();
  }
});

// The other wire formats: the summarizer asked in the client's provider's own
// shape and path, with the client's own key; its text in the recap.
const recapIn = body => {
  const m = /"(\[tokendiet recap: (?:[^"\\]|\\.)*)"/.exec(body);
  return m ? JSON.parse(`"${m[1]}"`) : undefined;
};
const OTHERS = [
  {format: 'openai_responses', model: 'gpt-5.1-codex-sum', key: {authorization: 'Bearer sk-test-key'},
    path: '/v1/chat/completions', header: ['authorization', 'Bearer sk-test-key']},
  {format: 'anthropic', model: 'claude-sonnet-4-5-suma', key: {'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01'},
    path: '/v1/messages', header: ['x-api-key', 'sk-ant-test']},
  {format: 'gemini', model: 'gemini-2.5-pro-sumg', key: {'x-goog-api-key': 'g-test-key'},
    path: '/v1beta/models/cheap-summarizer:generateContent', header: ['x-goog-api-key', 'g-test-key']},
];
for (const c of OTHERS) {
  test(`${c.format}: the summarizer asked once in the provider's shape, its text in the recap`, async () => {
    const req = agentRequest(c.format, history, 'Carry on with the next step.', {model: c.model});
    const go = async requests => {
      fake.clear();
      const r = await rawRequest({port: td.port, method: 'POST', path: req.path, body: req.body,
        headers: {'content-type': 'application/json', ...c.key}, timeoutMs: 30000});
      assert.equal(r.status, 200, r.body);
      await fake.waitForRequests(requests);
      await new Promise(resolve => setTimeout(resolve, 200));
      assert.equal(fake.requests.length, requests);
      return {recap: recapIn(fake.last().body.toString()), requests: [...fake.requests]};
    };
    const first = await go(2);
    const call = first.requests[0];
    assert.equal(call.path, c.path);
    assert.equal(call.headers[c.header[0]], c.header[1]);
    assert.match(call.body.toString(), /Below is a record of the earlier turns/);
    assert.ok(first.recap, 'recapped');
    const text = first.recap.slice(first.recap.indexOf(']\n') + 2);
    assert.ok(text.trim().length > 0, 'the model\'s text');
    assert.doesNotMatch(first.recap, /\nturn \d+: /);
    const again = await go(1);
    assert.equal(again.recap, first.recap);
  });
}

for (const [name, why] of [['err', 'an error status'], ['slow', 'a timeout']]) {
  test(`a summarizer that fails (${why}) leaves the extractive recap, and asks no more`, async () => {
    const extractive = (await send('gpt-4o-plain', 1)).recap;
    assert.match(extractive, /\nturn \d+: /);
    const first = await send(`gpt-4o-${name}`, 2);
    assert.equal(JSON.parse(first.requests[0].body.toString()).model, `fake-mode-${name === 'err' ? '500' : 'hang'}`);
    assert.equal(first.recap, extractive);
    const again = await send(`gpt-4o-${name}`, 1);
    assert.equal(again.recap, extractive);
  });
}
