// The quota-enforcing fake upstream (tests/fake_upstream/server.mjs) on a
// worker thread of the benchmark: its own event loop (a second core, as a
// child process would be), and the requests it received handed to the
// benchmark as they finish, then forgotten, so a run's ~200 MB of bodies is
// never held at once (the fake's GET /__requests would send them all in one
// JSON). Only admitted bodies are handed over (retention reads them).
//
// workerData: {quota: {tpm, windowMs, ...}}. Messages out: {type: 'listening',
// port}, {type: 'requests', list: [...]}, {type: 'flushed', pending};
// in: 'flush' (hand over what has finished now), 'close'.
import {parentPort, workerData} from 'node:worker_threads';
import {startFakeUpstream} from '../../../tests/fake_upstream/server.mjs';

const fake = await startFakeUpstream({quota: workerData.quota});

const settled = e => e.finished || e.aborted;

function handOver() {
  const done = [], transfer = [];
  let keep = 0;
  for (const e of fake.requests) {
    if (!settled(e)) { fake.requests[keep++] = e; continue; }
    const admitted = e.quota?.admitted === true && e.status === 200;
    const body = admitted ? new Uint8Array(e.body) : null;
    if (body) transfer.push(body.buffer);
    done.push({
      id: e.id, at: e.at, status: e.status, aborted: e.aborted, path: e.path,
      authorization: e.headers.authorization ?? null, step: e.headers['x-bench-step'] ?? null,
      bodyBytes: e.bodyBytes, quota: e.quota, body,
    });
  }
  fake.requests.length = keep;
  if (done.length) parentPort.postMessage({type: 'requests', list: done}, transfer);
  return fake.requests.length;
}

const timer = setInterval(handOver, 50);
parentPort.on('message', async msg => {
  if (msg === 'flush') parentPort.postMessage({type: 'flushed', pending: handOver()});
  if (msg === 'close') {
    clearInterval(timer);
    handOver();
    await fake.close();
    parentPort.close();
  }
});
parentPort.postMessage({type: 'listening', port: fake.port});
