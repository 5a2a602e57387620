// The fake upstream's scripted mode (tests/fake_upstream/script.mjs), which the
// realcli suite drives agent CLIs with: the turn a request's history reached,
// in each wire format, streamed or not, decoded back here the way clients do.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {startFakeUpstream, startFakeProcess, rawRequest, sseData, tempDir} from '../support/index.mjs';
import fs from 'node:fs';
import path from 'node:path';

const SCRIPT = {
  turns: [
    {thinking: 'Look first.', text: 'Reading.', tool_calls: [{name: ['exec_command', 'shell'], input: {cmd: 'cat a.py'}}]},
    {tool_calls: [{name: 'shell', input: {cmd: 'ls'}}, {name: 'shell', input: {cmd: 'pwd'}}]},
    {text: 'All done.'},
  ],
  side: {text: 'A title'},
};

let fake;
before(async () => { fake = await startFakeUpstream({script: SCRIPT}); });
after(async () => { await fake.close(); });

const post = (p, body, headers = {}) => rawRequest({port: fake.port, method: 'POST', path: p,
  headers: {'content-type': 'application/json', ...headers}, body: JSON.stringify(body)});

// {text, calls: [{name, input}], stop, thinking, signature} from each format's answer, streamed or not.
const DECODE = {
  anthropic(body, stream) {
    let blocks = [], stop = null;
    if (!stream) { const j = JSON.parse(body); blocks = j.content; stop = j.stop_reason; }
    else for (const d of sseData(body).map(x => JSON.parse(x))) {
      if (d.type === 'content_block_start') blocks[d.index] = {...d.content_block, json: ''};
      if (d.delta?.type === 'text_delta') blocks[d.index].text += d.delta.text;
      if (d.delta?.type === 'input_json_delta') blocks[d.index].json += d.delta.partial_json;
      if (d.delta?.type === 'thinking_delta') blocks[d.index].thinking += d.delta.thinking;
      if (d.delta?.type === 'signature_delta') blocks[d.index].signature += d.delta.signature;
      if (d.type === 'message_delta') stop = d.delta.stop_reason;
    }
    const thinking = blocks.find(b => b.type === 'thinking');
    return {text: blocks.filter(b => b.type === 'text').map(b => b.text).join(''), stop,
      thinking: thinking?.thinking ?? '', signature: thinking?.signature,
      calls: blocks.filter(b => b.type === 'tool_use').map(b => ({name: b.name, input: b.json ? JSON.parse(b.json) : b.input}))};
  },
  responses(body, stream) {
    let j = stream ? null : JSON.parse(body);
    if (stream) {
      const events = sseData(body).map(x => JSON.parse(x));
      assert.deepEqual(events.map(e => e.sequence_number), events.map((_, i) => i));
      j = events.find(e => e.type === 'response.completed').response;
      const streamed = events.filter(e => e.type === 'response.output_text.delta').map(e => e.delta).join('');
      assert.equal(streamed, j.output.filter(i => i.type === 'message').map(i => i.content[0].text).join(''));
    }
    const reasoning = j.output.find(i => i.type === 'reasoning');
    return {text: j.output.filter(i => i.type === 'message').map(i => i.content[0].text).join(''), stop: j.status,
      thinking: reasoning?.summary[0].text ?? '', signature: reasoning?.encrypted_content,
      calls: j.output.filter(i => i.type === 'function_call').map(i => ({name: i.name, input: JSON.parse(i.arguments)}))};
  },
  chat(body, stream) {
    if (!stream) {
      const c = JSON.parse(body).choices[0];
      return {text: c.message.content ?? '', stop: c.finish_reason, thinking: '',
        calls: (c.message.tool_calls || []).map(t => ({name: t.function.name, input: JSON.parse(t.function.arguments)}))};
    }
    let text = '', stop = null;
    const calls = [];
    for (const d of sseData(body).map(x => JSON.parse(x))) {
      const c = d.choices[0];
      if (!c) continue;
      text += c.delta.content ?? '';
      for (const t of c.delta.tool_calls || []) calls[t.index] = {name: t.function.name, args: (calls[t.index]?.args ?? '') + t.function.arguments};
      stop = c.finish_reason ?? stop;
    }
    return {text, stop, thinking: '', calls: calls.map(c => ({name: c.name, input: JSON.parse(c.args)}))};
  },
  gemini(body, stream) {
    const chunks = stream ? sseData(body).map(x => JSON.parse(x)) : [JSON.parse(body)];
    const parts = chunks.flatMap(c => c.candidates[0].content.parts);
    return {text: parts.filter(p => !p.thought).map(p => p.text ?? '').join(''), stop: chunks.at(-1).candidates[0].finishReason,
      thinking: parts.filter(p => p.thought).map(p => p.text).join(''), signature: parts.find(p => p.thoughtSignature)?.thoughtSignature,
      calls: parts.filter(p => p.functionCall).map(p => ({name: p.functionCall.name, input: p.functionCall.args}))};
  },
};

// A request in `format` whose history holds `turns` model turns (each a tool call and its output).
function request(format, turns, {stream = false, tools = true} = {}) {
  if (format === 'anthropic') {
    const messages = [{role: 'user', content: 'go'}];
    for (let i = 0; i < turns; i++) messages.push(
      {role: 'assistant', content: [{type: 'tool_use', id: `t${i}`, name: 'shell', input: {}}]},
      {role: 'user', content: [{type: 'tool_result', tool_use_id: `t${i}`, content: 'out'}]});
    return ['/v1/messages', {model: 'claude-x', stream, messages, ...(tools ? {tools: [{name: 'shell', input_schema: {}}]} : {})}];
  }
  if (format === 'responses') {
    const input = [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'go'}]}];
    for (let i = 0; i < turns; i++) input.push(
      {type: 'reasoning', summary: []}, {type: 'function_call', call_id: `c${i}`, name: 'shell', arguments: '{}'},
      {type: 'function_call', call_id: `d${i}`, name: 'shell', arguments: '{}'},
      {type: 'function_call_output', call_id: `c${i}`, output: 'out'}, {type: 'function_call_output', call_id: `d${i}`, output: 'out'});
    return ['/v1/responses', {model: 'gpt-x', stream, input, ...(tools ? {tools: [{type: 'function', name: 'shell'}]} : {})}];
  }
  if (format === 'chat') {
    const messages = [{role: 'user', content: 'go'}];
    for (let i = 0; i < turns; i++) messages.push(
      {role: 'assistant', content: null, tool_calls: [{id: `c${i}`, type: 'function', function: {name: 'shell', arguments: '{}'}}]},
      {role: 'tool', tool_call_id: `c${i}`, content: 'out'});
    return ['/v1/chat/completions', {model: 'gpt-x', stream, messages, ...(tools ? {tools: [{type: 'function', function: {name: 'shell'}}]} : {})}];
  }
  const contents = [{role: 'user', parts: [{text: 'go'}]}];
  for (let i = 0; i < turns; i++) contents.push(
    {role: 'model', parts: [{functionCall: {name: 'shell', args: {}}}]},
    {role: 'user', parts: [{functionResponse: {name: 'shell', response: {output: 'out'}}}]});
  return [`/v1beta/models/gemini-x:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    {contents, ...(tools ? {tools: [{functionDeclarations: [{name: 'shell'}]}]} : {})}];
}

for (const format of ['anthropic', 'responses', 'chat', 'gemini'])
  for (const stream of [false, true])
    test(`scripted mode, ${format}${stream ? ' streamed' : ''}: the turn the history reached`, async () => {
      fake.clear();
      const got = [];
      for (const turns of [0, 1, 2, 5]) {
        const [p, body] = request(format, turns, {stream});
        const r = await post(p, body);
        assert.equal(r.status, 200, r.body.toString());
        assert.match(r.headers['content-type'], stream ? /event-stream/ : /json/);
        got.push(DECODE[format](r.body.toString(), stream));
      }
      // Turn 0: text and one call, the first listed name the request defines (shell, not exec_command).
      assert.equal(got[0].text, 'Reading.');
      // Its thinking, signed, where the format carries it.
      if (format !== 'chat') {
        assert.equal(got[0].thinking, 'Look first.');
        assert.match(got[0].signature, /^[A-Za-z0-9+/]+=*$/);
      }
      assert.equal(got[1].thinking, '');
      assert.deepEqual(got[0].calls, [{name: 'shell', input: {cmd: 'cat a.py'}}]);
      assert.deepEqual(got[1].calls.map(c => c.input.cmd), ['ls', 'pwd']);
      // The last turn, and past it the last turn again: text, no calls.
      for (const g of [got[2], got[3]]) { assert.equal(g.text, 'All done.'); assert.deepEqual(g.calls, []); }
      assert.deepEqual(fake.requests.map(q => q.scriptTurn), [0, 1, 2, 2]);
      const stops = {anthropic: ['tool_use', 'end_turn'], chat: ['tool_calls', 'stop']}[format];
      if (stops) assert.deepEqual([got[0].stop, got[2].stop], stops);
    });

test('scripted mode: a request without tools gets the side answer; x-fake-fixture and x-fake-mode still win', async () => {
  const [p, body] = request('anthropic', 1, {tools: false});
  const side = await post(p, body);
  assert.equal(DECODE.anthropic(side.body.toString(), false).text, 'A title');
  assert.equal(fake.last().fixture, 'script-side');
  const [p2, body2] = request('anthropic', 0);
  assert.equal((await post(p2, body2, {'x-fake-fixture': 'anthropic-messages-nonstream'})).status, 200);
  assert.equal(fake.last().fixture, 'anthropic-messages-nonstream');
  assert.equal((await post(p2, body2, {'x-fake-mode': '500'})).status, 500);
});

test('scripted mode: a side request that asks for JSON gets the smallest value its schema admits', async () => {
  const schema = {type: 'OBJECT', required: ['why', 'score'], properties: {why: {type: 'STRING'},
    score: {type: 'INTEGER', minimum: 3}, pick: {type: 'STRING', enum: ['flash', 'pro']}, tags: {type: 'ARRAY'}}};
  const [p, body] = request('gemini', 0, {tools: false});
  body.generationConfig = {responseMimeType: 'application/json', responseJsonSchema: schema};
  const gemini = DECODE.gemini((await post(p, body)).body.toString(), false);
  assert.deepEqual(JSON.parse(gemini.text), {why: '', score: 3, pick: 'flash', tags: []});
  const [p2, body2] = request('responses', 0, {tools: false});
  body2.text = {format: {type: 'json_schema', name: 'x', schema: {type: 'object', properties: {ok: {type: 'boolean'}}}}};
  assert.deepEqual(JSON.parse(DECODE.responses((await post(p2, body2)).body.toString(), false).text), {ok: false});
});

test('scripted mode from the command line: --script FILE', async () => {
  const tmp = tempDir();
  const file = path.join(tmp.dir, 'script.json');
  fs.writeFileSync(file, JSON.stringify(SCRIPT));
  const proc = await startFakeProcess(['--script', file]);
  try {
    const [p, body] = request('chat', 2);
    const r = await rawRequest({port: proc.port, method: 'POST', path: p, headers: {'content-type': 'application/json'}, body: JSON.stringify(body)});
    assert.equal(DECODE.chat(r.body.toString(), false).text, 'All done.');
  } finally {
    await proc.stop();
    tmp.cleanup();
  }
});
