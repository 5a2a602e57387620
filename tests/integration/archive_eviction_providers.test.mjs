// Semantic eviction and the recall loop through the real binary and the fake
// upstream for the other providers (docs/design.md §The archive), as
// archive_eviction.test.mjs checks them for OpenAI chat: Anthropic Messages
// (tool_use/tool_result, TodoWrite), OpenAI Responses (function_call/
// function_call_output, update_plan) and Gemini (functionCall/functionResponse,
// write_todos), streamed and not. For each: the completed task's outputs leave
// the request for tombstones, the recall tool is offered in the provider's
// shape, the archive entry read with the same key equals what was evicted, the
// next turn evicts the same bytes, and a recall of a tombstone is answered from
// the archive with one answer to the client and no trace of the call.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, tempDir, post, explain} from '../support/index.mjs';
import {PROVIDERS, steps, evictionConfig as config, TOMBSTONE, RECALL, idOf} from '../support/eviction_sessions.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const KEY = 'sk-archive-providers';

const upstreamBody = req => JSON.parse(req.body.toString('utf8'));
const getEntry = (td, id, headers, query = '') =>
  rawRequest({port: td.port, path: `/v1/tokendiet/archive/${id}${query}`, headers});
const streamEvents = text => text.split('\n').filter(l => l.startsWith('data: {')).map(l => JSON.parse(l.slice(6)));

for (const [provider, p] of Object.entries(PROVIDERS)) {
  for (const stream of [false, true]) {
    const label = `${provider}${stream ? ', streamed' : ''}`;
    const send = (td, body, extra = {}) => post(td, p.path(stream, KEY), JSON.stringify(body), {...p.headers(KEY), ...extra});

    test(`${label}: a completed task is evicted to the archive before the request goes; the next turn evicts identically`, async () => {
      const tmp = tempDir('td-archive-providers-');
      const td = await startTokendiet({upstreams: p.upstreams(fake.url), config: config(path.join(tmp.dir, 'archive'))});
      try {
        const {list, evicted} = steps(p.todo);
        const body = p.body(list, stream);
        fake.clear();
        const first = await send(td, body);
        assert.equal(first.status, 200, first.body.toString());
        assert.equal(explain(first.headers).mode, 'semantic');
        const sent = upstreamBody(fake.last());
        const results = p.results(sent);
        for (const text of evicted) assert.ok(!results.includes(text), 'the evicted output did not go upstream');
        for (const text of evicted)
          assert.ok(!JSON.stringify(sent).includes(JSON.stringify(text).slice(1, 200)), 'nor any part of it');
        assert.ok(p.offersRecall(sent), 'the recall tool is offered in the provider\'s shape');
        const tombstones = results.filter(r => TOMBSTONE.test(r));
        assert.equal(tombstones.length, 2);
        for (const [i, id] of tombstones.map(idOf).entries()) {
          const r = await getEntry(td, id, p.headers(KEY));
          assert.equal(r.status, 200);
          assert.deepEqual(r.body, Buffer.from(evicted[i]));
          assert.equal((await getEntry(td, id, p.headers('sk-archive-other'))).status, 404);
          if (provider === 'gemini') {
            const q = await getEntry(td, id, {}, `?key=${KEY}`);
            assert.equal(q.status, 200);
            assert.deepEqual(q.body, Buffer.from(evicted[i]));
          }
        }

        // The next turn: the same history and one more exchange evicts the same bytes.
        p.more(body);
        assert.equal((await send(td, body)).status, 200);
        assert.deepEqual(p.history(upstreamBody(fake.last())).slice(0, -2), p.history(sent));
      } finally {
        await td.stop();
        tmp.cleanup();
      }
    });

    test(`${label}: a tombstone read back: the recall call answered from the archive, one answer to the client`, async () => {
      const tmp = tempDir('td-archive-providers-recall-');
      const td = await startTokendiet({upstreams: p.upstreams(fake.url), config: config(path.join(tmp.dir, 'archive'))});
      try {
        const {list, evicted} = steps(p.todo);
        fake.clear();
        const r = await send(td, p.body(list, stream), {'x-fake-mode': 'recall'});
        assert.equal(r.status, 200, r.body.toString());
        assert.equal(explain(r.headers).mode, 'semantic');
        assert.equal(fake.requests.length, 2, 'the recall round and its continuation');
        const id = idOf(p.results(upstreamBody(fake.requests[0])).find(c => TOMBSTONE.test(c)));
        // The continuation carries the archived text as the recall's result.
        const c = p.continuation(upstreamBody(fake.requests[1]));
        assert.equal(c.result, evicted[0]);
        assert.equal(c.callId, id);
        assert.ok(c.linked, 'the result answers the recall call');
        const text = r.body.toString('utf8');
        assert.ok(!text.includes(RECALL), 'no trace of the recall call');
        const answer = stream ? streamEvents(text).map(p.streamText).join('') : p.answer(JSON.parse(text));
        assert.ok(answer.includes(`Recalled: ${evicted[0].slice(0, 200)}`), answer.slice(0, 300));
        if (!stream) assert.equal(p.answerCalls(JSON.parse(text)), 0);
      } finally {
        await td.stop();
        tmp.cleanup();
      }
    });
  }
}
