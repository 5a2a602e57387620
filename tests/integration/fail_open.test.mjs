// Fail open through the real binary: truncated, malformed and wrongly-typed
// chat request bodies (OpenAI chat completions, OpenAI Responses, Anthropic
// messages, Gemini generateContent) reach the upstream byte for byte as the
// client sent them, the client gets the upstream's status, the process keeps
// serving, and /metrics (tokendiet_fail_open_total) plus the JSON access log
// ("fail_open":true) count exactly the bodies the diet tried and failed to
// parse. Valid bodies sent afterwards are not counted.
//
// Which bodies count (proxy/filters/diet_filter.cpp, diet/diet.cpp, providers/*.cpp):
// DietFilter::request_body_filter runs for every POST whose path is a chat
// route (providers::chat_route), whatever the Content-Type and even for an
// empty body. It steps aside without parsing only for a compressed body
// (Content-Encoding other than identity) or a disabled profile (none here:
// no config, the built-in default profile is enabled). Otherwise diet_body()
// calls providers::parse_request(); when that returns no request the filter
// sets ctx.fail_open, the body is left untouched, LedgerFilter::logging
// records the row and Metrics::record adds 1 to tokendiet_fail_open_total
// for the request's provider/model series, and the access line carries
// "fail_open":true with "fail_open_reason":"parse: ...".
// That includes streamed OpenAI chat bodies: the usage filter, which asks
// upstream for stream usage, leaves a request that failed open alone.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startTokendiet, rawRequest} from '../support/index.mjs';

const PATHS = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  anthropic: '/v1/messages',
  gemini: '/v1beta/models/gemini-2.5-flash:generateContent',
};
// The provider label of each API's /metrics series.
const PROVIDER = {chat: 'openai', responses: 'openai', anthropic: 'anthropic', gemini: 'gemini'};

// A small valid request of each API (too small for any pruning to fire).
const VALID = {
  chat: {model: 'gpt-4o-mini', messages: [{role: 'system', content: 'Be brief.'}, {role: 'user', content: 'Say hi.'}]},
  responses: {model: 'gpt-4o-mini', instructions: 'Be brief.', input: [{role: 'user', content: 'Say hi.'}]},
  anthropic: {model: 'claude-sonnet-4-5', max_tokens: 64, system: 'Be brief.', messages: [{role: 'user', content: 'Say hi.'}]},
  gemini: {systemInstruction: {parts: [{text: 'Be brief.'}]}, contents: [{role: 'user', parts: [{text: 'Say hi.'}]}]},
};
const validText = api => JSON.stringify(VALID[api]);
// A valid body cut in the middle: an object is never complete before its last '}'.
const truncated = api => { const s = validText(api); return s.slice(0, Math.floor(s.length / 2)); };

// Bad bodies: [api, name, body (string or Buffer), counts, extra headers].
// `counts`: the diet parsed the body and failed, so it is a fail-open.
const CASES = [];
const add = (api, name, body, counts, headers = {}) => CASES.push({api, name, body, counts, headers});

for (const api of Object.keys(PATHS)) {
  // Json::Document::parse fails on every one of these: "parse: ..." for all APIs.
  add(api, 'truncated JSON', truncated(api), true);
  add(api, 'not JSON (form encoded)', 'model=gpt-4o-mini&messages=hello', true, {'content-type': 'application/x-www-form-urlencoded'});
  add(api, 'not JSON (binary, NUL and invalid UTF-8)', Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x22, 0x80, 0x0a, 0xc3, 0x28, 0x00]), true, {'content-type': 'application/octet-stream'});
  // Empty: the body filter still runs and diet_body() parses "" (no model to
  // peek at, so no profile can opt out; Gemini's model comes from the path and
  // its default profile is enabled): "parse: ..." -> counts.
  add(api, 'empty body', '', true);
  // Valid JSON, but not an object: "body is not a JSON object".
  add(api, 'JSON array instead of an object', '[{"role":"user","content":"hi"}]', true);
}

// Wrongly typed (valid JSON, each rejected by the adapter's parse()).
add('chat', '"messages": "hello"', '{"model":"gpt-4o-mini","messages":"hello"}', true);                    // no messages array
add('chat', '"messages": [42]', '{"model":"gpt-4o-mini","messages":[42]}', true);                          // message is not an object
add('chat', 'role is a number', '{"model":"gpt-4o-mini","messages":[{"role":1,"content":"hi"}]}', true);   // role missing or unknown
add('chat', 'tool_calls as a string',
  '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":"call_1"}]}', true);  // tool_calls is not an array
add('chat', 'a stream whose messages are a string', '{"model":"gpt-4o-mini","stream":true,"messages":"hello"}', true);  // no include_usage added either
add('chat', 'content is an object', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":{"x":1}}]}', true);  // content has the wrong type
add('responses', '"input": 42', '{"model":"gpt-4o-mini","input":42}', true);                                // no input
add('responses', '"input": {"x":1}', '{"model":"gpt-4o-mini","input":{"x":1}}', true);                      // no input
add('responses', '"input": [42]', '{"model":"gpt-4o-mini","input":[42]}', true);                            // malformed input item
add('responses', 'role is a number', '{"model":"gpt-4o-mini","input":[{"role":1,"content":"hi"}]}', true); // role missing or unknown
add('responses', '"instructions": 5', '{"model":"gpt-4o-mini","instructions":5,"input":"hi"}', true);      // instructions is not a string
add('anthropic', '"messages": "hello"', '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":"hello"}', true);  // no messages array
add('anthropic', '"messages": [42]', '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[42]}', true);        // malformed message
add('anthropic', 'role is a number', '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":2,"content":"hi"}]}', true);  // role missing or unknown
add('anthropic', '"system": 42', '{"model":"claude-sonnet-4-5","max_tokens":8,"system":42,"messages":[{"role":"user","content":"hi"}]}', true);  // neither a string nor blocks
add('anthropic', 'content is an object', '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":{"x":1}}]}', true);
add('gemini', '"contents": {"x":1}', '{"contents":{"x":1}}', true);                                         // no contents array
add('gemini', '"contents": "hello"', '{"contents":"hello"}', true);                                         // no contents array
add('gemini', '"contents": [42]', '{"contents":[42]}', true);                                               // malformed content
add('gemini', 'role is a number', '{"contents":[{"role":7,"parts":[{"text":"hi"}]}]}', true);              // unknown content role
add('gemini', '"parts": "hi"', '{"contents":[{"role":"user","parts":"hi"}]}', true);                       // malformed content

// A duplicate of a top-level key the adapter reads (pick() refuses: "such a
// body means different things to different parsers"): counts.
add('chat', 'duplicate "messages"', '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}', true);
add('responses', 'duplicate "model"', '{"model":"gpt-4o-mini","model":"gpt-4o","input":"hi"}', true);
add('anthropic', 'duplicate "system"', '{"model":"claude-sonnet-4-5","max_tokens":8,"system":"a","system":"b","messages":[{"role":"user","content":"hi"}]}', true);
add('gemini', 'duplicate "contents"', '{"contents":[{"parts":[{"text":"a"}]}],"contents":[{"parts":[{"text":"b"}]}]}', true);

// Bad bodies that are NOT fail-opens, exactly as the code decides:
// - a duplicate of a top-level key no adapter reads: pick() only checks the
//   members it looks up, so the body parses, nothing is pruned (too small),
//   the bytes go as they came and nothing failed;
add('chat', 'duplicate unread key "temperature"', '{"model":"gpt-4o-mini","temperature":0.1,"temperature":0.9,"messages":[{"role":"user","content":"hi"}]}', false);
add('gemini', 'duplicate unread key "generationConfig"', '{"generationConfig":{"temperature":0.1},"generationConfig":{},"contents":[{"parts":[{"text":"hi"}]}]}', false);
// - a compressed body: the diet never inflates requests, it returns before
//   parsing (diet_filter.cpp), so it is forwarded untouched and not counted.
add('anthropic', 'Content-Encoding: gzip (not even gzip)', truncated('anthropic'), false, {'content-encoding': 'gzip'});

const EXPECTED_FAIL_OPEN = CASES.filter(c => c.counts).length;

let fake, td;
before(async () => {
  fake = await startFakeUpstream();
  td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}});
});
after(async () => {
  await td?.stop();
  await fake?.close();
});

// Prometheus text: the sum of every series of `name`, and per provider.
function failOpenTotals(text) {
  const out = {total: 0, byProvider: {}};
  for (const line of text.split('\n')) {
    const m = /^tokendiet_fail_open_total(?:\{([^}]*)\})? (\d+)$/.exec(line);
    if (!m) continue;
    const n = Number(m[2]);
    const provider = /provider="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '';
    out.total += n;
    out.byProvider[provider] = (out.byProvider[provider] ?? 0) + n;
  }
  return out;
}

async function metrics() {
  const r = await rawRequest({port: td.port, path: '/metrics'});
  assert.equal(r.status, 200);
  const text = r.body.toString('utf8');
  assert.match(text, /^# TYPE tokendiet_fail_open_total counter$/m);
  return failOpenTotals(text);
}

let nextSession = 1;
// Sends one body; checks the upstream got exactly its bytes and the client
// the upstream's status. Returns the access log line of the request.
async function sendAndCheck({api, name, body, headers}, i) {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const session = `fail-open-${nextSession++}`;
  // Vary the upstream's answer so "the client got the upstream's status" means something.
  const mode = [null, '429', '500'][i % 3];
  fake.clear();
  const r = await rawRequest({port: td.port, method: 'POST', path: PATHS[api], body: bytes,
    headers: {'content-type': 'application/json', 'x-tokendiet-session': session,
      ...(mode ? {'x-fake-mode': mode} : {}), ...headers}});
  const what = `${api} ${name}`;
  assert.ok(r.complete, `${what}: ${r.error}`);
  await fake.waitForRequests(1);
  assert.equal(fake.requests.length, 1, `${what}: upstream got ${fake.requests.length} requests`);
  const got = fake.last();
  assert.equal(got.path, PATHS[api].split('?')[0], what);
  assert.ok(got.body.equals(bytes),
    `${what}: upstream got ${JSON.stringify(got.body.toString('latin1'))}, client sent ${JSON.stringify(bytes.toString('latin1'))}`);
  assert.equal(Number(got.headers['content-length']), bytes.length, `${what}: Content-Length upstream`);
  assert.equal(typeof got.status, 'number', `${what}: the fake did not answer`);
  assert.equal(r.status, got.status, `${what}: client got ${r.status}, upstream answered ${got.status}`);
  if (mode) assert.equal(r.status, Number(mode), what);
  const line = JSON.parse(await td.waitForLine(new RegExp(`"session":"${session}"`), 5000));
  // The client is told too: the explain header says why, printable ASCII, at most 200 bytes.
  const reason = line.fail_open ? Buffer.from(Buffer.from(line.fail_open_reason).subarray(0, 200)
    .map(b => (b < 0x20 || b > 0x7e ? 0x3f : b))).toString('latin1') : undefined;
  assert.equal(r.headers['x-tokendiet-fail-open'], reason, `${what}: x-tokendiet-fail-open`);
  return line;
}

test('bad chat bodies are forwarded byte for byte, answered with the upstream status, counted as fail-open', async () => {
  assert.ok(EXPECTED_FAIL_OPEN >= 40, `only ${EXPECTED_FAIL_OPEN} counting cases`);
  const before = await metrics();
  const expectedByProvider = {};
  for (const [i, c] of CASES.entries()) {
    const log = await sendAndCheck(c, i);
    const what = `${c.api} ${c.name}: ${JSON.stringify(log)}`;
    assert.equal(log.path, PATHS[c.api], what);
    if (c.counts) {
      expectedByProvider[PROVIDER[c.api]] = (expectedByProvider[PROVIDER[c.api]] ?? 0) + 1;
      assert.equal(log.fail_open, true, what);
      assert.match(log.fail_open_reason, /^parse: ./, what);
      assert.equal(log.mode, undefined, `${what}: a body that failed to parse has no pruning mode`);
    } else {
      assert.equal(log.fail_open, undefined, what);
      assert.equal(log.fail_open_reason, undefined, what);
    }
    assert.equal(td.exited, null, `tokendiet exited after ${c.api} ${c.name}: ${td.output()}`);
  }
  // Every access line above was written after its logging phase recorded
  // the row into /metrics, so the counters are complete now.
  const after = await metrics();
  assert.equal(after.total - before.total, EXPECTED_FAIL_OPEN,
    `tokendiet_fail_open_total grew by ${after.total - before.total}, expected ${EXPECTED_FAIL_OPEN}`);
  for (const [provider, n] of Object.entries(expectedByProvider))
    assert.equal((after.byProvider[provider] ?? 0) - (before.byProvider[provider] ?? 0), n, `${provider} series`);

  const health = await rawRequest({port: td.port, path: '/healthz'});
  assert.equal(health.status, 200);
  assert.equal(td.exited, null);
});

test('valid bodies afterwards are parsed, forwarded as sent and not counted as fail-open', async () => {
  const before = await metrics();
  for (const [i, api] of Object.keys(PATHS).entries()) {
    const log = await sendAndCheck({api, name: 'valid', body: validText(api), headers: {}}, i * 3);  // mode null: 200
    const what = `${api} valid: ${JSON.stringify(log)}`;
    assert.equal(log.status, 200, what);
    assert.equal(log.fail_open, undefined, what);
    assert.equal(log.fail_open_reason, undefined, what);
    assert.equal(typeof log.mode, 'string', `${what}: the diet parsed it and says which mode applied`);
  }
  const after = await metrics();
  assert.equal(after.total, before.total, 'a valid body was counted as fail-open');
  const health = await rawRequest({port: td.port, path: '/healthz'});
  assert.equal(health.status, 200);
  assert.equal(td.exited, null);
});
