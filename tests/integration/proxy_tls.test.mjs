// TLS to the upstream: certificate and host name verified against the
// configured CA file; no trust without it; no trust for another host's
// certificate. The CA and certificates are made fresh in a temp dir.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {startFakeUpstream, startTokendiet, rawRequest, makeTestCA, tempDir, loadFixture} from '../support/index.mjs';

let tmp, ca, good, wrongName, td;
before(async () => {
  tmp = tempDir('td-tls-');
  ca = makeTestCA(tmp.dir);
  const leaf = ca.issue('upstream', {dns: ['localhost'], ip: ['127.0.0.1']});
  const other = ca.issue('other', {dns: ['other.example']});
  good = await startFakeUpstream({tls: {cert: fs.readFileSync(leaf.cert), key: fs.readFileSync(leaf.key)}});
  wrongName = await startFakeUpstream({tls: {cert: fs.readFileSync(other.cert), key: fs.readFileSync(other.key)}});
  // openai: trusted through ca_file; anthropic: same server, no ca_file (system
  // store only); gemini: ca_file, but the certificate names another host.
  td = await startTokendiet({config: [
    'upstreams:',
    '  openai:',
    `    url: https://127.0.0.1:${good.port}`,
    `    ca_file: ${ca.cert}`,
    `  anthropic: https://127.0.0.1:${good.port}`,
    '  gemini:',
    `    url: https://127.0.0.1:${wrongName.port}`,
    `    ca_file: ${ca.cert}`,
    '',
  ].join('\n')});
});
after(async () => { await td?.stop(); await good?.close(); await wrongName?.close(); tmp?.cleanup(); });

test('with the CA configured: JSON and SSE relayed byte for byte over TLS', async () => {
  good.clear();
  for (const [body, fixture] of [[{model: 'gpt-5.1'}, 'openai-chat-nonstream'],
    [{model: 'gpt-5.1', stream: true, stream_options: {include_usage: true}}, 'openai-chat-stream-include-usage']]) {
    const r = await rawRequest({port: td.port, method: "POST", path: "/v1/chat/completions", body, headers: {'content-type': 'application/json', authorization: 'Bearer sk-test'}});
    assert.equal(r.status, 200, r.body.toString());
    assert.ok(r.complete);
    assert.ok(r.body.equals(loadFixture(fixture).body));
  }
  assert.equal(good.requests.length, 2);
  assert.equal(good.last().headers.authorization, 'Bearer sk-test');
  // TLS connections are pooled as well.
  await rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions', body: '{}', headers: {'content-type': 'application/json'}});
  assert.ok(new Set(good.requests.map(r => r.remotePort)).size < 3, 'no TLS connection reuse');
});

test('without the CA (system store only): 502 and a clear log line', async () => {
  good.clear();
  const before = td.lines.length;
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1/messages', body: '{"model":"claude"}', headers: {'content-type': 'application/json'}});
  assert.equal(r.status, 502);
  const b = JSON.parse(r.body);
  assert.equal(b.type, 'error', 'Anthropic error shape');
  assert.equal(good.requests.length, 0, 'a request went over an unverified connection');
  await td.waitForLine(/certificate|verif|tls|ssl/i, 3000);
  assert.ok(td.lines.slice(before).some(l => /certificate|verif|tls|ssl/i.test(l)),
    `no log line explains the TLS failure:\n${td.lines.slice(before).join('\n')}`);
});

test('a certificate for another host name is refused: 502 and a log line', async () => {
  wrongName.clear();
  const before = td.lines.length;
  const r = await rawRequest({port: td.port, method: 'POST', path: '/v1beta/models/gemini-2.5-flash:generateContent', body: '{"contents":[]}', headers: {'content-type': 'application/json'}});
  assert.equal(r.status, 502);
  const b = JSON.parse(r.body);
  assert.equal(b.error?.code, 502, 'Gemini error shape');
  assert.equal(wrongName.requests.length, 0, 'a request went to a host with the wrong certificate');
  for (let i = 0; i < 100 && !td.lines.slice(before).some(l => /certificate|verif|host|tls|ssl/i.test(l)); i++) await new Promise(r => setTimeout(r, 20));
  assert.ok(td.lines.slice(before).some(l => /certificate|verif|host|tls|ssl/i.test(l)),
    `no log line explains the TLS failure:\n${td.lines.slice(before).join('\n')}`);
});
