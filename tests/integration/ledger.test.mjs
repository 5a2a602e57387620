// The usage ledger and /metrics through the real binary: rows for requests
// relayed to the fake upstream, /metrics counting them, a clean SIGTERM
// committing the queue, and kill -9 losing no committed row.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, tokendietBin, loadFixture, usageOf} from '../support/index.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const sleep = ms => new Promise(r => setTimeout(r, ms));

async function serve() {
  return startTokendiet({upstreams: {openai: fake.url, anthropic: fake.url, gemini: fake.url}});
}

function chat(td, model, headers = {}) {
  return rawRequest({port: td.port, method: 'POST', path: '/v1/chat/completions',
    headers: {'content-type': 'application/json', authorization: 'Bearer sk-ledger-test', ...headers},
    body: {model, messages: [{role: 'user', content: 'hello'}]}});
}

// `tokendiet usage --json` on the ledger of this server's state dir.
function usageReport(td, args = []) {
  const out = execFileSync(tokendietBin(),
    ['usage', '--json', '--ledger', path.join(td.stateDir, 'usage.db'), ...args], {encoding: 'utf8'});
  return JSON.parse(out);
}

// Waits (bounded) until the writer thread committed `n` rows.
async function waitForRows(td, n) {
  let last = null;
  for (let i = 0; i < 200; i++) {
    try { last = usageReport(td).total.requests; } catch { /* file not there yet */ }
    if (last >= n) return last;
    await sleep(25);
  }
  throw new Error(`ledger has ${last} rows, expected ${n}`);
}

// Prometheus text: {"name{labels}": value} (labels as rendered).
function parseMetrics(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    out.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return out;
}

test('/metrics counts relayed requests by provider, model and status class', async () => {
  const td = await serve();
  try {
    for (let i = 0; i < 3; i++) assert.equal((await chat(td, 'gpt-ledger-metrics')).status, 200);
    // A request is counted in its logging phase, after its answer reached
    // the client, and leaves the in-flight gauge just after: scrape until both.
    let r, m;
    for (let i = 0; i < 400; i++) {
      r = await rawRequest({port: td.port, path: '/metrics'});
      m = parseMetrics(r.body.toString('utf8'));
      if (m.get('tokendiet_requests_total{provider="openai",model="gpt-ledger-metrics",status_class="2xx"}') === 3 &&
          m.get('tokendiet_requests_in_flight') === 0) break;
      await sleep(25);
    }
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
    assert.equal(m.get('tokendiet_requests_total{provider="openai",model="gpt-ledger-metrics",status_class="2xx"}'), 3);
    assert.equal(m.get('tokendiet_request_duration_seconds_count{provider="openai",model="gpt-ledger-metrics"}'), 3);
    assert.equal(m.get('tokendiet_requests_in_flight'), 0);
    assert.equal(m.get('tokendiet_ledger_dropped_total'), 0);
  } finally {
    await td.stop();
  }
});

test('SIGTERM commits every queued row before exit', async () => {
  const td = await serve();
  try {
    for (let i = 0; i < 5; i++) assert.equal((await chat(td, 'gpt-ledger-term', {'x-tokendiet-session': 's1'})).status, 200);
    td.proc.kill('SIGTERM');
    const exit = await td.exit;
    assert.equal(exit.code, 0);
    const report = usageReport(td, ['--by', 'session']);
    assert.equal(report.total.requests, 5);
    assert.deepEqual(report.groups.map(g => g.key), ['s1']);
  } finally {
    await td.stop();
  }
});

test('kill -9 loses no committed row', async () => {
  const td = await serve();
  try {
    for (let i = 0; i < 20; i++) assert.equal((await chat(td, 'gpt-ledger-kill')).status, 200);
    await waitForRows(td, 20);
    td.proc.kill('SIGKILL');
    const exit = await td.exit;
    assert.equal(exit.signal, 'SIGKILL');
    const report = usageReport(td);
    assert.equal(report.total.requests, 20);
    assert.equal(report.groups[0].key, 'gpt-ledger-kill');
  } finally {
    await td.stop();
  }
});

// The fixture's usage in the ledger's meanings (providers/usage.hpp).
function expectedUsage(fixture, provider) {
  const fx = loadFixture(fixture);
  const u = usageOf(fx.body, fx.kind);
  if (provider === 'openai') return {prompt: u.prompt_tokens, completion: u.completion_tokens,
    cached: u.prompt_tokens_details?.cached_tokens ?? 0, cache_write: 0,
    reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0};
  if (provider === 'anthropic') return {
    prompt: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    completion: u.output_tokens, cached: u.cache_read_input_tokens ?? 0,
    cache_write: u.cache_creation_input_tokens ?? 0, reasoning: 0};
  return {prompt: u.promptTokenCount + (u.toolUsePromptTokenCount ?? 0),
    completion: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
    cached: u.cachedContentTokenCount ?? 0, cache_write: 0, reasoning: u.thoughtsTokenCount ?? 0};
}

test('ledger rows carry the usage the upstream reported, streamed or not, for every provider', async () => {
  const td = await serve();
  const cases = [
    {model: 'gpt-u-json', provider: 'openai', fixture: 'openai-chat-nonstream', path: '/v1/chat/completions',
      body: {model: 'gpt-u-json', messages: [{role: 'user', content: 'hi'}]}},
    // The client did not ask for include_usage: tokendiet asks and still records it.
    {model: 'gpt-u-stream', provider: 'openai', fixture: 'openai-chat-stream-include-usage', path: '/v1/chat/completions',
      body: {model: 'gpt-u-stream', stream: true, messages: [{role: 'user', content: 'hi'}]}},
    {model: 'claude-u-json', provider: 'anthropic', fixture: 'anthropic-messages-nonstream', path: '/v1/messages',
      body: {model: 'claude-u-json', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]}},
    {model: 'claude-u-stream', provider: 'anthropic', fixture: 'anthropic-stream-thinking', path: '/v1/messages',
      body: {model: 'claude-u-stream', max_tokens: 64, stream: true, messages: [{role: 'user', content: 'hi'}]}},
    {model: 'gemini-u-json', provider: 'gemini', fixture: 'gemini-generatecontent-verbatim',
      path: '/v1beta/models/gemini-u-json:generateContent', body: {contents: [{role: 'user', parts: [{text: 'hi'}]}]}},
    {model: 'gemini-u-stream', provider: 'gemini', fixture: 'gemini-stream-functioncall-verbatim',
      path: '/v1beta/models/gemini-u-stream:streamGenerateContent?alt=sse', body: {contents: [{role: 'user', parts: [{text: 'hi'}]}]}},
  ];
  try {
    for (const c of cases) {
      const r = await rawRequest({port: td.port, method: 'POST', path: c.path,
        headers: {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01',
          'x-goog-api-key': 'k', 'x-tokendiet-session': 'usage-rows'}, body: c.body});
      assert.equal(r.status, 200, `${c.model}: ${r.body}`);
    }
    td.proc.kill('SIGTERM');
    assert.equal((await td.exit).code, 0);
    const groups = new Map(usageReport(td).groups.map(g => [g.key, g]));
    for (const c of cases) {
      const g = groups.get(c.model);
      assert.ok(g, `no ledger row for ${c.model}`);
      const want = expectedUsage(c.fixture, c.provider);
      assert.deepEqual({prompt: g.upstream_prompt_tokens, completion: g.upstream_completion_tokens,
        cached: g.upstream_cached_tokens, cache_write: g.upstream_cache_write_tokens,
        reasoning: g.upstream_reasoning_tokens}, want, c.model);
      assert.ok(want.prompt > 0 && want.completion > 0, `${c.fixture} has usage`);
    }
    const byProvider = new Map(usageReport(td, ['--by', 'provider']).groups.map(g => [g.key, g.requests]));
    assert.deepEqual(Object.fromEntries(byProvider), {openai: 2, anthropic: 2, gemini: 2});
  } finally {
    await td.stop();
  }
});
