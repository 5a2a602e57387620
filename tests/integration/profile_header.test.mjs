// x-tokendiet-profile picks the profile of one request (docs/design.md
// §Routing and forwarding), in each provider's wire format: a configured
// name applies whatever the model matches, `off` forwards the body byte for
// byte, a name not configured is a 400 in the provider's own error shape
// that never reaches the upstream, and the header itself never goes upstream.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, rawRequest, recordedHistory, agentRequest} from '../support/index.mjs';

// `low` recaps the recorded history (~70k tokens, over its threshold) and
// matches only models ending in -low; every other model is `plain`: off.
const CONFIG = `profiles:
  - name: low
    models: ["*-low"]
    token_threshold: 30000
    trigger_tokens: 100000000
    cache_write_price: 0
  - name: plain
    models: ["*"]
    enabled: false
`;

const FORMATS = [
  {format: 'openai_chat', model: 'gpt-4o'},
  {format: 'openai_responses', model: 'gpt-5.1-codex'},
  {format: 'anthropic', model: 'claude-sonnet-4-5'},
  {format: 'gemini', model: 'gemini-2.5-pro'},
];

let fake, td, stop;
const history = recordedHistory();
before(async () => { ({fake, td, stop} = await startFakeAndProxy(CONFIG)); });
after(async () => { await stop?.(); });

async function send(format, model, profile) {
  const req = agentRequest(format, history, 'Carry on with the next step.', {model});
  fake.clear();
  const from = td.lines.length;
  const r = await rawRequest({port: td.port, method: 'POST', path: req.path, body: req.body,
    headers: {'content-type': 'application/json', 'x-tokendiet-profile': profile}, timeoutMs: 30000});
  const line = JSON.parse(await td.waitForLine(new RegExp(`"id":${r.headers['x-tokendiet-request-id']}[,}]`), 10000, from));
  return {r, sent: req.body, line};
}

for (const {format, model} of FORMATS) {
  test(`${format}: a configured profile named in the header applies to a model it does not match`, async () => {
    const {r, sent, line} = await send(format, model, 'low');
    assert.equal(r.status, 200, r.body);
    assert.equal(fake.requests.length, 1);
    const upstream = fake.last();
    assert.match(upstream.body.toString(), /\[tokendiet recap: turns /);
    assert.ok(upstream.body.length < Buffer.byteLength(sent) * 0.6);
    assert.equal(upstream.headers['x-tokendiet-profile'], undefined, 'the header went upstream');
    assert.equal(line.profile, 'low');
    assert.equal(line.profile_header, 'low');
    assert.equal(r.headers['x-tokendiet-mode'], 'standard');
  });

  test(`${format}: off forwards the request untouched although its model's profile is on`, async () => {
    const {r, sent, line} = await send(format, `${model}-low`, 'off');
    assert.equal(r.status, 200, r.body);
    assert.equal(fake.requests.length, 1);
    const upstream = fake.last();
    assert.equal(upstream.body.toString(), sent, 'the body changed on its way upstream');
    assert.equal(upstream.headers['x-tokendiet-profile'], undefined, 'the header went upstream');
    assert.equal(line.profile_header, 'off');
    assert.equal(line.profile, 'off');
    assert.equal(r.headers['x-tokendiet-mode'], 'none');
  });

  test(`${format}: a name not configured is a 400 in the provider's error shape, never sent upstream`, async () => {
    const {r, line} = await send(format, `${model}-low`, 'nosuch');
    assert.equal(r.status, 400);
    assert.equal(fake.requests.length, 0);
    assert.equal(r.headers['x-tokendiet-error'], 'unknown_profile');
    const body = JSON.parse(r.body);
    const message = format === 'anthropic' ? body.error.message : body.error.message;
    assert.match(message, /x-tokendiet-profile: no profile named "nosuch" \(configured: off, low, plain\)/);
    if (format === 'anthropic') assert.equal(body.type, 'error');
    if (format === 'gemini') assert.equal(body.error.code, 400);
    if (format.startsWith('openai')) assert.equal(typeof body.error.type, 'string');
    assert.equal(line.status, 400);
  });
}
