// What tokendiet sends upstream: the client's request (method, path, query,
// body, end-to-end headers) to the right provider, minus hop-by-hop headers,
// with identity encoding; over pooled connections; cancelled when the client
// goes away.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, rawRequest, Connection, buildRequest} from '../support/index.mjs';

// One fake per provider, so a wrong route shows as a request on the wrong fake.
const fakes = {};
let td;
before(async () => {
  for (const p of ['openai', 'gemini', 'anthropic']) fakes[p] = await startFakeUpstream();
  td = await startTokendiet({upstreams: Object.fromEntries(Object.entries(fakes).map(([p, f]) => [p, f.url]))});
});
after(async () => {
  await td?.stop();
  for (const f of Object.values(fakes)) await f.close();
});
const clearAll = () => { for (const f of Object.values(fakes)) f.clear(); };
const sleep = ms => new Promise(r => setTimeout(r, ms));

// Pairs of (name, value) a forwarded request must carry unchanged.
const pairs = raw => { const out = []; for (let i = 0; i < raw.length; i += 2) out.push([raw[i].toLowerCase(), raw[i + 1]]); return out; };

test('each path goes to its provider, path and query unchanged', async () => {
  const cases = [
    ['POST', '/v1/chat/completions', 'openai'],
    ['POST', '/v1/responses', 'openai'],
    ['POST', '/v1/embeddings', 'openai'],
    ['GET', '/v1/models', 'openai'],
    ['POST', '/v1/messages', 'anthropic'],
    ['POST', '/v1/messages/count_tokens', 'anthropic'],
    ['POST', '/v1beta/models/gemini-2.5-flash:generateContent?key=AIzaQUERYKEY', 'gemini'],
    ['POST', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIzaQUERYKEY', 'gemini'],
    ['POST', '/v1/models/gemini-2.5-flash:generateContent', 'gemini'],
    ['POST', '/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse', 'gemini'],
    ['GET', '/v1beta/models?pageSize=5', 'gemini'],
  ];
  for (const [method, path, provider] of cases) {
    clearAll();
    const r = await rawRequest({port: td.port, method, path, body: method === 'GET' ? null : '{"model":"m"}', headers: {'content-type': 'application/json'}});
    assert.ok(r.complete, `${path}: ${r.error}`);
    for (const [p, f] of Object.entries(fakes)) {
      if (p !== provider) { assert.equal(f.requests.length, 0, `${path} reached ${p}`); continue; }
      assert.equal(f.requests.length, 1, `${path} did not reach ${provider}`);
      assert.equal(f.last().method, method);
      assert.equal(f.last().url, path, `${path}: forwarded as ${f.last().url}`);
    }
  }
});

test('the Host header and an absolute-form target never choose the upstream', async () => {
  clearAll();
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: '{}',
    headers: {'Host': `127.0.0.1:${fakes.openai.port}`, 'content-type': 'application/json'}});
  assert.equal(r.status, 200);
  assert.equal(fakes.anthropic.requests.length, 1);
  assert.equal(fakes.openai.requests.length, 0);
  // The upstream sees its own host name, not the client's.
  assert.equal(fakes.anthropic.last().headers.host, `127.0.0.1:${fakes.anthropic.port}`);

  clearAll();
  const abs = await rawRequest({port: td.port, method: 'POST', path: `http://127.0.0.1:${fakes.openai.port}/v1/messages`, body: '{}',
    headers: {'content-type': 'application/json'}});
  // Either refused, or routed by its path (/v1/messages → anthropic); never to the URL's host.
  assert.equal(fakes.openai.requests.length, 0, 'absolute-form URL chose the upstream');
  if (abs.status < 400) assert.equal(fakes.anthropic.last().path, '/v1/messages');
});

test('the forwarded request equals the client\'s: body bytes and end-to-end headers, hop-by-hop removed', async () => {
  const body = Buffer.from(JSON.stringify({model: 'gpt-5.1', messages: [{role: 'user', content: 'héllo \u2603 "quoted" \\ back'}], x_unknown_field: [1, {a: null}]}));
  const e2e = [
    ['Authorization', 'Bearer sk-proj-CLIENTKEY123'],
    ['OpenAI-Organization', 'org-abc'],
    ['OpenAI-Project', 'proj_xyz'],
    ['x-api-key', 'sk-ant-CLIENTKEY'],
    ['anthropic-version', '2023-06-01'],
    ['anthropic-beta', 'prompt-caching-2024-07-31'],
    ['anthropic-beta', 'interleaved-thinking-2025-05-14'],
    ['x-goog-api-key', 'AIzaCLIENTKEY'],
    ['User-Agent', 'OpenAI/JS 6.30.1'],
    ['X-Stainless-Lang', 'js'],
    ['Content-Type', 'application/json'],
    ['Accept', 'text/event-stream'],
    ['X-Custom-Trace', 'a=1, b=2'],
  ];
  const hop = [
    ['Connection', 'keep-alive, X-Drop-Me'],
    ['Keep-Alive', 'timeout=5'],
    ['X-Drop-Me', 'connection-scoped'],
    ['TE', 'trailers'],
    ['Proxy-Connection', 'keep-alive'],
    ['Accept-Encoding', 'gzip, deflate, br'],
  ];
  clearAll();
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions?trace=1&x=%2F', body, headers: [...e2e, ...hop]});
  assert.equal(r.status, 200);
  const got = fakes.openai.last();
  assert.equal(got.method, 'POST');
  assert.equal(got.path, '/v1/chat/completions');
  assert.equal(got.query, 'trace=1&x=%2F');
  assert.ok(got.body.equals(body), 'body bytes changed on the way');
  const fwd = pairs(got.rawHeaders);
  // Every end-to-end header arrives, with the same value; repeated ones in order.
  for (const [k, v] of e2e) assert.ok(fwd.some(([fk, fv]) => fk === k.toLowerCase() && fv === v), `${k}: ${v} not forwarded`);
  const betas = fwd.filter(([k]) => k === 'anthropic-beta').map(([, v]) => v).join(',').split(/\s*,\s*/);
  assert.deepEqual(betas, ['prompt-caching-2024-07-31', 'interleaved-thinking-2025-05-14']);
  for (const k of ['keep-alive', 'x-drop-me', 'te', 'proxy-connection'])
    assert.ok(!fwd.some(([fk]) => fk === k), `hop-by-hop header ${k} was forwarded`);
  const conn = fwd.filter(([k]) => k === 'connection').map(([, v]) => v.toLowerCase());
  assert.ok(conn.every(v => v === 'keep-alive'), `Connection forwarded as ${conn}`);
  // Identity encoding upstream, so the usage tee reads plain bytes.
  const ae = fwd.filter(([k]) => k === 'accept-encoding').map(([, v]) => v);
  assert.deepEqual(ae, ['identity'], `Accept-Encoding upstream: ${JSON.stringify(ae)}`);
  assert.equal(Number(got.headers['content-length']), body.length);
  assert.equal(got.headers['transfer-encoding'], undefined);
});

test('a chunked request body reaches the upstream with the same bytes', async () => {
  const body = Buffer.from(JSON.stringify({contents: [{role: 'user', parts: [{text: 'x'.repeat(20000)}]}]}));
  const chunked = Buffer.concat([
    Buffer.from(`${(7000).toString(16)}\r\n`), body.subarray(0, 7000), Buffer.from('\r\n'),
    Buffer.from(`${(body.length - 7000).toString(16)}\r\n`), body.subarray(7000), Buffer.from('\r\n0\r\n\r\n'),
  ]);
  clearAll();
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    headers: [['Transfer-Encoding', 'chunked'], ['Content-Type', 'application/json'], ['x-goog-api-key', 'AIzaK']], body: chunked, contentLength: false});
  assert.equal(r.status, 200);
  assert.ok(fakes.gemini.last().body.equals(body));
});

test('a Content-Length body that trickles in, with the next request pipelined behind it, arrives whole', async () => {
  // The body is read straight into the request (not through the read
  // buffer): pieces of every size, pauses between them, and bytes of the
  // next request in the same write as the body's end must all come out right.
  clearAll();
  const body = Buffer.from(JSON.stringify({model: 'm', messages: [{role: 'user', content: 'y'.repeat(70000)}]}));
  const second = Buffer.from('{"model":"m","n":2}');
  const head = buildRequest({method: 'POST', path: '/v1/chat/completions', headers: {'content-type': 'application/json', 'content-length': String(body.length)}});
  const next = buildRequest({method: 'POST', path: '/v1/chat/completions', body: second, headers: {'content-type': 'application/json'}});
  const c = await Connection.open({port: td.port});
  try {
    await c.send(Buffer.concat([head, body.subarray(0, 100)]));
    for (const [from, to] of [[100, 101], [101, 20000], [20000, 20001], [20001, 65536]]) {
      await sleep(30);
      await c.send(body.subarray(from, to));
    }
    await sleep(30);
    await c.send(Buffer.concat([body.subarray(65536), next]));
    const r1 = await c.readResponse({});
    const r2 = await c.readResponse({});
    assert.equal(r1.status, 200);
    assert.equal(r2.status, 200);
  } finally { c.close(); }
  assert.equal(fakes.openai.requests.length, 2);
  assert.ok(fakes.openai.requests[0].body.equals(body), 'first body changed on the way');
  assert.ok(fakes.openai.requests[1].body.equals(second), 'pipelined body changed on the way');
});

test('a client that stops mid-body: nothing goes upstream, the connection closes', async () => {
  clearAll();
  const c = await Connection.open({port: td.port, timeoutMs: 3000});
  await c.send(Buffer.from('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50000\r\n\r\n{"model":"m",'));
  await sleep(50);
  c.sock.end();  // half-close: the body can never complete
  for (let i = 0; i < 300 && !c.closed; i++) await sleep(10);
  assert.ok(c.closed, 'the proxy kept a connection whose body can never complete');
  assert.equal(fakes.openai.requests.length, 0);
});

test('several requests on one client connection (keep-alive), and the upstream connection is reused', async () => {
  clearAll();
  const c = await Connection.open({port: td.port});
  try {
    for (let i = 0; i < 3; i++) {
      const r = await c.request({method: 'POST', path: '/v1/chat/completions', body: `{"model":"m","n":${i}}`, headers: {'content-type': 'application/json'}});
      assert.equal(r.status, 200);
      assert.ok(r.complete);
    }
  } finally { c.close(); }
  for (let i = 0; i < 3; i++)
    await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: '{}', headers: {'content-type': 'application/json'}});
  const ports = new Set(fakes.openai.requests.map(r => r.remotePort));
  assert.equal(fakes.openai.requests.length, 6);
  assert.ok(ports.size < 6, `6 sequential requests used ${ports.size} upstream connections: no keep-alive pool`);
});

test('a client that disconnects cancels its upstream request', async () => {
  clearAll();
  const c = await Connection.open({port: td.port, timeoutMs: 400});
  await c.send(Buffer.from('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-fake-mode: hang\r\nContent-Length: 2\r\n\r\n{}'));
  await fakes.openai.waitForRequests(1);
  c.close();
  for (let i = 0; i < 300 && !fakes.openai.last().aborted; i++) await sleep(10);
  assert.equal(fakes.openai.last().aborted, true, 'upstream request still open 3 s after the client left');

  // The same for a stream already flowing.
  clearAll();
  const s = await Connection.open({port: td.port, timeoutMs: 400});
  await s.send(Buffer.from('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-fake-mode: slow\r\nx-fake-first-ms: 0\r\nx-fake-gap-ms: 100\r\nx-fake-repeat: 200\r\nContent-Length: 15\r\n\r\n{"stream":true}'));
  await fakes.anthropic.waitForRequests(1);
  await sleep(250);
  s.close();
  for (let i = 0; i < 300 && !fakes.anthropic.last().aborted; i++) await sleep(10);
  assert.equal(fakes.anthropic.last().aborted, true, 'upstream stream still open 3 s after the client left');
});
