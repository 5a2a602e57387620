// Idle upstream connections that the upstream closed are closed by tokendiet
// too, within about a second, not kept in CLOSE_WAIT until the next request
// for that upstream (the soak saw 128 of them linger on an idle proxy).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, rawRequest, tcpSocketsOf} from '../support/index.mjs';

let fake, td;
before(async () => {
  fake = await startFakeUpstream({keepAliveMs: 200, record: false});
  td = await startTokendiet({upstreams: {openai: fake.url}});
});
after(async () => { await td?.stop(); await fake?.close(); });

// tokendiet's TCP sockets in CLOSE_WAIT (the peer closed, we did not).
const closeWaitSockets = pid => tcpSocketsOf(pid).filter(s => s.state === '08').length;

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
