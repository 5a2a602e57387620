// What quota mode puts on the wire, per provider: the rate-limit headers in the
// formats tokendiet's providers/rate_limits.cpp parses (and the providers
// send), the 429 bodies (the error fixtures with the live numbers written in),
// and the usage an answer reports (the prompt side as the quota counted it).

// Headers quota mode owns: a fixture's recorded ones are replaced by live ones.
export function isRateLimitHeader(name) {
  const n = name.toLowerCase();
  return n.startsWith('x-ratelimit-') || n.startsWith('anthropic-ratelimit-') || n === 'retry-after' || n === 'retry-after-ms';
}

// A Go duration as OpenAI writes its resets: "0s", "12ms", "1.634s", "6m0s",
// "1h2m3s". Whole milliseconds, rounded up (a client that waits this long finds
// the bucket refilled); never "µs", a byte Node would write as Latin-1.
export function goDuration(ms) {
  const total = Math.ceil(Math.max(0, ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000), m = Math.floor((total % 3_600_000) / 60_000);
  const s = `${(total % 60_000) / 1000}s`;
  if (h) return `${h}h${m}m${s}`;
  return m ? `${m}m${s}` : s;
}

// An RFC 3339 UTC time in whole seconds, rounded up, as Anthropic writes its resets.
export function rfc3339(ms) {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

const whole = n => String(Math.floor(n));
const retrySeconds = waitMs => String(Math.ceil(waitMs / 1000));

// OpenAI: x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as the
// time until the bucket is full again (relative); on a 429 also retry-after
// (seconds) and retry-after-ms (the time until the request fits).
export function openaiHeaders(buckets, now, waitMs) {
  const out = [];
  if (waitMs > 0) out.push(['retry-after', retrySeconds(waitMs)], ['retry-after-ms', String(waitMs)]);
  const wins = [['requests', buckets.requests], ['tokens', buckets.tokens]].filter(([, b]) => b);
  for (const [w, b] of wins) out.push([`x-ratelimit-limit-${w}`, whole(b.limit)]);
  for (const [w, b] of wins) out.push([`x-ratelimit-remaining-${w}`, whole(b.remaining(now))]);
  for (const [w, b] of wins) out.push([`x-ratelimit-reset-${w}`, goDuration(b.fullInMs(now))]);
  return out;
}

// Anthropic: anthropic-ratelimit-{input-tokens,output-tokens,requests,tokens}-
// {limit,remaining,reset}, resets as the absolute time the bucket is full; on
// a 429 retry-after in whole seconds. tokens-* combines input and output (sum
// of limits and of remaining, the later reset), as tests/fixtures/synth does.
export function anthropicHeaders(buckets, now, waitMs) {
  const out = [];
  if (waitMs > 0) out.push(['retry-after', retrySeconds(waitMs)]);
  const win = (name, limit, remaining, fullInMs) => out.push(
    [`anthropic-ratelimit-${name}-limit`, whole(limit)],
    [`anthropic-ratelimit-${name}-remaining`, whole(remaining)],
    [`anthropic-ratelimit-${name}-reset`, rfc3339(now + fullInMs)]);
  const {input, output, requests} = buckets;
  if (input) win('input-tokens', input.limit, input.remaining(now), input.fullInMs(now));
  if (output) win('output-tokens', output.limit, output.remaining(now), output.fullInMs(now));
  if (requests) win('requests', requests.limit, requests.remaining(now), requests.fullInMs(now));
  if (input && output) {
    win('tokens', input.limit + output.limit, input.remaining(now) + output.remaining(now),
      Math.max(input.fullInMs(now), output.fullInMs(now)));
  }
  return out;
}

// A fixture's headers with the quota's live rate-limit headers in place of the
// recorded ones (where the first recorded one was, else at the end).
export function withLiveRateLimits(recorded, live) {
  if (!live) return recorded;
  const out = [];
  let placed = false;
  for (const [k, v] of recorded) {
    if (!isRateLimitHeader(k)) { out.push([k, v]); continue; }
    if (!placed) { out.push(...live); placed = true; }
  }
  if (!placed) out.push(...live);
  return out;
}

// A request over its quota: the provider's 429 fixture with the live numbers.
// fx: the provider's 429 error fixture.
export function answerOverQuota(res, entry, admission, fx) {
  const body = rejectionBody(admission.provider, fx.body, admission.record);
  const headers = withLiveRateLimits(fx.headers, admission.headers).flat();
  headers.push('content-length', String(body.length));
  entry.fixture = fx.name;
  entry.status = fx.status;
  res.writeHead(fx.status, fx.statusMessage, headers);
  res.end(body);
}

// Re-serializes a parsed fixture the way the file was laid out.
function relaid(original, obj) {
  const text = original.toString('utf8');
  const indent = /^\{\n( +)"/.exec(text)?.[1].length ?? 0;
  return Buffer.from(JSON.stringify(obj, null, indent || undefined) + (text.endsWith('\n') ? '\n' : ''));
}

const OPENAI_WINDOW = {requests: ['requests', 'RPM'], tokens: ['tokens', 'TPM']};
const ANTHROPIC_WINDOW = {requests: 'requests', input: 'input tokens', output: 'output tokens'};

// The 429 body: the provider's error fixture with this rejection's limit,
// usage, model and wait written where the provider writes them.
// a: the admission's record ({limited, limit, remaining, requested, model, wait_ms}).
export function rejectionBody(provider, fixtureBody, a) {
  const doc = JSON.parse(fixtureBody.toString('utf8'));
  if (provider === 'openai') {
    const [what, abbr] = OPENAI_WINDOW[a.limited];
    doc.error.type = what;
    doc.error.message = doc.error.message
      .replace(/for \S+ in organization/, `for ${a.model} in organization`)
      .replace(/on \w+ per min \(\w+\): Limit \d+, Used \d+, Requested \d+\. Please try again in \S+\./,
        `on ${what} per min (${abbr}): Limit ${whole(a.limit)}, Used ${whole(a.limit - a.remaining)}, ` +
        `Requested ${a.requested}. Please try again in ${goDuration(a.wait_ms)}.`);
  } else if (provider === 'anthropic') {
    doc.error.message = doc.error.message.replace(/of [\d,]+ [a-z ]+? per minute/,
      `of ${Math.floor(a.limit).toLocaleString('en-US')} ${ANTHROPIC_WINDOW[a.limited]} per minute`);
  } else {
    const requests = a.limited === 'requests';
    const metricOf = m => (requests ? m.replace(/input_token_count$/, 'requests') : m);
    doc.error.message = doc.error.message
      .replace(/metric: (\S+), limit: \d+, model: [^\s,]+/, (_, m) => `metric: ${metricOf(m)}, limit: ${whole(a.limit)}, model: ${a.model}`)
      .replace(/Please retry in [\d.]+s\./, `Please retry in ${a.wait_ms / 1000}s.`);
    for (const d of doc.error.details ?? []) {
      if (d['@type']?.endsWith('google.rpc.RetryInfo')) d.retryDelay = `${retrySeconds(a.wait_ms)}s`;
      for (const v of d.violations ?? []) {
        v.quotaMetric = metricOf(v.quotaMetric);
        if (requests) v.quotaId = v.quotaId.replace('GenerateContentInputTokensPerModelPerMinute', 'GenerateRequestsPerMinutePerProjectPerModel');
        v.quotaValue = whole(a.limit);
        if (v.quotaDimensions) v.quotaDimensions.model = a.model;
      }
    }
  }
  return relaid(fixtureBody, doc);
}

// Writes number `to(n)` over every `"name": n` in a body (JSON or SSE).
function setNumbers(text, name, to) {
  return text.replace(new RegExp(`"${name}":(\\s*)(\\d+)`, 'g'), (_, sp, n) => `"${name}":${sp}${to(Number(n))}`);
}

// The served body with its usage's prompt side as the quota counted it (the
// output side stays as recorded), so a client's bill matches the quota it used.
// usage: the fixture's usage (usageOf); c: the admission's counted numbers.
export function reportedUsageBody(provider, body, usage, c) {
  if (!usage) return body;
  // Latin-1 both ways: every byte comes back as it was, whatever the encoding.
  let text = body.toString('latin1');
  if (provider === 'openai') {
    const delta = c.input - (usage.prompt_tokens ?? usage.input_tokens ?? 0);
    text = setNumbers(text, 'prompt_tokens', () => c.input);
    text = setNumbers(text, 'input_tokens', () => c.input);
    text = setNumbers(text, 'total_tokens', n => n + delta);
  } else if (provider === 'anthropic') {
    text = setNumbers(text, 'input_tokens', () => c.input - c.cache_creation);
    text = setNumbers(text, 'cache_read_input_tokens', () => c.cache_read);
    text = setNumbers(text, 'cache_creation_input_tokens', () => c.cache_creation);
    text = setNumbers(text, 'ephemeral_5m_input_tokens', () => c.cache_creation);
  } else {
    const delta = c.input - (usage.promptTokenCount ?? 0);
    text = setNumbers(text, 'promptTokenCount', () => c.input);
    text = setNumbers(text, 'totalTokenCount', n => n + delta);
    text = text.replace(/("promptTokensDetails":\s*\[\s*\{\s*"modality":\s*"TEXT",\s*"tokenCount":\s*)\d+/g, `$1${c.input}`);
  }
  return Buffer.from(text, 'latin1');
}
