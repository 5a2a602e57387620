// The optional real-CLI suite (ctest label `realcli`, `scripts/test.sh
// --realcli`): the agent CLIs users run (Claude Code, Codex CLI, Gemini CLI),
// installed from npm at the versions pinned in tests/realcli/package-lock.json
// (tests/realcli/setup.sh), each driven non-interactively against the fake
// upstream in its scripted mode (tests/fake_upstream/script.mjs) with billing
// on (tests/fake_upstream/billing.mjs: each provider's prompt cache, the
// cached counts in the usage the CLI reads). Each CLI plays the same 29-turn
// working session twice: directly against the fake, and through `tokendiet
// serve`; Codex twice more with its own auto-compaction on. The CLIs run the
// tools themselves, in a temp project, so every request body is the CLI's own.
// Checked per CLI: the session finishes in both arms; through tokendiet no
// main request (not count_tokens, not a small model's side call) fails open
// or is refused, the diet fires under the default profile,
// `identical_tool_outputs` among its strategies, /metrics agrees; and the
// fake-billed cost with caching through tokendiet is not above direct. Both
// bills are printed (tokens, cached, written, USD, cache breaks).
//
// Nothing leaves 127.0.0.1: each CLI gets a fresh HOME (and CODEX_HOME), an
// environment built from scratch, telemetry, update checks and nonessential
// traffic off, and a timeout (REALCLI_TIMEOUT_MS, 240 s) after which its
// process group is killed. REALCLI_RECORD_DIR=DIR keeps the bodies the fake
// received (NAME-ARM-NN.json), each request's charge (NAME-ARM-billing.json)
// and tokendiet's log lines; REALCLI_CONFIG=FILE runs tokendiet with that
// config (to measure a profile); REALCLI_CODEX_AUTO_COMPACT=N sets Codex's
// model_auto_compact_token_limit in the compaction arms.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, tempDir, metricSamples, metricSum, SOURCE_DIR} from '../support/index.mjs';
import {turnSignature} from '../fake_upstream/script.mjs';

const BIN = path.join(SOURCE_DIR, 'tests', 'realcli', 'node_modules', '.bin');
const CLI_TIMEOUT_MS = Number(process.env.REALCLI_TIMEOUT_MS || 240_000);
const DONE = 'DONE-SCRIPTED';

// The file the session reads and edits: 110 small handlers, about 20 KB (Claude Code
// keeps a Bash output over 30,000 characters in a file and sends a preview).
function serviceSource() {
  const out = [];
  for (let k = 0; k < 110; k++)
    out.push(`def handler_${k}(request, context=None):`,
      `    """Handles route number ${k} of the settings service."""`,
      `    return context.render("template_${k}.html", value=request.args.get("v${k}"))`, '');
  return out.join('\n') + '\n';
}

// A build log the session tails twice, unchanged: 300 lines, about 22 KB.
function buildLog() {
  const out = [];
  for (let i = 0; i < 300; i++)
    out.push(`2026-11-28 10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')} INFO ` +
      `build step ${i}: compiled module_${i % 37}.py in ${(i * 37) % 1000} ms`);
  return out.join('\n') + '\n';
}

// The working session, 28 tool turns then the answer (29 model turns): read
// service.py, then edit a handler's docstring every other turn, between
// commands whose outputs are a few KB (grep, sed, tail, a compile, an import),
// the file printed again every sixth turn or so, and three commands repeated
// with the same output. Every turn thinks first (signed thinking the CLI must
// send back as it came). tools: {read(), reread(), edit(k) (route k's
// docstring gains "(checked)"), shell(command)}, each the CLI's own tool call.
const EDITED = [3, 7, 12, 20, 33, 41, 55, 68, 77, 89, 95];
const COMPILE = 'python3 -m py_compile service.py && echo compiled';
const STEPS = [
  ['read'], ['shell', 'grep -n "def handler_" service.py'], ['edit'], ['shell', "sed -n '1,190p' service.py"],
  ['edit'], ['shell', 'tail -n 120 build.log'], ['reread'], ['edit'], ['shell', 'grep -n "template_1" service.py'], ['edit'],
  ['shell', 'python3 -c "import service; print(sorted(n for n in dir(service) if n.startswith(\'handler_\')))"'],
  ['reread'], ['edit'], ['shell', 'grep -n "def handler_" service.py'], ['edit'], ['shell', "sed -n '100,290p' service.py"],
  ['edit'], ['shell', 'tail -n 120 build.log'], ['reread'], ['edit'], ['shell', COMPILE], ['edit'],
  ['shell', "sed -n '250,440p' service.py"], ['edit'], ['shell', COMPILE], ['reread'], ['edit'],
  ['shell', 'grep -n "(checked)" service.py'],
];

function sessionScript(tools) {
  const thinking = i => `Turn ${i}: the user wants route docstrings marked as checked, so I look before I change service.py.`;
  let edits = 0;
  const turns = STEPS.map(([kind, arg], i) => ({thinking: thinking(i), text: i === 0 ? 'Reading the service.' : '',
    tool_calls: [kind === 'edit' ? tools.edit(EDITED[edits++]) : tools[kind](arg)]}));
  turns.push({thinking: thinking(STEPS.length), text: `service.py: ${EDITED.length} routes marked checked. ${DONE}`});
  return {turns, side: {text: 'Scripted session'}};
}

// An edit's old and new text: route k's docstring, unique in the file.
const editOf = k => ({old_string: `route number ${k} of`, new_string: `route number ${k} (checked) of`});

// Runs `argv` in `cwd` with `env` only; resolves {code, signal, stdout, stderr, timedOut}.
// Killed (its whole process group) after timeoutMs.
function runCli(argv, {cwd, env, timeoutMs = CLI_TIMEOUT_MS}) {
  return new Promise((resolve, reject) => {
    const p = spawn(argv[0], argv.slice(1), {cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true});
    let stdout = '', stderr = '', timedOut = false;
    p.stdout.on('data', d => { stdout += d; });
    p.stderr.on('data', d => { stderr += d; });
    const t = setTimeout(() => { timedOut = true; try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ } }, timeoutMs);
    p.once('error', e => { clearTimeout(t); reject(e); });
    p.once('close', (code, signal) => {
      clearTimeout(t);
      try { process.kill(-p.pid, 'SIGKILL'); } catch { /* the group is gone */ }
      resolve({code, signal, stdout, stderr, timedOut});
    });
  });
}

function baseEnv(home) {
  return {PATH: `${BIN}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', CI: '1'};
}

// One arm of a session: a fresh project and fake upstream (scripted, billing
// on), the CLI `cli({url, project, home, dir})` pointed at the fake directly
// (through = false) or at tokendiet in front of it. Returns what each side saw
// and the fake's bill.
async function session(name, makeScript, cli, {through}) {
  // The same directory name in both arms: the CLIs put the project's path in
  // every request, so the arm's name there would change the bill.
  const tmp = tempDir(`td-realcli-${name.replace(/-(direct|tokendiet)$/, '')}-`);
  const project = path.join(tmp.dir, 'project'), home = path.join(tmp.dir, 'home');
  fs.mkdirSync(project);
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(project, 'service.py'), serviceSource());
  fs.writeFileSync(path.join(project, 'build.log'), buildLog());
  const script = makeScript(project);
  const fake = await startFakeUpstream({script, billing: true});
  const config = process.env.REALCLI_CONFIG ? fs.readFileSync(process.env.REALCLI_CONFIG, 'utf8') : null;
  const td = through ? await startTokendiet({upstreams: {anthropic: fake.url, openai: fake.url, gemini: fake.url}, config}) : null;
  try {
    const run = await runCli(...cli({url: td ? td.url : fake.url, project, home, dir: tmp.dir}));
    const samples = td ? await metricSamples(td) : null;
    await td?.stop();
    const lines = td ? td.lines.filter(l => l.startsWith('{')).map(l => JSON.parse(l)).filter(l => l.event === 'request') : [];
    // The bodies as the fake received them, one file per request, and each request's charge.
    if (process.env.REALCLI_RECORD_DIR) {
      const dir = process.env.REALCLI_RECORD_DIR;
      fs.mkdirSync(dir, {recursive: true});
      fake.requests.forEach((r, i) => fs.writeFileSync(path.join(dir, `${name}-${String(i).padStart(2, '0')}.json`), r.body));
      fs.writeFileSync(path.join(dir, `${name}-billing.json`), JSON.stringify(fake.requests.map(r =>
        ({path: r.path, turn: r.scriptTurn, bytes: r.bodyBytes, ...r.billing, cost: r.billing ? fake.billing.costOf(r.billing) : 0})), null, 1));
      if (td) fs.writeFileSync(path.join(dir, `${name}-tokendiet.jsonl`), lines.map(l => JSON.stringify(l)).join('\n') + '\n');
    }
    const main = r => r.billing && isMain({path: r.path, model: r.billing.model});
    const mainCharges = new Set(fake.requests.filter(main).map(r => r.billing));
    return {script, run, lines, samples, upstream: fake.requests,
      bill: fake.billing.summary(), mainBill: fake.billing.summary(c => mainCharges.has(c))};
  } finally {
    await td?.stop();
    await fake.close();
    tmp.cleanup();
  }
}

// A main request: a chat turn of the session's model, not a token count or a
// small model's side call.
const isMain = l => /^\/v1\/(messages|responses)(\?|$)|:(stream)?generateContent(\?|$)/i.test(l.path) &&
  !/(^|[-_.])(haiku|mini|nano|lite)([-_.]|$)/.test(l.model || '');

const why = (name, s) => `${name} stdout:\n${s.run.stdout.slice(-3000)}\nstderr:\n${s.run.stderr.slice(-3000)}\n` +
  `tokendiet:\n${s.lines.map(l => JSON.stringify(l)).join('\n')}`;

// The session ran to its end: the CLI exited 0 with the answer, the whole
// script was played, and the newest turn's thinking went back upstream with
// the signature the fake made.
function checkFinished(name, s) {
  const script = s.script;
  assert.equal(s.run.timedOut, false, `${name} timed out\n${why(name, s)}`);
  assert.equal(s.run.code, 0, why(name, s));
  assert.match(s.run.stdout, new RegExp(DONE), why(name, s));
  const last = script.turns.length - 1;
  assert.ok(s.upstream.some(r => r.scriptTurn === last), `the fake never reached turn ${last}\n${why(name, s)}`);
  const lastBody = s.upstream.filter(r => r.scriptTurn === last).at(-1).body.toString('utf8');
  assert.ok(lastBody.includes(turnSignature(last - 1)), `turn ${last - 1}'s signature did not reach the upstream\n${why(name, s)}`);
}

// Through tokendiet: no main request (not count_tokens, not a small model's
// side call) fails open or is refused; the diet fires (unless `diets` is
// false); /metrics agrees. repeats: whether identical_tool_outputs must be
// among the strategies that fired.
function checkThrough(name, s, {repeats = true, diets = true} = {}) {
  const main = s.lines.filter(isMain);
  assert.ok(main.length >= s.script.turns.length, `${main.length} main requests for ${s.script.turns.length} turns\n${why(name, s)}`);
  const failed = main.filter(l => l.fail_open || l.status !== 200);
  assert.deepEqual(failed.map(l => `${l.path} ${l.status} ${l.fail_open_reason ?? ''}`), [], why(name, s));
  const dieted = main.filter(l => l.strategies && l.tokens_after < l.tokens_before);
  if (diets) assert.ok(dieted.length > 0, `the diet never fired\n${why(name, s)}`);
  if (diets && repeats) assert.ok(dieted.some(l => l.strategies.split(',').includes('identical_tool_outputs')),
    `identical_tool_outputs never fired\n${why(name, s)}`);
  for (const model of new Set(main.map(l => l.model)))
    assert.equal(metricSum(s.samples, 'tokendiet_fail_open_total', {model}), 0, `/metrics: ${model} failed open`);
  const before = main.reduce((a, l) => a + (l.tokens_before || 0), 0), after = main.reduce((a, l) => a + (l.tokens_after || 0), 0);
  console.log(`${name}: ${main.length} main requests, ${dieted.length} dieted, input tokens ${before} -> ${after}` +
    ` (${(100 * (1 - after / before)).toFixed(1)} % cut); strategies: ${[...new Set(dieted.flatMap(l => l.strategies.split(',')))].join(',')}`);
}

const pct = (a, b) => `${a >= b ? '+' : ''}${(100 * (a / b - 1)).toFixed(1)} %`;
const billLine = (arm, b, m) => `  ${arm.padEnd(16)} ${String(b.requests).padStart(3)} requests (${m.requests} main)` +
  `  input ${String(b.input).padStart(8)}  cached ${String(b.cached).padStart(8)}  written ${String(b.creation).padStart(7)}` +
  `  output ${String(b.output).padStart(5)}  $${b.cost.toFixed(4)}  cache breaks ${b.cache_breaks} (main ${m.cache_breaks})`;

// A CLI's session direct and through tokendiet: both finish, no main request
// fails open, and the fake-billed cost with caching through tokendiet is not
// above direct (tests/fake_upstream/billing.mjs, every request of the session
// counted, the CLI's side calls included).
async function directAndThrough(name, makeScript, cli, opts = {}) {
  const direct = await session(`${name}-direct`, makeScript, cli, {through: false});
  checkFinished(`${name} direct`, direct);
  const through = await session(`${name}-tokendiet`, makeScript, cli, {through: true});
  checkFinished(`${name} through tokendiet`, through);
  checkThrough(name, through, opts);
  console.log(`${name} bill (fake, with prompt caching):\n${billLine('direct', direct.bill, direct.mainBill)}\n` +
    `${billLine('tokendiet', through.bill, through.mainBill)}\n  tokendiet vs direct: input ` +
    `${pct(through.bill.input, direct.bill.input)}, cost ${pct(through.bill.cost, direct.bill.cost)}`);
  if (opts.check) opts.check(direct, through);
  assert.ok(through.bill.cost <= direct.bill.cost, `${name}: the bill through tokendiet, $${through.bill.cost.toFixed(4)}, ` +
    `is above direct, $${direct.bill.cost.toFixed(4)}`);
}

test('Claude Code, direct and through tokendiet: the session finishes, no main request fails open, the bill is not above direct', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'claude')), 'Claude Code not installed: run tests/realcli/setup.sh');
  // The first read with Read, the repeats with Bash (Claude Code answers a
  // second Read of an unchanged file with a stub, not the file).
  await directAndThrough('claude', project => {
    const file = path.join(project, 'service.py');
    const bash = command => ({name: 'Bash', input: {command, description: 'Look at the service'}});
    return sessionScript({read: () => ({name: 'Read', input: {file_path: file}}), reread: () => bash('cat service.py'),
      edit: k => ({name: 'Edit', input: {file_path: file, ...editOf(k)}}), shell: bash});
  }, ({url, project, home}) => [[path.join(BIN, 'claude'), '-p', 'Mark the route docstrings in service.py as checked.',
    '--output-format', 'json', '--allowedTools', 'Read,Bash,Edit', '--max-turns', '60'], {cwd: project, env: {
    ...baseEnv(home), ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-realcli-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1', API_TIMEOUT_MS: '60000'}}]);
});

// Codex's edits are shell commands: this version defines no apply_patch tool.
const codexScript = () => {
  const shell = cmd => ({name: 'exec_command', input: {cmd}});
  return sessionScript({read: () => shell('cat service.py'), reread: () => shell('cat service.py'),
    edit: k => shell(`sed -i 's/${editOf(k).old_string}/${editOf(k).new_string}/' service.py`), shell});
};

// autoCompact: Codex's model_auto_compact_token_limit, or none.
const codexCli = autoCompact => ({url, project, home, dir}) => {
  const codexHome = path.join(dir, 'codex-home');
  fs.mkdirSync(codexHome);
  fs.writeFileSync(path.join(codexHome, 'config.toml'), [
    'model = "gpt-5.1-codex"', 'model_provider = "tokendiet"', 'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"', 'check_for_update_on_startup = false',
    // As the recorded Codex sessions truncate (outputs up to ~40 KB), not this
    // version's default for the model (~10 KB): service.py is printed whole.
    'tool_output_token_limit = 10000',
    ...(autoCompact ? [`model_auto_compact_token_limit = ${autoCompact}`] : []),
    '[analytics]', 'enabled = false',
    '[model_providers.tokendiet]', 'name = "tokendiet"', `base_url = "${url}/v1"`, 'wire_api = "responses"',
    'env_key = "REALCLI_OPENAI_KEY"', 'request_max_retries = 0', 'stream_max_retries = 0',
    'stream_idle_timeout_ms = 60000', ''].join('\n'));
  return [[path.join(BIN, 'codex'), 'exec', '--skip-git-repo-check', '--json', '-C', project,
    'Mark the route docstrings in service.py as checked.'], {cwd: project, env: {
    ...baseEnv(home), CODEX_HOME: codexHome, REALCLI_OPENAI_KEY: 'sk-realcli-test'}}];
};

test('Codex CLI, direct and through tokendiet: the session finishes, no main request fails open, the bill is not above direct', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'codex')), 'Codex CLI not installed: run tests/realcli/setup.sh');
  await directAndThrough('codex', codexScript, codexCli(null));
});

// Low enough that the direct session compacts (Codex reads the usage the
// answers report: the fake's input tokens, so through tokendiet the dieted ones).
// Measured (docs/benchmarks.md §The real agent CLIs): from 15,000 to 25,000
// both arms compact alike and the diet never fires; here the direct session
// compacts twice, the one through tokendiet stays under it.
const CODEX_AUTO_COMPACT_TOKENS = Number(process.env.REALCLI_CODEX_AUTO_COMPACT || 30_000);
const compactions = s => s.upstream.filter(r => /CONTEXT CHECKPOINT COMPACTION/.test(r.body.toString('utf8'))).length;

test('Codex CLI with its auto-compaction on, direct and through tokendiet: the bill is not above direct', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'codex')), 'Codex CLI not installed: run tests/realcli/setup.sh');
  await directAndThrough('codex-compact', codexScript, codexCli(CODEX_AUTO_COMPACT_TOKENS), {diets: false, check: (direct, through) => {
    console.log(`  compactions: direct ${compactions(direct)}, tokendiet ${compactions(through)}`);
    assert.ok(compactions(direct) >= 1, 'the direct session never compacted: lower CODEX_AUTO_COMPACT_TOKENS');
  }});
});

test('Gemini CLI, direct and through tokendiet: the session finishes, no main request fails open, the bill is not above direct', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'gemini')), 'Gemini CLI not installed: run tests/realcli/setup.sh');
  await directAndThrough('gemini', project => {
    const file = path.join(project, 'service.py');
    const shell = command => ({name: 'run_shell_command', input: {command}});
    return sessionScript({read: () => ({name: 'read_file', input: {file_path: file}}), reread: () => shell('cat service.py'),
      edit: k => ({name: 'replace', input: {file_path: file, instruction: `Mark route ${k} as checked.`, ...editOf(k)}}), shell});
  }, ({url, project, home}) => {
    // Its side calls (the model router) go to a lite model and get JSON its schema admits.
    fs.mkdirSync(path.join(home, '.gemini'));
    fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({
      privacy: {usageStatisticsEnabled: false}, telemetry: {enabled: false},
      general: {disableAutoUpdate: true, disableUpdateNag: true}, security: {auth: {selectedType: 'gemini-api-key'}}}));
    return [[path.join(BIN, 'gemini'), '-p', 'Mark the route docstrings in service.py as checked.', '--yolo', '--output-format', 'json'],
      {cwd: project, env: {...baseEnv(home), GEMINI_API_KEY: 'realcli-test-key', GOOGLE_GEMINI_BASE_URL: url,
        GEMINI_CLI_TRUST_WORKSPACE: 'true'}}];
  });
  // Gemini CLI 0.61 wraps a shell output in "<untrusted_context>\nOutput: ...
  // \nProcess Group PGID: <pid>\n</untrusted_context>": its repeats are found
  // under the default wrapper lines.
});
