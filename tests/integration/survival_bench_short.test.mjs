// A short run of the survival benchmark (scripts/bench/survival.mjs): two
// small trajectories under a quota small enough that the direct agent meets
// 429s, direct and through tokendiet, so the harness cannot rot. The full
// benchmark (every trajectory, 200,000 and 30,000 TPM) is run by hand.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {SOURCE_DIR, tempDir} from '../support/index.mjs';

const BENCH = path.join(SOURCE_DIR, 'scripts', 'bench', 'survival.mjs');

function runBench(args, timeoutMs) {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [BENCH, ...args], {stdio: ['ignore', 'pipe', 'pipe']});
    let stdout = '', stderr = '';
    child.stdout.on('data', d => { stdout += d; });
    child.stderr.on('data', d => { stderr += d; });
    // SIGTERM first: the benchmark then stops the processes it started.
    const timer = setTimeout(() => { child.kill('SIGTERM'); setTimeout(() => child.kill('SIGKILL'), 5000).unref(); }, timeoutMs);
    child.on('exit', (code, signal) => { clearTimeout(timer); resolve({code, signal, stdout, stderr}); });
  });
}

// swe-agent-2: 5 requests of 8k to 14k tokens (ceil(bytes / 4)); tau-bench-3: 10 of 1k to 4k.
const TRAJECTORIES = {'swe-agent-2': 5, 'tau-bench-3': 10};

test('two trajectories at 20,000 TPM, direct and through tokendiet: every request answered, the 429s waited out and counted', async () => {
  const dir = tempDir('survival-bench-');
  try {
    const json = path.join(dir.dir, 'summary.json');
    // A short max_wait: tokendiet holds some requests and answers 429 to others.
    const r = await runBench(['--speed', '60', '--tpm', '20000', '--trajectories', Object.keys(TRAJECTORIES).join(','),
      '--max-wait-s', '3', '--json', json], 120_000);
    const context = `exit ${r.code} ${r.signal ?? ''}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
    assert.equal(r.code, 0, context);
    const summary = JSON.parse(fs.readFileSync(json, 'utf8'));
    assert.deepEqual(summary.problems, [], context);
    assert.equal(summary.requests, 15, context);
    assert.deepEqual(summary.runs.map(run => run.mode), ['direct', 'tokendiet'], context);
    for (const run of summary.runs) {
      const where = `${run.mode}\n${context}`;
      assert.deepEqual(Object.fromEntries(run.trajectories.map(t => [t.id, t.requests])), TRAJECTORIES, where);
      const total = run.total;
      // Each step answered once, after as many attempts as there were 429s.
      assert.equal(total.answered, 15, where);
      assert.equal(total.too_large + total.gave_up + total.errors, 0, where);
      assert.equal(total.upstream_admitted, 15, where);
      assert.equal(total.attempts, 15 + total.client_429 + total.tokendiet_429, where);
      // 75k tokens within a 20k quota in 14 paces (42 quota-seconds) cannot go without waiting.
      assert.ok(total.wait_min > 0, where);
      assert.ok(total.tokens_sent >= 15 * 1000, where);
      // Every admitted body was matched to its step (the step header reaches the upstream).
      assert.equal(total.retention.steps, 15, where);
      if (run.mode === 'direct') {
        // Straight to the fake, every 429 the client saw is one the fake sent, and the bodies are the originals.
        assert.ok(total.upstream_429 > 0, where);
        assert.equal(total.client_429, total.upstream_429, where);
        assert.ok(total.retention.counted > 0, where);
        assert.equal(total.retention.ratio, 1, where);
      } else {
        // Through tokendiet the upstream never refuses one, and every Retry-After tokendiet gave was enough.
        assert.equal(total.upstream_429, 0, where);
        assert.equal(total.tokendiet_retry_after.honoured, total.tokendiet_retry_after.given, where);
        assert.ok((total.modes.survival ?? 0) > 0, where);
      }
      assert.ok(run.total.lag_min >= run.total.client_wait_min * 0.9, where);
    }
    assert.match(r.stdout, /\| \*\*total\*\* \| 15 \|/, context);
  } finally { dir.cleanup(); }
});
