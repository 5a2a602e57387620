// A client's own compaction request goes upstream byte for byte (F29): each
// known agent's compaction call (its real prompt, tests/fixtures/compaction/,
// in its own wire format, over a long recorded history) through `tokendiet
// serve`, against the same history with an ordinary last message, which the
// diet prunes. The log line says mode none and why.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, rawRequest, recordedHistory, fixtureText, agentRequest} from '../support/index.mjs';

// Prunes the recorded history at once (no cache-economics wait).
const CONFIG = 'profiles:\n  - name: eager\n    trigger_tokens: 20000\n    cache_write_price: 0\n';

const AGENTS = [
  {agent: 'Codex', format: 'openai_responses', prompt: 'codex.txt', tools: true, stream: true},
  {agent: 'Claude Code', format: 'anthropic', prompt: 'claude-code.txt', tools: true, stream: true},
  {agent: 'Gemini CLI', format: 'gemini', prompt: 'gemini-cli.txt', tools: false, stream: false},
  {agent: 'Gemini CLI (verification)', format: 'gemini', prompt: 'gemini-cli-verify.txt', tools: false, stream: false},
];

let fake, td, stop;
const history = recordedHistory();
before(async () => { ({fake, td, stop} = await startFakeAndProxy(CONFIG)); });
after(async () => { await stop?.(); });


async function sendThrough({path, body}) {
  fake.clear();
  const r = await rawRequest({port: td.port, method: 'POST', path, body,
    headers: {'content-type': 'application/json'}, timeoutMs: 30000});
  assert.equal(r.status, 200, r.body);
  await fake.waitForRequests(1);
  return {upstream: fake.last().body, explainMode: r.headers['x-tokendiet-mode']};
}

for (const a of AGENTS) {
  test(`${a.agent}: its compaction request goes upstream byte for byte; an ordinary turn is pruned`, async () => {
    const opts = {tools: a.tools, stream: a.stream};
    const ordinary = agentRequest(a.format, history, 'Carry on with the next step.', opts);
    const pruned = await sendThrough(ordinary);
    assert.ok(pruned.upstream.length < ordinary.body.length * 0.8,
      `the ordinary turn went pruned: ${pruned.upstream.length} of ${ordinary.body.length} bytes`);

    const compaction = agentRequest(a.format, history, fixtureText(`compaction/${a.prompt}`), opts);
    const from = td.lines.length;
    const sent = await sendThrough(compaction);
    assert.ok(sent.upstream.equals(Buffer.from(compaction.body)), 'the compaction request, byte for byte');
    assert.equal(sent.explainMode, 'none');
    const line = JSON.parse(await td.waitForLine(new RegExp(`"bytes_in":${Buffer.byteLength(compaction.body)},`), 10000, from));
    assert.equal(line.mode_reason, 'client_compaction');
    assert.equal(line.mode, 'none');
    assert.equal(line.tokens_before, line.tokens_after);
    assert.ok(line.tokens_before > 20000, JSON.stringify(line));
  });
}
