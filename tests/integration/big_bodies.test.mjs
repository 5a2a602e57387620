// A big chat body is dieted on a diet thread, not on the I/O thread that read
// it: with one I/O thread, /metrics and /healthz are answered while a 31 MB
// body is on its diet (the tokendiet_diet_jobs gauge shows it running), and
// the body still reaches the upstream whole. Afterwards the freed memory goes
// back to the system.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {startFakeUpstream, startTokendiet, rawRequest, letterChatBody} from '../support/index.mjs';

const SIZE = 31 * 1024 * 1024;
let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url}, args: ['--threads', '1']});
});
after(async () => { await td?.stop(); await fake?.close(); });

function postBig(body) {
  return new Promise((resolve, reject) => {
    const req = http.request({host: '127.0.0.1', port: td.port, path: '/v1/chat/completions', method: 'POST',
      headers: {'content-type': 'application/json', 'content-length': body.length}, agent: false}, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve({status: res.statusCode, body: Buffer.concat(chunks)}));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function metric(name) {
  const r = await rawRequest({port: td.port, path: '/metrics'});
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(r.body.toString());
  return m ? Number(m[1]) : NaN;
}

test('/healthz is served while a 31 MB body is on its diet; the body arrives whole; memory is released after', async () => {
  const body = letterChatBody(SIZE);
  const releasesBefore = await metric('tokendiet_memory_releases_total');
  assert.equal(await metric('tokendiet_diet_jobs'), 0);
  const big = postBig(body);
  // Counting 31 MB of one letter takes a second or so; the one I/O thread
  // answers /metrics meanwhile, and sees the diet running. (Were the diet on
  // that thread, no answer could ever show it running.)
  let running = 0;
  const until = Date.now() + 20000;
  while (running === 0 && Date.now() < until) running = await metric('tokendiet_diet_jobs');
  assert.equal(running, 1, 'never saw the big body on a diet thread while the I/O thread answered');
  const health = await rawRequest({port: td.port, path: '/healthz', timeoutMs: 30000});
  assert.equal(health.status, 200);
  const res = await big;
  assert.equal(res.status, 200);

  // Nothing to prune in one user message: the upstream got the bytes as sent.
  const seen = fake.requests.filter(r => r.path === '/v1/chat/completions');
  assert.equal(seen.length, 1);
  assert.ok(seen[0].body.equals(body), `the upstream got ${seen[0].body.length} bytes, not the ${body.length} sent`);
  fake.requests.length = 0;

  // Once the diet threads are idle, the freed heap goes back to the system.
  const deadline = Date.now() + 10000;
  let releases = releasesBefore;
  while (Date.now() < deadline && releases === releasesBefore) {
    await new Promise(r => setTimeout(r, 100));
    releases = await metric('tokendiet_memory_releases_total');
  }
  assert.ok(releases > releasesBefore, `no memory release after the big body (${releasesBefore} -> ${releases})`);
});
