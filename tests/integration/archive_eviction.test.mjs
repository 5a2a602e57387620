// Semantic eviction through the real binary and the fake upstream (docs/design.md
// §The archive): a completed task's outputs leave the request for the archive
// before it goes upstream, the archive entry equals what was evicted byte for
// byte, the tombstone is what went upstream, the next turn evicts the same
// bytes, an entry the proxy referenced survives kill -9, another API key gets
// 404, a recall of a tombstone is answered from the archive, and an archive
// that cannot be written leaves the request unpruned and counted.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {createHash} from 'node:crypto';
import {startFakeUpstream, startTokendiet, rawRequest, tempDir, post, logLineOf, explain,
  metricSamples, metricSum} from '../support/index.mjs';
import {output, evictionConfig as config, TOMBSTONE} from '../support/eviction_sessions.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const KEY = 'sk-archive-eviction';
const OTHER = 'sk-archive-other';
const fingerprint = key => createHash('sha256').update(key).digest('hex').slice(0, 16);

const todos = (first, second) => JSON.stringify({todos: [
  {content: 'Fix the parser', status: first, activeForm: 'x'},
  {content: 'Run the tests', status: second, activeForm: 'y'}]});

// An agent session in OpenAI chat: the parser task's two outputs, the task
// marked completed (TodoWrite), then a dozen steps of the next task.
function session() {
  const messages = [{role: 'system', content: 'You are an agent.'},
    {role: 'user', content: 'Fix the parser, then run the tests.'}];
  let n = 0;
  const step = (name, args, result) => {
    const id = `call_${n++}`;
    messages.push({role: 'assistant', content: null,
      tool_calls: [{id, type: 'function', function: {name, arguments: args}}]});
    messages.push({role: 'tool', tool_call_id: id, content: result});
  };
  step('bash', '{"command":"ls"}', output('ls', 3000));
  step('TodoWrite', todos('in_progress', 'pending'), 'Todos have been modified successfully.');
  const evicted = [output('parser-a', 4000), output('parser-b \u00e9\u2713', 4000)];
  step('bash', '{"command":"cat parser.c"}', evicted[0]);
  step('bash', '{"command":"make"}', evicted[1]);
  step('TodoWrite', todos('completed', 'in_progress'), 'Todos have been modified successfully.');
  step('bash', '{"command":"make test"}', output('tests', 3000));
  for (let k = 0; k < 12; k++) step('bash', '{"command":"step"}', output(`t${k}`, 300));
  return {body: JSON.stringify({model: 'gpt-4o', messages}), evicted};
}

const chat = (td, body, key = KEY) => post(td, '/v1/chat/completions', body, {authorization: `Bearer ${key}`});
const getEntry = (td, id, key) =>
  rawRequest({port: td.port, path: `/v1/tokendiet/archive/${id}`, headers: {authorization: `Bearer ${key}`}});
const upstreamText = req => req.body.toString('utf8');
const toolContents = req => JSON.parse(upstreamText(req)).messages.filter(m => m.role === 'tool').map(m => m.content);

test('a completed task is evicted to the archive before the request goes; the next turn evicts identically', async () => {
  const tmp = tempDir('td-archive-evict-');
  const dir = path.join(tmp.dir, 'archive');
  let td = await startTokendiet({upstreams: {openai: fake.url}, config: config(dir)});
  try {
    const {body, evicted} = session();
    fake.clear();
    const first = await chat(td, body);
    assert.equal(first.status, 200);
    assert.equal(explain(first.headers).mode, 'semantic');
    const sent = fake.last();
    const contents = toolContents(sent);
    for (const text of evicted) assert.ok(!contents.includes(text), 'the evicted output did not go upstream');
    for (const text of evicted)
      assert.ok(!upstreamText(sent).includes(JSON.stringify(text).slice(1, 200)), 'nor any part of it');
    assert.ok(JSON.parse(upstreamText(sent)).tools.some(t => t.function?.name === 'tokendiet_recall'));
    const tombstones = contents.filter(c => TOMBSTONE.test(c));
    assert.equal(tombstones.length, 2);
    const ids = tombstones.map(t => /as (td-[0-9a-f]{32})/.exec(t)[1]);

    // The archive entry is what the tombstone replaced, byte for byte, on
    // disk in a private file and through the API with the same key.
    for (const [i, id] of ids.entries()) {
      const file = path.join(dir, fingerprint(KEY), id);
      assert.equal(fs.readFileSync(file, 'utf8'), evicted[i]);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const r = await getEntry(td, id, KEY);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, Buffer.from(evicted[i]));
      assert.equal((await getEntry(td, id, OTHER)).status, 404);
    }
    assert.equal(fs.statSync(path.join(dir, fingerprint(KEY))).mode & 0o777, 0o700);
    const line = await logLineOf(td, explain(first.headers)['request-id']);
    assert.deepEqual(line.evicted_tasks, ['Fix the parser']);

    // The next turn: the same history and one more step evicts the same bytes.
    const next = JSON.parse(body);
    next.messages.push({role: 'assistant', content: 'The tests pass.'}, {role: 'user', content: 'Thanks.'});
    assert.equal((await chat(td, JSON.stringify(next))).status, 200);
    const again = JSON.parse(upstreamText(fake.last()));
    assert.deepEqual(again.messages.slice(0, -2), JSON.parse(upstreamText(sent)).messages);

    // kill -9: every entry a request referenced is on disk, and a restarted
    // proxy serves it.
    td.proc.kill('SIGKILL');
    await td.exit;
    for (const [i, id] of ids.entries())
      assert.equal(fs.readFileSync(path.join(dir, fingerprint(KEY), id), 'utf8'), evicted[i]);
    td = await startTokendiet({upstreams: {openai: fake.url}, config: config(dir)});
    const r = await getEntry(td, ids[0], KEY);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, Buffer.from(evicted[0]));
  } finally {
    await td.stop();
    tmp.cleanup();
  }
});

// The whole loop through the real binary: the task evicted, the model (the
// fake's recall mode) calls tokendiet_recall on a tombstone's id, the proxy
// answers it from the archive and continues upstream, and the client gets one
// answer with the archived text used and no trace of the call, streamed or not.
test('a tombstone read back: the recall call answered from the archive, one answer to the client', async () => {
  const tmp = tempDir('td-archive-recall-');
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: config(path.join(tmp.dir, 'archive'))});
  try {
    const {body, evicted} = session();
    for (const stream of [false, true]) {
      fake.clear();
      const sent = JSON.parse(body);
      if (stream) sent.stream = true;
      const r = await post(td, '/v1/chat/completions', JSON.stringify(sent),
        {authorization: `Bearer ${KEY}`, 'x-fake-mode': 'recall'});
      assert.equal(r.status, 200, r.body.toString());
      assert.equal(fake.requests.length, 2, 'the recall round and its continuation');
      const id = /as (td-[0-9a-f]{32})/.exec(toolContents(fake.requests[0]).find(c => TOMBSTONE.test(c)))[1];
      // The continuation carries the archived text as the recall's result.
      const continued = JSON.parse(upstreamText(fake.requests[1])).messages;
      assert.equal(continued.at(-1).role, 'tool');
      assert.equal(continued.at(-1).content, evicted[0]);
      assert.ok(continued.at(-2).tool_calls.some(c => c.function.name === 'tokendiet_recall' &&
        JSON.parse(c.function.arguments).id === id));
      const text = r.body.toString('utf8');
      assert.ok(!text.includes('tokendiet_recall'), 'no trace of the recall call');
      if (stream) {
        assert.equal(text.split('data: [DONE]').length - 1, 1);
        const content = text.split('\n').filter(l => l.startsWith('data: {'))
          .map(l => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '').join('');
        assert.ok(content.includes(`Recalled: ${evicted[0].slice(0, 200)}`));
      } else {
        const answer = JSON.parse(text);
        assert.ok(answer.choices[0].message.content.includes(`Recalled: ${evicted[0].slice(0, 200)}`));
        assert.equal(answer.choices[0].message.tool_calls, undefined);
      }
    }
  } finally {
    await td.stop();
    tmp.cleanup();
  }
});

test('an archive that cannot be written: the request goes unpruned of those outputs, logged and counted', async () => {
  const tmp = tempDir('td-archive-ro-');
  fs.writeFileSync(path.join(tmp.dir, 'file'), 'x');
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: config(path.join(tmp.dir, 'file', 'archive'))});
  try {
    const {body, evicted} = session();
    fake.clear();
    const r = await chat(td, body);
    assert.equal(r.status, 200);
    const contents = toolContents(fake.last());
    for (const text of evicted) assert.ok(contents.includes(text), 'the output went upstream as it was');
    assert.ok(!contents.some(c => TOMBSTONE.test(c)));
    assert.equal(JSON.parse(upstreamText(fake.last())).tools, undefined);  // no recall tool either
    const line = await logLineOf(td, explain(r.headers)['request-id']);
    assert.match(line.archive_error, /file/);
    assert.equal(line.evicted_tasks, undefined);
    assert.equal(metricSum(await metricSamples(td), 'tokendiet_archive_failures_total'), 1);
  } finally {
    await td.stop();
    tmp.cleanup();
  }
});
