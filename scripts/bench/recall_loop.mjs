// The recall loop against a model that abuses it (docs/design.md §Recall,
// bounds): an Anthropic stream whose model answers every round with 1,000
// tokendiet_recall calls of one 100 KB entry and never stops, through
// tests/support/recall_test_proxy (the real network core and filters; the
// fake upstream in a process of its own). While each request runs, another
// connection asks /healthz every 2 ms. Reports per request its time, the
// bytes sent upstream (all rounds, and the largest one body), and over the
// run the /healthz waits (p50, p99, max) and the proxy's peak RSS.
//   node scripts/bench/recall_loop.mjs [REQUESTS] [PROXY_BINARY]
// (after scripts/build.sh --target recall_test_proxy; the second argument runs
// another build, e.g. an older commit's, for a side-by-side)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {performance} from 'node:perf_hooks';
import {startFakeProcess, startRecallTestProxy} from '../../tests/support/processes.mjs';
import {rawRequest} from '../../tests/support/http.mjs';

const N = Number(process.argv[2] || 3);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'td-recall-loop-'));
const ID = 'td-00000000000000000000000000000001';
let entry = '';
for (let i = 0; entry.length < 100 * 1024; i++) entry += `line ${i} of a long archived build log\n`;
fs.writeFileSync(path.join(dir, ID), entry);

const fake = await startFakeProcess();
const {proc: proxy, port} = await startRecallTestProxy(fake.port, dir, process.argv[3]);
const peakRssMb = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${proxy.pid}/status`, 'utf8'))[1]) / 1024;

const body = JSON.stringify({model: 'claude-sonnet-4-5', max_tokens: 1000, stream: true,
  messages: [{role: 'user', content: 'Read the log.'}]});
const waits = [];
const rows = [];
for (let i = 0; i < N; i++) {
  await rawRequest({port: fake.port, method: 'DELETE', path: '/__requests'});
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const t0 = performance.now();
      await rawRequest({port, method: 'GET', path: '/healthz'});
      waits.push(performance.now() - t0);
      await new Promise(r => setTimeout(r, 2));
    }
  })();
  const t0 = performance.now();
  const r = await rawRequest({port, method: 'POST', path: '/v1/messages', timeoutMs: 300000, body,
    headers: {'content-type': 'application/json', 'x-api-key': 'k', 'x-fake-mode': 'recall', 'x-fake-recall-id': ID,
      'x-fake-recall-repeat': '1000', 'x-fake-recall-always': '1'}});
  const ms = performance.now() - t0;
  polling = false;
  await poller;
  const sent = JSON.parse((await rawRequest({port: fake.port, method: 'GET', path: '/__requests?bodies=0', timeoutMs: 300000}))
    .body.toString('utf8'));
  rows.push({ms, status: r.status, rounds: sent.length, upstream_bytes: sent.reduce((a, q) => a + q.bodyBytes, 0),
    largest_body: Math.max(...sent.map(q => q.bodyBytes)), leaked: r.body.includes('tokendiet_recall')});
}
waits.sort((a, b) => a - b);
const q = f => waits[Math.min(waits.length - 1, Math.floor(waits.length * f))];
const summary = {requests: rows, healthz: {probes: waits.length, p50_ms: q(0.5), p99_ms: q(0.99), max_ms: waits.at(-1)},
  peak_rss_mb: peakRssMb()};
console.log(JSON.stringify(summary, null, 1));
proxy.kill('SIGTERM');
await fake.stop();
fs.rmSync(dir, {recursive: true, force: true});
