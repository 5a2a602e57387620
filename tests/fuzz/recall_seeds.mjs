// Seeds for fuzz_recall (scripts/fuzz.sh): the fake upstream's recall-mode
// rounds in every format, streamed or not: a round calling tokendiet_recall
// (with the client's own call, or several calls) and the round that answers,
// joined by "\n\x1e\n" after fuzz_recall's control byte (api + 4 for SSE +
// 8 * (piece size - 1)).
//   node tests/fuzz/recall_seeds.mjs OUT_DIR
import fs from 'node:fs';
import path from 'node:path';
import {recallAnswer} from '../fake_upstream/recall.mjs';
import {classify} from '../fake_upstream/server.mjs';

const out = process.argv[2];
fs.mkdirSync(out, {recursive: true});
const tool = {name: 'tokendiet_recall', description: 'x', input_schema: {type: 'object'}};
const FORMATS = [  // fuzz_recall's api numbers: 0 chat, 1 responses, 2 gemini, 3 anthropic
  {api: 0, path: '/v1/chat/completions', body: s => ({model: 'g', stream: s, messages: [{role: 'user', content: 'go'}],
    tools: [{type: 'function', function: {name: 'tokendiet_recall', parameters: {}}}]})},
  {api: 1, path: '/v1/responses', body: s => ({model: 'g', stream: s, input: 'go', tools: [{type: 'function', name: 'tokendiet_recall'}]})},
  {api: 2, path: s => `/v1beta/models/g:${s ? 'streamGenerateContent' : 'generateContent'}`, query: s => s ? 'alt=sse' : '',
    body: () => ({contents: [{role: 'user', parts: [{text: 'go'}]}], tools: [{functionDeclarations: [{name: 'tokendiet_recall'}]}]})},
  {api: 3, path: '/v1/messages', body: s => ({model: 'c', stream: s, messages: [{role: 'user', content: 'go'}], tools: [tool]})},
];
const recalled = {
  0: b => ({...b, messages: [...b.messages, {role: 'tool', tool_call_id: 'call_recall_1', content: 'line 1\nline 2'}]}),
  1: b => ({...b, input: [{type: 'function_call_output', call_id: 'call_recall_1', output: 'line 1\nline 2'}]}),
  2: b => ({...b, contents: [...b.contents, {role: 'user', parts: [{functionResponse: {name: 'tokendiet_recall', response: {output: 'line 1'}}}]}]}),
  3: b => ({...b, messages: [...b.messages, {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_recall_1', content: 'line 1'}]}]}),
};
for (const f of FORMATS) {
  for (const stream of [true, false]) {
    const p = typeof f.path === 'function' ? f.path(stream) : f.path;
    const q = new URLSearchParams(f.query?.(stream) ?? '');
    const answer = (body, headers) => {
      const raw = Buffer.from(JSON.stringify(body));
      return recallAnswer(classify(p, raw, q), raw, headers).body;
    };
    const first = f.body(stream);
    for (const [name, headers] of [['one', {}], ['client', {'x-fake-recall-client-call': '1'}], ['many', {'x-fake-recall-repeat': '5'}]]) {
      const h = {'x-fake-recall-id': 'td-0123456789abcdef0123456789abcdef', 'x-fake-recall-lines': '2-3', ...headers};
      const rounds = [answer(first, h), answer(recalled[f.api](first), h)];
      const control = f.api + (stream ? 4 : 0) + 8 * (stream ? 12 : 31);
      const seed = Buffer.concat([Buffer.from([control]), rounds[0], Buffer.from('\n\x1e\n'), rounds[1]]);
      fs.writeFileSync(path.join(out, `${f.api}-${stream ? 'sse' : 'json'}-${name}`), seed);
    }
  }
}
