// The dashboard (docs/design.md §Dashboard) in a real headless Chromium
// (Debian's `chromium`): `tokendiet serve` in front of the fake upstream,
// traffic sent, then the page loaded from the proxy. Its totals must equal the
// ledger's (`tokendiet usage --json`) and /metrics', its charts must have
// data, a screenshot is kept under the build dir (test-artifacts/), and a
// client from a non-loopback address is refused without the admin token and
// served with it.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn, execFile, execFileSync} from 'node:child_process';
import {promisify} from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {startFakeUpstream, rawRequest, tokendietBin, freePort, tempDir, recordedHistory} from '../support/index.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const ARTIFACTS = path.join(path.dirname(path.dirname(tokendietBin())), 'test-artifacts');
const TOKEN = 'dashboard-test-token-0123456789';
const sleep = ms => new Promise(r => setTimeout(r, ms));

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

// This machine's first non-loopback IPv4 address, or null.
function outsideAddress() {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

// `tokendiet serve` on 0.0.0.0 (so a non-loopback address reaches it too).
async function serve(config = null) {
  const state = tempDir('td-dash-');
  const port = await freePort();
  const argv = ['serve', '--listen', `0.0.0.0:${port}`, '--upstream', `openai=${fake.url}`,
    '--upstream', `anthropic=${fake.url}`];
  if (config) {
    fs.writeFileSync(path.join(state.dir, 'tokendiet.yaml'), config);
    argv.push('--config', path.join(state.dir, 'tokendiet.yaml'));
  }
  const proc = spawn(tokendietBin(), argv, {stdio: ['ignore', 'ignore', 'pipe'],
    env: {...process.env, XDG_STATE_HOME: state.dir, STATE_DIRECTORY: state.dir}});
  let err = '';
  proc.stderr.on('data', d => { err += d; });
  for (let i = 0; i < 400; i++) {
    try { if ((await rawRequest({port, path: '/healthz', timeoutMs: 500})).status === 200) break; } catch { /* not yet */ }
    await sleep(25);
  }
  return {port, ledger: path.join(state.dir, 'usage.db'), output: () => err,
    stop: async () => { proc.kill('SIGTERM'); await new Promise(r => proc.once('exit', r)); state.cleanup(); }};
}

function chat(port, body, session, key = 'sk-dashboard-a') {
  return rawRequest({port, method: 'POST', path: '/v1/chat/completions',
    headers: {'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-tokendiet-session': session},
    body});
}

// Chromium's DOM after the page's scripts ran (and its first poll answered).
// Asynchronous: the proxy's log pipe to this process must keep draining.
async function chromium(url, extra = []) {
  const {stdout} = await promisify(execFile)(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
    '--no-first-run', '--no-proxy-server', '--virtual-time-budget=5000', '--window-size=1280,1700', ...extra, url],
  {encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 24});
  return stdout;
}

const attr = (dom, id, name) => {
  const m = dom.match(new RegExp(`id="${id}"[^>]*${name}="([^"]*)"`));
  return m ? m[1] : null;
};

function metricSum(text, name) {
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name + '{') || line.startsWith(name + ' ')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

test('the page shows the ledger\'s and /metrics\' totals, its charts have data, a screenshot is kept', async () => {
  const td = await serve();
  try {
    const history = recordedHistory();
    const bodies = [
      [{model: 'gpt-4o', messages: [...history, {role: 'user', content: 'go on'}]}, 's-one'],
      [{model: 'gpt-4o', messages: [{role: 'user', content: 'hello'}]}, 's-one'],
      [{model: 'gpt-4o-mini', messages: [...history, {role: 'user', content: 'and now?'}]}, 's-two'],
      [{model: 'gpt-4o-mini', messages: [{role: 'user', content: 'hi'}]}, 's-two'],
    ];
    for (const [body, session] of bodies) assert.equal((await chat(td.port, body, session)).status, 200);
    // The ledger's writer commits within milliseconds; the API is cached for a second.
    let stats;
    for (let i = 0; i < 100; i++) {
      stats = JSON.parse((await rawRequest({port: td.port, path: '/v1/tokendiet/stats'})).body.toString());
      if (stats.totals?.requests === bodies.length) break;
      await sleep(100);
    }
    assert.equal(stats.totals.requests, bodies.length, JSON.stringify(stats));
    const usage = JSON.parse(execFileSync(tokendietBin(), ['usage', '--json', '--ledger', td.ledger], {encoding: 'utf8'}));
    // A request is in the ledger before its logging phase has counted it in
    // /metrics: wait for /metrics to count them all.
    let metrics;
    for (let i = 0; i < 100; i++) {
      metrics = (await rawRequest({port: td.port, path: '/metrics'})).body.toString();
      if (metricSum(metrics, 'tokendiet_requests_total') >= bodies.length) break;
      await sleep(100);
    }
    assert.equal(stats.totals.tokens_in, usage.total.tokens_before);
    assert.equal(stats.totals.tokens_sent, usage.total.tokens_after);
    assert.equal(stats.totals.tokens_in, metricSum(metrics, 'tokendiet_tokens_in_total'));
    assert.equal(stats.totals.tokens_sent, metricSum(metrics, 'tokendiet_tokens_sent_total'));
    assert.equal(stats.totals.tokens_saved, metricSum(metrics, 'tokendiet_tokens_saved_total'));
    assert.ok(stats.totals.tokens_saved > 0, 'the recorded history is cut');
    assert.deepEqual(stats.by_session.map(s => s.name).sort(), ['s-one', 's-two']);
    assert.deepEqual([...new Set(stats.by_key.map(k => k.name))].length, 1);
    assert.match(stats.by_key[0].name, /^[0-9a-f]{16}$/, 'a fingerprint, never the key');
    assert.ok(!JSON.stringify(stats).includes('sk-dashboard'), 'no key in the stats');

    const url = `http://127.0.0.1:${td.port}/tokendiet/`;
    const dom = await chromium(url, ['--dump-dom']);
    assert.match(dom, /data-loaded="1"/, 'the page rendered its figures');
    assert.equal(Number(attr(dom, 'total-requests', 'data-value')), usage.total.requests);
    assert.equal(Number(attr(dom, 'total-tokens-in', 'data-value')), usage.total.tokens_before);
    assert.equal(Number(attr(dom, 'total-tokens-sent', 'data-value')), metricSum(metrics, 'tokendiet_tokens_sent_total'));
    assert.equal(Number(attr(dom, 'total-tokens-saved', 'data-value')), metricSum(metrics, 'tokendiet_tokens_saved_total'));
    // The charts: the token series drawn with points, a bar per model.
    const lines = [...dom.matchAll(/<polyline points="([^"]+)"[^>]*data-series="(\w+)"[^>]*data-points="(\d+)"/g)];
    assert.deepEqual(lines.map(l => l[2]), ['in', 'sent', 'saved', 'cost']);
    for (const l of lines) assert.ok(Number(l[3]) >= 1 && l[1].split(' ').length >= 1, `series ${l[2]} has points`);
    const bars = [...dom.matchAll(/<rect [^>]*data-value="([\d.]+)"/g)].map(m => Number(m[1]));
    assert.equal(bars.length, 2, 'a bar per model');
    assert.equal(bars.reduce((a, b) => a + b, 0), stats.totals.tokens_saved);
    assert.match(dom, /s-one/, 'the sessions table');
    assert.equal(stats.comparison, null, 'no control arm: no comparison');
    assert.match(dom, /id="comparison-card" hidden/, 'no control arm: the comparison is hidden');
    fs.mkdirSync(ARTIFACTS, {recursive: true});
    const shot = path.join(ARTIFACTS, 'dashboard.png');
    fs.rmSync(shot, {force: true});
    await chromium(url, [`--screenshot=${shot}`]);
    assert.ok(fs.statSync(shot).size > 10_000, 'a screenshot');
  } finally { await td.stop(); }
});

test('with a control arm the page shows the arms compared as `usage --compare --json` gives them', async () => {
  const price = '  - {model: "gpt-4o*", input: 2.5, cached_input: 1.25, cache_write: 3.125, output: 10}\n';
  const config = 'profiles:\n  - name: arms\n    models: ["*"]\n    control_fraction: 0.5\n' + `prices:\n${price}`;
  const td = await serve(config);
  try {
    const history = recordedHistory();
    // Twelve sessions of two requests each, split by their names between the arms.
    let sent = 0;
    for (let k = 0; k < 12; k++)
      for (const turn of ['go on', 'and now?']) {
        const body = {model: k % 3 ? 'gpt-4o' : 'gpt-4o-mini', messages: [...history, {role: 'user', content: turn}]};
        assert.equal((await chat(td.port, body, `arms-${k}`)).status, 200);
        sent++;
      }
    let stats;
    for (let i = 0; i < 100; i++) {
      stats = JSON.parse((await rawRequest({port: td.port, path: '/v1/tokendiet/stats'})).body.toString());
      if (stats.totals?.requests === sent) break;
      await sleep(100);
    }
    assert.equal(stats.totals.requests, sent, JSON.stringify(stats));
    const configFile = path.join(path.dirname(td.ledger), 'tokendiet.yaml');
    const compared = JSON.parse(execFileSync(tokendietBin(), ['usage', '--compare', '--json', '--config', configFile,
      '--ledger', td.ledger], {encoding: 'utf8'}));
    assert.ok(compared.total.control.sessions >= 2 && compared.total.treatment.sessions >= 2, JSON.stringify(compared.total));
    assert.ok(compared.total.control.cost_usd > 0, 'the rows are priced');
    // The API: the same figures, by the same code.
    assert.ok(stats.comparison, 'a comparison with a control arm');
    assert.deepEqual({groups: stats.comparison.groups, total: stats.comparison.total, resamples: stats.comparison.resamples},
      {groups: compared.groups, total: compared.total, resamples: compared.resamples});

    // The page: the total's table and sentence.
    const dom = await chromium(`http://127.0.0.1:${td.port}/tokendiet/`, ['--dump-dom']);
    assert.match(dom, /data-loaded="1"/);
    assert.doesNotMatch(dom, /id="comparison-card" hidden/, 'shown with a control arm');
    const cells = [...dom.matchAll(/<td class="n" data-arm="(\w+)" data-figure="(\w+)" data-value="([^"]*)" data-low="([^"]*)" data-high="([^"]*)"/g)];
    assert.equal(cells.length, 3 * 7, 'three cells for each of the seven figures');
    const num = v => v === '' ? null : Number(v);
    for (const [, arm, figure, value, low, high] of cells) {
      const want = arm === 'difference' ? compared.total.difference[figure] : compared.total[arm][figure];
      assert.deepEqual({value: num(value), low: num(low), high: num(high)}, {value: want.value, low: want.low, high: want.high},
        `${arm} ${figure}`);
    }
    for (const arm of ['treatment', 'control'])
      assert.match(dom, new RegExp(`data-arm="${arm}" data-figure="sessions">${compared.total[arm].sessions}<`));
    const sentence = dom.match(/<p id="comparison-sentence">([^<]*)<\/p>/);
    assert.ok(sentence, 'the sentence');
    assert.equal(sentence[1].replace(/&amp;/g, '&'), compared.total.sentence);
    const shot = path.join(ARTIFACTS, 'dashboard-control-arm.png');
    fs.mkdirSync(ARTIFACTS, {recursive: true});
    await chromium(`http://127.0.0.1:${td.port}/tokendiet/`, [`--screenshot=${shot}`]);
  } finally { await td.stop(); }
});

test('a non-loopback client is refused without the admin token, served with it', async (t) => {
  const outside = outsideAddress();
  if (!outside) return t.skip('this machine has no non-loopback IPv4 address');
  let td = await serve();
  try {
    for (const p of ['/tokendiet/', '/v1/tokendiet/stats']) {
      const r = await rawRequest({host: outside, port: td.port, path: p});
      assert.equal(r.status, 403, p);
      assert.match(r.body.toString(), /loopback clients only.*admin_token/);
      assert.equal((await rawRequest({port: td.port, path: p})).status, 200, `${p} from loopback`);
    }
  } finally { await td.stop(); }
  td = await serve(`admin_token: ${TOKEN}\n`);
  try {
    const get = (p, headers = {}) => rawRequest({host: outside, port: td.port, path: p, headers});
    assert.equal((await get('/v1/tokendiet/stats')).status, 401);
    const wrong = await get('/v1/tokendiet/stats', {authorization: `Bearer ${TOKEN.slice(0, -1)}x`});
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.toString(), /wrong admin token/);
    assert.equal((await get('/v1/tokendiet/stats', {authorization: `Bearer ${TOKEN}`})).status, 200);
    assert.equal((await get('/v1/tokendiet/stats', {'x-tokendiet-admin-token': TOKEN})).status, 200);
    assert.equal((await get(`/tokendiet/?token=${TOKEN}`)).status, 200);
    // The browser on the outside address: the page passes its token on to the API.
    const dom = await chromium(`http://${outside}:${td.port}/tokendiet/?token=${TOKEN}`, ['--dump-dom']);
    assert.match(dom, /data-loaded="1"/);
    assert.equal(Number(attr(dom, 'total-requests', 'data-value')), 0);
  } finally { await td.stop(); }
});

test('the dashboard\'s own answers are logged at log_level debug only, a refusal always', async () => {
  // One I/O thread: the access lines come out in the order of the requests.
  const requestLines = out => out.split('\n').filter(l => l.includes('"event":"request"'));
  for (const level of ['info', 'debug']) {
    const td = await serve(`threads: 1\nlog_level: ${level}\n`);
    try {
      for (const p of ['/tokendiet/', '/v1/tokendiet/stats', '/v1/tokendiet/stats?window=3600'])
        assert.equal((await rawRequest({port: td.port, path: p})).status, 200, p);
      assert.equal((await rawRequest({port: td.port, method: 'POST', path: '/v1/tokendiet/stats'})).status, 405);
      assert.equal((await chat(td.port, {model: 'gpt-4o', messages: [{role: 'user', content: 'hi'}]}, 's-log')).status, 200);
      // The chat's line, written after the dashboard's (if any).
      for (let i = 0; i < 400 && !requestLines(td.output()).some(l => l.includes('/v1/chat/completions')); i++)
        await sleep(25);
      const lines = requestLines(td.output());
      const own = lines.filter(l => l.includes('"path":"/tokendiet/"') || l.includes('"path":"/v1/tokendiet/stats'));
      assert.ok(lines.some(l => l.includes('/v1/chat/completions')), td.output());
      const answered = own.filter(l => l.includes('"status":200'));
      assert.equal(own.filter(l => l.includes('"status":405')).length, 1, 'a refusal is logged: ' + own.join('\n'));
      if (level === 'info') {
        assert.equal(answered.length, 0, 'no line for the dashboard\'s answers at info: ' + answered.join('\n'));
      } else {
        assert.equal(answered.length, 3, own.join('\n'));
        for (const l of answered) assert.match(l, /"level":"debug"/);
      }
    } finally { await td.stop(); }
  }
});

test('a bad log_level fails at start with the file, line and reason', () => {
  const dir = tempDir('td-dash-cfg-');
  try {
    const file = path.join(dir.dir, 'bad.yaml');
    fs.writeFileSync(file, 'default_upstream: openai\nlog_level: verbose\n');
    let out = '';
    try { execFileSync(tokendietBin(), ['check-config', file], {encoding: 'utf8', stdio: 'pipe'}); }
    catch (e) { out = String(e.stderr) + String(e.stdout); }
    assert.match(out, /bad\.yaml:2:.*log_level: expected info or debug/);
  } finally { dir.cleanup(); }
});

test('a bad admin_token fails at start with the file, line and reason', () => {
  const dir = tempDir('td-dash-cfg-');
  try {
    const file = path.join(dir.dir, 'bad.yaml');
    fs.writeFileSync(file, 'default_upstream: openai\nadmin_token: short\n');
    let out = '';
    try { execFileSync(tokendietBin(), ['check-config', file], {encoding: 'utf8', stdio: 'pipe'}); }
    catch (e) { out = String(e.stderr) + String(e.stdout); }
    assert.match(out, /bad\.yaml:2:.*admin_token: expected at least 16 printable characters/);
  } finally { dir.cleanup(); }
});
