// Sessions out of the box (docs/design.md §Client identity): the session
// ids agent CLIs already send (Claude Code's metadata.user_id, in its older
// and newer shapes, Codex's session-id header) become the request's session
// in the log line and the ledger, so `tokendiet usage --session ID` finds
// them; an x-tokendiet-session header still wins.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeAndProxy, rawRequest, tokendietBin, SOURCE_DIR} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');
const RECORDED = fs.readFileSync(path.join(FIXTURES, 'providers', 'anthropic-claude-code-recorded.json'), 'utf8');
const RECORDED_SESSION = JSON.parse(JSON.parse(RECORDED).metadata.user_id).session_id;

let fake, td, stop;
before(async () => { ({fake, td, stop} = await startFakeAndProxy(null)); });
after(async () => { await stop?.(); });

async function send(p, body, headers = {}) {
  const r = await rawRequest({port: td.port, method: 'POST', path: p, body, timeoutMs: 20000,
    headers: {'content-type': 'application/json', 'x-api-key': 'sk-ant-sessions', ...headers}});
  assert.equal(r.status, 200, r.body.toString());
  return JSON.parse(await td.waitForLine(new RegExp(`"id":${r.headers['x-tokendiet-request-id']}[,}]`), 10000));
}

const usage = args => JSON.parse(execFileSync(tokendietBin(),
  ['usage', '--json', '--ledger', path.join(td.stateDir, 'usage.db'), ...args], {encoding: 'utf8'}));

test('Claude Code: the session in metadata.user_id, newer (JSON text) and older shape', async () => {
  const newer = await send('/v1/messages', RECORDED);
  assert.equal(newer.session, RECORDED_SESSION);
  const older = await send('/v1/messages', JSON.stringify({model: 'claude-sonnet-4-5', max_tokens: 16,
    messages: [{role: 'user', content: 'hi'}], metadata: {user_id: 'user_0f3c9a8e_account__session_5b1d-77'}}));
  assert.equal(older.session, '5b1d-77');
  // The client's own header wins.
  const own = await send('/v1/messages', RECORDED, {'x-tokendiet-session': 'mine'});
  assert.equal(own.session, 'mine');
  // Claude Code 2.1 sends the id as a header too (as it sent it to the fake upstream).
  const header = await send('/v1/messages', JSON.stringify({model: 'claude-sonnet-4-5', max_tokens: 16,
    messages: [{role: 'user', content: 'hi'}]}), {'x-claude-code-session-id': 'c34d502e-b8fc-44b0-8352-80f2d6abbfd3'});
  assert.equal(header.session, 'c34d502e-b8fc-44b0-8352-80f2d6abbfd3');
  // Another user_id is no session.
  const other = await send('/v1/messages', JSON.stringify({model: 'claude-sonnet-4-5', max_tokens: 16,
    messages: [{role: 'user', content: 'hi'}], metadata: {user_id: 'alice'}}));
  assert.equal(other.session, undefined);
});

test('Codex CLI: the session-id header (older versions: session_id)', async () => {
  // Codex CLI 0.171's headers, as it sent them to the fake upstream.
  const line = await send('/v1/responses', JSON.stringify({model: 'gpt-5.1-codex', input: 'hi'}),
    {'session-id': '0199a3c1-5e2b-7a41-9c1e-2f6f0d3b8a77', 'x-codex-window-id': '0199a3c1-5e2b-7a41-9c1e-2f6f0d3b8a77:0'});
  assert.equal(line.session, '0199a3c1-5e2b-7a41-9c1e-2f6f0d3b8a77');
  const older = await send('/v1/responses', JSON.stringify({model: 'gpt-5.1-codex', input: 'hi'}), {session_id: 'older-1'});
  assert.equal(older.session, 'older-1');
});

test('the ledger has the agents\' sessions: usage --session finds them', async () => {
  // The writer commits within milliseconds: wait (bounded) for the seven rows.
  for (let i = 0; i < 200 && usage([]).total.requests < 7; i++) await new Promise(r => setTimeout(r, 25));
  assert.equal(usage(['--session', RECORDED_SESSION]).total.requests, 1);
  const bySession = usage(['--by', 'session']);
  const keys = bySession.groups.map(g => g.key).sort();
  for (const k of [RECORDED_SESSION, '5b1d-77', 'mine', '0199a3c1-5e2b-7a41-9c1e-2f6f0d3b8a77']) assert.ok(keys.includes(k), k);
});
