// The dashboard's runways (docs/design.md §Dashboard, "runways"): each quota
// group's runway now, from the live stores, not from the ledger. After
// scripted traffic with the upstream's rate-limit headers (the fake upstream
// in quota mode), the stats API lists the groups /metrics' runway gauges
// name; each is its gauge's runway (the runway left after the group's latest
// admission) re-based on that answer's headers and bill and refilled to now,
// which is the upstream's own bucket; with no traffic it recovers at the
// limit per window while the gauges stay where the last request left them;
// the page shows it. With a quota_store, a replica's dashboard shows the
// runway another replica's traffic drew on, marked shared.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFile} from 'node:child_process';
import {promisify} from 'node:util';
import {startFakeUpstream, startTokendiet, startRedis, quotaConfig, fillerBody, post, explain, metricSamplesAfter,
  metricSamples, rawRequest} from '../support/index.mjs';

const LIMIT = 20000, WINDOW_MS = 60000;  // refills a third of a token a ms
const RATE = LIMIT / WINDOW_MS;
const MAX_TOKENS = 500;
const KEY = 'sk-runway-dashboard';
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const sleep = ms => new Promise(r => setTimeout(r, ms));
const profiles = quotaConfig(
  {name: 'a', models: ['model-a'], tpm_limit: LIMIT, quota_window_ms: WINDOW_MS, quota_group: 'team-a'},
  {name: 'b', models: ['model-b'], tpm_limit: LIMIT, quota_window_ms: WINDOW_MS, quota_group: 'team-b'});

let fake, redis;
before(async () => {
  fake = await startFakeUpstream({quota: {tpm: LIMIT, windowMs: WINDOW_MS}});
  redis = await startRedis();
});
after(async () => { await fake?.close(); await redis?.kill(); });

// A request of `tokens` tokens (the fake's count) with a 500-token output cap.
async function send(td, model, tokens) {
  const body = JSON.parse(fillerBody(model, tokens));
  body.max_tokens = MAX_TOKENS;
  const sent = Date.now();
  const r = await post(td, '/v1/chat/completions', JSON.stringify(body), {authorization: `Bearer ${KEY}`});
  assert.equal(r.status, 200, String(r.body));
  return {sent, at: Date.now(), headers: r.headers, explain: explain(r.headers), usage: JSON.parse(r.body).usage};
}

// The stats API's answer once `ready(stats)` holds (its runways are listed
// at most a second apart: the answer is kept that long).
async function statsWhen(td, ready, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = JSON.parse((await rawRequest({port: td.port, path: '/v1/tokendiet/stats'})).body.toString());
    if (ready(stats)) return stats;
    if (Date.now() > deadline) throw new Error(`stats not ready: ${JSON.stringify(stats.runways)}`);
    await sleep(100);
  }
}

// Listed once the latest answer of each group in `last` was settled (its
// logging phase, after the client has the answer, writes the headers' note).
const settled = last => stats => Object.entries(last).every(([group, {headers}]) =>
  (stats.runways ?? []).some(r => r.quota_group === group &&
    r.tokens_remaining === Number(headers['x-ratelimit-remaining-tokens'])));

const byGroup = list => Object.fromEntries(list.map(r => [r.quota_group, r]));

test('the stats API\'s runways are the live ones: the gauges\' groups, re-based and refilled to now, recovering', async () => {
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: profiles});
  try {
    const last = {};
    for (const [model, group, tokens] of [['model-a', 'team-a', 6000], ['model-b', 'team-b', 2000], ['model-a', 'team-a', 4000]])
      last[group] = await send(td, model, tokens);
    const metrics = await metricSamplesAfter(td, 3);
    const gauges = Object.fromEntries(metrics.filter(s => s.name === 'tokendiet_runway_tokens')
      .map(s => [s.labels.quota_group, s]));
    const stats = await statsWhen(td, settled(last));
    const upstream = fake.quota.snapshot(), snapshotAt = Date.now();
    const runways = byGroup(stats.runways);
    assert.deepEqual(Object.keys(runways).sort(), Object.keys(gauges).sort(), JSON.stringify(stats.runways));
    assert.deepEqual(Object.keys(runways).sort(), ['team-a', 'team-b']);
    for (const [group, r] of Object.entries(runways)) {
      const {headers, explain: ex, usage, sent, at} = last[group];
      const gauge = gauges[group];
      assert.equal(r.provider, gauge.labels.provider);
      assert.equal(gauge.value, Number(ex['runway-tokens']), 'the gauge: the runway after the latest admission');
      assert.deepEqual([r.limit, r.shared], [LIMIT, false]);
      assert.match(r.client, /^[0-9a-f]{16}$/, 'a fingerprint, never the key');
      // What the latest answer's headers said, as told.
      assert.equal(r.tokens_remaining, Number(headers['x-ratelimit-remaining-tokens']));
      assert.equal(r.requests_remaining, Number(headers['x-ratelimit-remaining-requests']));
      assert.equal(r.requests_limit, Number(headers['x-ratelimit-limit-requests']));
      // Now: re-based on the headers (the prompt and the output cap counted),
      // the unused output given back by the bill, refilled since the proxy
      // read them: after the request was sent (on a busy box, well before
      // the client had the answer).
      const rebased = r.tokens_remaining + MAX_TOKENS - usage.completion_tokens;
      const refilled = RATE * (stats.runways_ms - sent + 5);
      assert.ok(r.runway_tokens >= rebased - 1 && r.runway_tokens <= Math.min(LIMIT, rebased + refilled + 1),
        `${group}: runway ${r.runway_tokens}, re-based ${rebased}, refill at most ${refilled}`);
      assert.ok(r.runway_tokens > gauge.value, `${group}: the gauge ${gauge.value} is where the admission left it`);
      assert.equal(r.used, LIMIT - r.runway_tokens);
      assert.ok(Math.abs(r.reset_ms - (stats.runways_ms + r.used / RATE)) <= 4, `${group}: full again at ${r.reset_ms}`);
      // Which is the upstream's own bucket (read later: it refilled since the
      // list), but for the refill between the upstream's count and the
      // proxy's reading of it, both within the request's round trip.
      const own = upstream[`openai|${KEY}|${group === 'team-a' ? 'model-a' : 'model-b'}`].tokens.remaining;
      const ownThen = Math.min(LIMIT, r.runway_tokens + RATE * (snapshotAt - stats.runways_ms));
      assert.ok(Math.abs(own - ownThen) <= RATE * (at - sent + 5) + 2, `${group}: runway ${r.runway_tokens}, upstream ${own}`);
    }

    // No traffic: each group recovers at its limit per window; the gauges stay.
    const later = await statsWhen(td, s => s.runways_ms >= stats.runways_ms + 1500);
    const elapsed = later.runways_ms - stats.runways_ms;
    for (const [group, r] of Object.entries(byGroup(later.runways))) {
      const gained = r.runway_tokens - runways[group].runway_tokens;
      const expected = Math.min(RATE * elapsed, LIMIT - runways[group].runway_tokens);
      // (Within a little refill: the list's clock is read beside its time stamp,
      // but a busy box may pause the thread between the two reads.)
      assert.ok(Math.abs(gained - expected) <= RATE * 100 + 2, `${group}: gained ${gained} in ${elapsed} ms, expected ${expected}`);
      assert.ok(gained > 0, `${group} recovers`);
    }
    const still = await metricSamples(td);
    for (const [group, g] of Object.entries(gauges))
      assert.equal(still.find(s => s.name === 'tokendiet_runway_tokens' && s.labels.quota_group === group).value, g.value);

    // The page's runway section: a row per group, at least what the API said.
    const {stdout: dom} = await promisify(execFile)(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu',
      '--disable-dev-shm-usage', '--no-first-run', '--no-proxy-server', '--virtual-time-budget=5000', '--dump-dom',
      `http://127.0.0.1:${td.port}/tokendiet/`], {encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 24});
    assert.match(dom, /data-loaded="1"/, 'the page rendered its figures');
    const rows = [...dom.matchAll(/<tr class="runway" data-provider="(\w+)" data-group="([\w-]+)" data-runway="(\d+)"/g)];
    assert.deepEqual(rows.map(m => m[2]).sort(), ['team-a', 'team-b']);
    for (const [, provider, group, left] of rows) {
      assert.equal(provider, 'openai');
      assert.ok(Number(left) >= byGroup(later.runways)[group].runway_tokens && Number(left) <= LIMIT, `${group}: ${left}`);
    }
  } finally { await td.stop(); }
});

test('with a quota_store, a replica\'s dashboard shows the shared runway another replica\'s traffic drew on', async () => {
  const config = `quota_store: ${redis.url}\nquota_store_timeout_ms: 1000\n` + profiles;
  const a = await startTokendiet({upstreams: {openai: fake.url}, config});
  const b = await startTokendiet({upstreams: {openai: fake.url}, config});
  try {
    // Both connected before traffic (each logs it).
    for (const td of [a, b]) await td.waitForLine(/sharing the runway/, 20000);
    const sent = await send(a, 'model-b', 3000);
    await metricSamplesAfter(a, 1);
    // b served nothing: its own store holds no runway, Redis holds a's.
    const stats = await statsWhen(b, settled({'team-b': sent}));
    const r = byGroup(stats.runways)['team-b'];
    assert.ok(r, JSON.stringify(stats.runways));
    assert.equal(r.shared, true);
    assert.equal(r.limit, LIMIT);
    assert.equal(r.tokens_remaining, Number(sent.headers['x-ratelimit-remaining-tokens']));
    assert.ok(r.runway_tokens < LIMIT && r.runway_tokens >= r.tokens_remaining, JSON.stringify(r));
    assert.equal((await metricSamples(b)).filter(s => s.name === 'tokendiet_runway_tokens').length, 0,
      'b has no gauge: no request of its own');
  } finally { await a.stop(); await b.stop(); }
});
