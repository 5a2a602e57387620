// Who a client is, through the real binary (docs/design.md §Client identity
// and §Policy): every credential form a provider takes
// identifies the client; a request with none is an anonymous client. An
// anonymous client's evicted outputs are archived (and recalled from the
// request's memory) but never readable through GET /v1/tokendiet/archive/<id>;
// Azure's `api-key:` reads back only its own entries; two anonymous
// conversations draw on two runways unless the profile's anonymous_clients is
// shared.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, tempDir, post, explain, quotaConfig}
  from '../support/index.mjs';
import {output, evictionConfig, TOMBSTONE, idOf} from '../support/eviction_sessions.mjs';

// `fake` answers the archive tests; `quotaFake` keeps the providers' quota, so
// a request's bill is what it sent (bytes / 4) and the runway stays what the
// requests took.
let fake, quotaFake;
before(async () => {
  fake = await startFakeUpstream();
  quotaFake = await startFakeUpstream({quota: {tpm: 20000, windowMs: 60000}});
});
after(async () => { await fake.close(); await quotaFake.close(); });

const CHAT = '/v1/chat/completions';

const todos = (first, second) => JSON.stringify({todos: [
  {content: 'Fix the parser', status: first, activeForm: 'x'},
  {content: 'Run the tests', status: second, activeForm: 'y'}]});

// An OpenAI chat agent session that completes a task (its two outputs are
// evicted under the eviction profile), then works on the next one. `tag`
// makes the outputs, and so the archive ids, the session's own.
function session(tag) {
  const messages = [{role: 'system', content: 'You are an agent.'},
    {role: 'user', content: `Fix the parser, then run the tests (${tag}).`}];
  let n = 0;
  const step = (name, args, result) => {
    const id = `call_${n++}`;
    messages.push({role: 'assistant', content: null,
      tool_calls: [{id, type: 'function', function: {name, arguments: args}}]});
    messages.push({role: 'tool', tool_call_id: id, content: result});
  };
  step('bash', '{"command":"ls"}', output('ls', 3000));
  step('TodoWrite', todos('in_progress', 'pending'), 'Todos have been modified successfully.');
  const evicted = [output(`${tag}-parser-a`, 4000), output(`${tag}-parser-b`, 4000)];
  step('bash', '{"command":"cat parser.c"}', evicted[0]);
  step('bash', '{"command":"make"}', evicted[1]);
  step('TodoWrite', todos('completed', 'in_progress'), 'Todos have been modified successfully.');
  step('bash', '{"command":"make test"}', output('tests', 3000));
  for (let k = 0; k < 12; k++) step('bash', '{"command":"step"}', output(`t${k}`, 300));
  return {body: JSON.stringify({model: 'gpt-4o', messages}), evicted};
}

const getEntry = (td, id, headers = {}, query = '') =>
  rawRequest({port: td.port, path: `/v1/tokendiet/archive/${id}${query}`, headers});
const toolContents = req => JSON.parse(req.body.toString('utf8')).messages.filter(m => m.role === 'tool').map(m => m.content);

// Sends the session with `headers`; the ids of the entries its tombstones name.
async function evict(td, body, headers) {
  fake.clear();
  const r = await post(td, CHAT, body, headers);
  assert.equal(r.status, 200, r.body.toString());
  assert.equal(explain(r.headers).mode, 'semantic');
  const ids = toolContents(fake.last()).filter(c => TOMBSTONE.test(c)).map(idOf);
  assert.equal(ids.length, 2);
  return ids;
}

test('an anonymous client\'s evicted outputs are archived and recalled, but no archive read reaches them', async () => {
  const tmp = tempDir('td-ident-anon-');
  const dir = path.join(tmp.dir, 'archive');
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: evictionConfig(dir)});
  try {
    const {body, evicted} = session('anon');
    const ids = await evict(td, body, {});
    for (const [i, id] of ids.entries()) {
      // Written, durable, in the anonymous namespace ...
      assert.equal(fs.readFileSync(path.join(dir, 'nokey', id), 'utf8'), evicted[i]);
      // ... and read by no request: without a key, with any key in any form.
      for (const headers of [{}, {'api-key': 'az-someone'}, {authorization: 'Bearer sk-someone'}, {authorization: 'Bearer'}]) {
        const r = await getEntry(td, id, headers);
        assert.equal(r.status, 404, `${JSON.stringify(headers)}: ${r.status}`);
        assert.equal(r.headers['x-tokendiet-error'], 'archive_entry_not_found');
        assert.ok(!r.body.toString('utf8').includes(evicted[i].slice(0, 100)));
      }
    }
    // The recall loop still reads them, from the request's own memory.
    fake.clear();
    const r = await post(td, CHAT, body, {'x-fake-mode': 'recall'});
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(fake.requests.length, 2, 'the recall round and its continuation');
    assert.equal(JSON.parse(fake.requests[1].body.toString('utf8')).messages.at(-1).content, evicted[0]);
  } finally {
    await td.stop();
    tmp.cleanup();
  }
});

test('Azure\'s api-key: header is a client: its own key reads its entries, another or none gets 404', async () => {
  const tmp = tempDir('td-ident-azure-');
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: evictionConfig(path.join(tmp.dir, 'archive'))});
  try {
    const {body, evicted} = session('azure');
    const ids = await evict(td, body, {'api-key': 'az-owner'});
    for (const [i, id] of ids.entries()) {
      const own = await getEntry(td, id, {'api-key': 'az-owner'});
      assert.equal(own.status, 200);
      assert.deepEqual(own.body, Buffer.from(evicted[i]));
      // The same secret in another form, the query's name percent-encoded: the same client.
      assert.equal((await getEntry(td, id, {}, '?k%65y=az-owner')).status, 200);
      assert.equal((await getEntry(td, id, {'api-key': 'az-other'})).status, 404);
      assert.equal((await getEntry(td, id, {})).status, 404);
      assert.equal((await getEntry(td, id, {}, '?KEY=az-other')).status, 404);
    }
  } finally {
    await td.stop();
    tmp.cleanup();
  }
});

// A conversation of about `tokens` tokens (the fake counts bytes / 4) whose
// first message names `task`: its own anchor, so its own conversation.
function conversation(task, tokens) {
  let text = `${task} `;
  for (let i = 0; text.length < tokens * 4 - 80; i++) text += `line ${i}: the quick brown fox jumps over the lazy dog. `;
  return JSON.stringify({model: 'deepseek-chat', messages: [{role: 'user', content: text}]});
}

// Anonymous conversation A takes ~10,000 of a 20,000-token runway, then
// conversation B (~1,000) says how much its runway has left.
async function runwayLeftForSecond(anonymous_clients, headersOf = () => ({})) {
  const keys = {tpm_limit: 20000, quota_window_ms: 60000, ...(anonymous_clients ? {anonymous_clients} : {})};
  const td = await startTokendiet({upstreams: {openai: quotaFake.url}, config: quotaConfig({name: 'quota', ...keys})});
  try {
    quotaFake.quota.clear();
    const a = await post(td, CHAT, conversation('Task A.', 10000), headersOf('A'));
    assert.equal(a.status, 200, a.body.toString());
    const b = await post(td, CHAT, conversation('Task B.', 1000), headersOf('B'));
    assert.equal(b.status, 200, b.body.toString());
    const left = Number(explain(b.headers)['runway-tokens']);
    assert.ok(Number.isFinite(left), JSON.stringify(explain(b.headers)));
    return left;
  } finally {
    await td.stop();
  }
}

test('two anonymous conversations draw on two runways; anonymous_clients: shared, on one', async () => {
  // Separate (the default): B's runway holds all but B's own ask.
  for (const mode of [undefined, 'separate']) {
    const left = await runwayLeftForSecond(mode);
    assert.ok(left > 17000, `${mode}: ${left} left: B drew on A's runway`);
  }
  // Each conversation named by x-tokendiet-session: the same.
  const named = await runwayLeftForSecond(undefined, c => ({'x-tokendiet-session': `conversation-${c}`}));
  assert.ok(named > 17000, `named sessions: ${named} left`);
  // Shared: one runway for every anonymous request, A's ask included.
  const shared = await runwayLeftForSecond('shared');
  assert.ok(shared < 14000, `shared: ${shared} left: B did not draw on A's runway`);
});
