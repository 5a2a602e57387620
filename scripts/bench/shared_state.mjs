// What sharing the policy's state through Redis adds to a request
// (docs/design.md §Shared state): the same requests through one `tokendiet
// serve` with its own stores and with a quota_store (a local redis-server,
// Debian's), at 1 and at 32 concurrent connections; client-side latency
// p50/p99 and the difference. With Redis each request makes two round trips
// (the facts before the diet, on a diet thread; the take after it, paused)
// and two writes not waited for.
//
//   node scripts/bench/shared_state.mjs [--requests 2000] [--concurrency 1,32] [--turn 30] [--json FILE]
//
// The fake upstream runs in its own process; one API key and one session for
// every request (one runway and one session key, the contended case); a
// profile with a tpm_limit far above the traffic, so the policy runs and
// nothing waits. TOKENDIET_BIN, else build/cli/tokendiet.
import fs from 'node:fs';
import {startTokendiet, startFakeProcess, startRedis, Connection, trajectory} from '../../tests/support/index.mjs';

const opts = {requests: 2000, concurrency: [1, 32], turn: 30, json: null};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const k = argv[i].replace(/^--/, ''), v = argv[i + 1];
  if (!(k in opts) || v === undefined) { console.error('usage: shared_state.mjs [--requests N] [--concurrency 1,32] [--turn T] [--json FILE]'); process.exit(2); }
  opts[k] = k === 'concurrency' ? v.split(',').map(Number) : k === 'json' ? v : Number(v);
}
const log = m => process.stderr.write(`shared_state: ${m}\n`);
const body = Buffer.from(trajectory('mini-swe-agent-12').request(opts.turn, {model: 'gpt-4o'}));
const profile = (process.env.BENCH_DIET_THREADS ? `diet_threads: ${process.env.BENCH_DIET_THREADS}\n` : '') + 'profiles:\n  - name: bench\n    models: ["*"]\n    tpm_limit: 1000000000\n';

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function measure(port, concurrency, n) {
  const lat = [];
  let next = 0;
  const lane = async () => {
    const conn = await Connection.open({port, timeoutMs: 30000});
    while (next < n) {
      next++;
      const t0 = performance.now();
      const r = await conn.request({method: 'POST', path: '/v1/chat/completions',
        headers: {'content-type': 'application/json', authorization: 'Bearer sk-bench'}, body});
      if (r.status !== 200) throw new Error(`status ${r.status}: ${r.body}`);
      lat.push(performance.now() - t0);
    }
    conn.close();
  };
  await Promise.all(Array.from({length: concurrency}, lane));
  lat.sort((a, b) => a - b);
  return {p50: +pct(lat, 50).toFixed(2), p99: +pct(lat, 99).toFixed(2)};
}

const fake = await startFakeProcess();
const redis = await startRedis();
const results = [];
try {
  for (const store of ['local', 'redis']) {
    const config = (store === 'redis' ? `quota_store: ${redis.url}\n` : '') + profile;
    const td = await startTokendiet({upstreams: {openai: fake.url}, config});
    try {
      if (store === 'redis') await td.waitForLine(/sharing the runway/, 10000);
      await measure(td.port, 4, 200);  // warm: caches, connections
      for (const c of opts.concurrency) {
        const m = await measure(td.port, c, c === 1 ? Math.min(opts.requests, 1000) : opts.requests);
        log(`${store}, c=${c}: p50 ${m.p50} ms, p99 ${m.p99} ms`);
        results.push({store, concurrency: c, ...m});
      }
    } finally {
      await td.stop();
    }
  }
} finally {
  await redis.kill();
  await fake.stop();
}
const row = (c, store) => results.find(r => r.concurrency === c && r.store === store);
console.log('| connections | own stores p50 / p99 (ms) | Redis p50 / p99 (ms) | added p50 / p99 (ms) |');
console.log('|--:|--:|--:|--:|');
for (const c of opts.concurrency) {
  const a = row(c, 'local'), b = row(c, 'redis');
  console.log(`| ${c} | ${a.p50} / ${a.p99} | ${b.p50} / ${b.p99} | ${(b.p50 - a.p50).toFixed(2)} / ${(b.p99 - a.p99).toFixed(2)} |`);
}
if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({body_bytes: body.length, results}, null, 1) + '\n');
