// Idle upstream connections that the upstream closed are closed by tokendiet
// too, within about a second, not kept in CLOSE_WAIT until the next request
// for that upstream (the soak saw 128 of them linger on an idle proxy).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {startFakeUpstream, startTokendiet, rawRequest} from '../support/index.mjs';

let fake, td;
before(async () => {
  fake = await startFakeUpstream({keepAliveMs: 200, record: false});
  td = await startTokendiet({upstreams: {openai: fake.url}});
});
after(async () => { await td?.stop(); await fake?.close(); });

// tokendiet's TCP sockets in CLOSE_WAIT (the peer closed, we did not).
function closeWaitSockets(pid) {
  const inodes = new Set();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch { /* closed meanwhile */ }
  }
  let n = 0;
  for (const table of ['tcp', 'tcp6']) {
    for (const line of fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '08' && inodes.has(f[9])) n++;
    }
  }
  return n;
}

test('an idle upstream connection the upstream closed is closed by tokendiet within seconds', async () => {
  const body = JSON.stringify({model: 'gpt-4o', messages: [{role: 'user', content: 'hi'}]});
  const responses = await Promise.all([0, 1, 2].map(() => rawRequest({port: td.port, method: 'POST',
    path: '/v1/chat/completions', body, headers: {'content-type': 'application/json'}})));
  for (const r of responses) assert.equal(r.status, 200);
  // The fake closes its idle keep-alive connections after 200 ms; tokendiet
  // looks about once a second.
  await new Promise(r => setTimeout(r, 1000));
  let lingering = -1;
  const until = Date.now() + 5000;
  while (Date.now() < until && lingering !== 0) {
    await new Promise(r => setTimeout(r, 250));
    lingering = closeWaitSockets(td.proc.pid);
  }
  assert.equal(lingering, 0, 'upstream connections left in CLOSE_WAIT');
});
