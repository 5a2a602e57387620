// The fake upstream's quota mode (tests/fake_upstream/quota.mjs): per provider,
// requests are admitted until the per-minute quota is used, then answered 429
// in the provider's shape with its headers, and admitted again once the wait
// the answer announced has passed. Windows of 2 s keep this to seconds.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {startFakeUpstream, startFakeProcess, startTokendiet, rawRequest, sseData, FAKE_SERVER} from '../support/index.mjs';
import {goDuration, rfc3339} from '../fake_upstream/quota_wire.mjs';

const WINDOW_MS = 2000;
const sleep = ms => new Promise(r => setTimeout(r, ms));

// Tests that do not wait for a refill use a minute, so that a slow machine's
// pauses refill next to nothing.
const MINUTE = {windowMs: 60_000};

async function withFake(quota, fn) {
  const fake = await startFakeUpstream({quota: {windowMs: WINDOW_MS, ...quota}});
  try { await fn(fake); } finally { await fake.close(); }
}

const post = (fake, p, body, headers = {}) => rawRequest({port: fake.port, method: 'POST', path: p,
  headers: {'content-type': 'application/json', ...headers}, body: Buffer.from(JSON.stringify(body))});
const tokensOf = body => Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4);
const rateHeaders = r => Object.keys(r.headers).filter(k => /ratelimit|retry-after/.test(k));

// The grammar tokendiet's providers/rate_limits.cpp accepts for each value:
// parse_int, parse_go_duration (units h m s ms us ns), parse_rfc3339 (offset
// required), and retry-after as delay seconds.
const INT = /^\d+$/;
const GO_DURATION = /^(0|(\d+(\.\d+)?(h|m|s|ms|us|ns))+)$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

// Go durations as the parser reads them, in ms.
function goMs(s) {
  const unit = {h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, ns: 1e-6};
  let ms = 0;
  for (const [, n, u] of s.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)/g)) ms += Number(n) * unit[u];
  return ms;
}

test('Go durations and RFC 3339 times are written as the providers write them', () => {
  assert.equal(goDuration(0), '0s');
  assert.equal(goDuration(12), '12ms');
  assert.equal(goDuration(0.2), '1ms');  // rounded up: waiting this long is enough
  assert.equal(goDuration(1634), '1.634s');
  assert.equal(goDuration(360_000), '6m0s');
  assert.equal(goDuration(3_723_500), '1h2m3.5s');
  for (const ms of [0, 1, 999, 1000, 59_999, 61_000, 7_200_000]) assert.match(goDuration(ms), GO_DURATION);
  assert.equal(rfc3339(Date.UTC(2026, 6, 21, 0, 5, 0, 1)), '2026-07-21T00:05:01Z');
  assert.equal(rfc3339(Date.UTC(2026, 6, 21, 0, 5, 0)), '2026-07-21T00:05:00Z');
});

test('OpenAI: one tokens bucket for prompt + max_tokens, settled to the bill; 429 with its headers and body, then admitted after retry-after-ms', async () => {
  await withFake({tpm: 1000}, async fake => {
    const body = {model: 'gpt-5.1', max_tokens: 100, messages: [{role: 'user', content: 'x'.repeat(1100)}]};
    const prompt = tokensOf(body), asked = prompt + 100;
    const first = await post(fake, '/v1/chat/completions', body, {authorization: 'Bearer sk-a'});
    assert.equal(first.status, 200);
    for (const h of ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens'])
      assert.match(first.headers[h], INT, h);
    for (const h of ['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens']) assert.match(first.headers[h], GO_DURATION, h);
    assert.equal(first.headers['x-ratelimit-limit-tokens'], '1000');
    assert.equal(first.headers['x-ratelimit-remaining-tokens'], String(1000 - asked));  // reserved at admission
    assert.equal(first.headers['retry-after'], undefined);
    // The time until the bucket is full: what was taken, at 1000 tokens per 2 s.
    assert.ok(Math.abs(goMs(first.headers['x-ratelimit-reset-tokens']) - asked * WINDOW_MS / 1000) <= 2);
    // The usage reports the prompt as counted; the output as recorded (10).
    const usage = JSON.parse(first.body).usage;
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens, usage.total_tokens], [prompt, 10, prompt + 10]);
    assert.equal(fake.last().quota.settled_output, 10);

    let last = first, n = 1;
    while (last.status === 200 && n < 10) { last = await post(fake, '/v1/chat/completions', body, {authorization: 'Bearer sk-a'}); n++; }
    assert.equal(last.status, 429, 'the quota runs out');
    assert.ok(n >= 2, `${n} requests admitted before the 429`);
    const err = JSON.parse(last.body).error;
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.type, 'tokens');
    const m = /on tokens per min \(TPM\): Limit 1000, Used (\d+), Requested (\d+)\. Please try again in (\S+)\./.exec(err.message);
    assert.ok(m, err.message);
    assert.equal(Number(m[2]), asked);
    assert.equal(m[3], goDuration(Number(last.headers['retry-after-ms'])));
    assert.equal(Number(last.headers['x-ratelimit-remaining-tokens']), 1000 - Number(m[1]));
    assert.ok(Number(last.headers['x-ratelimit-remaining-tokens']) < asked);
    assert.equal(last.headers['retry-after'], String(Math.ceil(Number(last.headers['retry-after-ms']) / 1000)));
    assert.equal(last.headers['x-should-retry'], 'true');  // the fixture's other headers stay
    const rec = fake.last();
    assert.equal(rec.status, 429);
    assert.deepEqual([rec.quota.admitted, rec.quota.limited, rec.quota.requested], [false, 'tokens', asked]);

    // Not counted: the 429 took nothing (the bucket only refilled since).
    const before = Number(last.headers['x-ratelimit-remaining-tokens']);
    assert.ok(fake.quota.snapshot()['openai|sk-a|gpt-5.1'].tokens.remaining >= before);
    await sleep(Number(last.headers['retry-after-ms']));
    const again = await post(fake, '/v1/chat/completions', body, {authorization: 'Bearer sk-a'});
    assert.equal(again.status, 200, 'admitted once the announced wait has passed');
  });
});

test('OpenAI: the charge settles to prompt + completion once the answer is sent', async () => {
  await withFake({tpm: 5000, ...MINUTE}, async fake => {
    const body = {model: 'gpt-5.1', max_completion_tokens: 2000, messages: [{role: 'user', content: 'hello'}]};
    const r = await post(fake, '/v1/chat/completions', body);
    assert.equal(r.headers['x-ratelimit-remaining-tokens'], String(5000 - tokensOf(body) - 2000));
    for (let i = 0; i < 100 && fake.last().quota.settled_output == null; i++) await sleep(10);
    const left = fake.quota.snapshot()['openai|anonymous|gpt-5.1'].tokens.remaining;
    const billed = 5000 - tokensOf(body) - 10;  // the fixture's completion_tokens
    assert.ok(left >= billed && left < billed + 5, `${left} left, ${billed} expected`);
  });
});

test('OpenAI: the requests bucket refuses too, naming RPM', async () => {
  await withFake({tpm: 100_000, rpm: 2, ...MINUTE}, async fake => {
    const body = {model: 'gpt-5.1', input: 'hi'};
    assert.equal((await post(fake, '/v1/responses', body)).status, 200);
    assert.equal((await post(fake, '/v1/responses', body)).status, 200);
    const r = await post(fake, '/v1/responses', body);
    assert.equal(r.status, 429);
    assert.equal(r.headers['x-ratelimit-remaining-requests'], '0');
    const err = JSON.parse(r.body).error;
    assert.equal(err.type, 'requests');
    assert.match(err.message, /on requests per min \(RPM\): Limit 2, Used 2, Requested 1\./);
  });
});

test('Anthropic: separate input and output buckets; 429 with retry-after seconds, RFC 3339 resets, then admitted', async () => {
  await withFake({itpm: 1000, otpm: 5000}, async fake => {
    const body = {model: 'claude-sonnet-4-6', max_tokens: 400, messages: [{role: 'user', content: 'y'.repeat(1100)}]};
    const input = tokensOf(body);
    const t0 = Date.now();
    const first = await post(fake, '/v1/messages', body, {'x-api-key': 'ak-1'});
    assert.equal(first.status, 200);
    const h = first.headers;
    for (const w of ['input-tokens', 'output-tokens', 'requests', 'tokens']) {
      assert.match(h[`anthropic-ratelimit-${w}-limit`], INT, w);
      assert.match(h[`anthropic-ratelimit-${w}-remaining`], INT, w);
      assert.match(h[`anthropic-ratelimit-${w}-reset`], RFC3339, w);
    }
    assert.equal(h['anthropic-ratelimit-input-tokens-limit'], '1000');
    assert.equal(h['anthropic-ratelimit-input-tokens-remaining'], String(1000 - input));
    assert.equal(h['anthropic-ratelimit-output-tokens-remaining'], String(5000 - 400));  // max_tokens reserved
    assert.equal(h['anthropic-ratelimit-tokens-limit'], '6000');
    // Full again after what was taken has refilled (whole seconds, rounded up).
    const reset = Date.parse(h['anthropic-ratelimit-input-tokens-reset']);
    assert.ok(reset >= t0 + input * 2 - 5 && reset <= Date.now() + input * 2 + 1000, h['anthropic-ratelimit-input-tokens-reset']);
    assert.equal(JSON.parse(first.body).usage.input_tokens, input);
    assert.equal(fake.last().quota.settled_output, 321);  // the fixture's output_tokens

    let last = first;
    for (let i = 0; i < 10 && last.status === 200; i++) last = await post(fake, '/v1/messages', body, {'x-api-key': 'ak-1'});
    assert.equal(last.status, 429);
    const doc = JSON.parse(last.body);
    assert.deepEqual([doc.type, doc.error.type], ['error', 'rate_limit_error']);
    assert.match(doc.error.message, /of 1,000 input tokens per minute/);
    assert.match(last.headers['retry-after'], INT);
    assert.ok(Number(last.headers['anthropic-ratelimit-input-tokens-remaining']) < input);
    assert.equal(last.headers['retry-after-ms'], undefined);  // not an Anthropic header
    assert.deepEqual([fake.last().status, fake.last().quota.limited], [429, 'input']);
    await sleep(Number(last.headers['retry-after']) * 1000);
    assert.equal((await post(fake, '/v1/messages', body, {'x-api-key': 'ak-1'})).status, 200);
  });
});

test('Anthropic: the output bucket reserves max_tokens and gives back what was not written', async () => {
  await withFake({itpm: 100_000, otpm: 1000, ...MINUTE}, async fake => {
    const body = {model: 'claude', max_tokens: 900, messages: [{role: 'user', content: 'hi'}]};
    assert.equal((await post(fake, '/v1/messages', body)).status, 200);
    // 900 reserved, 321 written: a second 900 fits once the 579 are back.
    const snap = fake.quota.snapshot()['anthropic|anonymous|claude'].output;
    assert.ok(snap.remaining >= 1000 - 321 && snap.remaining < 1000 - 321 + 5, JSON.stringify(snap));
    const r = await post(fake, '/v1/messages', {...body, max_tokens: 1000});
    assert.equal(r.status, 429);
    assert.match(JSON.parse(r.body).error.message, /of 1,000 output tokens per minute/);
  });
});

test('Anthropic: cached reads are not counted toward input tokens; a cache write is', async () => {
  await withFake({itpm: 1500, otpm: 100_000, ...MINUTE}, async fake => {
    const system = [{type: 'text', text: 'S'.repeat(3200), cache_control: {type: 'ephemeral'}}];
    const ask = q => ({model: 'claude', max_tokens: 100, system, messages: [{role: 'user', content: q}]});
    const body = ask('first question');
    const estimate = tokensOf(body);
    const prefix = Math.ceil(Buffer.byteLength(JSON.stringify(system[0])) / 4);

    const first = await post(fake, '/v1/messages', body);
    assert.equal(first.status, 200);
    let u = JSON.parse(first.body).usage;
    assert.deepEqual([u.cache_read_input_tokens, u.cache_creation_input_tokens, u.input_tokens], [0, prefix, estimate - prefix]);
    assert.equal(first.headers['anthropic-ratelimit-input-tokens-remaining'], String(1500 - estimate));

    // Without the cache this would not fit (1500 - ~830 left < ~830 asked).
    const second = await post(fake, '/v1/messages', ask('second question'));
    assert.equal(second.status, 200);
    u = JSON.parse(second.body).usage;
    assert.equal(u.cache_read_input_tokens, prefix);
    assert.equal(u.cache_creation_input_tokens, 0);
    const q = fake.last().quota;
    assert.equal(q.input, tokensOf(ask('second question')) - prefix);
    const left = Number(second.headers['anthropic-ratelimit-input-tokens-remaining']);
    assert.ok(left >= 1500 - estimate - q.input && left <= 1500 - estimate - q.input + 5, String(left));

    // Another prefix misses the cache and is counted whole: over the quota.
    const miss = await post(fake, '/v1/messages', {...ask('third'), system: [{...system[0], text: 'T'.repeat(3200)}]});
    assert.equal(miss.status, 429);
    // So is the same prefix under another key: caches and quotas are per key.
    const other = await post(fake, '/v1/messages', ask('x'), {'x-api-key': 'other'});
    assert.equal(JSON.parse(other.body).usage.cache_read_input_tokens, 0);
  });
});

test('Gemini: no rate-limit headers; input tokens only; 429 RESOURCE_EXHAUSTED with RetryInfo, then admitted', async () => {
  await withFake({tpm: 1000}, async fake => {
    const body = {contents: [{role: 'user', parts: [{text: 'z'.repeat(1150)}]}]};
    const input = tokensOf(body);
    const p = '/v1beta/models/gemini-2.5-flash:generateContent';
    let last, n = 0;
    do { last = await post(fake, `${p}?key=g-1`, body); n++; assert.deepEqual(rateHeaders(last), [], `answer ${n}`); }
    while (last.status === 200 && n < 10);
    assert.equal(last.status, 429);
    assert.equal(n - 1, Math.floor(1000 / input), 'the output tokens (126 a request) were not counted');
    const err = JSON.parse(last.body).error;
    assert.deepEqual([err.code, err.status], [429, 'RESOURCE_EXHAUSTED']);
    const failure = err.details.find(d => d['@type'].endsWith('QuotaFailure')).violations[0];
    assert.deepEqual([failure.quotaValue, failure.quotaDimensions.model], ['1000', 'gemini-2.5-flash']);
    assert.match(err.message, /limit: 1000, model: gemini-2\.5-flash/);
    const delay = err.details.find(d => d['@type'].endsWith('RetryInfo')).retryDelay;
    assert.match(delay, /^\d+s$/);
    assert.ok(Number.parseInt(delay, 10) >= 1 && Number.parseInt(delay, 10) <= 2, delay);
    // The prompt side of the usage is what the quota counted.
    assert.equal(fake.requests[0].usage.promptTokenCount, input);
    await sleep(Number.parseInt(delay, 10) * 1000);
    const again = await post(fake, `${p}?key=g-1`, body);
    assert.equal(again.status, 200);
  });
});

test('streams report the counted prompt in every usage part', async () => {
  await withFake({tpm: 100_000, ...MINUTE}, async fake => {
    const text = 'w'.repeat(2000);
    const an = {model: 'claude', max_tokens: 500, stream: true, messages: [{role: 'user', content: text}]};
    const a = await post(fake, '/v1/messages', an);
    const start = sseData(a.body).map(d => JSON.parse(d)).find(d => d.type === 'message_start');
    assert.equal(start.message.usage.input_tokens, tokensOf(an));
    assert.ok(a.headers['anthropic-ratelimit-input-tokens-remaining']);

    const oa = {model: 'gpt-5.1', stream: true, stream_options: {include_usage: true}, messages: [{role: 'user', content: text}]};
    const o = await post(fake, '/v1/chat/completions', oa);
    const usage = sseData(o.body).map(d => JSON.parse(d)).filter(d => d.usage).map(d => d.usage);
    assert.deepEqual(usage.map(x => x.prompt_tokens), [tokensOf(oa)]);

    const ga = {contents: [{parts: [{text}]}]};
    const g = await post(fake, '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', ga);
    const counts = sseData(g.body).map(d => JSON.parse(d).usageMetadata?.promptTokenCount).filter(x => x != null);
    assert.ok(counts.length >= 1 && counts.every(c => c === tokensOf(ga)), JSON.stringify(counts));

    // x-fake-usage: as-recorded keeps the fixture's numbers.
    const rec = await post(fake, '/v1/messages', {...an, stream: false}, {'x-fake-usage': 'as-recorded'});
    assert.equal(JSON.parse(rec.body).usage.input_tokens, 43);
  });
});

test('quotas are per provider, key and model; x-fake-quota-key overrides the key', async () => {
  await withFake({tpm: 600, ...MINUTE}, async fake => {
    const body = m => ({model: m, max_tokens: 10, messages: [{role: 'user', content: 'v'.repeat(1600)}]});
    const go = (m, headers) => post(fake, '/v1/chat/completions', body(m), headers);
    assert.equal((await go('gpt-a', {authorization: 'Bearer one'})).status, 200);
    assert.equal((await go('gpt-a', {authorization: 'Bearer one'})).status, 429);
    assert.equal((await go('gpt-a', {authorization: 'Bearer two'})).status, 200);
    assert.equal((await go('gpt-b', {authorization: 'Bearer one'})).status, 200);
    assert.equal((await go('gpt-a', {authorization: 'Bearer one', 'x-fake-quota-key': 'three'})).status, 200);
    assert.deepEqual(Object.keys(fake.quota.snapshot()).sort(),
      ['openai|one|gpt-a', 'openai|one|gpt-b', 'openai|three|gpt-a', 'openai|two|gpt-a']);
    const res = await rawRequest({port: fake.port, path: '/__quota'});
    assert.equal(JSON.parse(res.body).config.tpm, 600);
    await rawRequest({port: fake.port, method: 'DELETE', path: '/__quota'});
    assert.equal((await go('gpt-a', {authorization: 'Bearer one'})).status, 200, 'DELETE /__quota refills');
  });
});

test('without quota mode the recorded rate-limit headers are served as they are', async () => {
  const fake = await startFakeUpstream();
  try {
    const r = await post(fake, '/v1/chat/completions', {model: 'gpt-5.1', messages: []});
    assert.equal(r.headers['x-ratelimit-limit-tokens'], '50000000');
    assert.equal(fake.quota, null);
    assert.equal(fake.last().quota, null);
  } finally { await fake.close(); }
});

test('as a child process: the --quota-* flags', async () => {
  const p = await startFakeProcess(['--quota-tpm', '700', '--quota-rpm', '5', '--quota-window-ms', '2000']);
  try {
    const r = await rawRequest({port: p.port, method: 'POST', path: '/v1/chat/completions', body: '{"model":"m"}'});
    assert.deepEqual([r.headers['x-ratelimit-limit-tokens'], r.headers['x-ratelimit-limit-requests']], ['700', '5']);
  } finally { await p.stop(); }
  const bad = spawnSync(process.execPath, [FAKE_SERVER, '--quota-tpm', 'many'], {encoding: 'utf8'});
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /tpm must be a positive number/);
});

test('through tokendiet: the answers read as the provider\'s (usage as counted, 429 as a rate limit)', async () => {
  const fake = await startFakeUpstream({quota: {tpm: 1000, ...MINUTE}});
  // Survival off: the upstream's own 429 is what this test reads
  // (survival.test.mjs has tokendiet keep the upstream from answering one).
  const td = await startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url},
    config: 'profiles:\n  - name: default\n    survival: false\n'});
  try {
    const cases = [
      ['/v1/chat/completions', {model: 'gpt-5.1', max_tokens: 10, messages: [{role: 'user', content: 'u'.repeat(1600)}]}, 'rate_limit_exceeded'],
      ['/v1/messages', {model: 'claude', max_tokens: 10, messages: [{role: 'user', content: 'u'.repeat(1600)}]}, 'rate_limit_error'],
      ['/v1beta/models/gemini-2.5-flash:generateContent', {contents: [{parts: [{text: 'u'.repeat(1600)}]}]}, 'RESOURCE_EXHAUSTED'],
    ];
    for (const [p, body, error] of cases) {
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const r = await rawRequest({port: td.port, method: 'POST', path: p, timeoutMs: 20000,
          headers: {'content-type': 'application/json'}, body: Buffer.from(JSON.stringify(body))});
        statuses.push(r.status);
        const log = JSON.parse(await td.waitForLine(new RegExp(`"id":${r.headers['x-tokendiet-request-id']}[,}]`), 10000));
        const q = fake.last().quota;
        if (r.status === 200) assert.equal(log.usage_prompt, q.input, `${p}: tokendiet read the prompt the quota counted`);
        else assert.equal(log.upstream_error, error, p);
      }
      assert.deepEqual(statuses, [200, 200, 429], p);
    }
  } finally { await td.stop(); await fake.close(); }
});

test('a request larger than the limit is refused even by a full bucket, as the providers refuse it', async () => {
  await withFake({tpm: 1000, ...MINUTE}, async fake => {
    const big = {model: 'gpt-5.1', messages: [{role: 'user', content: 'x'.repeat(5000)}]};
    const r = await post(fake, '/v1/chat/completions', big, {authorization: 'Bearer sk-big'});
    assert.equal(r.status, 429);
    const m = /Limit 1000, Used 0, Requested (\d+)\./.exec(JSON.parse(r.body).error.message);
    assert.ok(m, r.body.toString());
    assert.equal(Number(m[1]), tokensOf(big));
    assert.ok(Number(r.headers['retry-after-ms']) >= 1, 'a retry time is still announced');
    assert.equal(fake.quota.snapshot()['openai|sk-big|gpt-5.1'].tokens.remaining, 1000, 'nothing taken');
    // A request that fits is still admitted.
    const small = await post(fake, '/v1/chat/completions', {model: 'gpt-5.1', messages: [{role: 'user', content: 'hi'}]},
      {authorization: 'Bearer sk-big'});
    assert.equal(small.status, 200);
  });
});
