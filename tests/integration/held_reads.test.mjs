// A held read among Claude Code's parallel results: Claude Code sends the
// results of parallel calls as one message, and a read is one result
// (docs/design.md §The stale frontier, Held reads). claude-code-spotter-1
// Reads several files at once; once the frontier has passed that
// message, the fresh Read held there is sent as the client sent it while the
// other results of the same message are cut.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, rawRequest} from '../support/index.mjs';
import {recordedHistory, agentRequest, requestEnds} from '../support/agent_bodies.mjs';

let env;
// A payback of 24 requests (the default until 16): the frontier then passes
// the message of spotter-1's parallel Reads while the fresh one is held.
const CONFIG = 'profiles:\n  - name: default\n    models: ["*"]\n    payback_requests: 24\n';
before(async () => { env = await startFakeAndProxy(CONFIG); });
after(async () => { await env?.stop(); });

const text = c => (typeof c === 'string' ? c : c.map(x => x.text || '').join(''));

test('a fresh Read stays whole in its message while the results beside it are cut', async () => {
  const history = recordedHistory('claude-code-spotter-1.json');
  const ends = requestEnds(history);
  let partly = 0;
  for (const n of ends.filter(e => e >= 150 && e <= 175)) {
    const {path, body} = agentRequest('anthropic', history.slice(0, n), 'go on', {tools: false});
    const client = JSON.parse(body);
    env.fake.clear();
    const r = await rawRequest({port: env.td.port, method: 'POST', path, body,
      headers: {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01'}, timeoutMs: 20000});
    assert.equal(r.status, 200, r.body);
    await env.fake.waitForRequests(1);
    const sent = JSON.parse(env.fake.last().body.toString('utf8'));
    assert.equal(sent.messages.length, client.messages.length);
    sent.messages.forEach((m, i) => {
      if (!Array.isArray(m.content)) return;
      const results = m.content.flatMap((b, k) => (b.type === 'tool_result' ? [[b, client.messages[i].content[k]]] : []));
      if (results.length < 2) return;
      for (const [b, c] of results) assert.equal(b.tool_use_id, c.tool_use_id, 'the results stay in their places');
      const same = ([b, c]) => JSON.stringify(b.content) === JSON.stringify(c.content);
      const held = results.filter(([b, c]) => same([b, c]) && text(c.content).length >= 4096 && /^ +1\u2192/.test(text(c.content)));
      const cut = results.filter(x => !same(x));
      if (held.length && cut.length) ++partly;
    });
  }
  assert.ok(partly >= 5, `${partly} requests sent a held Read whole beside cut results`);
});
