// `tokendiet count` (F5): the plain, --jsonl and --request forms, and their
// exit codes. Reference counts are tiktoken's (tests/fixtures/tokenizer).
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {tokendietBin, tempDir, SOURCE_DIR} from '../support/index.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');

const count = (args, input) =>
  spawnSync(tokendietBin(), ['count', ...args], {input, encoding: 'utf8', timeout: 60_000});

const cases = fs.readFileSync(path.join(SOURCE_DIR, 'tests/fixtures/tokenizer/cases.jsonl'), 'utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('count prints only the integer, from stdin, - or a FILE', () => {
  const text = cases.find((c) => c.tag === 'prose');
  for (const enc of ['o200k_base', 'cl100k_base']) {
    const r = count(['--encoding', enc], text.text);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${text[enc]}\n`);
    assert.equal(count(['--encoding', enc, '-'], text.text).stdout, `${text[enc]}\n`);
  }
  const {dir, cleanup} = tempDir('td-count-');
  try {
    const file = path.join(dir, 'in.txt');
    fs.writeFileSync(file, 'hello world');
    assert.equal(count([file]).stdout, '2\n');
    assert.equal(count(['--encoding', 'estimate', file]).stdout, '3\n');  // ceil(11/4)
    assert.equal(count([path.join(dir, 'missing')]).status, 1);
  } finally { cleanup(); }
});

test('--jsonl prints one count per line, equal to tiktoken on every case', () => {
  const input = cases.map((c) => JSON.stringify({text: c.text})).join('\n') + '\n';
  for (const enc of ['o200k_base', 'cl100k_base']) {
    const r = count(['--encoding', enc, '--jsonl'], input);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').map(Number), cases.map((c) => c[enc]));
  }
  assert.equal(count(['--jsonl'], 'not json\n').status, 1);
});

test('--request: the billed total and a per-message breakdown', () => {
  const {dir, cleanup} = tempDir('td-count-');
  try {
    const file = path.join(dir, 'req.json');
    fs.writeFileSync(file, JSON.stringify({
      model: 'gpt-4o',
      messages: [
        {role: 'system', content: 'You are terse.'},
        {role: 'user', name: 'ann', content: [{type: 'text', text: 'List the files.'}]},
        {role: 'assistant', content: null,
         tool_calls: [{id: 'c1', type: 'function', function: {name: 'ls', arguments: '{"dir":"."}'}}]},
        {role: 'tool', tool_call_id: 'c1', content: 'a.txt\nb.txt'},
      ],
      tools: [{type: 'function', function: {name: 'ls', description: 'List a directory',
        parameters: {type: 'object', properties: {dir: {type: 'string'}}, required: ['dir']}}}],
    }));
    const r = count(['--request', file, '--json']);
    assert.equal(r.status, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.encoding, 'o200k_base');
    assert.equal(j.exact, true);
    assert.equal(j.messages.length, 4);
    assert.deepEqual(j.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool']);
    // system: 3 + "system" + "You are terse." (4)
    assert.equal(j.messages[0].tokens, 3 + 1 + 4);
    assert.equal(j.priming, 3);
    assert.ok(j.tools > 9);
    assert.equal(j.total, j.messages.reduce((a, m) => a + m.tokens, 0) + j.tools + j.priming);
    const text = count(['--request', file]);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^total ${j.total} `));
    // Models without a local tokenizer are estimated.
    fs.writeFileSync(file, JSON.stringify({model: 'claude-sonnet-4-5', messages: [{role: 'user', content: 'hi'}]}));
    const est = JSON.parse(count(['--request', file, '--json']).stdout);
    assert.equal(est.exact, false);
    assert.equal(est.encoding, 'estimate');
    fs.writeFileSync(file, '{"messages": 5}');
    assert.equal(count(['--request', file]).status, 1);
    // Other wire formats through their adapters (estimated: no local tokenizer).
    fs.writeFileSync(file, JSON.stringify({model: 'claude-sonnet-4-5', system: 'Be terse.',
      messages: [{role: 'user', content: [{type: 'text', text: 'hello there'}]}]}));
    const anth = JSON.parse(count(['--request', file, '--format', 'anthropic', '--json']).stdout);
    assert.deepEqual(anth.messages.map((m) => m.role), ['system', 'user']);
    assert.equal(anth.exact, false);
    fs.writeFileSync(file, JSON.stringify({contents: [{role: 'user', parts: [{text: 'hello there'}]}]}));
    const gem = JSON.parse(count(['--request', file, '--format', 'gemini', '--model', 'gpt-4o', '--json']).stdout);
    assert.equal(gem.encoding, 'o200k_base');  // --model picks the counter
    assert.equal(gem.messages.length, 1);
    assert.equal(count(['--request', file, '--format', 'bogus']).status, 2);
  } finally { cleanup(); }
});

test('--request without --format: the format is detected, and a count is exact only where a tokenizer is known', () => {
  const {dir, cleanup} = tempDir('td-count-');
  try {
    const file = path.join(dir, 'req.json');
    const counted = body => {
      fs.writeFileSync(file, JSON.stringify(body));
      const r = count(['--request', file, '--json']);
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    // Claude Code's recorded request: read as Anthropic, its tool blocks and tools counted.
    const recorded = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'providers', 'anthropic-claude-code-recorded.json'), 'utf8'));
    const anth = counted(recorded);
    assert.equal(anth.format, 'anthropic');
    assert.equal(anth.exact, false);
    const forced = JSON.parse(count(['--request', file, '--format', 'anthropic', '--json']).stdout);
    assert.equal(anth.total, forced.total);
    assert.equal(anth.messages[0].role, 'system');  // the top-level system prompt, as Anthropic bills it
    // Gemini names its model in the URL: without --model the count is an estimate, not o200k.
    const gem = counted({contents: [{role: 'user', parts: [{text: 'hello there'}]}]});
    assert.equal(gem.format, 'gemini');
    assert.equal(gem.encoding, 'estimate');
    assert.equal(gem.exact, false);
    const text = count(['--request', file]);
    assert.match(text.stdout, /^total \d+ {2}\(gemini, estimate, estimate\)/);
    // Responses and chat.
    assert.equal(counted({model: 'gpt-4o', input: [{role: 'user', content: 'hi'}]}).format, 'openai_responses');
    const chat = counted({model: 'gpt-4o', messages: [{role: 'system', content: 'x'}, {role: 'user', content: 'hi'}]});
    assert.equal(chat.format, 'openai_chat');
    assert.equal(chat.exact, true);
    // Not a chat body: refused, naming why.
    fs.writeFileSync(file, '{"prompt": "hi"}');
    const refused = count(['--request', file]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /not a chat request body \(pass --format\)/);
  } finally { cleanup(); }
});

test('usage errors exit 2; --help exits 0', () => {
  assert.equal(count(['--encoding', 'p50k_base']).status, 2);
  assert.equal(count(['--bogus']).status, 2);
  assert.equal(count(['--json']).status, 2);
  const help = count(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--request/);
});
