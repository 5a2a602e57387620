// The control arm through the real binary (docs/design.md §Policy, The
// control arm): with control_fraction 0.5, a scripted mix of sessions (named
// by x-tokendiet-session, or by their conversation's start) splits into the
// two arms about half and half; a session keeps its arm on every request,
// after a restart and on a second process; a control session's bodies reach
// the upstream byte for byte; the ledger rows carry the arm and `usage
// --compare` counts them. And shadow's headers, /metrics and `usage` say
// what really went upstream.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, tokendietBin, tempDir, trajectory, post, metricSamplesAfter, metricSum}
  from '../support/index.mjs';

const traj = trajectory('mini-swe-agent-12');
const TURNS = [traj.turns - 2, traj.turns - 1];  // two requests of each session, long enough to diet
const SESSIONS = 40;

let fake, state;
before(async () => { fake = await startFakeUpstream(); state = tempDir('td-arms-'); });
after(async () => { await fake?.close(); state?.cleanup(); });

const ledgerOf = name => path.join(state.dir, `${name}.db`);
const config = (ledger, keys) => `ledger: {path: ${JSON.stringify(ledger)}}\nprofiles:\n  - name: arms\n    models: ["*"]\n` +
  Object.entries(keys).map(([k, v]) => `    ${k}: ${v}\n`).join('');
const serve = (ledger, keys = {control_fraction: 0.5}) =>
  startTokendiet({upstreams: {openai: fake.url}, config: config(ledger, keys)});

// Session k's request at turn t: even sessions are named by the header,
// odd ones by their task (the conversation's start differs).
function request(k, t) {
  const body = JSON.parse(traj.request(t));
  const headers = {authorization: 'Bearer sk-arms-test'};
  if (k % 2) body.messages[1].content += `\n(session ${k})`;
  else headers['x-tokendiet-session'] = `scripted-${k}`;
  return {body: JSON.stringify(body), headers};
}

// Sends session k's request at turn t; returns its arm, and whether the
// upstream got the client's bytes unchanged.
async function send(td, k, t) {
  const {body, headers} = request(k, t);
  fake.clear();
  const r = await post(td, '/v1/chat/completions', body, headers);
  assert.equal(r.status, 200, String(r.body));
  await fake.waitForRequests(1);
  const untouched = fake.last().body.toString('utf8') === body;
  const arm = r.headers['x-tokendiet-arm'] ?? 'treatment';
  const before = Number(r.headers['x-tokendiet-tokens-before']), sent = Number(r.headers['x-tokendiet-tokens-after']);
  if (arm === 'control') {
    assert.ok(untouched, `session ${k}: a control session's body changed on its way upstream`);
    assert.equal(sent, before, 'control: what went upstream is the request as sent');
    assert.ok(Number(r.headers['x-tokendiet-tokens-diet']) < before, 'control: the diet still computed its cut');
  } else {
    assert.equal(arm, 'treatment');
    assert.ok(!untouched && sent < before, `session ${k}: the treatment was not dieted`);
  }
  return arm;
}

function sql(file, query) {
  return JSON.parse(execFileSync('sqlite3', ['-readonly', '-json', file, query], {encoding: 'utf8'}).trim() || '[]');
}

function usage(file, args = []) {
  return JSON.parse(execFileSync(tokendietBin(), ['usage', '--json', '--ledger', file, ...args], {encoding: 'utf8'}));
}

test('control_fraction 0.5: the arms split, stay put across requests, a restart and a second process', async t => {
  const arms = new Map();
  const first = ledgerOf('first');
  let td = await serve(first);
  try {
    for (let k = 0; k < SESSIONS; k++)
      for (const t of TURNS) {
        const arm = await send(td, k, t);
        if (arms.has(k)) assert.equal(arm, arms.get(k), `session ${k} changed arm between its requests`);
        arms.set(k, arm);
      }
  } finally { await td.stop(); }
  const control = [...arms.values()].filter(a => a === 'control').length;
  t.diagnostic(`${control} of ${SESSIONS} sessions in the control arm`);
  assert.ok(control >= 12 && control <= 28, `${control} of ${SESSIONS} sessions in control at 0.5`);

  // The ledger rows carry the arm, a session's rows one arm; --compare counts them.
  const rows = sql(first, 'SELECT arm, session, session_key, tokens_before, tokens_after, tokens_diet FROM requests');
  assert.equal(rows.length, SESSIONS * TURNS.length);
  const keys = new Map();
  for (const r of rows) {
    assert.ok(['control', 'treatment'].includes(r.arm), JSON.stringify(r));
    assert.match(r.session_key, /^[0-9a-f]{16}$/);
    if (keys.has(r.session_key)) assert.equal(r.arm, keys.get(r.session_key));
    keys.set(r.session_key, r.arm);
    if (r.arm === 'control') assert.ok(r.tokens_after === r.tokens_before && r.tokens_diet < r.tokens_before);
    else assert.ok(r.tokens_after === r.tokens_diet && r.tokens_diet < r.tokens_before);
  }
  assert.equal(keys.size, SESSIONS);
  const compared = usage(first, ['--compare']);
  assert.equal(compared.total.control.sessions, control);
  assert.equal(compared.total.treatment.sessions, SESSIONS - control);
  assert.equal(compared.total.control.requests, control * TURNS.length);
  assert.equal(typeof compared.total.sentence, 'string');

  // After a restart (the same ledger), and on two processes at once.
  td = await serve(first);
  const other = await serve(ledgerOf('second'));
  try {
    for (let k = 0; k < SESSIONS; k++) {
      assert.equal(await send(td, k, TURNS[1]), arms.get(k), `session ${k} changed arm after a restart`);
      assert.equal(await send(other, k, TURNS[1]), arms.get(k), `session ${k} has another arm on a second process`);
    }
  } finally { await td.stop(); await other.stop(); }
  // Both replicas' ledgers read together: each session once, in its arm.
  const both = JSON.parse(execFileSync(tokendietBin(), ['usage', '--compare', '--json', '--ledger', first,
    ledgerOf('second')], {encoding: 'utf8'}));
  assert.equal(both.total.control.sessions, control);
  assert.equal(both.total.control.requests, control * (TURNS.length + 2));
});

test('shadow: the headers, /metrics and usage say what went upstream; what the diet would have sent apart', async () => {
  const file = ledgerOf('shadow');
  const td = await serve(file, {shadow: true});
  let before, diet;
  try {
    const {body, headers} = request(1, TURNS[1]);
    fake.clear();
    const r = await post(td, '/v1/chat/completions', body, headers);
    assert.equal(r.status, 200);
    assert.equal(fake.last().body.toString('utf8'), body, 'shadow sent the body as it came');
    before = Number(r.headers['x-tokendiet-tokens-before']);
    diet = Number(r.headers['x-tokendiet-tokens-diet']);
    assert.equal(r.headers['x-tokendiet-arm'], 'shadow');
    assert.equal(Number(r.headers['x-tokendiet-tokens-after']), before);
    assert.ok(diet < before * 0.8, `the diet would have sent ${diet} of ${before}`);
    const samples = await metricSamplesAfter(td, 1);
    assert.equal(metricSum(samples, 'tokendiet_tokens_sent_total'), before);
    assert.equal(metricSum(samples, 'tokendiet_tokens_saved_total'), 0);
    assert.equal(metricSum(samples, 'tokendiet_diet_tokens_saved_total', {arm: 'shadow'}), before - diet);
    assert.equal(metricSum(samples, 'tokendiet_arm_requests_total', {arm: 'shadow'}), 1);
  } finally { await td.stop(); }
  const report = usage(file);
  assert.equal(report.total.tokens_after, before);
  assert.equal(report.total.tokens_saved, 0);
  assert.deepEqual(sql(file, 'SELECT arm, tokens_diet FROM requests'), [{arm: 'shadow', tokens_diet: diet}]);
  assert.ok(fs.existsSync(file));
});
