// The plan ahead through `tokendiet serve` (docs/design.md §Memos and
// caches): over an agent's session, the plans the requests whose frontier
// steps will look up are computed on their own thread while the model
// answers (tokendiet_plans_ahead_total counts them), and a request sends
// the same bytes however warm the memos are.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, rawRequest, metricSamples, metricSum} from '../support/index.mjs';
import {recordedHistory, agentRequest, requestEnds} from '../support/agent_bodies.mjs';

const history = recordedHistory('mini-swe-agent-12.json');
// Where each request of the session ended: before each assistant message.
const ends = requestEnds(history);

let env;
before(async () => { env = await startFakeAndProxy(null); });
after(async () => { await env?.stop(); });

async function upstreamOf(n) {
  const req = agentRequest('openai_chat', history.slice(0, n), 'go on');
  env.fake.clear();
  const r = await rawRequest({port: env.td.port, method: 'POST', path: req.path, body: req.body,
    headers: {'content-type': 'application/json', authorization: 'Bearer k'}, timeoutMs: 20000});
  assert.equal(r.status, 200, r.body);
  await env.fake.waitForRequests(1);
  return env.fake.last().body.toString('utf8');
}

const planned = async () => metricSum(await metricSamples(env.td), 'tokendiet_plans_ahead_total');

test('a session\'s plans are computed ahead, and what each request sends does not depend on it', async () => {
  const session = ends.slice(-60);
  const first = [];
  for (const n of session) first.push(await upstreamOf(n));
  // The plans' thread works while the model answers: wait for it, bounded.
  const deadline = Date.now() + 15000;
  while ((await planned()) < 3 && Date.now() < deadline) await new Promise(r => setTimeout(r, 50));
  assert.ok((await planned()) >= 3, `plans computed ahead: ${await planned()}`);
  const samples = await metricSamples(env.td);
  assert.ok(samples.some(s => s.name === 'tokendiet_plans_ahead_left_total'));
  // The same requests again, every plan now in the memo: the same bytes upstream.
  const again = [];
  for (const n of session.slice(-12)) again.push(await upstreamOf(n));
  assert.deepEqual(again, first.slice(-12));
  assert.notEqual(first[first.length - 1], agentRequest('openai_chat', history.slice(0, session[session.length - 1]), 'go on').body,
    'the diet cut something: the bytes compared are a diet\'s');
});
