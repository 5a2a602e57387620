// A short run of the soak (scripts/bench/soak.mjs): concurrent keep-alive
// clients streaming through tokendiet, every body checked against the
// upstream's, descriptors back to where they started, one ledger row per
// request. The full soak (500 clients, 120 s) is run by hand.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import path from 'node:path';
import {SOURCE_DIR} from '../support/index.mjs';

const SOAK = path.join(SOURCE_DIR, 'scripts', 'bench', 'soak.mjs');

function runSoak(args, timeoutMs) {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [SOAK, ...args], {stdio: ['ignore', 'pipe', 'pipe']});
    let stdout = '', stderr = '';
    child.stdout.on('data', d => { stdout += d; });
    child.stderr.on('data', d => { stderr += d; });
    // SIGTERM first: the soak then stops the processes it started.
    const timer = setTimeout(() => { child.kill('SIGTERM'); setTimeout(() => child.kill('SIGKILL'), 5000).unref(); }, timeoutMs);
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({code, signal, stdout, stderr}); });
  });
}

test('50 clients for 5 s: every stream intact, no descriptor left, a ledger row per request', async () => {
  const r = await runSoak(['--concurrency', '50', '--seconds', '5', '--idle-s', '2'], 60_000);
  const context = `exit ${r.code} ${r.signal ?? ''}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
  assert.equal(r.code, 0, context);
  const summary = JSON.parse(r.stdout);
  assert.ok(summary.requests >= 50, context);
  assert.equal(summary.ok, summary.requests, context);
  assert.equal(summary.mismatches, 0, context);
  assert.equal(summary.errors, 0, context);
  assert.equal(summary.ledger_rows, summary.requests, context);
  assert.equal(summary.ledger_rows_match, true, context);
  assert.deepEqual(summary.problems, [], context);
  for (const provider of ['openai', 'anthropic', 'gemini'])
    assert.equal(summary.ledger_rows_by_provider[provider], summary.requests_by_provider[provider], `${provider}\n${context}`);
});
