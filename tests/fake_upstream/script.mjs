// The fake upstream's scripted-conversation mode: instead of a recorded
// fixture, a request with tools is answered by the turn of a script that its
// history has reached, in the calling wire format (OpenAI chat, OpenAI
// Responses, Anthropic Messages, Gemini; streamed or not). An agent CLI driven
// against it makes the tool calls the script says, for as many turns as it
// has, then gets the final text: a session whose history grows the way a real
// one does, with nothing random in the answers.
//
// A script (JSON, `--script FILE` or startFakeUpstream({script})):
//   {"turns": [{"thinking": "...", "text": "...",
//               "tool_calls": [{"name": "Read" | ["shell", "exec_command"], "input": {...}}]},
//              ...,
//              {"text": "the final answer"}],
//    "side": {"text": "..."}}
// Turn k answers a request whose history already holds k model turns
// (Anthropic/chat assistant messages, Gemini model contents, Responses runs of
// output items), so the CLI's retries and the proxy's rewrites never shift
// it; past the last turn the last one is given again. A tool call's name may
// be a list: the first the request defines is called (CLIs rename tools
// between versions). A request without tools (titles, summaries, the CLIs'
// side calls) gets `side` (default: text "ok"); one that asks for JSON output
// gets the smallest value its schema admits (Gemini CLI's model router
// retries until its JSON parses); a client's compaction request (Codex's
// prompt, no tools) gets a summary naming the turn reached, from which the
// turns after it count on.
// Usage reports ceil(body bytes / 4) input tokens, as the quota mode counts them;
// in billing mode (billing.mjs) with the cached part in each provider's fields.
// A turn's `thinking` comes back as each format carries it, with a made-up
// signature the client must send back as is: an Anthropic signed thinking
// block, a Responses reasoning item with encrypted_content, a Gemini thought
// part and a thoughtSignature on the first call (chat: none).

const SIDE_DEFAULT = {text: 'ok'};
const OUTPUT_TOKENS = 20;  // every scripted answer's output, whatever its length

function parse(body) {
  try { return JSON.parse(body.toString('utf8')); } catch { return null; }
}

// The items of the request's history, in each wire format's place.
function historyOf(route, req) {
  if (route.op === 'messages' || route.op === 'chat') return Array.isArray(req.messages) ? req.messages : [];
  if (route.op === 'responses') return Array.isArray(req.input) ? req.input : [];
  return Array.isArray(req.contents) ? req.contents : [];
}

// How many model turns the items hold (Responses: runs of output items).
function turnsIn(route, items) {
  if (route.op === 'messages' || route.op === 'chat') return items.filter(m => m?.role === 'assistant').length;
  if (route.op === 'responses') {
    const output = it => it && (it.role === 'assistant' ||
      ['function_call', 'reasoning', 'local_shell_call', 'custom_tool_call', 'web_search_call'].includes(it.type));
    let runs = 0, inRun = false;
    for (const it of items) {
      if (output(it) && !inRun) runs++;
      inRun = output(it);
    }
    return runs;
  }
  return items.filter(c => c?.role === 'model').length;
}

// A client's own compaction request: no tools, the client's compaction prompt
// in it (Codex's inline auto-compaction; tests/fixtures/compaction/codex.txt).
const COMPACTION = /CONTEXT CHECKPOINT COMPACTION/;
// The scripted summary says where the session was, so the turns after a
// compaction carry on from there (the history before it is gone).
const SUMMARY_MARK = 'Scripted summary: the session had reached turn ';

// How many model turns the session has had: those in the request's history,
// plus, after a compaction, the turns the newest scripted summary counted.
export function modelTurns(route, req) {
  const items = historyOf(route, req);
  for (let i = items.length - 1; i >= 0; i--) {
    const at = JSON.stringify(items[i]).indexOf(SUMMARY_MARK);
    if (at < 0) continue;
    const n = Number.parseInt(JSON.stringify(items[i]).slice(at + SUMMARY_MARK.length), 10);
    return (Number.isFinite(n) ? n : 0) + turnsIn(route, items.slice(i + 1));
  }
  return turnsIn(route, items);
}

// The names of the tools the request defines, in every wire format's shape.
function toolNames(req) {
  const names = new Set();
  for (const t of req.tools || []) {
    if (t?.name) names.add(t.name);
    if (t?.function?.name) names.add(t.function.name);
    for (const f of t?.functionDeclarations || t?.function_declarations || []) if (f?.name) names.add(f.name);
  }
  return names;
}

// The JSON schema the request asks its answer to follow, in each wire format's place; null if none.
function outputSchema(req) {
  const g = req.generationConfig || {};
  if (/json/i.test(g.responseMimeType || '')) return g.responseJsonSchema || g.responseSchema || {};
  const f = req.text?.format || req.output_format || req.output_config?.format;
  if (f?.type === 'json_schema') return f.schema || {};
  if (req.response_format?.type === 'json_schema') return req.response_format.json_schema?.schema || {};
  if (req.response_format?.type === 'json_object') return {};
  return null;
}

// The smallest value `schema` admits: every property filled, the first enum value, numbers at their minimum.
function valueFor(schema) {
  if (schema?.enum?.length) return schema.enum[0];
  switch (String(Array.isArray(schema?.type) ? schema.type[0] : schema?.type ?? 'object').toLowerCase()) {
    case 'string': return '';
    case 'integer': case 'number': return schema.minimum ?? 1;
    case 'boolean': return false;
    case 'array': return [];
    case 'null': return null;
    default: return Object.fromEntries(Object.entries(schema?.properties || {}).map(([k, v]) => [k, valueFor(v)]));
  }
}

// The answer (`{turn, thinking, text, calls: [{id, name, input}]}`) for this request, or null when the script has none.
export function scriptedTurn(script, route, body) {
  const req = parse(body);
  if (!req || !script) return null;
  const names = toolNames(req);
  if (names.size === 0) {
    const side = script.side || SIDE_DEFAULT, schema = outputSchema(req);
    const compaction = !schema && COMPACTION.test(JSON.stringify(historyOf(route, req).at(-1) ?? ''));
    const text = compaction ? `${SUMMARY_MARK}${modelTurns(route, req)}.`
      : schema ? JSON.stringify(valueFor(schema)) : side.text ?? 'ok';
    return {turn: -1, thinking: '', text, calls: []};
  }
  const turns = script.turns || [];
  if (turns.length === 0) return null;
  const k = Math.min(modelTurns(route, req), turns.length - 1);
  const t = turns[k];
  const calls = (t.tool_calls || []).map((c, i) => {
    const wanted = Array.isArray(c.name) ? c.name : [c.name];
    const name = wanted.find(n => names.has(n)) ?? wanted[0];
    return {id: `${String(k + 1).padStart(2, '0')}${String(i + 1).padStart(2, '0')}`, name, input: c.input || {}};
  });
  return {turn: k, thinking: t.thinking || '', text: t.text || '', calls};
}

// The made-up signature of turn k's thinking.
export const turnSignature = k => Buffer.from(`scripted signature of turn ${k}`).toString('base64');
const signature = a => turnSignature(a.turn);

const sse = (event, data) => (event ? `event: ${event}\n` : '') + `data: ${JSON.stringify(data)}\n\n`;

function anthropic(a, model, stream, u) {
  const id = `msg_script_${a.turn + 1}`;
  const blocks = [];
  if (a.thinking) blocks.push({type: 'thinking', thinking: a.thinking, signature: signature(a)});
  if (a.text) blocks.push({type: 'text', text: a.text});
  for (const c of a.calls) blocks.push({type: 'tool_use', id: `toolu_01script${c.id}`, name: c.name, input: c.input});
  const stop = a.calls.length ? 'tool_use' : 'end_turn';
  const usage = {input_tokens: u.input - u.cached - u.creation - u.creation1h,
    cache_creation_input_tokens: u.creation + u.creation1h, cache_read_input_tokens: u.cached,
    cache_creation: {ephemeral_5m_input_tokens: u.creation, ephemeral_1h_input_tokens: u.creation1h}, output_tokens: OUTPUT_TOKENS};
  if (!stream)
    return {kind: 'json', body: {id, type: 'message', role: 'assistant', model, content: blocks,
      stop_reason: stop, stop_sequence: null, usage}};
  let out = sse('message_start', {type: 'message_start', message: {id, type: 'message', role: 'assistant', model,
    content: [], stop_reason: null, stop_sequence: null, usage: {...usage, output_tokens: 1}}});
  blocks.forEach((b, index) => {
    if (b.type === 'thinking') {
      out += sse('content_block_start', {type: 'content_block_start', index, content_block: {type: 'thinking', thinking: '', signature: ''}});
      out += sse('content_block_delta', {type: 'content_block_delta', index, delta: {type: 'thinking_delta', thinking: b.thinking}});
      out += sse('content_block_delta', {type: 'content_block_delta', index, delta: {type: 'signature_delta', signature: b.signature}});
    } else if (b.type === 'text') {
      out += sse('content_block_start', {type: 'content_block_start', index, content_block: {type: 'text', text: ''}});
      out += sse('content_block_delta', {type: 'content_block_delta', index, delta: {type: 'text_delta', text: b.text}});
    } else {
      out += sse('content_block_start', {type: 'content_block_start', index, content_block: {...b, input: {}}});
      out += sse('content_block_delta', {type: 'content_block_delta', index,
        delta: {type: 'input_json_delta', partial_json: JSON.stringify(b.input)}});
    }
    out += sse('content_block_stop', {type: 'content_block_stop', index});
  });
  out += sse('message_delta', {type: 'message_delta', delta: {stop_reason: stop, stop_sequence: null}, usage: {output_tokens: 20}});
  out += sse('message_stop', {type: 'message_stop'});
  return {kind: 'sse', body: out};
}

function responses(a, model, stream, u) {
  const id = `resp_script_${a.turn + 1}`;
  const items = [];
  if (a.thinking) items.push({type: 'reasoning', id: `rs_script_${a.turn + 1}`,
    summary: [{type: 'summary_text', text: a.thinking}], encrypted_content: signature(a)});
  if (a.text) items.push({type: 'message', id: `msg_script_${a.turn + 1}`, status: 'completed', role: 'assistant',
    content: [{type: 'output_text', text: a.text, annotations: []}]});
  for (const c of a.calls) items.push({type: 'function_call', id: `fc_script_${c.id}`, status: 'completed',
    call_id: `call_script_${c.id}`, name: c.name, arguments: JSON.stringify(c.input)});
  const usage = {input_tokens: u.input, input_tokens_details: {cached_tokens: u.cached}, output_tokens: OUTPUT_TOKENS,
    output_tokens_details: {reasoning_tokens: 0}, total_tokens: u.input + OUTPUT_TOKENS};
  const response = status => ({id, object: 'response', created_at: 1764000000, status, model,
    output: status === 'completed' ? items : [], usage: status === 'completed' ? usage : null});
  if (!stream) return {kind: 'json', body: response('completed')};
  let seq = 0;
  const ev = (type, data) => sse(type, {type, sequence_number: seq++, ...data});
  let out = ev('response.created', {response: response('in_progress')});
  items.forEach((item, output_index) => {
    const empty = item.type === 'message' ? {...item, status: 'in_progress', content: []}
      : item.type === 'reasoning' ? {...item, summary: []} : {...item, status: 'in_progress', arguments: ''};
    out += ev('response.output_item.added', {output_index, item: empty});
    if (item.type === 'message') {
      const part = {type: 'output_text', text: '', annotations: []};
      out += ev('response.content_part.added', {item_id: item.id, output_index, content_index: 0, part});
      out += ev('response.output_text.delta', {item_id: item.id, output_index, content_index: 0, delta: a.text});
      out += ev('response.output_text.done', {item_id: item.id, output_index, content_index: 0, text: a.text});
      out += ev('response.content_part.done', {item_id: item.id, output_index, content_index: 0, part: item.content[0]});
    } else if (item.type === 'reasoning') {
      out += ev('response.reasoning_summary_text.delta', {item_id: item.id, output_index, summary_index: 0, delta: a.thinking});
      out += ev('response.reasoning_summary_text.done', {item_id: item.id, output_index, summary_index: 0, text: a.thinking});
    } else {
      out += ev('response.function_call_arguments.delta', {item_id: item.id, output_index, delta: item.arguments});
      out += ev('response.function_call_arguments.done', {item_id: item.id, output_index, arguments: item.arguments});
    }
    out += ev('response.output_item.done', {output_index, item});
  });
  out += ev('response.completed', {response: response('completed')});
  return {kind: 'sse', body: out};
}

function chat(a, model, stream, u) {
  const id = `chatcmpl-script-${a.turn + 1}`;
  const tool_calls = a.calls.map((c, index) => ({index, id: `call_script_${c.id}`, type: 'function',
    function: {name: c.name, arguments: JSON.stringify(c.input)}}));
  const finish = a.calls.length ? 'tool_calls' : 'stop';
  const usage = {prompt_tokens: u.input, completion_tokens: OUTPUT_TOKENS, total_tokens: u.input + OUTPUT_TOKENS,
    prompt_tokens_details: {cached_tokens: u.cached}};
  const base = {id, created: 1764000000, model};
  if (!stream) {
    const message = {role: 'assistant', content: a.text || null};
    if (tool_calls.length) message.tool_calls = tool_calls.map(({index, ...c}) => c);
    return {kind: 'json', body: {...base, object: 'chat.completion', choices: [{index: 0, message, finish_reason: finish}], usage}};
  }
  const chunk = (delta, finish_reason = null, extra = {}) =>
    sse(null, {...base, object: 'chat.completion.chunk', choices: [{index: 0, delta, finish_reason}], usage: null, ...extra});
  let out = chunk({role: 'assistant', content: a.text || ''});
  if (tool_calls.length) out += chunk({tool_calls});
  out += chunk({}, finish);
  out += sse(null, {...base, object: 'chat.completion.chunk', choices: [], usage});
  return {kind: 'sse', body: out + 'data: [DONE]\n\n'};
}

function gemini(a, model, stream, u) {
  const parts = [];
  if (a.thinking) parts.push({text: a.thinking, thought: true});
  if (a.text) parts.push({text: a.text});
  a.calls.forEach((c, i) => parts.push({functionCall: {name: c.name, args: c.input}, ...(i === 0 && a.thinking ? {thoughtSignature: signature(a)} : {})}));
  const body = {candidates: [{content: {role: 'model', parts}, finishReason: 'STOP', index: 0}],
    usageMetadata: {promptTokenCount: u.input, candidatesTokenCount: OUTPUT_TOKENS, totalTokenCount: u.input + OUTPUT_TOKENS,
      ...(u.cached ? {cachedContentTokenCount: u.cached} : {})},
    modelVersion: model};
  return stream ? {kind: 'sse', body: sse(null, body)} : {kind: 'json', body};
}

const WRITERS = {messages: anthropic, responses, chat, generateContent: gemini, streamGenerateContent: gemini};

// A fixture-shaped answer ({name, kind, body, status, statusMessage, headers},
// as fixtures.mjs loads them, plus `turn`) for a scripted request; null when
// the script does not answer it. billed: the request's charge in billing mode
// (billing.mjs: input, cached, creation, creation1h tokens), else null.
export function scriptedFixture(script, route, body, billed = null) {
  const a = scriptedTurn(script, route, body);
  if (!a) return null;
  const req = parse(body) || {};
  const model = req.model || 'scripted-model';
  const usage = billed ?? {input: Math.ceil(body.length / 4), cached: 0, creation: 0, creation1h: 0};
  const fx = WRITERS[route.op](a, model, route.stream, usage);
  const bytes = Buffer.from(fx.kind === 'sse' ? fx.body : JSON.stringify(fx.body));
  return {name: a.turn < 0 ? 'script-side' : `script-turn-${a.turn}`, kind: fx.kind, body: bytes, status: 200, statusMessage: 'OK', turn: a.turn,
    headers: [['content-type', fx.kind === 'sse' ? 'text/event-stream' : 'application/json']]};
}
