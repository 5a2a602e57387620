// Every proxied response says what tokendiet did to its request: the explain
// headers agree with the access log line, and request ids stay unique when
// the proxy restarts (the ledger's rows once repeated ids).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, SOURCE_DIR, agentRequest, recordedHistory} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');
const traj = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'replay', 'mini-swe-agent-12.json'), 'utf8'));
const lastAssistant = traj.messages.map(m => m.role).lastIndexOf('assistant');
const history = JSON.stringify({model: traj.model, messages: traj.messages.slice(0, lastAssistant)});

let fake;
before(async () => { fake = await startFakeUpstream({record: false}); });
after(async () => { await fake?.close(); });

const post = (td, p, body) => rawRequest({port: td.port, method: 'POST', path: p, body,
  headers: {'content-type': 'application/json'}, timeoutMs: 20000});

async function logLineFor(td, id) {
  const line = await td.waitForLine(new RegExp(`"id":${id}[,}]`), 10000);
  return JSON.parse(line);
}

test('a dieted request: mode, tokens before and after, strategies and id, as the log line has them', async () => {
  const td = await startTokendiet({upstreams: {openai: fake.url}});
  try {
    const r = await post(td, '/v1/chat/completions', history);
    assert.equal(r.status, 200);
    const h = r.headers;
    const id = h['x-tokendiet-request-id'];
    assert.match(id, /^\d+$/);
    const log = await logLineFor(td, id);
    assert.equal(h['x-tokendiet-mode'], 'standard');
    assert.equal(Number(h['x-tokendiet-tokens-before']), log.tokens_before);
    assert.equal(Number(h['x-tokendiet-tokens-after']), log.tokens_after);
    assert.ok(log.tokens_after < log.tokens_before);
    assert.equal(h['x-tokendiet-strategies'], log.strategies);
    assert.match(h['x-tokendiet-strategies'], /stale_tool_outputs/);

    // Not a chat request (forwarded as it is): only the id.
    const models = await rawRequest({port: td.port, path: '/v1/models'});
    assert.match(models.headers['x-tokendiet-request-id'], /^\d+$/);
    assert.equal(models.headers['x-tokendiet-mode'], undefined);
  } finally { await td.stop(); }
});

test('a request tokendiet answers itself carries its request id', async () => {
  const td = await startTokendiet({upstreams: {openai: 'http://127.0.0.1:1'}});
  try {
    const r = await post(td, '/v1/chat/completions', '{"model":"gpt-4o","messages":[]}');
    assert.equal(r.status, 502);
    assert.match(r.headers['x-tokendiet-request-id'], /^\d+$/);
  } finally { await td.stop(); }
});

test('request ids do not repeat across a restart', async () => {
  const ids = [];
  for (let run = 0; run < 2; run++) {
    const td = await startTokendiet({upstreams: {openai: fake.url}});
    try {
      for (let i = 0; i < 3; i++) {
        const r = await post(td, '/v1/chat/completions', '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}');
        ids.push(BigInt(r.headers['x-tokendiet-request-id']));
      }
    } finally { await td.stop(); }
  }
  assert.equal(new Set(ids).size, ids.length, `ids repeat: ${ids.join(' ')}`);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'ids grow, across the restart too');
  assert.ok(ids[ids.length - 1] < 2n ** 53n, 'JSON readers keep ids exact');
});

test('the headers say what the answer alone does not: a retry compressed to fit, and the recall tool offered', async () => {
  const upstream = await startFakeUpstream();
  const td = await startTokendiet({upstreams: {openai: upstream.url}, config: 'profiles:\n  - name: default\n    survival: false\n'});
  try {
    const req = agentRequest('openai_chat', recordedHistory(), 'Carry on.');
    const plain = await post(td, req.path, req.body);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['x-tokendiet-recall'], 'offered');  // an agent turn the diet may cut
    assert.equal(plain.headers['x-tokendiet-recovery'], undefined);
    assert.equal(plain.headers['x-tokendiet-fail-open'], undefined);
    const window = Math.floor(Math.ceil(upstream.last().bodyBytes / 4) * 0.6);

    upstream.clear();
    const r = await rawRequest({port: td.port, method: 'POST', path: req.path, body: req.body, timeoutMs: 20000,
      headers: {'content-type': 'application/json', 'x-fake-context-window': String(window)}});
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(upstream.requests.length, 2, 'the attempt and one retry');
    assert.equal(r.headers['x-tokendiet-recovery'], 'retried');
    const log = await logLineFor(td, r.headers['x-tokendiet-request-id']);
    assert.equal(log.recovery, 'retried');
  } finally {
    await td.stop();
    await upstream.close();
  }
});
