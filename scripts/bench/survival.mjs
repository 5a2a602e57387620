// The survival benchmark (issue 16): every trajectory of tests/fixtures/replay
// as an agent under a tokens-per-minute quota, sent straight to the
// quota-enforcing fake upstream and through `tokendiet serve`; how much the
// agents wait, how many 429s they meet, what reaches the upstream, and what
// of the context the model still sees.
//
//   node scripts/bench/survival.mjs [--speed 30] [--tpm 200000,30000] [--modes direct,tokendiet]
//        [--trajectories id,id] [--pace-s 3] [--max-wait-s 60] [--max-attempts 20]
//        [--concurrency 0] [--no-quota-keys] [--replicas 1] [--no-shared-store] [--json FILE]
//
// Time. Every duration is in quota time (the provider's 60 s window, the 3 s
// pace) divided by --speed: at 30 the fake's window is 2 s and an agent sends
// one request per 100 ms. Waits are reported scaled back, in quota-minutes.
// Agents. One per trajectory, each with its own API key (the fake's buckets
// and tokendiet's runway are per key and model, so agents do not share a
// quota); all run at once (--concurrency N: at most N at a time) so the run
// takes minutes. Running them one after another gives the same figures, only
// slower: concurrency shows only as CPU contention on the timing. The client's
// pace and 429 handling: survival/agent.mjs.
// Upstream. The fake (tests/fake_upstream/server.mjs, --quota-tpm, window
// 60 s / speed) on a worker thread; it counts a request as ceil(body bytes /
// 4) tokens. Upstream 429s, tokens sent and retention come from the requests
// it received (survival/fake_worker.mjs, survival/report.mjs); retention is
// `tokendiet replay`'s measure, ported (survival/trajectories.mjs), on the
// body each step was admitted with.
// tokendiet. TOKENDIET_BIN, else build/cli/tokendiet, with one profile for
// every model carrying the quota keys: tpm_limit, quota_window_ms (scaled),
// quota_margin 1.2, max_wait_ms (--max-wait-s, scaled). --no-quota-keys leaves
// them out (a binary that does not know them rejects the config): today's diet.
// --replicas N (tokendiet mode): N tokendiet processes sharing one
// redis-server (quota_store; Debian's, on a free port), each agent's requests
// sent to them in turn, as a round-robin load balancer would;
// --no-shared-store: the same replicas without Redis, each on its own runway.
//
// Prints the markdown table on stdout (progress on stderr) and writes the JSON
// summary to --json. Exit status 1 on a harness error: a request that failed
// other than by a 429, a 429 without a retry time, a fake request no agent
// sent, tokendiet not starting or not exiting cleanly.
import fs from 'node:fs';
import path from 'node:path';
import {Worker} from 'node:worker_threads';
import {startTokendiet, startRedis, SOURCE_DIR} from '../../tests/support/index.mjs';
import {loadTrajectories} from './survival/trajectories.mjs';
import {runAgent} from './survival/agent.mjs';
import {UpstreamTally, finishRow, totalOf, markdown} from './survival/report.mjs';

const USAGE = 'usage: survival.mjs [--speed X] [--tpm N,N] [--modes direct,tokendiet] [--trajectories id,id] ' +
  '[--pace-s S] [--max-wait-s S] [--max-attempts N] [--concurrency N] [--no-quota-keys] [--replicas N] [--json FILE]';
const opts = {speed: 30, tpm: [200000, 30000], modes: ['direct', 'tokendiet'], trajectories: null,
  'pace-s': 3, 'max-wait-s': 60, 'max-attempts': 20, concurrency: 0, 'quota-keys': true, replicas: 1, 'shared-store': true, json: null};
const LISTS = new Set(['tpm', 'modes', 'trajectories']);
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const k = argv[i].replace(/^--/, '');
  if (k === 'no-quota-keys') { opts['quota-keys'] = false; continue; }
  if (k === 'no-shared-store') { opts['shared-store'] = false; continue; }
  const v = argv[++i];
  if (!(k in opts) || v === undefined) { console.error(USAGE); process.exit(2); }
  if (k === 'json') opts.json = v;
  else if (LISTS.has(k)) opts[k] = v.split(',').filter(Boolean).map(x => (k === 'tpm' ? Number(x) : x));
  else opts[k] = Number(v);
}
const bad = !(opts.speed > 0) || !(opts['pace-s'] > 0) || !(opts['max-attempts'] >= 1) || !(opts['max-wait-s'] >= 0) ||
  !(opts.concurrency >= 0) || !(Number.isInteger(opts.replicas) && opts.replicas >= 1) || !opts.tpm.length || opts.tpm.some(n => !(n > 0)) ||
  !opts.modes.length || opts.modes.some(m => m !== 'direct' && m !== 'tokendiet');
if (bad) { console.error(USAGE); process.exit(2); }

const log = msg => process.stderr.write(`survival: ${msg}\n`);
const WINDOW_MS = 60000 / opts.speed;
const PACE_MS = (opts['pace-s'] * 1000) / opts.speed;
const MAX_WAIT_MS = Math.round((opts['max-wait-s'] * 1000) / opts.speed);
const keyOf = t => `sk-bench-${t.id}`;
const problems = [];

// Children are stopped even when this script dies halfway.
const stoppers = new Set();
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));
process.on('exit', () => { for (const s of stoppers) s(); });

function startFake(tpm) {
  const worker = new Worker(new URL('./survival/fake_worker.mjs', import.meta.url),
    {workerData: {quota: {tpm, windowMs: WINDOW_MS}}});
  const kill = () => worker.terminate();
  stoppers.add(kill);
  const handlers = new Set();
  worker.on('message', m => { for (const h of handlers) h(m); });
  worker.on('error', e => problems.push(`fake upstream worker: ${e.message}`));
  const next = type => new Promise(resolve => {
    const h = m => { if (m.type === type) { handlers.delete(h); resolve(m); } };
    handlers.add(h);
  });
  return next('listening').then(({port}) => ({
    port, url: `http://127.0.0.1:${port}`,
    onRequests(f) { handlers.add(m => { if (m.type === 'requests') f(m.list); }); },
    // Until every request it received has been handed over.
    async flush() { for (let i = 0; i < 100; i++) { if ((await (worker.postMessage('flush'), next('flushed'))).pending === 0) return; await new Promise(r => setTimeout(r, 50)); } },
    async close() { const gone = new Promise(r => worker.once('exit', r)); worker.postMessage('close'); await gone; stoppers.delete(kill); },
  }));
}

// tokendiet's configuration: one profile for every model; the quota keys in quota time / speed.
function tokendietConfig(tpm, store) {
  const lines = store ? [`quota_store: ${store}`] : [];
  lines.push('profiles:', '  - name: survival-bench', '    models: ["*"]');
  if (opts['quota-keys']) {
    lines.push(`    tpm_limit: ${tpm}`, `    quota_window_ms: ${Math.round(WINDOW_MS)}`, '    quota_margin: 1.2',
      `    max_wait_ms: ${MAX_WAIT_MS}`);
  }
  return lines.join('\n') + '\n';
}

// At most `limit` of the tasks at a time (0: all).
async function pooled(items, limit, f) {
  const out = new Array(items.length);
  let next = 0;
  const lane = async () => { while (next < items.length) { const i = next++; out[i] = await f(items[i]); } };
  await Promise.all(Array.from({length: limit > 0 ? Math.min(limit, items.length) : items.length}, lane));
  return out;
}

async function run(trajectories, tpm, mode) {
  const fake = await startFake(tpm);
  const tally = new UpstreamTally(trajectories, keyOf, tpm);
  fake.onRequests(list => tally.add(list));
  const tds = [];
  let redis = null;
  if (mode === 'tokendiet') {
    if (opts.replicas > 1 && opts['shared-store']) {
      redis = await startRedis();
      stoppers.add(() => redis.kill());
    }
    try {
      for (let i = 0; i < opts.replicas; i++) {
        const td = await startTokendiet({upstreams: {openai: fake.url}, config: tokendietConfig(tpm, redis?.url)});
        stoppers.add(() => td.proc.kill('SIGKILL'));
        tds.push(td);
        if (redis) await td.waitForLine(/sharing the runway/, 10000);
      }
    } catch (e) {
      for (const td of tds) await td.stop();
      await redis?.kill();
      await fake.close();
      const hint = /unknown key '(tpm_limit|quota_|max_wait)/.test(e.message) ? ' (this binary does not know the quota keys: --no-quota-keys)' : '';
      throw new Error(`tokendiet did not start${hint}: ${e.message}`);
    }
  }
  const port = tds.length ? tds.map(td => td.port) : fake.port;
  log(`${mode}, ${tpm} TPM: ${trajectories.length} agents, window ${WINDOW_MS} ms, pace ${PACE_MS} ms`);
  const t0 = performance.now();
  const agentOpts = {paceMs: PACE_MS, maxAttempts: opts['max-attempts'], noRetryMs: PACE_MS,
    timeoutMs: 60000 + 2 * MAX_WAIT_MS};
  const stats = await pooled(trajectories, opts.concurrency, async t => {
    const st = await runAgent(t, port, {...agentOpts, key: keyOf(t)});
    log(`  ${mode} ${tpm}: ${t.id} done (${st.answered}/${st.requests} answered, ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    return st;
  });
  await fake.flush();
  for (const td of tds) {
    const tdExit = await td.stop(30000);
    if (!tdExit || tdExit.code !== 0) problems.push(`tokendiet (${tpm}, ${mode}) did not exit 0: ${JSON.stringify(tdExit)}`);
  }
  await redis?.kill();
  await fake.close();
  if (tally.unknown) problems.push(`${mode} ${tpm}: the fake received ${tally.unknown} requests no agent sent`);
  const rows = stats.map(st => finishRow({...st, ...tally.result(st.id)}, opts.speed));
  for (const r of rows) {
    if (r.errors) problems.push(`${mode} ${tpm} ${r.id}: ${r.errors} harness errors, e.g. ${JSON.stringify(r.error_examples[0])}`);
  }
  return {mode, tpm, replicas: tds.length || null, shared_store: redis !== null, quota_keys: mode === 'tokendiet' ? opts['quota-keys'] : null,
    seconds: +((performance.now() - t0) / 1000).toFixed(1), trajectories: rows, total: totalOf(rows, opts.speed)};
}

const trajectories = loadTrajectories(path.join(SOURCE_DIR, 'tests', 'fixtures', 'replay'), opts.trajectories);
const runs = [];
for (const tpm of opts.tpm) for (const mode of opts.modes) runs.push(await run(trajectories, tpm, mode));

const summary = {
  speed: opts.speed, pace_s: opts['pace-s'], window_ms: WINDOW_MS, max_wait_s: opts['max-wait-s'],
  max_attempts: opts['max-attempts'], replicas: opts.replicas, concurrency: opts.concurrency || trajectories.length,
  quota_keys: opts['quota-keys'], trajectories: trajectories.length,
  requests: trajectories.reduce((n, t) => n + t.steps.length, 0),
  runs: runs.map(r => ({...r, trajectories: r.trajectories.map(({error_examples, ...rest}) => rest)})),
  problems,
};
if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(summary, null, 1) + '\n');
console.log(markdown(runs));
for (const p of problems) log(`problem: ${p}`);
process.exit(problems.length ? 1 : 0);
