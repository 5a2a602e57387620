// JSON nested a million levels deep where tokendiet reads JSON a second time
// (a stale tool call's `arguments` string, a Responses function_call's
// `arguments`) must not take the process down: the part is left as it is,
// the rest of the request is still dieted, and every other connection lives.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, SOURCE_DIR} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');
const DEEP = 1_000_000;
// The reproduction: an object whose first member nests DEEP levels and
// whose second is a string long enough for stale_assistant_text to snip.
const deepArguments = '{"a":' + '['.repeat(DEEP) + ']'.repeat(DEEP) + ',"p":"' + 'x'.repeat(300) + '"}';

const RECAP_OFF = 'profiles:\n  - name: no-recap\n    recap: false\n';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake?.close(); });

function chatBody() {
  const traj = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'replay', 'mini-swe-agent-12.json'), 'utf8'));
  const messages = traj.messages.slice(0, traj.messages.map(m => m.role).lastIndexOf('assistant'));
  const first = messages.find(m => m.tool_calls);
  first.tool_calls[0].function.arguments = deepArguments;
  return {body: JSON.stringify({model: traj.model, messages}), callId: first.tool_calls[0].id};
}

function responsesBody() {
  const input = [{role: 'user', content: 'Fix the parser.'}];
  for (let i = 0; i < 40; i++) {
    input.push({type: 'function_call', call_id: `c${i}`, name: 'shell',
      arguments: i === 0 ? deepArguments : JSON.stringify({cmd: `cat file${i}.txt`, note: 'y'.repeat(400)})});
    input.push({type: 'function_call_output', call_id: `c${i}`, output: `line ${i}\n`.repeat(400)});
  }
  input.push({role: 'user', content: 'Go on.'});
  return {body: JSON.stringify({model: 'gpt-4o-mini', input}), callId: 'c0'};
}

async function post(td, pathName, body) {
  return rawRequest({port: td.port, method: 'POST', path: pathName, body,
    headers: {'content-type': 'application/json'}, timeoutMs: 30000});
}

for (const [name, pathName, make, argsOf] of [
  ['chat', '/v1/chat/completions', chatBody,
    (sent, id) => sent.messages.flatMap(m => m.tool_calls || []).find(c => c.id === id).function.arguments],
  ['responses', '/v1/responses', responsesBody,
    (sent, id) => sent.input.find(i => i.type === 'function_call' && i.call_id === id).arguments],
]) {
  test(`${name}: tool-call arguments nested ${DEEP} deep are forwarded as they are; the process keeps serving`, async () => {
    // The deep arguments alone are far over token_threshold, where the recap
    // would replace their turn: off here, so the second parse is what is tested.
    const td = await startTokendiet({upstreams: {openai: fake.url}, config: RECAP_OFF});
    try {
      const {body, callId} = make();
      fake.clear();
      const r = await post(td, pathName, body);
      assert.equal(r.status, 200, r.body);
      await fake.waitForRequests(1);
      const sent = JSON.parse(fake.last().body.toString('utf8'));
      assert.equal(argsOf(sent, callId), deepArguments, 'the deep arguments reach the upstream unchanged');
      const health = await rawRequest({port: td.port, method: 'GET', path: '/healthz', timeoutMs: 5000});
      assert.equal(health.status, 200);
      assert.equal(td.exited, null, 'tokendiet is still running');
    } finally { await td.stop(); }
  });
}
