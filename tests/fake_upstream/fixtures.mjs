// Loads the provider fixtures (tests/fixtures/{synth,wire}) the fake upstream
// serves, and knows how to cut an SSE body into events and where its usage is.
// Shared by the fake upstream and by the tests that compare against it.
import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';

const here = path.dirname(url.fileURLToPath(import.meta.url));
export const FIXTURES_DIR = process.env.TD_FIXTURES || path.resolve(here, '..', 'fixtures');
// Recordings first: a synthesized file never shadows a real one.
const DIRS = ['wire', 'synth'];

// Headers a recording may carry that describe the recorded connection, not the
// response: the fake upstream frames its own bodies, so it drops these.
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive',
  'content-encoding', 'proxy-connection', 'upgrade', 'trailer', 'te']);

const cache = new Map();

// A fixture: {name, kind: 'json'|'sse', body: Buffer, status, statusMessage,
// headers: [[name, value], ...] (order and repeats as recorded, framing removed)}.
export function loadFixture(name, dir = FIXTURES_DIR) {
  const key = `${dir}\0${name}`;
  if (cache.has(key)) return cache.get(key);
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`bad fixture name ${JSON.stringify(name)}`);
  for (const sub of DIRS) {
    for (const kind of ['sse', 'json']) {
      const file = path.join(dir, sub, `${name}.${kind}`);
      if (!fs.existsSync(file)) continue;
      const body = fs.readFileSync(file);
      let status = 200, statusMessage = 'OK', headers = null;
      const hfile = path.join(dir, sub, `${name}.headers.json`);
      if (fs.existsSync(hfile)) {
        const h = JSON.parse(fs.readFileSync(hfile, 'utf8'));
        status = h.status.code;
        statusMessage = h.status.message;
        headers = [];
        for (const [k, vs] of Object.entries(h.headers))
          for (const v of vs) if (!FRAMING.has(k.toLowerCase())) headers.push([k, v]);
      } else {
        headers = [['content-type', kind === 'sse' ? 'text/event-stream' : 'application/json']];
      }
      const fx = {name, kind, dir: sub, file, body, status, statusMessage, headers};
      cache.set(key, fx);
      return fx;
    }
  }
  throw new Error(`no fixture named ${name} under ${dir}/{${DIRS}}`);
}

export function fixtureNames(dir = FIXTURES_DIR) {
  const names = new Set();
  for (const sub of DIRS)
    for (const f of fs.readdirSync(path.join(dir, sub))) {
      const m = /^(.*)\.(sse|json)$/.exec(f);
      if (m && !m[1].endsWith('.headers') && !m[1].endsWith('.request')) names.add(m[1]);
    }
  return [...names].sort();
}

// Splits an SSE body into events, each keeping its own blank-line terminator
// (LF or CRLF), so that Buffer.concat(events) equals the body.
export function sseEvents(body) {
  const events = [];
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== 0x0a) continue;
    // An event ends at an empty line: "\n\n" or "\r\n\r\n".
    if (body[i + 1] === 0x0a) { events.push(body.subarray(start, i + 2)); start = i + 2; i++; }
    else if (body[i + 1] === 0x0d && body[i + 2] === 0x0a) { events.push(body.subarray(start, i + 3)); start = i + 3; i += 2; }
  }
  if (start < body.length) events.push(body.subarray(start));
  return events;
}

// The data payloads (JSON text) of an SSE body, `[DONE]` excluded.
export function sseData(body) {
  const out = [];
  for (const ev of sseEvents(Buffer.isBuffer(body) ? body : Buffer.from(body))) {
    const lines = ev.toString('utf8').split(/\r?\n/);
    const data = lines.filter(l => l.startsWith('data:')).map(l => l.slice(5).replace(/^ /, '')).join('\n');
    if (data && data !== '[DONE]') out.push(data);
  }
  return out;
}

// The usage a response body reports, as the provider wrote it: OpenAI chat
// `usage` (last non-null in a stream), Responses `response.usage`, Gemini
// `usageMetadata` (last chunk), Anthropic `message_start.message.usage` merged
// with the cumulative `message_delta.usage`. null when the body has none.
export function usageOf(body, kind) {
  const docs = [];
  if (kind === 'sse') {
    for (const d of sseData(body)) { try { docs.push(JSON.parse(d)); } catch { /* not JSON */ } }
  } else {
    try { docs.push(JSON.parse(body.toString('utf8'))); } catch { return null; }
  }
  let usage = null;
  for (const d of docs) {
    if (!d || typeof d !== 'object') continue;
    if (d.type === 'message_start' && d.message?.usage) usage = {...d.message.usage};
    else if (d.type === 'message_delta' && d.usage) usage = {...(usage || {}), ...d.usage};
    else if (d.response?.usage) usage = d.response.usage;
    else if (d.usageMetadata) usage = d.usageMetadata;
    else if (d.usage) usage = d.usage;
  }
  return usage;
}

// What OpenAI sends for a chat stream whose request did not ask for usage,
// given the recording of one that did (stream_options.include_usage): the same
// events without their `"usage":null` members and without the usage-only chunk
// (`"choices":[]` + usage) before [DONE]. This is the documented difference
// (shared/reference/landscape.md 4.1); the obfuscation padding stays as recorded.
export function stripOpenAIUsage(events) {
  const out = [];
  for (const ev of events) {
    const text = ev.toString('latin1');
    if (/^data: \{.*"choices":\[\],"usage":\{/m.test(text)) continue;
    out.push(Buffer.from(text.replaceAll(',"usage":null', ''), 'latin1'));
  }
  return out;
}
