// What the policy tests share (survival, thinking under pressure): a
// tokendiet config with a quota profile, requests built from a recorded agent
// trajectory, the explain headers of an answer, and /metrics samples.
import fs from 'node:fs';
import path from 'node:path';
import {rawRequest} from './http.mjs';
import {SOURCE_DIR} from './processes.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');

// A tokendiet config with these profiles, each {name, models, ...keys}, e.g.
// {tpm_limit: 20000, quota_window_ms: 60000, max_wait_ms: 500}; name and models
// default to "quota" and every model.
export function quotaConfig(...profiles) {
  const yaml = v => (Array.isArray(v) || typeof v === 'string' ? JSON.stringify(v) : String(v));
  const lines = ['profiles:'];
  for (const {name = 'quota', models = ['*'], ...keys} of profiles) {
    lines.push(`  - name: ${name}`, `    models: ${yaml(models)}`);
    for (const [k, v] of Object.entries(keys)) lines.push(`    ${k}: ${yaml(v)}`);
  }
  return lines.join('\n') + '\n';
}

// The recorded trajectory `name` (tests/fixtures/replay): request(t) is the
// chat body an agent sent before its t-th assistant message (well paired),
// as a JSON string; `turns` how many there are.
export function trajectory(name, model) {
  const traj = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'replay', `${name}.json`), 'utf8'));
  const assistants = traj.messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  return {
    turns: assistants.length,
    request: (t, extra = {}) => JSON.stringify({model: model ?? traj.model, messages: traj.messages.slice(0, assistants[t]), ...extra}),
  };
}

// The fake upstream's quota count of a body (tests/fake_upstream/quota.mjs).
export const fakeTokens = bytes => Math.ceil(Buffer.byteLength(bytes) / 4);

// A chat body of one user message, prose (tokendiet's count of it and the
// fake's agree roughly, unlike one repeated letter), that the fake counts as
// `tokens` tokens.
export function fillerBody(model, tokens) {
  const head = JSON.stringify({model, messages: [{role: 'user', content: ''}]});
  const room = Math.floor(tokens) * 4 - (head.length - 2);
  let text = '';
  for (let i = 0; text.length < room; i++) text += `line ${i}: the quick brown fox jumps over the lazy dog. `;
  return JSON.stringify({model, messages: [{role: 'user', content: text.slice(0, room)}]});
}

// POSTs a body through tokendiet; returns the raw answer.
export function post(td, p, body, headers = {}) {
  return rawRequest({port: td.port, method: 'POST', path: p, body: Buffer.from(body),
    headers: {'content-type': 'application/json', ...headers}, timeoutMs: 60000});
}

// The x-tokendiet-* headers of an answer, without the prefix:
// {mode, survival, 'runway-tokens', 'wait-ms', thinking, ...}.
export function explain(headers) {
  const out = {};
  const get = k => (typeof headers.get === 'function' ? headers.get(k) : headers[k]);
  for (const k of ['request-id', 'mode', 'survival', 'runway-tokens', 'wait-ms', 'thinking', 'tokens-before',
    'tokens-after', 'strategies', 'error']) {
    const v = get(`x-tokendiet-${k}`);
    if (v != null) out[k] = v;
  }
  return out;
}

// The access log line of the request with this explain id.
export async function logLineOf(td, id) {
  return JSON.parse(await td.waitForLine(new RegExp(`"id":${id}[,}]`), 20000));
}

// /metrics samples: [{name, labels: {...}, value}].
export async function metricSamples(td) {
  const r = await rawRequest({port: td.port, path: '/metrics'});
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  const out = [];
  for (const line of r.body.toString('utf8').split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(x => [x[1], x[2]]));
    out.push({name: m[1], labels, value: Number(m[3])});
  }
  return out;
}

// /metrics once it has counted `requests` requests: a request is counted in
// its logging phase, after the client already has its answer.
export async function metricSamplesAfter(td, requests, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const samples = await metricSamples(td);
    const counted = metricSum(samples, 'tokendiet_requests_total');
    if (counted >= requests) return samples;
    if (Date.now() > deadline) throw new Error(`/metrics counted ${counted} of ${requests} requests`);
    await new Promise(r => setTimeout(r, 20));
  }
}

// The sum of the samples named `name` whose labels include `labels`.
export function metricSum(samples, name, labels = {}) {
  return samples.filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}
