// The replay trajectories (tests/fixtures/replay, format in its README) as
// the survival benchmark sends them, and retention as `tokendiet replay`
// measures it, ported from cli/replay_retention.{hpp,cpp} and the text
// extraction of cli/replay.cpp (parse_trajectory for the original messages,
// measure() for a body as sent):
//   A reference is a maximal run of [A-Za-z0-9_./:-], at least 6 characters
//   long, containing a digit or one of _ . / : . A reference found in
//   assistant message k counts when the earliest message before k containing
//   it is a tool result and no system or user message before k contains it.
//   It is retained when request k, as sent upstream, still contains it
//   (substring test on every text of every message). Retention = retained /
//   counted.
import fs from 'node:fs';
import path from 'node:path';

// ---- the trajectories and their requests ----

// Request t of a trajectory is its messages before its t-th assistant message
// (cli/replay.cpp request_sizes): the number of messages of each request.
function requestSizes(messages) {
  const out = [];
  for (let k = 1; k < messages.length; k++) if (messages[k]?.role === 'assistant') out.push(k);
  return out;
}

// Every trajectory in `dir` (sorted by name), or only those named in `only`.
export function loadTrajectories(dir, only = null) {
  const files = fs.readdirSync(dir).filter(f => f.endsWith('.json')).sort();
  const out = [];
  for (const f of files) {
    const id = f.replace(/\.json$/, '');
    if (only && !only.includes(id)) continue;
    const doc = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const messageJson = doc.messages.map(m => JSON.stringify(m));
    out.push({
      id: doc.id ?? id, model: doc.model ?? '', messageJson,
      texts: doc.messages.map(originalText),
      steps: requestSizes(doc.messages),
    });
  }
  if (only) {
    const missing = only.filter(id => !out.some(t => t.id === id));
    if (missing.length) throw new Error(`no trajectory ${missing.join(', ')} in ${dir}`);
  }
  return out;
}

// The body of the request made of the first n messages, as `tokendiet replay`
// builds it (cli/replay.cpp request_body): {"model": ..., "messages": [...]}.
export function requestBody(t, n) {
  return Buffer.from(`{"model":${JSON.stringify(t.model)},"messages":[${t.messageJson.slice(0, n).join(',')}]}`);
}

// ---- texts ----

const appendLine = (out, s) => (!s ? out : out ? `${out}\n${s}` : s);

// Every string value in a JSON value; other scalars as compact JSON (collect_strings).
function collectStrings(v, out) {
  if (typeof v === 'string') return appendLine(out, v);
  if (Array.isArray(v)) { for (const e of v) out = collectStrings(e, out); return out; }
  if (v && typeof v === 'object') { for (const e of Object.values(v)) out = collectStrings(e, out); return out; }
  if (v === null || v === undefined) return out;
  return appendLine(out, JSON.stringify(v));
}

function parsedArguments(raw) {
  if (typeof raw !== 'string') return undefined;
  try { return JSON.parse(raw); } catch { return undefined; }
}

const SPEAKERS = {system: 'system', developer: 'system', assistant: 'assistant', tool: 'tool', function: 'tool'};

// An original message as text (cli/replay.cpp parse_trajectory).
function originalText(m) {
  let text = '';
  if (m.content !== undefined) text = collectStrings(m.content, text);
  if (typeof m.reasoning_content === 'string') text = appendLine(text, m.reasoning_content);
  for (const call of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    const raw = call?.function?.arguments;
    if (raw === undefined) continue;
    const args = parsedArguments(raw);
    text = args === undefined ? appendLine(text, raw) : collectStrings(args, text);
  }
  return {speaker: SPEAKERS[m.role] ?? 'user', text};
}

// Every text of a chat body as sent, in the order the OpenAI chat adapter
// reads a message's parts (cli/replay_measure.cpp measure): reasoning, content, tool
// calls (their arguments, then the strings in them).
export function sentText(body) {
  let doc;
  try { doc = JSON.parse(body.toString('utf8')); } catch { return ''; }
  let out = '';
  for (const m of Array.isArray(doc?.messages) ? doc.messages : []) {
    if (!m || typeof m !== 'object') continue;
    if (typeof m.reasoning_content === 'string') out = appendLine(out, m.reasoning_content);
    if (typeof m.reasoning === 'string') out = appendLine(out, m.reasoning);
    if (typeof m.content === 'string') out = appendLine(out, m.content);
    else if (Array.isArray(m.content)) {
      for (const c of m.content) if (c?.type === 'text' && typeof c.text === 'string') out = appendLine(out, c.text);
    }
    const calls = [...(Array.isArray(m.tool_calls) ? m.tool_calls.map(c => c?.function ?? c?.custom) : []), m.function_call];
    for (const fn of calls) {
      const raw = fn?.arguments ?? fn?.input;
      if (typeof raw !== 'string') continue;
      out = appendLine(out, raw);
      const args = parsedArguments(raw);
      if (args !== undefined) out = appendLine(out, collectStrings(args, ''));
    }
  }
  return out;
}

// ---- references ----

const IN_CLASS = /[A-Za-z0-9_./:-]+/g;
const QUALIFIES = /[0-9_./:]/;

// The references of `text`, in order of first appearance, without repeats.
export function extractReferences(text) {
  const seen = new Set();
  for (const [run] of text.matchAll(IN_CLASS)) if (run.length >= 6 && QUALIFIES.test(run)) seen.add(run);
  return [...seen];
}

// The references of assistant message k that count, for each k; where each
// reference was first seen is remembered (ReferenceIndex).
export class ReferenceIndex {
  constructor(texts) { this.texts = texts; this.memo = new Map(); }

  seen(ref) {
    let s = this.memo.get(ref);
    if (s) return s;
    const n = this.texts.length;
    s = {first: n, firstUser: n};
    for (let i = 0; i < n; i++) {
      const m = this.texts[i];
      const user = m.speaker === 'system' || m.speaker === 'user';
      if (s.first < n && !user) continue;  // only a user sighting can still matter
      if (!m.text.includes(ref)) continue;
      if (s.first === n) s.first = i;
      if (user) { s.firstUser = i; break; }
    }
    this.memo.set(ref, s);
    return s;
  }

  counted(k) {
    if (k >= this.texts.length || this.texts[k].speaker !== 'assistant') return [];
    return extractReferences(this.texts[k].text).filter(ref => {
      const s = this.seen(ref);
      return s.first < k && this.texts[s.first].speaker === 'tool' && !(s.firstUser < k);
    });
  }
}

// {counted, retained} of `refs` in the text of a sent body.
export function retained(refs, text) {
  let kept = 0;
  for (const ref of refs) if (text.includes(ref)) kept++;
  return {counted: refs.length, retained: kept};
}
