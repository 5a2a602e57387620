// A recorded agent history (tests/fixtures/replay) as the request body of
// each wire format, ending with a user message of the test's choosing: the
// long bodies the compaction and recovery tests send through tokendiet.
import fs from 'node:fs';
import path from 'node:path';
import {SOURCE_DIR} from './processes.mjs';

const FIXTURES = process.env.TD_FIXTURES || path.join(SOURCE_DIR, 'tests', 'fixtures');

// The trajectory's messages (OpenAI chat shape) up to its last assistant message.
export function recordedHistory(name = 'mini-swe-agent-12.json') {
  const t = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'replay', name), 'utf8'));
  const last = t.messages.map(m => m.role).lastIndexOf('assistant');
  return t.messages.slice(0, last);
}

// Where each request of a recorded session ends: before each of its
// assistant messages past the first user turn (the answer it got).
export function requestEnds(history) {
  return history.flatMap((m, i) => (m.role === 'assistant' && i > 1 ? [i] : []));
}

export function fixtureText(rel) {
  return fs.readFileSync(path.join(FIXTURES, rel), 'utf8');
}

const text = m => typeof m.content === 'string' ? m.content : (m.content || []).map(p => p.text || '').join('');
const SHELL = {name: 'shell', description: 'Run a shell command', parameters: {type: 'object', properties: {cmd: {type: 'string'}}}};

// {path, body} of `history` + a user message `last` in `format`
// (openai_chat | openai_responses | anthropic | gemini). tools: whether
// the request defines the shell tool.
export function agentRequest(format, history, last, {model, tools = true, stream = false, extra = {}} = {}) {
  const system = history.filter(m => m.role === 'system').map(text).join('\n');
  const turns = history.filter(m => m.role !== 'system');
  if (format === 'openai_chat') {
    const body = {model: model ?? 'gpt-4o', messages: [...history, {role: 'user', content: last}], ...extra};
    if (tools) body.tools = [{type: 'function', function: SHELL}];
    if (stream) body.stream = true;
    return {path: '/v1/chat/completions', body: JSON.stringify(body)};
  }
  if (format === 'openai_responses') {
    const input = [];
    for (const m of turns) {
      if (m.role === 'tool') input.push({type: 'function_call_output', call_id: m.tool_call_id, output: text(m)});
      else {
        if (text(m)) input.push({type: 'message', role: m.role,
          content: [{type: m.role === 'user' ? 'input_text' : 'output_text', text: text(m)}]});
        for (const c of m.tool_calls || [])
          input.push({type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments});
      }
    }
    input.push({type: 'message', role: 'user', content: [{type: 'input_text', text: last}]});
    const body = {model: model ?? 'gpt-5.1-codex', instructions: system, input, ...extra};
    if (tools) body.tools = [{type: 'function', ...SHELL}];
    if (stream) body.stream = true;
    return {path: '/v1/responses', body: JSON.stringify(body)};
  }
  if (format === 'anthropic') {
    const messages = [];
    for (const m of turns) {
      if (m.role === 'tool') {
        const block = {type: 'tool_result', tool_use_id: m.tool_call_id, content: text(m)};
        const prev = messages[messages.length - 1];
        if (prev?.role === 'user' && Array.isArray(prev.content) && prev.content[0]?.type === 'tool_result') prev.content.push(block);
        else messages.push({role: 'user', content: [block]});
      } else if (m.role === 'assistant') {
        const content = [];
        if (text(m)) content.push({type: 'text', text: text(m)});
        for (const c of m.tool_calls || []) content.push({type: 'tool_use', id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments)});
        messages.push({role: 'assistant', content});
      } else messages.push({role: 'user', content: text(m)});
    }
    messages.push({role: 'user', content: [{type: 'text', text: last}]});
    const body = {model: model ?? 'claude-sonnet-4-5', max_tokens: 8192, system: [{type: 'text', text: system}], messages, ...extra};
    if (tools) body.tools = [{name: SHELL.name, description: SHELL.description, input_schema: SHELL.parameters}];
    if (stream) body.stream = true;
    return {path: '/v1/messages', body: JSON.stringify(body)};
  }
  if (format === 'gemini') {
    const contents = [];
    const names = {};
    for (const m of turns) {
      if (m.role === 'tool') {
        const part = {functionResponse: {name: names[m.tool_call_id] ?? 'shell', response: {output: text(m)}}};
        const prev = contents[contents.length - 1];
        if (prev?.role === 'user' && prev.parts[0]?.functionResponse) prev.parts.push(part);
        else contents.push({role: 'user', parts: [part]});
      } else if (m.role === 'assistant') {
        const parts = [];
        if (text(m)) parts.push({text: text(m)});
        for (const c of m.tool_calls || []) {
          names[c.id] = c.function.name;
          parts.push({functionCall: {name: c.function.name, args: JSON.parse(c.function.arguments)}});
        }
        contents.push({role: 'model', parts});
      } else contents.push({role: 'user', parts: [{text: text(m)}]});
    }
    contents.push({role: 'user', parts: [{text: last}]});
    const body = {contents, systemInstruction: {parts: [{text: system}]}, ...extra};
    if (tools) body.tools = [{functionDeclarations: [SHELL]}];
    const m = model ?? 'gemini-2.5-pro';
    return {path: `/v1beta/models/${m}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body: JSON.stringify(body)};
  }
  throw new Error(`agentRequest: unknown format ${format}`);
}
