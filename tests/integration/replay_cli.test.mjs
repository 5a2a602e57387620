// `tokendiet replay` on what a newcomer hands it: a recorded request body of
// another provider is read by its own adapter (read as OpenAI chat messages
// it replayed as nothing cut), and a directory shows progress on a terminal
// only, never in a pipe or in the --json output.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {tokendietBin, tempDir, SOURCE_DIR} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');
const cli = (...args) => spawnSync(tokendietBin(), args, {encoding: 'utf8', timeout: 120_000});
const shellQuote = s => `'${s.replace(/'/g, `'\\''`)}'`;

test('a request body of another format is read by its own adapter and replayed, saying so', () => {
  const {dir, cleanup} = tempDir('td-replay-');
  try {
    // Claude Code's recorded request: read as chat messages it replayed as
    // 48,568 tokens and nothing cut; its own adapter reads the tool blocks.
    const anthropic = path.join(dir, 'claude.json');
    fs.copyFileSync(path.join(FIXTURES, 'providers', 'anthropic-claude-code-recorded.json'), anthropic);
    const r = cli('replay', anthropic, '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /claude\.json: a request body in the anthropic format, replayed as chat messages/);
    const t = JSON.parse(r.stdout).trajectories[0];
    assert.equal(t.id, 'claude');
    assert.ok(t.tokens_without > 100000, `tokens ${t.tokens_without}`);
    assert.ok(t.tokens_with < t.tokens_without, 'nothing cut');
    // Gemini: the same, its calls and responses as tool messages.
    const gemini = path.join(dir, 'gemini.json');
    fs.writeFileSync(gemini, JSON.stringify({contents: [{role: 'user', parts: [{text: 'Read a.py'}]},
      {role: 'model', parts: [{functionCall: {name: 'read', args: {path: 'a.py'}}}]},
      {role: 'user', parts: [{functionResponse: {name: 'read', response: {output: 'x = 1\n'.repeat(50)}}}]},
      {role: 'model', parts: [{text: 'done'}]}]}));
    const g = cli('replay', gemini, '--json');
    assert.equal(g.status, 0, g.stderr);
    assert.match(g.stderr, /a request body in the gemini format, replayed as chat messages/);
    assert.ok(JSON.parse(g.stdout).trajectories[0].tokens_without > 100);
    // A body its adapter cannot read: an error naming the format.
    fs.writeFileSync(gemini, JSON.stringify({contents: [42]}));
    const bad = cli('replay', gemini);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /a request body in the gemini format its adapter cannot read/);
  } finally { cleanup(); }
});

test('a directory shows progress on a terminal (stderr), never in a pipe or in --json', () => {
  const {dir, cleanup} = tempDir('td-replay-');
  try {
    for (const name of ['tau-bench-2.json', 'tau-bench-3.json'])
      fs.copyFileSync(path.join(FIXTURES, 'replay', name), path.join(dir, name));
    const piped = cli('replay', dir, '--json');
    assert.equal(piped.status, 0, piped.stderr);
    assert.equal(piped.stderr, '');
    assert.equal(JSON.parse(piped.stdout).trajectories.length, 2);

    // On a terminal (script(1) gives the command a pty), stdout to a file.
    const outDir = tempDir('td-replay-out-');
    const out = path.join(outDir.dir, 'out.json');
    const tty = spawnSync('script', ['-qec', `${shellQuote(tokendietBin())} replay ${shellQuote(dir)} --json > ${shellQuote(out)}`, '/dev/null'],
      {encoding: 'utf8', timeout: 120_000});
    assert.equal(tty.status, 0, tty.stdout);
    assert.match(tty.stdout, /replay: 1\/2 tau-bench-2\.json/);
    assert.match(tty.stdout, /replay: 2\/2 tau-bench-3\.json/);
    const ids = j => j.trajectories.map(t => [t.id, t.tokens_with]);
    assert.deepEqual(ids(JSON.parse(fs.readFileSync(out, 'utf8'))), ids(JSON.parse(piped.stdout)));
    outDir.cleanup();
  } finally { cleanup(); }
});
