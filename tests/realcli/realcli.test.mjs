// The optional real-CLI suite (ctest label `realcli`, `scripts/test.sh
// --realcli`): the agent CLIs users run (Claude Code, Codex CLI, Gemini CLI),
// installed from npm at the versions pinned in tests/realcli/package-lock.json
// (tests/realcli/setup.sh), each driven non-interactively through `tokendiet
// serve` against the fake upstream in its scripted mode
// (tests/fake_upstream/script.mjs). The script has the CLI read the same file
// several times and run small commands for a dozen turns, so its history
// grows the way a working session's does, then answer. The CLIs run the tools
// themselves, in a temp project, so every request body is the CLI's own.
// Checked per CLI: the session finishes; no main request (not count_tokens,
// not a small model's side call) fails open or is refused; the diet fires on
// some of them under the default profile, `identical_tool_outputs` among its
// strategies; /metrics agrees.
//
// Nothing leaves 127.0.0.1: each CLI gets a fresh HOME (and CODEX_HOME), an
// environment built from scratch, telemetry, update checks and nonessential
// traffic off, and a timeout (REALCLI_TIMEOUT_MS, 240 s) after which its
// process group is killed. REALCLI_RECORD_DIR=DIR keeps the bodies the fake
// received.
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

// A file worth reading three times: 110 small handlers, about 20 KB (Claude Code
// keeps a Bash output over 30,000 characters in a file and sends a preview).
function serviceSource() {
  const out = [];
  for (let k = 0; k < 110; k++)
    out.push(`def handler_${k}(request, context=None):`,
      `    """Handles route number ${k} of the settings service."""`,
      `    return context.render("template_${k}.html", value=request.args.get("v${k}"))`, '');
  return out.join('\n') + '\n';
}

// The script: `reads` reads of service.py (`read(i)` the i-th tool call),
// then `steps` small commands (`cmd(text)`), then the final answer; every
// turn thinks first (signed thinking the CLI must send back as it came).
function sessionScript(read, cmd, {reads = 3, steps = 12} = {}) {
  const turns = [];
  const thinking = i => `Turn ${i}: the user wants a summary of service.py, so I look at it again before answering.`;
  for (let i = 0; i < reads; i++)
    turns.push({thinking: thinking(i), text: i === 0 ? 'Reading the service.' : '', tool_calls: [read(i)]});
  for (let i = 0; i < steps; i++) turns.push({thinking: thinking(reads + i), tool_calls: [cmd(`echo step ${i}; wc -l service.py`)]});
  turns.push({thinking: thinking(reads + steps), text: `service.py defines 110 handlers. ${DONE}`});
  return {turns, side: {text: 'Scripted session'}};
}

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

// One session: the fake with the script `makeScript(project)`, tokendiet in
// front of it, the CLI `cli({url, project, home, dir})` through tokendiet.
// Returns what each side saw.
async function session(name, makeScript, cli) {
  const tmp = tempDir(`td-realcli-${name}-`);
  const project = path.join(tmp.dir, 'project'), home = path.join(tmp.dir, 'home');
  fs.mkdirSync(project);
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(project, 'service.py'), serviceSource());
  const script = makeScript(project);
  const fake = await startFakeUpstream({script});
  const td = await startTokendiet({upstreams: {anthropic: fake.url, openai: fake.url, gemini: fake.url}});
  try {
    const run = await runCli(...cli({url: td.url, project, home, dir: tmp.dir}));
    const samples = await metricSamples(td);
    // The bodies as tokendiet sent them, one file per request.
    if (process.env.REALCLI_RECORD_DIR) {
      fs.mkdirSync(process.env.REALCLI_RECORD_DIR, {recursive: true});
      fake.requests.forEach((r, i) => fs.writeFileSync(
        path.join(process.env.REALCLI_RECORD_DIR, `${name}-${String(i).padStart(2, '0')}.json`), r.body));
    }
    await td.stop();
    const lines = td.lines.filter(l => l.startsWith('{')).map(l => JSON.parse(l)).filter(l => l.event === 'request');
    return {script, run, lines, samples, upstream: fake.requests};
  } finally {
    await td.stop();
    await fake.close();
    tmp.cleanup();
  }
}

// A main request: a chat turn of the session's model, not a token count or a
// small model's side call.
const isMain = l => /^\/v1\/(messages|responses)(\?|$)|:(stream)?generateContent(\?|$)/i.test(l.path) &&
  !/(^|[-_.])(haiku|mini|nano|lite)([-_.]|$)/.test(l.model || '');

// repeats: whether identical_tool_outputs must be among the strategies that fired.
function checkSession(name, s, {repeats = true} = {}) {
  const script = s.script;
  const why = () => `${name} stdout:\n${s.run.stdout.slice(-3000)}\nstderr:\n${s.run.stderr.slice(-3000)}\n` +
    `tokendiet:\n${s.lines.map(l => JSON.stringify(l)).join('\n')}`;
  assert.equal(s.run.timedOut, false, `${name} timed out\n${why()}`);
  assert.equal(s.run.code, 0, why());
  assert.match(s.run.stdout, new RegExp(DONE), why());
  // The whole script was played: the last turn was asked for, through tokendiet.
  const last = script.turns.length - 1;
  assert.ok(s.upstream.some(r => r.scriptTurn === last), `the fake never reached turn ${last}\n${why()}`);
  // The newest turn's thinking went back upstream, its signature as the fake made it.
  const lastBody = s.upstream.filter(r => r.scriptTurn === last).at(-1).body.toString('utf8');
  assert.ok(lastBody.includes(turnSignature(last - 1)), `turn ${last - 1}'s signature did not reach the upstream\n${why()}`);
  const main = s.lines.filter(isMain);
  assert.ok(main.length >= script.turns.length, `${main.length} main requests for ${script.turns.length} turns\n${why()}`);
  const failed = main.filter(l => l.fail_open || l.status !== 200);
  assert.deepEqual(failed.map(l => `${l.path} ${l.status} ${l.fail_open_reason ?? ''}`), [], why());
  const dieted = main.filter(l => l.strategies && l.tokens_after < l.tokens_before);
  assert.ok(dieted.length > 0, `the diet never fired\n${why()}`);
  if (repeats) assert.ok(dieted.some(l => l.strategies.split(',').includes('identical_tool_outputs')),
    `identical_tool_outputs never fired\n${why()}`);
  for (const model of new Set(main.map(l => l.model)))
    assert.equal(metricSum(s.samples, 'tokendiet_fail_open_total', {model}), 0, `/metrics: ${model} failed open`);
  const before = main.reduce((a, l) => a + (l.tokens_before || 0), 0), after = main.reduce((a, l) => a + (l.tokens_after || 0), 0);
  console.log(`${name}: ${main.length} main requests, ${dieted.length} dieted, input tokens ${before} -> ${after}` +
    ` (${(100 * (1 - after / before)).toFixed(1)} % cut); strategies: ${[...new Set(dieted.flatMap(l => l.strategies.split(',')))].join(',')}`);
}

test('Claude Code through tokendiet: no main request fails open, the diet fires', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'claude')), 'Claude Code not installed: run tests/realcli/setup.sh');
  // The first read with Read; the repeats with Bash (Claude Code answers a
  // second Read of an unchanged file with a stub, not the file).
  const s = await session('claude', project => sessionScript(
    i => i === 0 ? {name: 'Read', input: {file_path: path.join(project, 'service.py')}}
      : {name: 'Bash', input: {command: 'cat service.py', description: 'Print the service'}},
    command => ({name: 'Bash', input: {command, description: 'Count the lines'}})),
  ({url, project, home}) => [[path.join(BIN, 'claude'), '-p', 'Summarize service.py.', '--output-format', 'json',
    '--allowedTools', 'Read,Bash', '--max-turns', '40'], {cwd: project, env: {
    ...baseEnv(home), ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-realcli-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1', API_TIMEOUT_MS: '60000'}}]);
  checkSession('claude', s);
});

test('Codex CLI through tokendiet: no main request fails open, the diet fires', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'codex')), 'Codex CLI not installed: run tests/realcli/setup.sh');
  const shell = cmd => ({name: 'exec_command', input: {cmd}});
  const s = await session('codex', () => sessionScript(() => shell('cat service.py'), shell), ({url, project, home, dir}) => {
    const codexHome = path.join(dir, 'codex-home');
    fs.mkdirSync(codexHome);
    fs.writeFileSync(path.join(codexHome, 'config.toml'), [
      'model = "gpt-5.1-codex"', 'model_provider = "tokendiet"', 'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"', 'check_for_update_on_startup = false',
      '[analytics]', 'enabled = false',
      '[model_providers.tokendiet]', 'name = "tokendiet"', `base_url = "${url}/v1"`, 'wire_api = "responses"',
      'env_key = "REALCLI_OPENAI_KEY"', 'request_max_retries = 0', 'stream_max_retries = 0',
      'stream_idle_timeout_ms = 60000', ''].join('\n'));
    return [[path.join(BIN, 'codex'), 'exec', '--skip-git-repo-check', '--json', '-C', project,
      'Summarize service.py.'], {cwd: project, env: {
      ...baseEnv(home), CODEX_HOME: codexHome, REALCLI_OPENAI_KEY: 'sk-realcli-test'}}];
  });
  checkSession('codex', s);
});

test('Gemini CLI through tokendiet: no main request fails open, the diet fires', async () => {
  assert.ok(fs.existsSync(path.join(BIN, 'gemini')), 'Gemini CLI not installed: run tests/realcli/setup.sh');
  const s = await session('gemini', project => sessionScript(
    i => i === 0 ? {name: 'read_file', input: {file_path: path.join(project, 'service.py')}}
      : {name: 'run_shell_command', input: {command: 'cat service.py'}},
    command => ({name: 'run_shell_command', input: {command}})),
  ({url, project, home}) => {
    // Its side calls (the model router) go to a lite model and get JSON its schema admits.
    fs.mkdirSync(path.join(home, '.gemini'));
    fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({
      privacy: {usageStatisticsEnabled: false}, telemetry: {enabled: false},
      general: {disableAutoUpdate: true, disableUpdateNag: true}, security: {auth: {selectedType: 'gemini-api-key'}}}));
    return [[path.join(BIN, 'gemini'), '-p', 'Summarize service.py.', '--yolo', '--output-format', 'json'],
      {cwd: project, env: {...baseEnv(home), GEMINI_API_KEY: 'realcli-test-key', GOOGLE_GEMINI_BASE_URL: url,
        GEMINI_CLI_TRUST_WORKSPACE: 'true'}}];
  });
  // Gemini CLI 0.61 wraps a shell output in "<untrusted_context>\nOutput: ...
  // \nProcess Group PGID: <pid>\n</untrusted_context>": its repeats are found
  // under the default wrapper lines.
  checkSession('gemini', s);
});
