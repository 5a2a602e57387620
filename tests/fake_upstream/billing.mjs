// The fake upstream's billing mode: each request charged as its provider bills
// it with prompt caching, the cached counts written into the usage the answer
// reports (in each provider's own fields, so a client reading usage sees what
// it would), and a bill the tests read (fake.billing.summary()). Used by the
// real-CLI suite (tests/realcli/) to compare a session's cost direct and
// through tokendiet.
//
// Token counts are a deterministic estimate, the same for every arm: a
// request's input is ceil(body bytes / 4) (as the quota mode counts it); a
// cached prefix is measured in bytes of the prompt in the provider's cache
// order, / 4. The caches, per provider, API key and model, as each provider
// documents them (docs/benchmarks.md §The real agent CLIs says which figures
// came from where):
//   anthropic  explicit: the blocks (tools, system, messages) up to a
//              cache_control breakpoint (or the last block under top-level
//              cache_control) are a prefix; a request reads the longest prefix
//              an earlier request wrote that ends at one of its breakpoints or
//              at one of the 20 block boundaries before each; it writes the rest
//              up to its last breakpoint (5 min: 1.25 x the input price, ttl 1h:
//              2 x); a prefix under the model's minimum is not cached.
//   openai     automatic (chat and Responses): the longest prefix seen before,
//              from 1,024 tokens, in 128-token steps, read at the model's
//              cached price; nothing extra for writing.
//   gemini     implicit: the same prefix model as OpenAI's from the model's
//              minimum (2,048 tokens on 2.5, 4,096 on 3 and later; Google
//              documents no step, 128 tokens is assumed), read at 10 % of the
//              input price, nothing extra for writing.
// Every cache entry lives 5 minutes from its last use (longer than a session).
import crypto from 'node:crypto';
import {apiKeyOf} from './quota.mjs';

const TTL_MS = 5 * 60_000;
const LOOKBACK_BLOCKS = 20;     // Anthropic: block boundaries checked before a breakpoint
const STEP_BYTES = 128 * 4;     // automatic caches grow in 128-token steps

// USD per million tokens: [pattern, input, cached read, output, minimum cacheable tokens],
// the providers' list prices (Claude Opus 5.5: $4 / $0.20 read / $20, writes $5 and $8).
// Anthropic's cache write is 1.25 x input (2 x for a 1 h ttl); first match wins.
const PRICES = {
  anthropic: [[/haiku/, 1, 0.1, 5, 4096], [/opus-5-5/, 4, 0.2, 20, 512], [/opus-5/, 5, 0.5, 25, 512],
    [/sonnet-5/, 2, 0.2, 10, 1024], [/sonnet/, 3, 0.3, 15, 1024], [/opus/, 5, 0.5, 25, 4096], [/./, 3, 0.3, 15, 1024]],
  openai: [[/mini/, 0.25, 0.025, 2, 1024], [/nano/, 0.05, 0.005, 0.4, 1024], [/gpt-4o/, 2.5, 1.25, 10, 1024],
    [/gpt-4\.1/, 2, 0.5, 8, 1024], [/./, 1.25, 0.125, 10, 1024]],
  gemini: [[/flash-lite/, 0.1, 0.01, 0.4, 2048], [/2\.5-flash/, 0.3, 0.03, 2.5, 2048], [/2\.5-pro/, 1.25, 0.125, 10, 2048],
    [/flash/, 0.5, 0.05, 3, 4096], [/./, 2, 0.2, 12, 4096]],
};

export function priceOf(provider, model) {
  const [, input, read, output, minTokens] = PRICES[provider].find(([re]) => re.test(model));
  return {input, read, output, minTokens, write5m: input * 1.25, write1h: input * 2};
}

const tokensOf = bytes => Math.ceil(bytes / 4);

function jsonOf(body) {
  try { return JSON.parse(body.toString('utf8')); } catch { return null; }
}

function modelOf(route, json, url) {
  if (route.provider === 'gemini') return /\/models\/([^/:]+):/.exec(url.pathname)?.[1] ?? 'unknown';
  return typeof json?.model === 'string' ? json.model : 'unknown';
}

// Anthropic's cache order cut into blocks: [{text, mark}] where mark is null
// or the breakpoint's ttl ('5m' | '1h').
function anthropicBlocks(json) {
  const blocks = [];
  // A breakpoint is not part of what the cache matches: clients move theirs every turn.
  const bare = b => (b && typeof b === 'object' && !Array.isArray(b) && 'cache_control' in b
    ? Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'cache_control')) : b);
  const add = (b, role) => {
    const cc = b && typeof b === 'object' ? b.cache_control : null;
    const keyed = role === undefined ? bare(b) : {role, c: bare(b)};
    blocks.push({text: JSON.stringify(keyed) ?? 'null', mark: cc ? (cc.ttl === '1h' ? '1h' : '5m') : null});
  };
  for (const t of Array.isArray(json.tools) ? json.tools : []) add(t);
  if (typeof json.system === 'string') add(json.system);
  else for (const s of Array.isArray(json.system) ? json.system : []) add(s);
  for (const m of Array.isArray(json.messages) ? json.messages : []) {
    const content = Array.isArray(m?.content) ? m.content : [m?.content];
    // The role is part of what is cached: the same text from the other side is another prefix.
    content.forEach((c, i) => add(c, i === 0 ? m?.role ?? null : undefined));
  }
  if (json.cache_control && blocks.length && !blocks.some(b => b.mark))
    blocks[blocks.length - 1].mark = json.cache_control.ttl === '1h' ? '1h' : '5m';
  return blocks;
}

// The prompt in the order an automatic cache sees it (tools and instructions
// first, then the conversation), as one string.
function automaticPrompt(route, json) {
  const s = v => JSON.stringify(v ?? null);
  if (route.provider === 'gemini')
    return s(json.tools) + s(json.systemInstruction ?? json.system_instruction) + (json.contents || []).map(s).join('');
  if (route.op === 'responses') {
    const input = Array.isArray(json.input) ? json.input.map(s).join('') : s(json.input);
    return s(json.tools) + s(json.instructions) + input;
  }
  return s(json.tools) + (json.messages || []).map(s).join('');
}

export function createBilling() {
  const caches = new Map();  // identity -> Map(prefix hash -> expires at)
  const lastCached = new Map();  // identity -> the previous request's cached tokens
  const charges = [];

  function cacheOf(identity, now) {
    let c = caches.get(identity);
    if (!c) caches.set(identity, c = new Map());
    for (const [h, exp] of c) if (exp <= now) c.delete(h);
    return c;
  }

  // Anthropic: {read, creation, creation1h} in tokens.
  function anthropicCache(cache, json, minTokens, now) {
    const blocks = anthropicBlocks(json);
    const hash = crypto.createHash('sha256');
    const ends = [];  // per block: {hash, bytes} of the prefix ending with it
    let bytes = 0;
    for (const b of blocks) {
      hash.update(b.text);
      bytes += Buffer.byteLength(b.text);
      ends.push({hash: hash.copy().digest('hex'), bytes});
    }
    let readBytes = 0;
    const marks = blocks.flatMap((b, i) => (b.mark ? [i] : []));
    for (const i of marks)
      for (let j = i; j >= Math.max(0, i - LOOKBACK_BLOCKS); j--)
        if (cache.has(ends[j].hash)) { readBytes = Math.max(readBytes, ends[j].bytes); cache.set(ends[j].hash, now + TTL_MS); break; }
    let creation = 0, creation1h = 0, written = readBytes;
    for (const i of marks) {
      if (tokensOf(ends[i].bytes) < minTokens) continue;
      cache.set(ends[i].hash, now + TTL_MS);
      if (ends[i].bytes <= written) continue;
      const t = tokensOf(ends[i].bytes) - tokensOf(written);
      if (blocks[i].mark === '1h') creation1h += t; else creation += t;
      written = ends[i].bytes;
    }
    return {read: tokensOf(readBytes), creation, creation1h};
  }

  // OpenAI and Gemini: the longest earlier-seen prefix in whole steps, from minTokens.
  function automaticCache(cache, prompt, minTokens, now) {
    const buf = Buffer.from(prompt);
    const hash = crypto.createHash('sha256');
    let readBytes = 0;
    for (let at = 0; at + STEP_BYTES <= buf.length; at += STEP_BYTES) {
      hash.update(buf.subarray(at, at + STEP_BYTES));
      const h = hash.copy().digest('hex'), end = at + STEP_BYTES;
      if (cache.has(h) && end / 4 >= minTokens) readBytes = end;
      if (end / 4 >= minTokens) cache.set(h, now + TTL_MS);
    }
    return {read: readBytes / 4, creation: 0, creation1h: 0};
  }

  // Charges one request; returns {provider, model, input (all prompt tokens),
  // cached, creation, creation1h, uncached} for the answer's usage. null for a
  // body that is not JSON (answered as usual, billed nothing).
  function charge(route, req, body, url, now = Date.now()) {
    const json = jsonOf(body);
    if (!json || typeof json !== 'object') return null;
    const model = modelOf(route, json, url);
    const identity = `${route.provider}|${apiKeyOf(req, url)}|${model}`;
    const price = priceOf(route.provider, model);
    const input = tokensOf(body.length);
    const cache = cacheOf(identity, now);
    const c = route.provider === 'anthropic' ? anthropicCache(cache, json, price.minTokens, now)
      : automaticCache(cache, automaticPrompt(route, json), price.minTokens, now);
    const cached = Math.min(c.read, input);
    const creation = Math.min(c.creation, input - cached), creation1h = Math.min(c.creation1h, input - cached - creation);
    const entry = {provider: route.provider, model, identity, input, cached, creation, creation1h,
      uncached: input - cached - creation - creation1h, output: 0,
      cache_break: lastCached.has(identity) && cached < lastCached.get(identity)};
    lastCached.set(identity, cached);
    charges.push(entry);
    return entry;
  }

  // Records the answer's output tokens on a charge.
  function settle(entry, outputTokens) {
    if (entry) entry.output = outputTokens || 0;
  }

  const costOf = e => {
    const p = priceOf(e.provider, e.model);
    return (e.uncached * p.input + e.cached * p.read + e.creation * p.write5m + e.creation1h * p.write1h +
      e.output * p.output) / 1e6;
  };

  // The bill of the requests `keep` selects (all by default): counts, USD, cache breaks.
  function summary(keep = () => true) {
    const s = {requests: 0, input: 0, cached: 0, creation: 0, output: 0, cost: 0, cache_breaks: 0};
    for (const e of charges.filter(keep)) {
      s.requests++;
      s.input += e.input;
      s.cached += e.cached;
      s.creation += e.creation + e.creation1h;
      s.output += e.output;
      s.cost += costOf(e);
      if (e.cache_break) s.cache_breaks++;
    }
    return s;
  }

  return {charge, settle, summary, charges, costOf, clear() { caches.clear(); lastCached.clear(); charges.length = 0; }};
}
