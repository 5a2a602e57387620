// `tokendiet replay` on what a newcomer hands it: a recorded request body of
// another provider is refused with what to do instead (read as OpenAI chat
// messages it replayed as nothing cut), and a directory shows progress on a
// terminal only, never in a pipe or in the --json output.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {tokendietBin, tempDir, SOURCE_DIR} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');
const cli = (...args) => spawnSync(tokendietBin(), args, {encoding: 'utf8', timeout: 120_000});
const shellQuote = s => `'${s.replace(/'/g, `'\\''`)}'`;

test('an Anthropic or Gemini request body is refused, naming its format and what to do', () => {
  const {dir, cleanup} = tempDir('td-replay-');
  try {
    const anthropic = path.join(dir, 'claude.json');
    fs.copyFileSync(path.join(FIXTURES, 'providers', 'anthropic-claude-code-recorded.json'), anthropic);
    const r = cli('replay', anthropic);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stderr, /claude\.json: a request body in the anthropic format, not a trajectory: replay reads OpenAI chat messages/);
    assert.match(r.stderr, /convert\.py, or count this body with `tokendiet count --request`/);
    const gemini = path.join(dir, 'gemini.json');
    fs.writeFileSync(gemini, JSON.stringify({contents: [{role: 'user', parts: [{text: 'hi'}]}, {role: 'model', parts: [{text: 'ok'}]}]}));
    const g = cli('replay', gemini, '--json');
    assert.equal(g.status, 1);
    assert.equal(g.stdout, '');
    assert.match(g.stderr, /a request body in the gemini format/);
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
