// Standard mode's recap (pruning/strategies/recap.hpp) through `tokendiet
// serve`, for each provider's wire format: a recorded history over the
// profile's token_threshold goes upstream with its older turns replaced by
// one recap message (the task kept verbatim),
// and the same history under the threshold goes without one.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, rawRequest, recordedHistory, agentRequest} from '../support/index.mjs';
import {withoutRecallTool} from '../support/eviction_sessions.mjs';

// Two profiles by model: a low threshold (the history, ~70k tokens, is over
// it) and one far above it. The frontier's own pruning is kept out of the
// way (trigger) so the recap is what is measured, and every step pays (its
// cost gate is the unit tests' subject).
const CONFIG = `profiles:
  - name: low
    models: ["*-low"]
    token_threshold: 30000
    trigger_tokens: 100000000
    cache_write_price: 0
  - name: high
    models: ["*-high"]
    token_threshold: 100000000
    trigger_tokens: 100000000
`;

const FORMATS = [
  {format: 'openai_chat', model: 'gpt-4o'},
  {format: 'openai_responses', model: 'gpt-5.1-codex'},
  {format: 'anthropic', model: 'claude-sonnet-4-5'},
  {format: 'gemini', model: 'gemini-2.5-pro'},
];

let fake, td, stop;
const history = recordedHistory();
const TASK = history.find(m => m.role === 'user').content;
before(async () => { ({fake, td, stop} = await startFakeAndProxy(CONFIG)); });
after(async () => { await stop?.(); });

async function send(format, model) {
  const req = agentRequest(format, history, 'Carry on with the next step.', {model});
  fake.clear();
  const from = td.lines.length;
  const r = await rawRequest({port: td.port, method: 'POST', path: req.path, body: req.body,
    headers: {'content-type': 'application/json'}, timeoutMs: 30000});
  assert.equal(r.status, 200, r.body);
  await fake.waitForRequests(1);
  const line = JSON.parse(await td.waitForLine(new RegExp(`"bytes_in":${Buffer.byteLength(req.body)},`), 10000, from));
  return {sent: req.body, upstream: fake.last().body.toString(), line};
}

for (const {format, model} of FORMATS) {
  test(`${format}: over token_threshold the older turns go as one recap, the task verbatim`, async () => {
    const {sent, upstream, line} = await send(format, `${model}-low`);
    assert.match(upstream, /\[tokendiet recap: turns /);
    assert.match(line.strategies, /recap/);
    assert.ok(upstream.length < sent.length * 0.6, `recapped: ${upstream.length} of ${sent.length} bytes`);
    // The task (the first user message) is still there, before the recap.
    const task = JSON.stringify(TASK).slice(1, 200);
    assert.ok(upstream.indexOf(task) >= 0 && upstream.indexOf(task) < upstream.indexOf('[tokendiet recap: '));
    // What it recaps: commands with their exit status, files.
    assert.match(upstream, /ran: `[^`]+` \(exit \d+\)/);
    assert.match(upstream, /read: [^|]*\.py/);
  });

  test(`${format}: under token_threshold nothing is recapped`, async () => {
    const {sent, upstream, line} = await send(format, `${model}-high`);
    assert.doesNotMatch(upstream, /tokendiet recap/);
    assert.doesNotMatch(line.strategies ?? '', /recap/);
    // As sent, but for the recall tool an agent's requests get (docs/design.md §Recall).
    assert.deepEqual(withoutRecallTool(upstream), JSON.parse(sent));
  });
}
