// Survival mode through `tokendiet serve` against the fake upstream in quota
// mode (docs/design.md §Policy): an agent whose context outgrows its
// tokens-per-minute quota gets its request compressed, held for the runway,
// or an honest 429 with a Retry-After after which the same request fits; a
// request over the whole quota goes upstream and the upstream's answer
// decides. The upstream never sees a request it has to refuse, and the
// explain headers and /metrics say what was done.
//
// One quota for tokendiet's profile and the fake: 20,000 tokens a minute. The
// recorded agent's last requests are ~32,000 tokens after the diet (~3,500
// with the middle dropped), so each must be compressed; a minute-long window
// refills ~330 tokens a second, slow enough that a slow machine's pauses do
// not change what is decided.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, quotaConfig, trajectory, fillerBody, fakeTokens, post, explain,
  logLineOf, metricSamples, metricSum} from '../support/index.mjs';

const LIMIT = 20000, WINDOW_MS = 60000;
const CHAT = '/v1/chat/completions';
const MODEL = 'deepseek-chat';
const HASTY = 'hasty-deepseek-chat';  // a profile that waits at most 500 ms

const traj = trajectory('mini-swe-agent-12');
const last = traj.turns - 1;

let fake, td;
before(async () => {
  fake = await startFakeUpstream({quota: {tpm: LIMIT, windowMs: WINDOW_MS}});
  const keys = {tpm_limit: LIMIT, quota_window_ms: WINDOW_MS};
  td = await startTokendiet({upstreams: {openai: fake.url}, config: quotaConfig(
    {name: 'hasty', models: [HASTY], ...keys, max_wait_ms: 500},
    {name: 'patient', ...keys, max_wait_ms: 30000})});
  // The agent's earlier request, under another key: tokendiet learns how the
  // upstream counts this model's tokens (the calibrated ratio) from its bill.
  for (const model of [MODEL, HASTY]) {
    const r = await send(traj.request(100, {model}), 'warm-up');
    assert.equal(r.status, 200, String(r.body));
  }
});
after(async () => { await td?.stop(); await fake?.close(); });

const send = (body, key, headers = {}) => post(td, CHAT, body, {authorization: `Bearer ${key}`, ...headers});

// Every request the upstream received for `key` was admitted by its quota.
function assertUpstreamAdmittedAll(key) {
  const mine = fake.requests.filter(r => r.headers.authorization === `Bearer ${key}`);
  assert.ok(mine.length > 0, `no upstream request for ${key}`);
  for (const r of mine) {
    assert.equal(r.status, 200, `${key}: the upstream answered ${r.status}: ${JSON.stringify(r.quota)}`);
    assert.equal(r.quota.admitted, true, key);
  }
  return mine;
}

// Uses up most of `key`'s runway (and the fake's bucket for it): one big
// message (~14,000 of the 20,000 tokens; kept under the limit whatever the
// calibrated ratio), then the agent's previous request (~3,500), compressed.
async function drain(key, model) {
  for (const body of [fillerBody(model, 14000), traj.request(last - 1, {model})]) {
    const r = await send(body, key);
    assert.equal(r.status, 200, `drain: ${r.body}`);
    assert.ok([undefined, 'compressed'].includes(explain(r.headers).survival), `drain: ${JSON.stringify(explain(r.headers))}`);
  }
}

test('survival compresses: the agent\'s next requests go at a harder level and the upstream admits every one', async () => {
  const key = 'agent-compress';
  for (let t = last - 3; t <= last; t++) {
    const body = traj.request(t, {model: MODEL});
    const r = await send(body, key);
    assert.equal(r.status, 200, String(r.body));
    const h = explain(r.headers);
    assert.deepEqual([h.mode, h.survival], ['survival', 'compressed'], `request ${t}: ${JSON.stringify(h)}`);
    assert.ok(Number(h['tokens-after']) * 4 < Number(h['tokens-before']), JSON.stringify(h));
    const up = fake.last();
    assert.ok(fakeTokens(up.body) < LIMIT / 2, `request ${t}: ${fakeTokens(up.body)} tokens sent`);
    const left = Number(h['runway-tokens']);
    assert.ok(left >= 0 && left < LIMIT, JSON.stringify(h));
    // The runway left that the header reports is what the upstream's quota says, within the prediction's error.
    const upstreamLeft = Number(r.headers['x-ratelimit-remaining-tokens']);
    assert.ok(Math.abs(left - upstreamLeft) < 0.2 * LIMIT, `runway ${left}, upstream ${upstreamLeft}`);
    const log = await logLineOf(td, h['request-id']);
    assert.deepEqual([log.mode, log.survival, log.runway_tokens, log.quota_group], ['survival', 'compressed', left, MODEL]);
  }
  assert.equal(assertUpstreamAdmittedAll(key).length, 4);
});

test('survival waits when compression is not enough: held for x-tokendiet-wait-ms, then admitted', async () => {
  const key = 'agent-wait';
  await drain(key, MODEL);
  const t0 = Date.now();
  const r = await send(traj.request(last, {model: MODEL}), key);
  const elapsed = Date.now() - t0;
  assert.equal(r.status, 200, String(r.body));
  const h = explain(r.headers);
  assert.deepEqual([h.mode, h.survival], ['survival', 'waited'], JSON.stringify(h));
  const wait = Number(h['wait-ms']);
  assert.ok(wait > 0 && wait <= 30000, JSON.stringify(h));
  assert.ok(elapsed >= wait, `answered after ${elapsed} ms, held ${wait} ms`);
  assert.ok(fake.last().at - t0 >= wait - 5, 'the upstream got it only after the wait');
  assertUpstreamAdmittedAll(key);
  const log = await logLineOf(td, h['request-id']);
  assert.deepEqual([log.survival, log.wait_ms], ['waited', wait]);
  // The ledger row keeps survival's report (docs/design.md §Ledger and metrics).
  const row = await ledgerRowOf(td, h['request-id']);
  assert.deepEqual([row.survival, row.wait_ms, row.quota_group, row.runway_tokens],
    ['waited', wait, log.quota_group, Number(h['runway-tokens'])], JSON.stringify(row));
});

// The ledger row of a request, read with the sqlite3 shell once the writer
// has committed it (within a few ms of the response).
async function ledgerRowOf(td, requestId) {
  const file = path.join(td.stateDir, 'usage.db');
  for (let i = 0; i < 200; ++i) {
    const out = execFileSync('sqlite3', ['-readonly', '-json', file,
      `SELECT survival, wait_ms, quota_group, runway_tokens FROM requests WHERE request_id = '${requestId}'`],
    {encoding: 'utf8'}).trim();
    if (out) return JSON.parse(out)[0];
    await new Promise(r => setTimeout(r, 25));
  }
  throw new Error(`no ledger row for ${requestId}`);
}

test('survival answers 429 with a Retry-After when the wait would be too long; the same request then fits', async () => {
  const key = 'agent-reject';
  await drain(key, HASTY);
  const body = traj.request(last, {model: HASTY});
  const upstreamBefore = fake.requests.length;
  const r = await send(body, key);
  assert.equal(r.status, 429, String(r.body));
  assert.equal(fake.requests.length, upstreamBefore, 'the upstream never saw it');
  const retry = Number(r.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, r.headers['retry-after']);
  assert.equal(r.headers['x-tokendiet-error'], 'runway_exhausted');
  const h = explain(r.headers);
  assert.deepEqual([h.mode, h.survival], ['survival', 'rejected'], JSON.stringify(h));
  // In the calling provider's error shape (OpenAI here), saying when to retry.
  const err = JSON.parse(r.body).error;
  assert.match(err.message, new RegExp(`retry after ${retry} s`));

  await new Promise(res => setTimeout(res, retry * 1000));
  const again = await send(body, key);
  assert.equal(again.status, 200, `the retry after ${retry} s: ${again.body}`);
  const h2 = explain(again.headers);
  assert.equal(h2.mode, 'survival', JSON.stringify(h2));
  assert.ok(['compressed', 'waited'].includes(h2.survival), JSON.stringify(h2));
  assertUpstreamAdmittedAll(key);
});

test('a request larger than the whole quota goes upstream as it came; the upstream\'s 429 reaches the client', async () => {
  const key = 'agent-too-large';
  const body = fillerBody(MODEL, LIMIT * 1.5);
  const r = await send(body, key);
  const h = explain(r.headers);
  assert.deepEqual([h.mode, h.survival], ['survival', 'too_large'], JSON.stringify(h));
  const up = fake.last();
  assert.ok(up.body.equals(Buffer.from(body)), 'sent as the diet left it: one message, nothing to cut');
  assert.deepEqual([up.status, up.quota.admitted], [429, false]);
  assert.equal(r.status, 429);
  assert.equal(JSON.parse(r.body).error.code, 'rate_limit_exceeded', 'the upstream\'s own error');
  assert.equal(r.headers['x-tokendiet-error'], undefined);
  assert.ok(r.headers['x-ratelimit-limit-tokens'], 'with the upstream\'s headers');
});

test('/metrics counts the modes, survival\'s outcomes, the wait and the runway per quota group', async () => {
  const m = await metricSamples(td);
  const openai = {provider: 'openai'};
  for (const outcome of ['compressed', 'waited', 'rejected', 'too_large'])
    assert.ok(metricSum(m, 'tokendiet_survival_total', {...openai, outcome}) >= 1, outcome);
  assert.ok(metricSum(m, 'tokendiet_survival_total', {...openai, model: MODEL, outcome: 'compressed'}) >= 4);
  assert.ok(metricSum(m, 'tokendiet_mode_requests_total', {...openai, model: MODEL, mode: 'survival'}) >= 6);
  assert.ok(metricSum(m, 'tokendiet_survival_wait_seconds_total', openai) > 0);
  const runway = m.filter(s => s.name === 'tokendiet_runway_tokens' && s.labels.provider === 'openai');
  assert.deepEqual(runway.map(s => s.labels.quota_group).sort(), [HASTY, MODEL].sort());
  for (const s of runway) assert.ok(s.value >= 0 && s.value <= LIMIT, JSON.stringify(s));
});
