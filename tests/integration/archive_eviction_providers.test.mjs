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

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const KEY = 'sk-archive-providers';
const RECALL = 'tokendiet_recall';
const TOMBSTONE = /tokendiet_recall can read it back/;
const idOf = tombstone => /as (td-[0-9a-f]{32})/.exec(tombstone)[1];

const output = (tag, bytes) => {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${tag} line ${i} of output\n`;
  return s.slice(0, bytes);
};

// The agent session every provider renders: the parser task's two outputs,
// the task marked completed in the provider's todo tool, then a dozen steps of
// the next task. Steps are [tool name, arguments object, result text].
function steps(todo) {
  const evicted = [output('parser-a', 4000), output('parser-b \u00e9\u2713', 4000)];
  const list = [
    ['bash', {command: 'ls'}, output('ls', 3000)],
    [todo.name, todo.args('in_progress', 'pending'), 'Todos have been modified successfully.'],
    ['bash', {command: 'cat parser.c'}, evicted[0]],
    ['bash', {command: 'make'}, evicted[1]],
    [todo.name, todo.args('completed', 'in_progress'), 'Todos have been modified successfully.'],
    ['bash', {command: 'make test'}, output('tests', 3000)]];
  for (let k = 0; k < 12; k++) list.push(['bash', {command: 'step'}, output(`t${k}`, 300)]);
  return {list, evicted};
}

const bashTool = {name: 'bash', description: 'Run a command', schema: {type: 'object', properties: {command: {type: 'string'}}}};
const GOAL = 'Fix the parser, then run the tests.';

// Per provider: the session's body, the request's path and key headers, the
// tool results and tools of what went upstream, the continuation's recall
// result, the text of the client's answer, and one more turn.
const PROVIDERS = {
  anthropic: {
    todo: {name: 'TodoWrite', args: (a, b) => ({todos: [{content: 'Fix the parser', status: a, activeForm: 'x'},
      {content: 'Run the tests', status: b, activeForm: 'y'}]})},
    upstreams: url => ({anthropic: url}),
    body(list, stream) {
      const messages = [{role: 'user', content: GOAL}];
      list.forEach(([name, input, result], n) => {
        messages.push({role: 'assistant', content: [{type: 'tool_use', id: `toolu_${n}`, name, input}]});
        messages.push({role: 'user', content: [{type: 'tool_result', tool_use_id: `toolu_${n}`, content: result}]});
      });
      return {model: 'claude-sonnet-4-5', max_tokens: 1024, system: 'You are an agent.', messages,
        tools: [{name: bashTool.name, description: bashTool.description, input_schema: bashTool.schema}], ...(stream ? {stream} : {})};
    },
    path: () => '/v1/messages',
    headers: {'x-api-key': KEY, 'anthropic-version': '2023-06-01'},
    history: b => b.messages,
    results: b => b.messages.flatMap(m => Array.isArray(m.content) ? m.content : [])
      .filter(c => c.type === 'tool_result').map(c => blockText(c.content)),
    offersRecall: b => b.tools.some(t => t.name === RECALL),
    continuation(b) {
      const last = b.messages.at(-1);
      const r = last.role === 'user' && Array.isArray(last.content) && last.content.find(c => c.type === 'tool_result');
      const call = b.messages.at(-2).content.find(c => c.type === 'tool_use' && c.name === RECALL);
      return {result: r ? blockText(r.content) : null, callId: call?.input?.id, linked: r?.tool_use_id === call?.id};
    },
    answer: j => j.content.filter(c => c.type === 'text').map(c => c.text).join(''),
    answerCalls: j => j.content.filter(c => c.type === 'tool_use').length,
    streamText: e => e.delta?.type === 'text_delta' ? e.delta.text : '',
    more: b => b.messages.push({role: 'assistant', content: 'The tests pass.'}, {role: 'user', content: 'Thanks.'}),
  },
  responses: {
    todo: {name: 'update_plan', args: (a, b) => ({plan: [{step: 'Fix the parser', status: a}, {step: 'Run the tests', status: b}]})},
    upstreams: url => ({openai: url}),
    body(list, stream) {
      const input = [{type: 'message', role: 'user', content: GOAL}];
      list.forEach(([name, args, result], n) => {
        input.push({type: 'function_call', call_id: `call_${n}`, name, arguments: JSON.stringify(args)});
        input.push({type: 'function_call_output', call_id: `call_${n}`, output: result});
      });
      return {model: 'gpt-5', instructions: 'You are an agent.', input,
        tools: [{type: 'function', name: bashTool.name, description: bashTool.description, parameters: bashTool.schema}], ...(stream ? {stream} : {})};
    },
    path: () => '/v1/responses',
    headers: {authorization: `Bearer ${KEY}`},
    history: b => b.input,
    results: b => b.input.filter(i => i.type === 'function_call_output').map(i => String(i.output)),
    offersRecall: b => b.tools.some(t => t.name === RECALL),
    continuation(b) {
      const last = b.input.at(-1);
      const call = b.input.findLast(i => i.type === 'function_call' && i.name === RECALL);
      return {result: last.type === 'function_call_output' ? String(last.output) : null,
        callId: call && JSON.parse(call.arguments).id, linked: last.call_id === call?.call_id};
    },
    answer: j => j.output.filter(o => o.type === 'message').flatMap(o => o.content).map(c => c.text ?? '').join(''),
    answerCalls: j => j.output.filter(o => o.type === 'function_call').length,
    streamText: e => e.type === 'response.output_text.delta' ? e.delta : '',
    more: b => b.input.push({type: 'message', role: 'assistant', content: 'The tests pass.'}, {type: 'message', role: 'user', content: 'Thanks.'}),
  },
  gemini: {
    todo: {name: 'write_todos', args: (a, b) => ({todos: [{description: 'Fix the parser', status: a},
      {description: 'Run the tests', status: b}]})},
    upstreams: url => ({gemini: url}),
    body(list) {
      const contents = [{role: 'user', parts: [{text: GOAL}]}];
      for (const [name, args, result] of list) {
        contents.push({role: 'model', parts: [{functionCall: {name, args}}]});
        contents.push({role: 'user', parts: [{functionResponse: {name, response: {output: result}}}]});
      }
      return {systemInstruction: {parts: [{text: 'You are an agent.'}]}, contents,
        tools: [{functionDeclarations: [{name: bashTool.name, description: bashTool.description, parameters: bashTool.schema}]}]};
    },
    // The key in the query for the streamed form, in x-goog-api-key otherwise.
    path: stream => stream ? `/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${KEY}`
      : '/v1beta/models/gemini-2.5-pro:generateContent',
    headers: {'x-goog-api-key': KEY},
    history: b => b.contents,
    results: b => b.contents.flatMap(c => c.parts).filter(p => p.functionResponse)
      .map(p => typeof p.functionResponse.response?.output === 'string' ? p.functionResponse.response.output : JSON.stringify(p.functionResponse.response)),
    offersRecall: b => b.tools.some(t => t.functionDeclarations?.some(f => f.name === RECALL)),
    continuation(b) {
      const part = b.contents.at(-1).parts.find(p => p.functionResponse);
      const call = b.contents.at(-2).parts.find(p => p.functionCall?.name === RECALL);
      const r = part?.functionResponse.response;
      return {result: part ? (typeof r?.output === 'string' ? r.output : JSON.stringify(r)) : null,
        callId: call?.functionCall.args.id, linked: part?.functionResponse.name === RECALL};
    },
    answer: j => j.candidates[0].content.parts.map(p => p.text ?? '').join(''),
    answerCalls: j => j.candidates[0].content.parts.filter(p => p.functionCall).length,
    streamText: e => (e.candidates?.[0]?.content?.parts ?? []).map(p => p.text ?? '').join(''),
    more: b => b.contents.push({role: 'model', parts: [{text: 'The tests pass.'}]}, {role: 'user', parts: [{text: 'Thanks.'}]}),
  },
};

function blockText(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');
}

// Only semantic mode acts, on a short session bet on as if it ran as long again.
const config = archivePath => `archive: {path: ${JSON.stringify(archivePath)}}
profiles:
  - name: semantic
    semantic_threshold: 2000
    trigger_tokens: 1000000000
    payback_turn_fraction: 1
    max_loss: 1
`;

const upstreamBody = req => JSON.parse(req.body.toString('utf8'));
const getEntry = (td, id, headers, query = '') =>
  rawRequest({port: td.port, path: `/v1/tokendiet/archive/${id}${query}`, headers});
const streamEvents = text => text.split('\n').filter(l => l.startsWith('data: {')).map(l => JSON.parse(l.slice(6)));

for (const [provider, p] of Object.entries(PROVIDERS)) {
  for (const stream of [false, true]) {
    const label = `${provider}${stream ? ', streamed' : ''}`;
    const send = (td, body, extra = {}) => post(td, p.path(stream), JSON.stringify(body), {...p.headers, ...extra});

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
          const r = await getEntry(td, id, p.headers);
          assert.equal(r.status, 200);
          assert.deepEqual(r.body, Buffer.from(evicted[i]));
          assert.equal((await getEntry(td, id, {...p.headers, ...Object.fromEntries(Object.keys(p.headers)
            .filter(k => k !== 'anthropic-version').map(k => [k, k === 'authorization' ? 'Bearer sk-other' : 'sk-other']))})).status, 404);
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
