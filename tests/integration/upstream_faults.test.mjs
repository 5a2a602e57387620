// Upstream and client faults the proxy must answer at once, through the real
// binary and the fake upstream's misbehaving modes:
//  - a response that breaks before any byte of it reached the client (an
//    invalid chunk size with the head; an error status whose body is cut by
//    a close or a reset, read ahead for the failure phase) is answered 502
//    upstream_bad_response in the calling provider's error shape, on a
//    connection that stays open, and the access line and the ledger row
//    (through /metrics, which counts the rows) say 502;
//  - a 101 Switching Protocols (tokendiet never asks to upgrade) is the same
//    502, where it used to be relayed and leave the client waiting;
//  - a 103 Early Hints before the answer is skipped, the answer relayed;
//  - a chunked request body whose lines end in a bare LF is refused 400 at
//    once instead of waiting out the client timeout.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {performance} from 'node:perf_hooks';
import {startFakeUpstream, startTokendiet, Connection, rawRequest} from '../support/index.mjs';

const CHAT = '/v1/chat/completions';
const ANTHROPIC = '/v1/messages';
const sleep = ms => new Promise(r => setTimeout(r, ms));

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}});
});
after(async () => {
  await td?.stop();
  await fake?.close();
});

// A small chat request of the path's format for `model` (a name unique to
// the test, so its access line and /metrics series are its own).
function chatBody(path, model) {
  return path === ANTHROPIC
    ? {model, max_tokens: 64, messages: [{role: 'user', content: 'hello'}]}
    : {model, messages: [{role: 'user', content: 'hello'}]};
}

function post(conn, path, model, headers = {}) {
  return conn.request({method: 'POST', path, body: chatBody(path, model), timeoutMs: 5000,
    headers: {'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers}});
}

// The access line of the request for `model` (written after the answer: waited for, bounded).
async function accessLine(model) {
  for (let i = 0; i < 300; i++) {
    for (const l of td.lines) {
      let j;
      try { j = JSON.parse(l); } catch { continue; }
      if (j.event === 'request' && j.model === model) return j;
    }
    await sleep(10);
  }
  throw new Error(`no access line for ${model}:\n${td.output()}`);
}

// The /metrics requests_total series of `model`, by status class; the ledger
// filter counts each row it writes there, with the row's status.
async function statusClasses(provider, model) {
  const r = await rawRequest({port: td.port, path: '/metrics'});
  const out = {};
  const re = new RegExp(`^tokendiet_requests_total\\{provider="${provider}",model="${model}",status_class="(\\w+)"\\} (\\d+)$`);
  for (const line of r.body.toString('utf8').split('\n')) {
    const m = re.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

// Asserts a 502 upstream_bad_response in the path's provider shape whose
// message matches `cause`; returns the parsed body.
function assertBadResponse(r, path, cause) {
  assert.equal(r.status, 502, `status (body ${r.body})`);
  assert.equal(r.headers['x-tokendiet-error'], 'upstream_bad_response');
  assert.match(String(r.headers['content-type']), /application\/json/);
  assert.equal(r.complete, true);
  const b = JSON.parse(r.body);
  if (path === ANTHROPIC) {
    assert.equal(b.type, 'error', `Anthropic shape: ${r.body}`);
    assert.equal(b.error?.type, 'api_error', `Anthropic shape: ${r.body}`);
  } else {
    assert.equal(b.error?.type, 'server_error', `OpenAI shape: ${r.body}`);
    assert.equal(b.error.code, 'upstream_bad_response', `OpenAI shape: ${r.body}`);
    assert.equal(b.error.param, null, `OpenAI shape: ${r.body}`);
  }
  assert.match(b.error.message, /^tokendiet: upstream \w+ \(http:\/\/127\.0\.0\.1:\d+\): bad response: /);
  assert.match(b.error.message, cause);
  return b;
}

// The same connection serves a normal request next: the error answer left it open.
async function assertStillServes(conn, path) {
  const ok = await post(conn, path, `next-${Math.random().toString(36).slice(2)}`);
  assert.equal(ok.status, 200);
  assert.equal(ok.complete, true);
  JSON.parse(ok.body);
}

async function assertLogged(provider, model, cause) {
  const line = await accessLine(model);
  assert.equal(line.status, 502, JSON.stringify(line));
  assert.equal(line.upstream_error, true, JSON.stringify(line));
  assert.match(line.error, cause);
  assert.deepEqual(await statusClasses(provider, model), {'5xx': 1});
}

for (const [path, provider] of [[CHAT, 'openai'], [ANTHROPIC, 'anthropic']]) {
  test(`${path}: an invalid chunk size with the 200 head, nothing sent yet: 502 in the provider's shape, connection kept`, async () => {
    const model = `faults-bad-chunk-${provider}`;
    const conn = await Connection.open({port: td.port});
    try {
      const r = await post(conn, path, model, {'x-fake-mode': 'bad-chunk'});
      assertBadResponse(r, path, /broke before any byte reached the client: bad chunk$/);
      assert.notEqual(String(r.headers.connection).toLowerCase(), 'close');
      await assertStillServes(conn, path);
    } finally { conn.close(); }
    await assertLogged(provider, model, /^bad response: broke before any byte reached the client: bad chunk$/);
  });

  test(`${path}: a 101 Switching Protocols nobody asked for: 502 at once, connection kept`, async () => {
    const model = `faults-101-${provider}`;
    const conn = await Connection.open({port: td.port});
    try {
      const r = await post(conn, path, model, {'x-fake-mode': 'upgrade-101'});
      assertBadResponse(r, path, /101 Switching Protocols to a request that did not ask to upgrade$/);
      await assertStillServes(conn, path);
    } finally { conn.close(); }
    await assertLogged(provider, model, /^bad response: 101 Switching Protocols/);
  });
}

// An error status is read ahead for the failure phase before anything goes
// to the client: a body cut there is still the client's to be told about.
for (const mode of ['close-after-head', 'reset-after-head']) {
  test(`${CHAT}: a 500 whose body ends by ${mode.replace('-after-head', '')} right after the head: 502, not an empty connection`, async () => {
    const model = `faults-500-${mode}`;
    const conn = await Connection.open({port: td.port});
    try {
      const r = await post(conn, CHAT, model, {'x-fake-mode': mode, 'x-fake-status': '500'});
      assertBadResponse(r, CHAT, /broke before any byte reached the client: (partial message|Connection reset by peer)$/);
      await assertStillServes(conn, CHAT);
    } finally { conn.close(); }
    await assertLogged('openai', model, /^bad response: broke before any byte reached the client/);
  });
}

test(`${CHAT}: a 103 Early Hints before the 200 is skipped, the 200 relayed whole`, async () => {
  const conn = await Connection.open({port: td.port});
  const bytes = [];
  conn.sock.on('data', d => bytes.push(d));
  try {
    const r = await post(conn, CHAT, 'faults-early-hints', {'x-fake-mode': 'early-hints'});
    assert.equal(r.status, 200);
    assert.equal(r.complete, true);
    assert.ok(JSON.parse(r.body).choices, r.body.toString());
    assert.match(Buffer.concat(bytes).toString('latin1'), /^HTTP\/1\.1 200 /);
    const line = await accessLine('faults-early-hints');
    assert.equal(line.status, 200);
    assert.equal(line.upstream_error, undefined);
  } finally { conn.close(); }
});

const CHUNKED_HEAD = `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;

// Sends `pieces` (a pause between them) and reads the answer; `took` is from
// the last piece to the whole answer.
async function sendChunked(pieces) {
  const conn = await Connection.open({port: td.port, timeoutMs: 5000});
  try {
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0) await sleep(100);
      await conn.send(Buffer.from(pieces[i], 'latin1'));
    }
    const sent = performance.now();
    const r = await conn.readResponse({});
    return {r, took: performance.now() - sent};
  } finally { conn.close(); }
}

test('a chunked request body whose lines end in a bare LF: 400 at once, nothing forwarded', async () => {
  const before = fake.requests.length;
  const body = '{"model":"faults-lf","messages":[]}';
  const hex = body.length.toString(16);
  const cases = [
    [CHUNKED_HEAD + `${hex}\n${body}\n0\n\n`],                     // with the head, every line
    [CHUNKED_HEAD + `${hex}\r\n${body}\r\n`, '0\n\n'],             // the last chunk, in a later read
    [CHUNKED_HEAD, `${hex}\r\n${body}\r\n0\r\nX-T: a\n\n`],         // a trailer line
  ];
  for (const pieces of cases) {
    const {r, took} = await sendChunked(pieces);
    assert.equal(r.status, 400, JSON.stringify(pieces));
    assert.equal(r.headers['x-tokendiet-error'], 'bad_request');
    assert.match(JSON.parse(r.body).error.message, /malformed request body: bad line ending/);
    assert.ok(took < 5000, `answered after ${Math.round(took)} ms (the client timeout is 30 s)`);
  }
  assert.equal(fake.requests.length, before, 'nothing reached the upstream');
});

test('a chunk-size line that never ends is refused 400 once it passes the header limit', async () => {
  const before = fake.requests.length;
  const {r} = await sendChunked([CHUNKED_HEAD + '5;ext=' + 'x'.repeat(32 * 1024), 'y'.repeat(40 * 1024)]);
  assert.equal(r.status, 400);
  assert.match(JSON.parse(r.body).error.message, /malformed request body: header limit exceeded/);
  assert.equal(fake.requests.length, before, 'nothing reached the upstream');
});

test('a chunked request body with LFs in its chunk data, arriving in pieces, goes upstream as sent', async () => {
  const body = JSON.stringify({model: 'faults-lf-data', messages: [{role: 'user', content: 'a\nb\n\nc'}]}, null, 1);
  assert.ok(body.includes('\n'));
  const a = body.slice(0, 20), b = body.slice(20);
  const {r} = await sendChunked([CHUNKED_HEAD + `${a.length.toString(16)}\r\n${a.slice(0, 10)}`, `${a.slice(10)}\r\n`,
    `${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`]);
  assert.equal(r.status, 200);
  assert.equal(fake.last().body.toString('latin1'), body);
});
