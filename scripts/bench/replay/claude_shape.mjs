// A Claude Code session of the replay sets, sent through `tokendiet serve` in
// Claude Code's own shape (the Anthropic Messages body, the results of
// parallel calls in one message, its system prompt and newest block marked
// for the cache), against the fake upstream; `tokendiet replay` sends one
// result a message (OpenAI's shape). Prints, for the session:
//   - copied lines: the lines the recorded answer's Edits quote (old_string,
//     trimmed, 8 bytes or more) that the request as the client sent it holds,
//     and how many of those the request as tokendiet sent it still holds;
//   - the fake's Anthropic bill (tests/fake_upstream/billing.mjs: breakpoints,
//     the 20-block lookback, writes at 1.25x) direct and through, recall
//     rounds not charged: the bill of what is sent.
// With --openai, the same session in OpenAI's chat shape, as the replay sends
// it (copied lines only): the two shapes compared on one count.
// docs/benchmarks.md §Fresh reads held. Usage, from the repository:
//   TOKENDIET_BIN=build/cli/tokendiet node scripts/bench/replay/claude_shape.mjs [--openai] \
//     claude-code-spotter-1.json [claude-code-spotter-3.json ../replay-heldout/claude-code-entire-1.json ...]
import {startFakeAndProxy, rawRequest} from '../../../tests/support/index.mjs';
import {recordedHistory, agentRequest, requestEnds} from '../../../tests/support/agent_bodies.mjs';
import {createBilling} from '../../../tests/fake_upstream/billing.mjs';

const MARK = {type: 'ephemeral'};
const strings = (v, out) => {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) v.forEach(x => strings(x, out));
  else if (v && typeof v === 'object') Object.values(v).forEach(x => strings(x, out));
  return out;
};

// The lines the answer's Edit and MultiEdit calls quote.
function quoted(answer) {
  let calls = answer.tool_calls || [];
  if (typeof calls === 'string') calls = JSON.parse(calls);
  const lines = [];
  for (const c of calls) {
    if (!/^(Edit|MultiEdit)$/.test(c.function?.name)) continue;
    let a;
    try {
      a = JSON.parse(c.function.arguments);
    } catch {
      continue;
    }
    for (const o of a.edits ? a.edits.map(e => e.old_string) : [a.old_string])
      for (const l of String(o || '').split('\n')) if (l.trim().length >= 8) lines.push(l.trim());
  }
  return lines;
}

const openai = process.argv.includes('--openai');

async function session(env, name) {
  const history = recordedHistory(name);
  const ends = requestEnds(history);
  const direct = createBilling(), through = createBilling();
  const route = {provider: 'anthropic', op: 'messages'};
  const req = {headers: {'x-api-key': 'k'}};
  const url = new URL('http://x/v1/messages');
  let t = 0, copied = 0, present = 0, losing = 0;
  for (const n of ends) {
    const format = openai ? 'openai_chat' : 'anthropic';
    const {path, body} = agentRequest(format, history.slice(0, n), 'go on', {tools: false, model: 'claude-sonnet-5'});
    const b = JSON.parse(body);
    b.messages.pop();  // the harness's "go on": the request ends with the history's last message
    if (!openai) {
      b.system[0].cache_control = MARK;
      const lm = b.messages[b.messages.length - 1];
      if (typeof lm.content === 'string') lm.content = [{type: 'text', text: lm.content}];
      lm.content[lm.content.length - 1].cache_control = MARK;
    }
    const text = JSON.stringify(b);
    t += 1000;
    if (!openai) direct.charge(route, req, Buffer.from(text), url, t);
    env.fake.clear();
    const r = await rawRequest({port: env.td.port, method: 'POST', path, body: text, timeoutMs: 30000,
      headers: {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01'}});
    if (r.status !== 200) throw new Error(`${name} request ${n}: ${r.status} ${r.body}`);
    await env.fake.waitForRequests(1);
    const sentBody = env.fake.last().body;
    if (!openai) through.charge(route, req, sentBody, url, t);
    const orig = strings(b, []).join('\n');
    const have = quoted(history[n]).filter(l => orig.includes(l));
    if (!have.length) continue;
    const sent = strings(JSON.parse(sentBody.toString()), []).join('\n');
    const p = have.filter(l => sent.includes(l)).length;
    copied += have.length;
    present += p;
    losing += p < have.length;
  }
  const d = direct.summary(), w = through.summary();
  const pct = copied ? (100 * present / copied).toFixed(1) + ' %' : '-';
  const bill = openai ? '' : `; bill direct ${d.cost.toFixed(4)} through ${w.cost.toFixed(4)} ratio ${(w.cost / d.cost).toFixed(3)}`;
  console.log(`${name} (${openai ? 'openai' : 'anthropic'}): copied lines ${present} / ${copied} (${pct}), requests losing one ${losing}${bill}`);
}

const env = await startFakeAndProxy(null);
try {
  for (const name of process.argv.slice(2).filter(a => a !== '--openai')) await session(env, name);
} finally {
  await env.stop();
}
