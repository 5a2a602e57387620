// The recap written by a model (a profile's `summarizer:`, docs/design.md
// §Policy) through `tokendiet serve` and the fake upstream: the first request
// over token_threshold makes one summarizer request (the provider's own
// shape, the client's credentials) and goes upstream with the model's text in
// its recap; the same request again makes none and sends the same bytes; a
// summarizer that fails (an error status, a timeout) leaves the extractive
// recap and the request still succeeds.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, rawRequest, recordedHistory, agentRequest} from '../support/index.mjs';

// The fake answers a chat completion with "six": that is the summary.
const profile = (name, model, extra = '') => `  - name: ${name}
    models: ["*-${name}"]
    token_threshold: 30000
    trigger_tokens: 100000000
    cache_write_price: 0
    summarizer:
      provider: openai
      model: ${model}
${extra}`;
const CONFIG = `profiles:
${profile('sum', 'cheap-summarizer')}
${profile('err', 'fake-mode-500')}
${profile('slow', 'fake-mode-hang', '      timeout_ms: 500\n')}
${profile('plain', 'x').replace(/    summarizer:[\s\S]*$/, '')}
`;

let fake, td;
const history = recordedHistory();
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}, config: CONFIG});
});
after(async () => { await td?.stop(); await fake?.close(); });

async function send(model, requests) {
  const req = agentRequest('openai_chat', history, 'Carry on with the next step.', {model});
  fake.clear();
  const r = await rawRequest({port: td.port, method: 'POST', path: req.path, body: req.body,
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
