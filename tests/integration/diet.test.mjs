// The diet on the live request path: a long recorded agent history sent
// through `tokendiet serve` reaches the upstream pruned (valid, paired, last
// turns and system prompt intact), the log line says what was cut, and a
// disabled or shadow profile forwards the client's bytes unchanged.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, SOURCE_DIR} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');
const traj = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'replay', 'mini-swe-agent-12.json'), 'utf8'));
// The last request: every message before the last assistant message.
const lastAssistant = traj.messages.map(m => m.role).lastIndexOf('assistant');
const body = JSON.stringify({model: traj.model, messages: traj.messages.slice(0, lastAssistant)});

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake?.close(); });

async function send(td) {
  fake.clear();
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body,
    headers: {'content-type': 'application/json'}, timeoutMs: 20000});
  assert.equal(r.status, 200, r.body);
  await fake.waitForRequests(1);
  return fake.last().body.toString('utf8');
}

async function logLine(td) {
  const line = await td.waitForLine(/"path":"\/v1\/chat\/completions"/, 10000);
  return JSON.parse(line);
}

function pairingProblem(messages) {
  let open = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      const at = open.indexOf(m.tool_call_id);
      if (at < 0) return `orphan tool message ${i}`;
      open.splice(at, 1);
      continue;
    }
    if (open.length) return `unanswered call before message ${i}`;
    open = (m.tool_calls || []).map(c => c.id);
  }
  return open.length ? 'unanswered calls at the end' : '';
}

test('a long agent history reaches the upstream pruned, valid and paired; the log line says so', async () => {
  const td = await startTokendiet({upstreams: {openai: fake.url}});
  try {
    const sent = await send(td);
    assert.ok(sent.length < body.length * 0.6, `upstream got ${sent.length} of ${body.length} bytes`);
    const before = JSON.parse(body), after = JSON.parse(sent);
    assert.equal(after.model, before.model);
    assert.equal(after.messages.length, before.messages.length);
    assert.deepEqual(after.messages[0], before.messages[0], 'system message');
    assert.deepEqual(after.messages[1], before.messages[1], 'the task');
    assert.deepEqual(after.messages.slice(-6), before.messages.slice(-6), 'the last turns');
    assert.equal(pairingProblem(after.messages), '');
    for (const [i, m] of after.messages.entries()) {
      assert.equal(typeof m.content, 'string', `message ${i} content`);
      for (const c of m.tool_calls || []) JSON.parse(c.function.arguments);
      assert.equal(m.tool_call_id, before.messages[i].tool_call_id);
    }
    const log = await logLine(td);
    assert.equal(log.mode, 'standard');
    assert.ok(log.tokens_after < log.tokens_before * 0.6, JSON.stringify(log));
    assert.match(log.strategies, /stale_tool_outputs/);
    assert.ok(!log.fail_open, JSON.stringify(log));
  } finally { await td.stop(); }
});

test('a disabled profile forwards the bytes as sent; shadow mode too, and still reports the saving', async () => {
  for (const [config, mode] of [['profiles:\n  - name: off\n    enabled: false\n', 'none'],
                                ['profiles:\n  - name: watch\n    shadow: true\n', 'standard']]) {
    const td = await startTokendiet({upstreams: {openai: fake.url}, config});
    try {
      const sent = await send(td);
      assert.equal(sent, body, `${mode}: the body changed`);
      const log = await logLine(td);
      assert.equal(log.mode, mode);
      // Shadow: what went upstream is the request as sent; what the diet would have sent apart.
      if (mode === 'standard') {
        assert.equal(log.arm, 'shadow');
        assert.equal(log.tokens_after, log.tokens_before, JSON.stringify(log));
        assert.ok(log.tokens_diet < log.tokens_before, JSON.stringify(log));
      }
    } finally { await td.stop(); }
  }
});
