// Several `tokendiet serve` replicas sharing one Redis (quota_store,
// docs/design.md §Shared state) in front of one provider account, the
// quota-enforcing fake upstream standing in for it: their combined traffic
// goes into survival at the shared limit, not at a multiple of it, and the
// upstream answers no 429; a session whose requests alternate between the
// replicas gets the bytes one process would send; a profile's limit under
// the account's is the shared ceiling; Redis killed mid-run: traffic goes on,
// the fallback is counted, and sharing resumes once it is back.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, startRedis, quotaConfig, trajectory, fillerBody, post, explain,
  metricSamples, recordedHistory, agentRequest} from '../support/index.mjs';

const CHAT = '/v1/chat/completions';
const MODEL = 'deepseek-chat';  // counted by the estimator, calibrated by a warm-up bill
const traj = trajectory('mini-swe-agent-12');

let redis;
before(async () => { redis = await startRedis(); });
after(async () => { await redis?.kill(); });

const sleep = ms => new Promise(r => setTimeout(r, ms));

// The replicas' config: the shared store, then the profiles. A generous
// round-trip time-out where sharing is what is tested (a loaded test machine
// must not fall back by accident); 250 ms where falling back is.
function sharedConfig(store, ...profiles) { return storeConfig(store, 1000, ...profiles); }
function storeConfig(store, timeoutMs, ...profiles) {
  return `quota_store: ${store}\nquota_store_timeout_ms: ${timeoutMs}\n` + quotaConfig(...profiles);
}

async function startReplicas(n, fake, config) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await startTokendiet({upstreams: {openai: fake.url}, config}));
  // Each has connected (its log says so) before traffic starts.
  for (const td of out) await td.waitForLine(/"shared_state".*sharing the runway/, 10000);
  return out;
}

async function stopAll(list) { for (const td of list) await td?.stop(); }

const metric = async (td, name) =>
  (await metricSamples(td)).filter(s => s.name === name).reduce((a, s) => a + Number(s.value), 0);

test('two replicas: their combined traffic waits at the shared limit, and the upstream answers no 429', async () => {
  const LIMIT = 20000, WINDOW_MS = 10000;
  const fake = await startFakeUpstream({quota: {tpm: LIMIT, windowMs: WINDOW_MS}});
  redis.cli('FLUSHALL');
  const replicas = await startReplicas(2, fake,
    sharedConfig(redis.url, {tpm_limit: LIMIT, quota_window_ms: WINDOW_MS, max_wait_ms: 30000}));
  try {
    // Each learns how the upstream counts this model (its calibration), under another key.
    for (const td of replicas) {
      const r = await post(td, CHAT, traj.request(100, {model: MODEL}), {authorization: 'Bearer warm-up'});
      assert.equal(r.status, 200, String(r.body));
    }
    // Six requests of 6,000 tokens, alternating: 36,000 against a 20,000
    // bucket. Alone, each replica would think it had 20,000 to itself.
    const outcomes = [];
    for (let i = 0; i < 6; i++) {
      const td = replicas[i % 2];
      const r = await post(td, CHAT, fillerBody(MODEL, 6000), {authorization: 'Bearer team'});
      assert.equal(r.status, 200, `request ${i}: ${r.body}`);
      outcomes.push(explain(r.headers).survival ?? 'none');
    }
    const team = fake.requests.filter(r => r.headers.authorization === 'Bearer team');
    assert.equal(team.length, 6);
    for (const r of team) assert.equal(r.status, 200, `the upstream answered ${r.status}: ${JSON.stringify(r.quota)}`);
    // Survival held requests of both replicas: each saw the other's spend.
    assert.ok(outcomes.filter((o, i) => i % 2 === 1 && o === 'waited').length >= 1, JSON.stringify(outcomes));
    assert.ok(outcomes.includes('waited'), JSON.stringify(outcomes));
    for (const td of replicas) assert.equal(await metric(td, 'tokendiet_shared_state_shared'), 1);
  } finally {
    await stopAll(replicas);
    await fake.close();
  }
});

test('a profile limit under the account\'s is the replicas\' shared ceiling', async () => {
  const CEILING = 20000, WINDOW_MS = 10000;
  // The account allows 50,000,000 a window; the team caps its share at 20,000.
  const fake = await startFakeUpstream({quota: {tpm: 50_000_000, windowMs: WINDOW_MS}});
  redis.cli('FLUSHALL');
  const replicas = await startReplicas(2, fake,
    sharedConfig(redis.url, {tpm_limit: CEILING, quota_window_ms: WINDOW_MS, max_wait_ms: 30000}));
  try {
    const seen = [];
    for (let i = 0; i < 6; i++) {
      const r = await post(replicas[i % 2], CHAT, fillerBody(MODEL, 6000), {authorization: 'Bearer capped'});
      assert.equal(r.status, 200, String(r.body));
      seen.push(explain(r.headers));
    }
    for (const h of seen) assert.ok(Number(h['runway-tokens']) <= CEILING, JSON.stringify(h));
    assert.ok(seen.some(h => h.survival === 'waited'), `36,000 tokens under a 20,000 ceiling: ${JSON.stringify(seen)}`);
  } finally {
    await stopAll(replicas);
    await fake.close();
  }
});

test('a session alternating between replicas: the second replica knows the fit the first learnt, and sends what one process sends', async () => {
  // The model's window holds less than the diet's request: the first request
  // overflows, and recovery's retry fits it; the session remembers the fit.
  const fake = await startFakeUpstream();
  const body = t => traj.request(t, {model: 'gpt-4o'});
  const headers = {authorization: 'Bearer sk-session', 'x-fake-context-window': '9000'};
  const first = traj.turns - 8, second = traj.turns - 7;

  // One process: the reference.
  const single = await startTokendiet({upstreams: {openai: fake.url}, config: quotaConfig({})});
  let reference;
  try {
    const before0 = fake.requests.length;
    assert.equal((await post(single, CHAT, body(first), headers)).status, 200);
    assert.equal(fake.requests.length - before0, 2, 'the first request overflowed and was retried');
    const before1 = fake.requests.length;
    const r = await post(single, CHAT, body(second), headers);
    assert.equal(r.status, 200, String(r.body));
    assert.equal(fake.requests.length - before1, 1, 'the session knew its fit');
    reference = fake.last().body;
  } finally {
    await single.stop();
  }

  redis.cli('FLUSHALL');
  const [a, b] = await startReplicas(2, fake, sharedConfig(redis.url, {}));
  try {
    const before0 = fake.requests.length;
    assert.equal((await post(a, CHAT, body(first), headers)).status, 200);
    assert.equal(fake.requests.length - before0, 2, 'the first request overflowed and was retried');
    await sleep(100);  // the fit is written after the answer (not waited for)
    const before1 = fake.requests.length;
    const r = await post(b, CHAT, body(second), headers);
    assert.equal(r.status, 200, String(r.body));
    assert.equal(fake.requests.length - before1, 1, 'the other replica sent it at the fit the first learnt');
    assert.ok(fake.last().body.equals(reference), 'the other replica sent other bytes than one process');
  } finally {
    await stopAll([a, b]);
    await fake.close();
  }
});

test('a session alternating between replicas at survival\'s levels sends the bytes one process sends', async () => {
  // A 46,000-token share that hardly refills while the test runs: the first
  // of the recorded agent's last requests (~35,000 tokens as billed, after
  // the diet) goes at the diet's level, the next ones at harder levels (or a
  // 429), chosen from the runway left and the session's sticky level and
  // latch; a replica that saw neither would send the second at the diet's.
  const profile = {tpm_limit: 46000, quota_window_ms: 3_600_000, max_wait_ms: 0};
  const body = t => traj.request(t, {model: 'gpt-4o'});
  const turns = [traj.turns - 4, traj.turns - 3, traj.turns - 2, traj.turns - 1];
  // The account's own limit is far above the share: its bills are its count
  // of each request. The bill ratio each process learns is its own (not
  // shared): each learns it from the same warm-up bill, under another key.
  const fake = await startFakeUpstream({quota: {tpm: 50_000_000, windowMs: 3_600_000}});
  const warm = async servers => {
    for (const [i, td] of servers.entries())
      assert.equal((await post(td, CHAT, body(100), {authorization: `Bearer warm-up-${i}`})).status, 200);
  };
  const run = async servers => {
    const out = [];
    for (const [i, t] of turns.entries()) {
      const r = await post(servers[i % servers.length], CHAT, body(t), {authorization: 'Bearer sk-levels'});
      const h = explain(r.headers);
      out.push({status: r.status, level: [h.mode, h.survival].join('/'), bytes: r.status === 200 ? fake.last().body : null});
    }
    return out;
  };
  try {
    const single = await startTokendiet({upstreams: {openai: fake.url}, config: quotaConfig(profile)});
    let reference;
    try { await warm([single]); reference = await run([single]); } finally { await single.stop(); }
    assert.ok(reference.some(r => r.level.startsWith('survival/')), JSON.stringify(reference.map(r => r.level)));
    redis.cli('FLUSHALL');
    const replicas = await startReplicas(2, fake, sharedConfig(redis.url, profile));
    fake.quota.clear();
    let shared;
    try { await warm(replicas); shared = await run(replicas); } finally { await stopAll(replicas); }
    assert.deepEqual(shared.map(r => [r.status, r.level]), reference.map(r => [r.status, r.level]),
      JSON.stringify({shared: shared.map(r => r.level), reference: reference.map(r => r.level)}));
    for (const [i, r] of shared.entries())
      assert.ok(r.bytes === null ? reference[i].bytes === null : r.bytes.equals(reference[i].bytes), `request ${i}: other bytes`);
  } finally {
    await fake.close();
  }
});

test('a model-written recap is shared: the other replica asks no model and sends the same bytes', async () => {
  // The fake answers a chat completion with "six": that is the summary.
  const config = `profiles:
  - name: sum
    models: ["*-sum"]
    token_threshold: 30000
    trigger_tokens: 100000000
    cache_write_price: 0
    summarizer:
      provider: openai
      model: cheap-summarizer
`;
  const fake = await startFakeUpstream();
  redis.cli('FLUSHALL');
  const [a, b] = await startReplicas(2, fake, `quota_store: ${redis.url}\nquota_store_timeout_ms: 1000\n` + config);
  try {
    const req = agentRequest('openai_chat', recordedHistory(), 'Carry on with the next step.', {model: 'gpt-4o-sum'});
    const send = async td => {
      const before0 = fake.requests.length;
      const r = await post(td, req.path, req.body, {authorization: 'Bearer sk-recap'});
      assert.equal(r.status, 200, String(r.body));
      await sleep(200);  // nothing more arrives
      return {calls: fake.requests.length - before0, bytes: fake.last().body};
    };
    const first = await send(a);
    assert.equal(first.calls, 2, 'the summarizer, then the request');
    assert.match(first.bytes.toString(), /\[tokendiet recap: /);
    const second = await send(b);
    assert.equal(second.calls, 1, 'the other replica took the summary from Redis');
    assert.ok(second.bytes.equals(first.bytes), 'the other replica rendered other bytes');
  } finally {
    await stopAll([a, b]);
    await fake.close();
  }
});

test('Redis killed mid-run: traffic goes on, the fallback is counted and logged once, sharing resumes when it is back', async () => {
  const fake = await startFakeUpstream({quota: {tpm: 10_000_000, windowMs: 60000}});
  redis.cli('FLUSHALL');
  // A window that refills little while the test runs: what is spent alone
  // is still owed when Redis is back.
  const replicas = await startReplicas(2, fake, storeConfig(redis.url, 250, {tpm_limit: 1_000_000, quota_window_ms: 3_600_000}));
  try {
    const send = async (i) => {
      const r = await post(replicas[i % 2], CHAT, fillerBody(MODEL, 500), {authorization: 'Bearer steady'});
      assert.equal(r.status, 200, `request ${i}: ${r.body}`);
    };
    for (let i = 0; i < 4; i++) await send(i);
    assert.ok(redis.cli('--scan', '--pattern', 'td:rw:*').trim().length > 0, 'the runway is in Redis');

    await redis.kill();
    for (let i = 0; i < 6; i++) await send(i);  // every one answered, each replica on its own
    for (const td of replicas) {
      assert.ok(await metric(td, 'tokendiet_shared_state_fallbacks_total') >= 1, 'the fallback is counted');
      assert.equal(await metric(td, 'tokendiet_shared_state_shared'), 0);
    }

    await redis.start();  // empty, as after a restart without persistence
    for (const td of replicas) {
      const deadline = Date.now() + 10000;
      while (await metric(td, 'tokendiet_shared_state_shared') !== 1) {
        assert.ok(Date.now() < deadline, 'the replica went back to the shared state');
        await sleep(50);
      }
    }
    // What each decided alone was charged to the shared runway on return
    // (Redis came back empty): its bucket is below its limit.
    const runways = redis.cli('--scan', '--pattern', 'td:rw:*').split('\n').filter(Boolean);
    assert.equal(runways.length, 1, 'reconciled into Redis');
    const level = Number(redis.cli('HGET', runways[0], 'cv'));
    assert.ok(level > 0 && level < 1_000_000 - 1000, `the shared bucket holds ${level}`);
    for (let i = 0; i < 2; i++) await send(i);
    for (const td of replicas) {
      const lines = td.lines.filter(l => l.includes('"shared_state"'));
      assert.equal(lines.filter(l => l.includes('unreachable')).length, 1, lines.join('\n'));
      assert.equal(lines.filter(l => l.includes('answers again')).length, 1, lines.join('\n'));
    }
    assert.ok(fake.requests.every(r => r.status === 200));
  } finally {
    await stopAll(replicas);
    await fake.close();
  }
});

test('Redis that stops answering: no request waits for it, the fallback is counted, sharing resumes when it answers', async () => {
  const fake = await startFakeUpstream();
  redis.cli('FLUSHALL');
  const replicas = await startReplicas(2, fake, storeConfig(redis.url, 250, {tpm_limit: 1_000_000, quota_window_ms: 60000}));
  try {
    redis.pause();
    for (let i = 0; i < 6; i++) {
      const t0 = Date.now();
      const r = await post(replicas[i % 2], CHAT, fillerBody(MODEL, 500), {authorization: 'Bearer hung'});
      assert.equal(r.status, 200, String(r.body));
      // At most one round trip's time-out (250 ms here) for Redis, and the request's own time.
      assert.ok(Date.now() - t0 < 2000, `request ${i} took ${Date.now() - t0} ms`);
    }
    for (const td of replicas) {
      assert.ok(await metric(td, 'tokendiet_shared_state_fallbacks_total') >= 1);
      assert.equal(await metric(td, 'tokendiet_shared_state_shared'), 0);
    }
    redis.resume();
    for (const td of replicas) {
      const deadline = Date.now() + 10000;
      while (await metric(td, 'tokendiet_shared_state_shared') !== 1) {
        assert.ok(Date.now() < deadline, 'the replica went back to the shared state');
        await sleep(50);
      }
    }
    const r = await post(replicas[0], CHAT, fillerBody(MODEL, 500), {authorization: 'Bearer hung'});
    assert.equal(r.status, 200);
  } finally {
    redis.resume();
    await stopAll(replicas);
    await fake.close();
  }
});
