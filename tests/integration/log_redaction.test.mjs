// The access line (the JSON log line on stderr of `tokendiet serve`) never
// shows a secret a client put in the query, under any spelling a server would
// decode to a secret parameter's name (docs/design.md §Ledger and metrics,
// Access log): the upstream still receives the query unchanged.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, rawRequest, logLineOf} from '../support/index.mjs';

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}});
});
after(async () => { await td?.stop(); await fake?.close(); });

// Each query carries the secret (or its halves, where a spelling splits it).
const SECRET = 'AIzaSeCrEt0123';
const cases = [
  ['plain', `key=${SECRET}`],
  ['encoded separator', `key%3D${SECRET}`],
  ['encoded separator, encoded name', `%6Bey%3D${SECRET}&alt=sse`],
  ['encoded separator in another value', `alt=sse%26key%3D${SECRET}`],
  ['NUL after the name', `KEY%00=${SECRET}`],
  ['NUL and junk after the name', `key%00x=${SECRET}`],
  ['percent-encoded letter', `%6Bey=${SECRET}`],
  ['percent-encoded letters, upper case', `%4B%45%59=${SECRET}`],
  ['plus and space around the name', `+key%20=${SECRET}`],
  ['tab after the name', `key%09=${SECRET}`],
  ['encoded twice', `ke%2579=${SECRET}`],
  ['separator encoded twice', `key%253D${SECRET}`],
  ['semicolon separator', `alt=sse;key=${SECRET}`],
  ['dashed name', `x-goog-api-key=${SECRET}`],
  ['camel case name', `apiKey=${SECRET}`],
  ['array name', `key%5B%5D=${SECRET}`],
  ['encoded ampersand inside the value', `key=AIzaSe%26CrEt0123&alt=sse`],
];

for (const [name, query] of cases) {
  test(`the access line hides a query secret: ${name}`, async () => {
    const path = `/v1beta/models?${query}`;
    fake.clear();
    const r = await rawRequest({port: td.port, path});
    assert.ok(r.complete, `${path}: ${r.error}`);
    assert.equal(fake.last().url, path, 'the upstream gets the query as sent');
    const line = await logLineOf(td, r.headers['x-tokendiet-request-id']);
    assert.match(line.path, /REDACTED/, `not redacted: ${line.path}`);
    const raw = JSON.stringify(line);
    for (const part of [SECRET, 'AIzaSe', 'CrEt0123']) assert.ok(!raw.includes(part), `${part} in the access line: ${raw}`);
  });
}

test('a refused absolute-form target is logged without its userinfo or query secret', async () => {
  const before = td.lines.length;
  const r = await rawRequest({port: td.port, path: `http://user:pAsSwOrD@example.invalid?key=${SECRET}`});
  assert.equal(r.status, 400);
  const line = await td.waitForLine(/"path":"http:\/\/REDACTED@example\.invalid\?key=REDACTED"/, 10000, before);
  assert.ok(!line.includes('pAsSwOrD') && !line.includes(SECRET), line);
});
