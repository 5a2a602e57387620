// Anthropic's cache through tokendiet: a client that marks its system prompt
// and newest message (Claude Code's shape) gets one breakpoint more, on the
// last block before the frontier the previous request left, so that prefix
// is cached when the frontier steps: every request's upstream body holds
// that block and everything before it as the previous request sent it.
// While a read is held before that frontier, one more goes just before the
// read, whose release changes the history from there on. A client that does
// not cache gets no breakpoint at all.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeAndProxy, rawRequest} from '../support/index.mjs';
import {recordedHistory, agentRequest, requestEnds} from '../support/agent_bodies.mjs';

const MARK = {type: 'ephemeral'};
const history = recordedHistory('mini-swe-agent-12.json');
// Where each request of the session ended: before each assistant message.
const ends = requestEnds(history);

let env;
before(async () => { env = await startFakeAndProxy(null); });
after(async () => { await env?.stop(); });

function claudeCodeBody(n, marked = true) {
  const {path, body} = agentRequest('anthropic', history.slice(0, n), 'go on', {tools: false});
  const b = JSON.parse(body);
  if (marked) {
    b.system[0].cache_control = MARK;
    const last = b.messages[b.messages.length - 1].content;
    last[last.length - 1].cache_control = MARK;
  }
  return {path, body: JSON.stringify(b)};
}

async function upstreamOf(req) {
  env.fake.clear();
  const r = await rawRequest({port: env.td.port, method: 'POST', path: req.path, body: req.body,
    headers: {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01'}, timeoutMs: 20000});
  assert.equal(r.status, 200, r.body);
  await env.fake.waitForRequests(1);
  return JSON.parse(env.fake.last().body.toString('utf8'));
}

// [message index, block index] of every block with a breakpoint.
function marks(body) {
  const out = [];
  body.messages.forEach((m, i) => Array.isArray(m.content) &&
    m.content.forEach((b, k) => { if (b.cache_control) out.push([i, k]); }));
  return out;
}
const unmarked = m => JSON.stringify(m, (k, v) => (k === 'cache_control' ? undefined : v));

test('a caching client gets one breakpoint more, before which every request sends what the previous one sent', async () => {
  let prev = null, anchored = 0, moved = 0;
  for (const n of ends.slice(-30)) {
    const sent = await upstreamOf(claudeCodeBody(n));
    const m = marks(sent);
    assert.ok(sent.system[0].cache_control, 'the client\'s system breakpoint');
    const last = sent.messages.length - 1;
    assert.deepEqual(m[m.length - 1], [last, sent.messages[last].content.length - 1], 'the client\'s newest breakpoint');
    assert.ok(m.length <= 2, `at most one breakpoint of tokendiet's: ${JSON.stringify(m)}`);
    if (m.length === 2) {
      ++anchored;
      const [at] = m[0];
      assert.ok(at < last - 4, `the anchor sits in the stale part, not the newest turns (${at} of ${last})`);
      if (prev) {
        // The prefix up to the anchor is what the previous request sent: the cache holds it.
        for (let i = 0; i <= at; i++)
          assert.equal(unmarked(sent.messages[i]), unmarked(prev.sent.messages[i]), `message ${i} of the prefix`);
        if (prev.at !== undefined && prev.at !== at) ++moved;
      }
      prev = {sent, at};
    } else {
      prev = {sent, at: undefined};
    }
  }
  assert.ok(anchored >= 25, `${anchored} of 30 requests anchored`);
  assert.ok(moved >= 1, 'the anchor followed the frontier at least once');
});

test('a read held before the frontier gets a breakpoint of its own, before which every request sends what the previous one sent', async () => {
  // claude-code-spotter-1 reads whole files of 17-31 KB, then edits them
  // turns later: the fresh reads are held past the frontier's steps and cut
  // by a later step, which changes the history from the read on, before the
  // frontier's anchor (docs/design.md §The stale frontier, Held reads).
  const spotter = recordedHistory('claude-code-spotter-1.json');
  const spotterEnds = requestEnds(spotter);
  const body = n => {
    const {path, body} = agentRequest('anthropic', spotter.slice(0, n), 'go on', {tools: false});
    const b = JSON.parse(body);
    b.system[0].cache_control = MARK;
    const last = b.messages[b.messages.length - 1].content;
    last[last.length - 1].cache_control = MARK;
    return {path, body: JSON.stringify(b)};
  };
  let prev = null, two = 0, released = 0;
  for (const n of spotterEnds.filter(e => e >= 110 && e <= 260)) {
    const sent = await upstreamOf(body(n));
    const ours = marks(sent).slice(0, -1);  // the last is the client's newest
    assert.ok(ours.length <= 2, `at most two breakpoints of tokendiet's: ${JSON.stringify(ours)}`);
    if (prev && ours.length) {
      const [first] = ours[0];
      for (let i = 0; i <= first; i++)
        assert.equal(unmarked(sent.messages[i]), unmarked(prev.messages[i]), `request of ${n}: message ${i} of the prefix`);
      if (ours.length === 2) {
        ++two;
        const [second] = ours[1];
        for (let i = first + 1; i <= second; i++)
          if (unmarked(sent.messages[i]) !== unmarked(prev.messages[i])) { ++released; break; }
      }
    }
    prev = sent;
  }
  assert.ok(two >= 3, `${two} requests with a held read's breakpoint`);
  assert.ok(released >= 1, 'a step released a held read: the history changed between the two breakpoints');
});

test('a client that does not cache gets no breakpoint', async () => {
  const sent = await upstreamOf(claudeCodeBody(ends[ends.length - 1], false));
  assert.deepEqual(marks(sent), []);
  assert.equal(sent.system[0].cache_control, undefined);
});
