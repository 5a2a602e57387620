// The usage ledger and /metrics through the real binary: rows for requests
// relayed to the fake upstream, /metrics counting them, a clean SIGTERM
// committing the queue, and kill -9 losing no committed row.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, tokendietBin} from '../support/index.mjs';

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
    const r = await rawRequest({port: td.port, path: '/metrics'});
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
    const m = parseMetrics(r.body.toString('utf8'));
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
