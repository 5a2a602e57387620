// Every subcommand reads its options one way (cli/options.hpp): "--name value"
// and "--name=value" give the same result; an unknown option or a missing
// value is "COMMAND: reason" and exit 2; --help prints the command's page.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {tokendietBin, tempDir, freePort, SOURCE_DIR} from '../support/index.mjs';

const run = (args, input = '') =>
  spawnSync(tokendietBin(), args, {input, encoding: 'utf8', timeout: 60_000});

const REPLAY = path.join(SOURCE_DIR, 'tests/fixtures/replay/mini-swe-agent-1.json');
const COMMANDS = ['serve', 'check-config', 'usage', 'count', 'replay', 'version'];

// The replay report without its wall-clock figures.
function replayReport(args) {
  const r = run(['replay', REPLAY, '--json', ...args]);
  assert.equal(r.status, 0, r.stderr);
  const strip = (o) => { delete o.pipeline_p50_ms; delete o.pipeline_p99_ms; delete o.plans_ahead_ms; return o; };
  const j = JSON.parse(r.stdout);
  return {trajectories: j.trajectories.map(strip), total: strip(j.total)};
}

test('count: --encoding=X and --encoding X count alike', () => {
  const text = 'The quick brown fox jumps over the lazy dog, twice: ' + 'résumé '.repeat(40);
  for (const enc of ['o200k_base', 'cl100k_base', 'estimate']) {
    const joined = run(['count', `--encoding=${enc}`], text);
    const spaced = run(['count', '--encoding', enc], text);
    assert.equal(joined.status, 0, joined.stderr);
    assert.equal(joined.stdout, spaced.stdout);
  }
  assert.notEqual(run(['count', '--encoding=estimate'], text).stdout,
                  run(['count', '--encoding=o200k_base'], text).stdout);  // the value is used
});

test('replay: --pricing=X and --pricing X measure alike', () => {
  const joined = replayReport(['--pricing=anthropic']);
  assert.deepEqual(replayReport(['--pricing', 'anthropic']), joined);
  assert.notDeepEqual(replayReport([]).total.cost_with, joined.total.cost_with);  // openai prices otherwise
});

test('replay: each FILE or DIR given is a set: its totals, then all together', () => {
  const a = path.join(SOURCE_DIR, 'tests/fixtures/replay/tau-bench-3.json');
  const b = path.join(SOURCE_DIR, 'tests/fixtures/replay/swe-agent-2.json');
  const report = (...files) => {
    const r = run(['replay', ...files, '--json']);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const both = report(a, b);
  assert.deepEqual(both.sets.map((s) => s.input), [a, b]);
  assert.equal(both.sets[0].tokens_without, report(a).total.tokens_without);
  assert.equal(both.sets[1].tokens_without, report(b).total.tokens_without);
  assert.equal(both.total.tokens_without, both.sets[0].tokens_without + both.sets[1].tokens_without);
  assert.equal(report(a).sets, undefined);  // one input: no sets
  // The charged costs are under both pricings, whichever --pricing prices the rest.
  assert.equal(both.total.charged.openai.cost_without, both.total.cost_without);
  const anthropic = JSON.parse(run(['replay', a, b, '--json', '--pricing', 'anthropic']).stdout);
  assert.equal(both.total.charged.anthropic.cost_without, anthropic.total.cost_without);
  assert.equal(anthropic.recall, 'from-start');  // the default: as the proxy offers the tool
});

test('serve: --listen=, --threads=, --upstream= serve; then usage reads the ledger either way', async () => {
  const {dir, cleanup} = tempDir('td-cli-');
  const port = await freePort();
  const child = spawn(tokendietBin(), ['serve', `--listen=127.0.0.1:${port}`, '--threads=1',
                                       '--upstream=openai=http://127.0.0.1:9'],
                      {env: {...process.env, STATE_DIRECTORY: dir, XDG_STATE_HOME: dir}, stdio: ['ignore', 'ignore', 'pipe']});
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    let healthy = false;
    for (let i = 0; i < 200 && !healthy && child.exitCode === null; ++i) {
      healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (!healthy) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(healthy, `serve never answered /healthz:\n${stderr}`);
    // One request for the ledger (its upstream refuses: a row all the same).
    await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {method: 'POST',
      headers: {'content-type': 'application/json'}, body: JSON.stringify({model: 'gpt-4o', messages: [{role: 'user', content: 'hi'}]})});
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  }
  try {
    const ledger = path.join(dir, 'usage.db');
    assert.ok(fs.existsSync(ledger), stderr);
    const report = (args) => {
      const r = run(['usage', '--json', ...args]);
      assert.equal(r.status, 0, r.stderr);
      const j = JSON.parse(r.stdout);
      delete j.until_ms;
      return j;
    };
    const joined = report([`--ledger=${ledger}`, '--since=2020-01-01', '--by=day']);
    assert.deepEqual(report(['--ledger', ledger, '--since', '2020-01-01', '--by', 'day']), joined);
    assert.equal(joined.since_ms, Date.UTC(2020, 0, 1));
    assert.equal(joined.total.requests, 1);
    assert.equal(joined.groups.length, 1);
    assert.notDeepEqual(report([`--ledger=${ledger}`, '--by=model']).groups, joined.groups);  // --by is read
  } finally { cleanup(); }
});

test('serve: a bad value reads the same either way, exit 2', () => {
  const joined = run(['serve', '--threads=many']);
  const spaced = run(['serve', '--threads', 'many']);
  assert.equal(joined.status, 2);
  assert.equal(spaced.status, 2);
  assert.equal(joined.stderr, spaced.stderr);
  assert.match(joined.stderr, /^tokendiet serve: --threads: expected an integer from 0 to 1024, got 'many'\n/);
});

test('check-config: options and FILEs in any order', () => {
  const {dir, cleanup} = tempDir('td-cli-');
  try {
    const file = path.join(dir, 'ok.yaml');
    fs.writeFileSync(file, 'listen: 127.0.0.1:9\n');
    const r = run(['check-config', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${file}: ok\n`);
    const bad = run(['check-config', file, '--strict']);
    assert.equal(bad.status, 2);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^check-config: unknown option '--strict'\n\nusage: tokendiet check-config FILE/);
  } finally { cleanup(); }
});

test('every command: an unknown option names it, exit 2', () => {
  for (const cmd of COMMANDS) {
    const r = run([cmd, '--bogus']);
    assert.equal(r.status, 2, cmd);
    const prefix = cmd === 'serve' ? 'tokendiet serve' : cmd;
    assert.ok(r.stderr.startsWith(`${prefix}: unknown option '--bogus'\n\nusage: tokendiet ${cmd}`), r.stderr);
  }
});

test('a value missing at the end names its option, exit 2', () => {
  for (const [cmd, opt] of [['serve', '--listen'], ['usage', '--ledger'], ['count', '--encoding'],
                            ['replay', '--pricing']]) {
    const r = run([cmd, ...(cmd === 'replay' ? [REPLAY] : []), opt]);
    assert.equal(r.status, 2, `${cmd} ${opt}`);
    assert.match(r.stderr, new RegExp(`^(tokendiet )?${cmd}: ${opt}: missing value\n`));
  }
});

test('--help of every command: its page on stdout, exit 0; tokendiet --help lists them', () => {
  for (const cmd of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      const r = run([cmd, flag]);
      assert.equal(r.status, 0, `${cmd} ${flag}: ${r.stderr}`);
      assert.equal(r.stderr, '');
      assert.ok(r.stdout.startsWith(`usage: tokendiet ${cmd}`), r.stdout);
    }
  }
  assert.match(run(['serve', '--help']).stdout, /\n {2}--upstream P=URL {6}upstream for provider P/);
  assert.match(run(['replay', '--help']).stdout, /\n {2}--pricing P {5}openai \(default\)/);
  const top = run(['--help']);
  assert.equal(top.status, 0);
  for (const cmd of COMMANDS) assert.match(top.stdout, new RegExp(`\n {2}${cmd} +\\S`));
  const none = run([]);
  assert.equal(none.status, 2);
  assert.equal(none.stderr, top.stdout);
  assert.equal(run(['version']).stdout, run(['--version']).stdout);
});
