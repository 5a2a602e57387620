// Agent sessions that complete a task, in each provider's format, for the
// archive eviction tests through serve (tests/integration/
// archive_eviction_providers.test.mjs, tests/e2e/archive_eviction_sdk.test.mjs):
// Anthropic Messages (tool_use/tool_result, TodoWrite), OpenAI Responses
// (function_call/function_call_output, update_plan) and Gemini (functionCall/
// functionResponse, write_todos), and how to read what went upstream in each.
export const RECALL = 'tokendiet_recall';
export const TOMBSTONE = /tokendiet_recall can read it back/;
export const idOf = tombstone => /as (td-[0-9a-f]{32})/.exec(tombstone)[1];

export const output = (tag, bytes) => {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${tag} line ${i} of output\n`;
  return s.slice(0, bytes);
};

// The agent session every provider renders: the parser task's two outputs,
// the task marked completed in the provider's todo tool, then a dozen steps of
// the next task. Steps are [tool name, arguments object, result text].
export function steps(todo) {
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
export const PROVIDERS = {
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
    headers: key => ({'x-api-key': key, 'anthropic-version': '2023-06-01'}),
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
    headers: key => ({authorization: `Bearer ${key}`}),
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
    path: (stream, key) => stream ? `/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${key}`
      : '/v1beta/models/gemini-2.5-pro:generateContent',
    headers: key => ({'x-goog-api-key': key}),
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
export const evictionConfig = archivePath => `archive: {path: ${JSON.stringify(archivePath)}}
profiles:
  - name: semantic
    semantic_threshold: 2000
    completed_tasks_min_output_bytes: 256
    trigger_tokens: 1000000000
    payback_turn_fraction: 1
    max_loss: 1
`;

// A request body (a string or Buffer) as parsed JSON without the
// tokendiet_recall tool the proxy appends to an agent's requests
// (docs/design.md §Recall): in OpenAI chat's, Responses', Anthropic's or
// Gemini's shape; a `tools` the proxy added whole goes too.
export function withoutRecallTool(body) {
  const j = JSON.parse(String(body));
  if (!Array.isArray(j.tools)) return j;
  const isRecall = t => (t?.function?.name ?? t?.name) === RECALL ||
    (Array.isArray(t?.functionDeclarations) && t.functionDeclarations.length === 1 && t.functionDeclarations[0].name === RECALL);
  const tools = j.tools.filter(t => !isRecall(t));
  if (tools.length === j.tools.length) return j;
  if (tools.length) j.tools = tools;
  else delete j.tools;
  return j;
}
