// The fake upstream's quota mode: per-minute token and request limits counted
// the way each provider counts them, the provider's rate-limit headers on every
// answer, and a 429 in the provider's shape when a request does not fit. The
// rules are listed in server.mjs's header comment; the wire shapes (429 bodies,
// header formats, the usage the answer reports) are in quota_wire.mjs.
//
// Every limit is a token bucket: it holds `limit`, refills continuously at
// limit / windowMs and never above `limit`. Anthropic documents this algorithm;
// OpenAI's recorded headers match it (x-ratelimit-reset-requests "6ms" with
// 9999 of 10000 requests left: one request refills in a minute / 10000).
// Buckets are per provider, API key and model, as providers keep them.
import crypto from 'node:crypto';
import {openaiHeaders, anthropicHeaders} from './quota_wire.mjs';

// Requests per window when none is configured: what the recorded OpenAI
// answers show (tests/fixtures/wire/openai-chat-nonstream.headers.json).
const DEFAULT_RPM = 10_000;
const DEFAULT_CACHE_TTL_MS = 5 * 60_000;  // Anthropic's default ephemeral cache

// The options of startFakeUpstream({quota}) made whole; null when quota mode is off.
export function quotaConfig(q) {
  if (!q) return null;
  const n = (v, dflt) => (v == null ? dflt : Number(v));
  const tpm = n(q.tpm, Infinity);
  const cfg = {
    tpm,
    itpm: n(q.itpm, tpm),
    otpm: n(q.otpm, tpm),
    rpm: n(q.rpm, DEFAULT_RPM),
    windowMs: n(q.windowMs, 60_000),
    cacheTtlMs: n(q.cacheTtlMs, DEFAULT_CACHE_TTL_MS),
  };
  for (const [k, v] of Object.entries(cfg))
    if (!(v > 0)) throw new Error(`quota: ${k} must be a positive number, got ${v}`);
  return cfg;
}

// The slack a refilled amount may miss by: the time until a request fits is
// rounded up to whole milliseconds, so after that wait it must fit.
const EPSILON = 1e-6;

export class Bucket {
  constructor(limit, windowMs, now) {
    this.limit = limit;
    this.rate = limit / windowMs;  // per ms
    this.level = limit;
    this.at = now;
  }
  refill(now) {
    if (now > this.at) { this.level = Math.min(this.limit, this.level + (now - this.at) * this.rate); this.at = now; }
  }
  // Milliseconds until n fit (a request larger than the limit waits for a full
  // bucket, and still does not fit then, as with the providers).
  waitMs(n, now) {
    this.refill(now);
    // Never 0 for n > limit: a full bucket must not admit it (and go deep below zero).
    if (n > this.limit) return Math.max(1, Math.ceil((this.limit - this.level) / this.rate));
    if (n <= this.level + EPSILON) return 0;
    return Math.ceil((n - this.level) / this.rate);
  }
  // Below zero when a settled bill exceeds what was reserved: later requests pay it back.
  take(n) { this.level -= n; }
  remaining(now) { this.refill(now); return Math.max(0, Math.floor(this.level + EPSILON)); }
  fullInMs(now) { this.refill(now); return Math.max(0, Math.ceil((this.limit - this.level) / this.rate - EPSILON)); }
  snapshot(now) { return {limit: this.limit, remaining: this.remaining(now), full_in_ms: this.fullInMs(now)}; }
}

// The API key a request authenticates with, as each provider reads it.
export function apiKeyOf(req, url) {
  const auth = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization || ''));
  return req.headers['x-fake-quota-key'] || auth?.[1] || req.headers['x-api-key'] ||
    req.headers['x-goog-api-key'] || url.searchParams.get('key') || 'anonymous';
}

function jsonOf(body) {
  try { return JSON.parse(body.toString('utf8')); } catch { return null; }
}

function modelOf(route, json, url) {
  if (route.provider === 'gemini') return /\/models\/([^/:]+):/.exec(url.pathname)?.[1] ?? 'unknown';
  return typeof json?.model === 'string' ? json.model : 'unknown';
}

// The output a request reserves at admission: what it allows the model to write.
function reservedOutput(route, json) {
  const int = v => (Number.isInteger(v) && v > 0 ? v : 0);
  if (route.provider === 'openai') {
    if (route.op === 'responses') return int(json?.max_output_tokens);
    return int(json?.max_completion_tokens ?? json?.max_tokens) * Math.max(1, int(json?.n));
  }
  if (route.provider === 'anthropic') return int(json?.max_tokens);
  return 0;
}

// Anthropic's cache order (tools, then system, then messages), cut into the
// blocks a cache_control breakpoint can sit on. Each breakpoint ends a prefix:
// {hash, bytes} of every block up to and including it.
function cachePrefixes(json) {
  if (!json || typeof json !== 'object') return [];
  const blocks = [];
  if (Array.isArray(json.tools)) blocks.push(...json.tools);
  if (typeof json.system === 'string') blocks.push(json.system);
  else if (Array.isArray(json.system)) blocks.push(...json.system);
  for (const m of Array.isArray(json.messages) ? json.messages : []) {
    const content = Array.isArray(m?.content) ? m.content : [m?.content];
    // The role is part of what is cached: the same text from the other side is another prefix.
    content.forEach((c, i) => blocks.push(i === 0 ? {role: m?.role, c} : c));
  }
  const out = [];
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  for (const b of blocks) {
    const text = JSON.stringify(b) ?? 'null';
    hash.update(text);
    bytes += Buffer.byteLength(text);
    const marked = b && typeof b === 'object' && (b.cache_control || b.c?.cache_control);
    if (marked) out.push({hash: hash.copy().digest('hex'), bytes});
  }
  return out;
}

export const tokensOfBytes = bytes => Math.ceil(bytes / 4);

export function createQuota(options) {
  const cfg = quotaConfig(options);
  if (!cfg) return null;
  const states = new Map();  // identity -> {buckets, cache: Map(prefix hash -> expires at)}

  function stateOf(identity, provider, now) {
    let s = states.get(identity);
    if (s) return s;
    const b = limit => (Number.isFinite(limit) ? new Bucket(limit, cfg.windowMs, now) : null);
    s = provider === 'anthropic'
      ? {provider, buckets: {requests: b(cfg.rpm), input: b(cfg.itpm), output: b(cfg.otpm)}, cache: new Map()}
      : {provider, buckets: {requests: b(cfg.rpm), tokens: b(cfg.tpm)}, cache: new Map()};
    states.set(identity, s);
    return s;
  }

  // Anthropic: the longest earlier-cached prefix is read; the prefixes this
  // request marks are written (and their lifetime renewed, as a hit does).
  function cacheUse(s, json, now) {
    const prefixes = cachePrefixes(json);
    for (const [h, exp] of s.cache) if (exp <= now) s.cache.delete(h);
    let readBytes = 0;
    for (const p of prefixes) if (s.cache.has(p.hash)) readBytes = Math.max(readBytes, p.bytes);
    const lastBytes = prefixes.length ? prefixes[prefixes.length - 1].bytes : 0;
    for (const p of prefixes) s.cache.set(p.hash, now + cfg.cacheTtlMs);
    const read = tokensOfBytes(readBytes);
    return {read, creation: Math.max(0, tokensOfBytes(lastBytes) - read)};
  }

  // Decides one request. Returns what the server needs: admitted or not, the
  // headers to send, what was counted (for the record and the usage the answer
  // reports), and settle(usage) to call once the answer is sent.
  function admit(route, req, body, url, now = Date.now()) {
    const json = jsonOf(body);
    const model = modelOf(route, json, url);
    const identity = `${route.provider}|${apiKeyOf(req, url)}|${model}`;
    const s = stateOf(identity, route.provider, now);
    const estimate = tokensOfBytes(body.length);
    // input: what the input (or combined) quota is charged for the prompt; of
    // it, cache_creation tokens were written to Anthropic's cache.
    const counted = {estimate, input: estimate, cache_read: 0, cache_creation: 0, reserved_output: reservedOutput(route, json)};
    // What each bucket is asked for; Gemini's per-minute token quota is on input.
    const asks = {requests: 1};
    if (route.provider === 'openai') asks.tokens = estimate + counted.reserved_output;
    else if (route.provider === 'gemini') asks.tokens = estimate;
    else {
      // Cache reads are left out of the input count before it is checked, so
      // the cache is only looked at (not written) until the request is admitted.
      const probe = {...s, cache: new Map(s.cache)};
      const c = cacheUse(probe, json, now);
      counted.input = Math.max(0, estimate - c.read);
      asks.input = counted.input;
      asks.output = counted.reserved_output;
    }
    let waitMs = 0, limited = null;
    for (const [name, n] of Object.entries(asks)) {
      const w = s.buckets[name]?.waitMs(n, now) ?? 0;
      if (w > waitMs) { waitMs = w; limited = name; }
    }
    const admitted = waitMs === 0;
    if (admitted) {
      for (const [name, n] of Object.entries(asks)) s.buckets[name]?.take(n);
      if (route.provider === 'anthropic') {
        const c = cacheUse(s, json, now);
        counted.cache_read = c.read;
        counted.cache_creation = Math.min(c.creation, counted.input);
      }
    }
    const headers = route.provider === 'openai' ? openaiHeaders(s.buckets, now, admitted ? 0 : waitMs)
      : route.provider === 'anthropic' ? anthropicHeaders(s.buckets, now, admitted ? 0 : waitMs)
        : [];  // Gemini sends no rate-limit headers
    const limit = limited ? s.buckets[limited].limit : null;
    const record = {identity, model, admitted, limited, limit, wait_ms: waitMs, requested: limited ? asks[limited] : null,
      remaining: limited ? s.buckets[limited].remaining(now) : null, ...counted, settled_output: null};
    let settled = !admitted;
    return {
      admitted, provider: route.provider, model, waitMs, limited, counted, headers, record,
      settle(usage) {
        if (settled) return;
        settled = true;
        const out = outputOf(route.provider, usage);
        record.settled_output = out;
        // OpenAI bills prompt + output against the reservation; Anthropic's
        // output bucket gives back what max_tokens reserved but was not written.
        if (route.provider === 'openai') s.buckets.tokens?.take(out - counted.reserved_output);
        else if (route.provider === 'anthropic') s.buckets.output?.take(out - counted.reserved_output);
      },
    };
  }

  return {
    config: cfg,
    admit,
    // {identity: {bucket: {limit, remaining, full_in_ms}}}, for tests and GET /__quota.
    snapshot(now = Date.now()) {
      const out = {};
      for (const [id, s] of states) {
        out[id] = {};
        for (const [name, b] of Object.entries(s.buckets)) if (b) out[id][name] = b.snapshot(now);
      }
      return out;
    },
    clear() { states.clear(); },
  };
}

// The output tokens a usage object reports (0 without one).
function outputOf(provider, usage) {
  if (!usage) return 0;
  if (provider === 'openai') return usage.completion_tokens ?? usage.output_tokens ?? 0;
  if (provider === 'anthropic') return usage.output_tokens ?? 0;
  return (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
}
