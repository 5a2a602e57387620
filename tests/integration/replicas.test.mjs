// Two tokendiet processes given the same history send the same bytes
// upstream (docs/design.md §Principles (4), §Token counting, §Policy), so
// replicas behind a load balancer, or one proxy after a restart, keep the
// provider's prompt cache: the diet's cut is a pure function of the bytes,
// whatever bill ratio a process has learnt, and a survival level renders the
// same history the same way in every process with the same runway.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, quotaConfig, trajectory, post, explain} from '../support/index.mjs';

const CHAT = '/v1/chat/completions';
const MODEL = 'deepseek-chat';  // counted by the estimator: the model whose count a bill ratio could move
const traj = trajectory('mini-swe-agent-12');
const history = traj.request(traj.turns - 6, {model: MODEL});

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake?.close(); });

// Starts a tokendiet, runs fn(td), stops it.
async function withTokendiet(config, fn) {
  const td = await startTokendiet({upstreams: {openai: fake.url}, config});
  try { return await fn(td); } finally { await td.stop(); }
}

// Sends the history; returns the bytes the upstream got and the explain headers.
async function sendHistory(td, headers = {}) {
  const r = await post(td, CHAT, history, {authorization: 'Bearer sk-replica', ...headers});
  assert.equal(r.status, 200, String(r.body));
  return {bytes: fake.last().body, h: explain(r.headers)};
}

test('the diet: two fresh processes, and one that learnt a very different bill ratio first, send the same bytes', async () => {
  const first = await withTokendiet(null, sendHistory);
  assert.equal(first.h.mode, 'standard');
  assert.ok(first.bytes.length < Buffer.byteLength(history) * 0.6, 'the diet cut something');
  const second = await withTokendiet(null, sendHistory);
  assert.ok(second.bytes.equals(first.bytes), 'a second process sent other bytes');

  const learnt = await withTokendiet(null, async td => {
    // Bills that claim a few dozen tokens for requests of thousands: the
    // ratio falls to its floor. (The fake answers with its recording's usage.)
    for (const t of [40, 60, 80]) {
      const r = await post(td, CHAT, traj.request(t, {model: MODEL}), {authorization: 'Bearer sk-replica', 'x-fake-usage': 'as-recorded'});
      assert.equal(r.status, 200);
    }
    return sendHistory(td);
  });
  assert.ok(learnt.bytes.equals(first.bytes), 'a learnt bill ratio changed what was cut');
});

test('survival at a harder level: two fresh processes with the same runway send the same bytes', async () => {
  // The limit just under the diet's tokens: the diet's request does not fit
  // a full bucket, a harder level's does (with the task restated after it).
  const diet = await withTokendiet(null, sendHistory);
  const limit = Number(diet.h['tokens-after']) - 1;
  const config = quotaConfig({tpm_limit: limit, quota_window_ms: 60000});
  const sent = [];
  for (let i = 0; i < 2; i++) {
    sent.push(await withTokendiet(config, async td => {
      const s = await sendHistory(td);
      assert.deepEqual([s.h.mode, s.h.survival], ['survival', 'compressed'], JSON.stringify(s.h));
      assert.ok(Number(s.h['tokens-after']) < limit, JSON.stringify(s.h));
      return s;
    }));
  }
  assert.ok(!sent[0].bytes.equals(diet.bytes), 'the harder level cut more than the diet');
  assert.ok(sent[1].bytes.equals(sent[0].bytes), 'two processes at the same level sent other bytes');
});
