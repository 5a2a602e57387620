// The fake upstream's recall mode (x-fake-mode: recall): a model that reads an
// archived output back through tokendiet's tokendiet_recall tool.
//   - a request that offers the tool and does not yet hold its result gets a
//     call of it: some text first ("Let me read the archived output."), then
//     tokendiet_recall with {id} (x-fake-recall-id, else the first td-… id in
//     the request, else "td-unknown") and x-fake-recall-lines as "lines";
//     x-fake-recall-client-call: 1 adds a call of the client's own tool
//     "bash" beside it; x-fake-recall-repeat: N makes it N calls of the
//     same arguments in one answer (a model looping on the tool; 0: the tool
//     offered and not called); x-fake-sequence-start: N numbers a Responses
//     stream's events from N (default 0);
//   - a request whose newest message is that tool's result (the proxy's
//     continuation) gets text quoting it: "Recalled: <the result>"; with
//     x-fake-recall-always: 1 it calls the tool again instead (a model that
//     never stops);
//   - anything else: null (the usual fixture).
// Every format, streamed (SSE; Gemini's JSON-array stream is made from the
// SSE by server.mjs) or not. Usage: input ceil(body bytes / 4), output 7 per round.
export const RECALL_TOOL = 'tokendiet_recall';

const json = s => { try { return JSON.parse(s); } catch { return null; } };
const sse = (events, named) => Buffer.from(events.map(([name, data]) =>
  (named ? `event: ${name}\n` : '') + `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join(''));

function offersTool(provider, op, req) {
  const tools = req?.tools;
  if (!Array.isArray(tools)) return false;
  if (provider === 'gemini') return tools.some(t => t.functionDeclarations?.some(f => f.name === RECALL_TOOL));
  if (op === 'chat') return tools.some(t => t.function?.name === RECALL_TOOL);
  return tools.some(t => t.name === RECALL_TOOL);
}

// The recall result the newest message carries, or null.
function recallResult(provider, op, req) {
  if (op === 'messages') {
    const last = req.messages?.at(-1);
    const r = Array.isArray(last?.content) && last.content.find(b => b.type === 'tool_result' && /^toolu_recall/.test(b.tool_use_id));
    return r ? (typeof r.content === 'string' ? r.content : JSON.stringify(r.content)) : null;
  }
  if (op === 'chat') {
    const last = req.messages?.at(-1);
    return last?.role === 'tool' && /^call_recall/.test(last.tool_call_id) ? String(last.content) : null;
  }
  if (op === 'responses') {
    const last = Array.isArray(req.input) ? req.input.at(-1) : null;
    return last?.type === 'function_call_output' && /^call_recall/.test(last.call_id) ? String(last.output) : null;
  }
  const part = req.contents?.at(-1)?.parts?.find(p => p.functionResponse?.name === RECALL_TOOL);
  if (!part) return null;
  const r = part.functionResponse.response;
  return typeof r?.output === 'string' ? r.output : JSON.stringify(r);
}

function recallArgs(headers, raw) {
  const id = headers['x-fake-recall-id'] || /td-[0-9a-f]{6,}/.exec(raw)?.[0] || 'td-unknown';
  const lines = headers['x-fake-recall-lines'];
  return lines ? {id, lines} : {id};
}

// {kind, body} of the answer, per format.
const ANSWERS = {
  messages(stream, model, usage, text, calls, clientCall) {
    const call = calls.length > 0;
    const content = [{type: 'text', text}];
    calls.forEach((c, i) => content.push({type: 'tool_use', id: `toolu_recall_${i + 1}`, name: RECALL_TOOL, input: c}));
    if (clientCall) content.push({type: 'tool_use', id: 'toolu_client_1', name: 'bash', input: {command: 'ls'}});
    const stop = call ? 'tool_use' : 'end_turn';
    const msg = {id: `msg_fake_${call ? 'call' : 'text'}`, type: 'message', role: 'assistant', model};
    if (!stream) return {kind: 'json', body: Buffer.from(JSON.stringify({...msg, content, stop_reason: stop, stop_sequence: null,
      usage: {input_tokens: usage.input, output_tokens: usage.output}}))};
    const ev = [['message_start', {type: 'message_start', message: {...msg, content: [], stop_reason: null, stop_sequence: null,
      usage: {input_tokens: usage.input, output_tokens: 1}}}], ['ping', {type: 'ping'}]];
    content.forEach((b, index) => {
      if (b.type === 'text') {
        ev.push(['content_block_start', {type: 'content_block_start', index, content_block: {type: 'text', text: ''}}]);
        for (const piece of [b.text.slice(0, 9), b.text.slice(9)])
          ev.push(['content_block_delta', {type: 'content_block_delta', index, delta: {type: 'text_delta', text: piece}}]);
      } else {
        ev.push(['content_block_start', {type: 'content_block_start', index, content_block: {...b, input: {}}}]);
        const args = JSON.stringify(b.input);
        for (const piece of [args.slice(0, 5), args.slice(5)])
          ev.push(['content_block_delta', {type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json: piece}}]);
      }
      ev.push(['content_block_stop', {type: 'content_block_stop', index}]);
    });
    ev.push(['message_delta', {type: 'message_delta', delta: {stop_reason: stop, stop_sequence: null}, usage: {output_tokens: usage.output}}]);
    ev.push(['message_stop', {type: 'message_stop'}]);
    return {kind: 'sse', body: sse(ev, true)};
  },
  chat(stream, model, usage, text, recalls, clientCall, includeUsage) {
    const call = recalls.length > 0;
    const calls = recalls.map((c, i) => ({id: `call_recall_${i + 1}`, type: 'function',
      function: {name: RECALL_TOOL, arguments: JSON.stringify(c)}}));
    if (clientCall) calls.push({id: 'call_client_1', type: 'function', function: {name: 'bash', arguments: '{"command":"ls"}'}});
    const finish = call ? 'tool_calls' : 'stop';
    const u = {prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output};
    const base = {id: `chatcmpl-fake-${call ? 'call' : 'text'}`, created: 1764000000, model, system_fingerprint: 'fp_fake'};
    if (!stream) return {kind: 'json', body: Buffer.from(JSON.stringify({...base, object: 'chat.completion', choices: [{index: 0,
      message: {role: 'assistant', content: text, ...(calls.length ? {tool_calls: calls} : {}), refusal: null}, logprobs: null,
      finish_reason: finish}], usage: u}))};
    const chunk = (delta, fin = null) => ({...base, object: 'chat.completion.chunk', choices: [{index: 0, delta, logprobs: null, finish_reason: fin}]});
    const ev = [chunk({role: 'assistant', content: ''}), chunk({content: text.slice(0, 9)}), chunk({content: text.slice(9)})];
    calls.forEach((c, index) => {
      ev.push(chunk({tool_calls: [{index, id: c.id, type: 'function', function: {name: c.function.name, arguments: ''}}]}));
      const a = c.function.arguments;
      for (const piece of [a.slice(0, 4), a.slice(4)]) ev.push(chunk({tool_calls: [{index, function: {arguments: piece}}]}));
    });
    ev.push(chunk({}, finish));
    if (includeUsage) ev.push({...base, object: 'chat.completion.chunk', choices: [], usage: u});
    return {kind: 'sse', body: sse([...ev.map(e => ['', e]), ['', '[DONE]']], false)};
  },
  responses(stream, model, usage, text, calls, clientCall, includeUsage, seqStart = 0) {
    const call = calls.length > 0;
    const id = `resp_fake_${call ? 'call' : 'text'}`;
    const output = [{type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant',
      content: [{type: 'output_text', text, annotations: []}]}];
    calls.forEach((c, i) => output.push({type: 'function_call', id: `fc_${id}${i ? `_${i + 1}` : ''}`, call_id: `call_recall_${i + 1}`,
      name: RECALL_TOOL, arguments: JSON.stringify(c), status: 'completed'}));
    if (clientCall) output.push({type: 'function_call', id: `fc2_${id}`, call_id: 'call_client_1', name: 'bash', arguments: '{"command":"ls"}', status: 'completed'});
    const u = {input_tokens: usage.input, input_tokens_details: {cached_tokens: 0}, output_tokens: usage.output,
      output_tokens_details: {reasoning_tokens: 0}, total_tokens: usage.input + usage.output};
    const resp = status => ({id, object: 'response', created_at: 1764000000, status, model, output: status === 'completed' ? output : [],
      usage: status === 'completed' ? u : null});
    if (!stream) return {kind: 'json', body: Buffer.from(JSON.stringify(resp('completed')))};
    const ev = [];
    const push = (type, o) => ev.push([type, {type, sequence_number: seqStart + ev.length, ...o}]);
    push('response.created', {response: resp('in_progress')});
    output.forEach((item, output_index) => {
      if (item.type === 'message') {
        push('response.output_item.added', {output_index, item: {...item, status: 'in_progress', content: []}});
        push('response.content_part.added', {item_id: item.id, output_index, content_index: 0, part: {type: 'output_text', text: '', annotations: []}});
        push('response.output_text.delta', {item_id: item.id, output_index, content_index: 0, delta: text});
        push('response.output_text.done', {item_id: item.id, output_index, content_index: 0, text});
        push('response.content_part.done', {item_id: item.id, output_index, content_index: 0, part: item.content[0]});
      } else {
        push('response.output_item.added', {output_index, item: {...item, status: 'in_progress', arguments: ''}});
        push('response.function_call_arguments.delta', {item_id: item.id, output_index, delta: item.arguments});
        push('response.function_call_arguments.done', {item_id: item.id, output_index, arguments: item.arguments});
      }
      push('response.output_item.done', {output_index, item});
    });
    push('response.completed', {response: resp('completed')});
    return {kind: 'sse', body: sse(ev, true)};
  },
  gemini(stream, model, usage, text, calls, clientCall) {
    const call = calls.length > 0;
    const u = {promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output};
    const parts = [{text}];
    calls.forEach(c => parts.push({functionCall: {name: RECALL_TOOL, args: c}}));
    if (clientCall) parts.push({functionCall: {name: 'bash', args: {command: 'ls'}}});
    const cand = (ps, fin) => ({candidates: [{content: {role: 'model', parts: ps}, index: 0, ...(fin ? {finishReason: 'STOP'} : {})}],
      modelVersion: model, responseId: `fake-${call ? 'call' : 'text'}`});
    if (!stream) return {kind: 'json', body: Buffer.from(JSON.stringify({...cand(parts, true), usageMetadata: u}))};
    const chunks = [cand([{text: text.slice(0, 9)}], false), {...cand(parts.slice(1).length ? [{text: text.slice(9)}, ...parts.slice(1)] : [{text: text.slice(9)}], true), usageMetadata: u}];
    return {kind: 'sse', body: sse(chunks.map(c => ['', c]), false)};
  },
};

// The recall mode's answer to this request ({kind, body, status, headers} like a fixture), or null.
export function recallAnswer(route, body, headers) {
  const req = json(body.toString('utf8'));
  if (!req || !route) return null;
  const op = route.op === 'generateContent' || route.op === 'streamGenerateContent' ? 'gemini' : route.op;
  const usage = {input: Math.ceil(body.length / 4), output: 7};
  const model = req.model ?? 'gemini-fake';
  const result = recallResult(route.provider, route.op, req);
  const always = headers['x-fake-recall-always'] === '1';
  let a;
  if (result !== null && !always) {
    a = ANSWERS[op](route.stream, model, usage, `Recalled: ${result}`, [], false, req.stream_options?.include_usage);
  } else if (offersTool(route.provider, route.op, req)) {
    const asked = Number(headers['x-fake-recall-repeat'] ?? 1);
    const repeat = Number.isInteger(asked) ? Math.max(0, Math.min(100000, asked)) : 1;
    const args = recallArgs(headers, body.toString('utf8'));
    a = ANSWERS[op](route.stream, model, usage, 'Let me read the archived output.', Array(repeat).fill(args),
      headers['x-fake-recall-client-call'] === '1', req.stream_options?.include_usage,
      Number(headers['x-fake-sequence-start']) || 0);
  } else {
    return null;
  }
  return {name: 'recall', ...a, status: 200, statusMessage: 'OK',
    headers: [['content-type', a.kind === 'sse' ? 'text/event-stream' : 'application/json']]};
}
