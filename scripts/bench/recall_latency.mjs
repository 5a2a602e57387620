// The recall round's added latency end to end (docs/design.md §Recall): an
// Anthropic stream whose model calls tokendiet_recall for a 100 KB entry,
// through tests/support/recall_test_proxy (the real network core and filters),
// against the same two requests sent straight to the fake upstream one after
// the other (the answer, then the continuation as the proxy wrote it). The
// difference is what the proxy adds to both rounds together, its relay of the
// first included. Medians of N runs (default 200), after 20 warm-up runs.
//   node scripts/bench/recall_latency.mjs [N]      (after scripts/build.sh --target recall_test_proxy)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {spawn} from 'node:child_process';
import http from 'node:http';
import {startFakeProcess} from '../../tests/support/processes.mjs';

const N = Number(process.argv[2] || 200);
const here = path.dirname(new URL(import.meta.url).pathname);
const bin = process.env.RECALL_TEST_PROXY || path.resolve(here, '../../build/tests/recall_test_proxy');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'td-recall-bench-'));
const ID = 'td-00000000000000000000000000000001';
let entry = '';
while (entry.length < 100 * 1024) entry += `line ${entry.length}: ok\n`;
fs.writeFileSync(path.join(dir, ID), entry.slice(0, 100 * 1024));

// The fake in a process of its own: the client's event loop must not serve it too.
const fake = await startFakeProcess();
const proxy = spawn(bin, [String(fake.port), dir], {stdio: ['ignore', 'pipe', 'ignore']});
const port = await new Promise(r => proxy.stdout.on('data', d => r(Number(/LISTENING (\d+)/.exec(String(d))[1]))));
const agent = new http.Agent({keepAlive: true, maxSockets: 1});

function post(p, pathName, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({host: '127.0.0.1', port: p, path: pathName, method: 'POST', agent,
      headers: {'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers}}, res => {
      res.on('data', () => {});
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function get(pathName, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request({host: '127.0.0.1', port: fake.port, path: pathName, method}, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', reject);
    req.end();
  });
}
const clearRequests = () => get('/__requests', 'DELETE');
const recorded = async () => JSON.parse(await get('/__requests')).map(r => Buffer.from(r.body_base64, 'base64'));

const history = 'x'.repeat(200 * 1024);
const body = JSON.stringify({model: 'claude-x', max_tokens: 1024, stream: true, messages: [{role: 'user', content: history}]});
const steer = {'x-fake-mode': 'recall', 'x-fake-recall-id': ID};
const median = xs => xs.sort((a, b) => a - b)[xs.length >> 1];
const through = [], direct = [];
for (let i = 0; i < N + 20; i++) {
  await clearRequests();
  let t = process.hrtime.bigint();
  await post(port, '/v1/messages', body, steer);
  const tp = Number(process.hrtime.bigint() - t) / 1e6;
  const [first, second] = await recorded();
  t = process.hrtime.bigint();
  await post(fake.port, '/v1/messages', first.toString(), steer);
  await post(fake.port, '/v1/messages', second.toString(), steer);
  const td = Number(process.hrtime.bigint() - t) / 1e6;
  if (i >= 20) { through.push(tp); direct.push(td); }
}
console.log(`entry 100 KB, request ${body.length} B: through the proxy ${median(through).toFixed(3)} ms, ` +
  `the two rounds direct ${median(direct).toFixed(3)} ms, added ${(median(through) - median(direct)).toFixed(3)} ms (medians of ${N})`);
proxy.kill('SIGTERM');
agent.destroy();
await fake.stop();
fs.rmSync(dir, {recursive: true, force: true});
