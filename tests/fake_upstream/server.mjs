// A fake LLM upstream (OpenAI, Anthropic, Gemini) for tokendiet's tests and
// benchmarks. Node, no dependencies. It serves the real recorded responses in
// tests/fixtures/wire/ (and the labelled synthesized ones in tests/fixtures/synth/),
// misbehaves on request, and records every request it receives.
//
//   node tests/fake_upstream/server.mjs [--port N] [--port-file F]
//        [--tls-cert PEM --tls-key PEM] [--keep-alive-ms N] [--no-record]
//        [--quota-tpm N] [--quota-itpm N] [--quota-otpm N] [--quota-rpm N]
//        [--quota-window-ms N] [--quota-cache-ttl-ms N]     (quota mode, below)
//        [--script FILE]     (scripted conversations, tests/fake_upstream/script.mjs: a request
//                             with tools is answered by the script's turn its history reached,
//                             unless x-fake-fixture or x-fake-mode says otherwise)
//        [--billing]         (with --script: each scripted answer billed with the provider's prompt
//                             cache, its usage carrying the cached counts, tests/fake_upstream/
//                             billing.mjs; in-process startFakeUpstream({script, billing: true}),
//                             fake.billing.summary())
//   prints "LISTENING <port>" once it accepts connections (127.0.0.1 only).
//
// Or in-process: `const fake = await startFakeUpstream(); fake.port; fake.requests; await fake.close()`.
//
// Routes (method POST unless noted):
//   /v1/chat/completions                       openai-chat-stream[-include-usage] | openai-chat-nonstream; like
//                                              OpenAI, a chat stream whose request has no
//                                              stream_options.include_usage gets no usage parts: the
//                                              "usage":null members and the usage chunk are cut from
//                                              whatever fixture is served (x-fake-usage: as-recorded keeps them)
//   /v1/responses                              openai-responses-stream | -nonstream (synthesized)
//   /v1/messages                               anthropic-stream-thinking | anthropic-messages-nonstream (synth.)
//   /v1beta/models/{m}:generateContent         gemini-generatecontent-verbatim
//   /v1beta/models/{m}:streamGenerateContent   gemini-stream-functioncall-verbatim (?alt=sse: SSE,
//                                              otherwise the chunks as one JSON array, as Gemini does)
//   (also /v1/models/{m}:… for Gemini)         stream or not is decided by the body's "stream" (OpenAI,
//                                              Anthropic) or by the method name (Gemini)
//   GET /healthz                               200 ok
//   GET /__requests, DELETE /__requests        the recorded requests (JSON; ?bodies=0 without their
//                                              bodies), clear them
//   GET /__quota, DELETE /__quota              quota mode's buckets (JSON), refill them all
//
// Request headers that steer it:
//   x-fake-fixture: NAME     serve that fixture (any file in fixtures/{wire,synth}, no extension)
//   x-fake-mode: slow        headers at once; first event (or JSON piece) after x-fake-first-ms
//                            (300), then one per x-fake-gap-ms (50)
//                reset       send x-fake-reset-after events/pieces (1), then reset the TCP connection
//                hang        read the request, never answer (until the client goes away)
//                bad-chunk   a 200 chunked head and an invalid chunk size ("zz"), in one write;
//                            then nothing more
//                close-after-head | reset-after-head
//                            a chunked head with status x-fake-status (200), then FIN | a TCP RST
//                upgrade-101 a 101 Switching Protocols nobody asked for; then nothing more
//                early-hints a 103 Early Hints, then the usual answer
//                recall      a model calling tokendiet_recall when offered, then quoting its result
//                            (x-fake-recall-id, -lines, -client-call: tests/fake_upstream/recall.mjs)
//                429 | 500 | context-length | 529 (alias overloaded; Anthropic)
//                            the calling provider's error fixture (synthesized shapes)
//   x-fake-framing: chunked | length   body framing (default: JSON length, SSE chunked)
//   x-fake-repeat: N         an SSE fixture is cycled (or cut) to N events; its last event
//                            (e.g. [DONE] or message_stop) stays last
//   model "fake-mode-M"      in the body (its first 4 KiB): the same as x-fake-mode: M
//   x-fake-quota-key: K      quota mode: count this request against key K
//   x-fake-context-window: N a model whose context holds N tokens: a request of more than N
//                            tokens (ceil(body bytes / 4)) is answered with the provider's
//                            context-length error, its numbers made true (N the window, the
//                            request's tokens the prompt); a smaller one as usual
//
// Quota mode (the --quota-* flags, or startFakeUpstream({quota: {tpm, itpm, otpm, rpm, windowMs,
// cacheTtlMs}})): per-minute limits as the providers keep them, per provider, API key (x-fake-quota-key,
// else the Authorization bearer, x-api-key, x-goog-api-key or ?key=) and model. Each limit is a
// token bucket holding `limit` and refilling at limit / window (--quota-window-ms, 60000; a short
// window makes tests take seconds). A request that does not fit is answered 429 with the calling
// provider's error fixture, its numbers (limit, used, requested, wait, model) made true, and is not
// counted; this comes before any x-fake-* steering. A request larger than a limit never fits (its
// 429 announces the time to a full bucket). Every answer, 200 or 429, carries the provider's
// rate-limit headers (Gemini sends none). In-process: fake.quota.snapshot(), fake.quota.clear().
//   tokens of a request      ceil(body bytes / 4), whatever the fixture says: a bigger context costs more
//   openai     one bucket, --quota-tpm, for prompt and output: admission takes the prompt plus the
//              output the request allows (max_completion_tokens | max_tokens, times n; Responses:
//              max_output_tokens; none: 0); when the answer is sent the charge settles to prompt +
//              the fixture's completion tokens. Headers x-ratelimit-{limit,remaining,reset}-
//              {requests,tokens}, reset = Go duration until the bucket is full ("1.634s", "6m0s");
//              on 429 also retry-after (s) and retry-after-ms (until the request fits).
//   anthropic  input bucket --quota-itpm, output bucket --quota-otpm (both default to --quota-tpm).
//              Input: the request's tokens minus cache reads. Prompt cache: the blocks up to a
//              cache_control breakpoint (tools, system, messages, in that order) are a prefix; a
//              prefix the same key and model sent within --quota-cache-ttl-ms (300000) is read
//              (the longest one), the rest up to the last breakpoint is written (counted). Output:
//              admission reserves max_tokens, settled to the fixture's output_tokens. Headers
//              anthropic-ratelimit-{input-tokens,output-tokens,requests,tokens}-{limit,remaining,
//              reset}, reset = RFC 3339 time the bucket is full (whole seconds, rounded up), tokens
//              = input + output; on 429 retry-after (whole seconds until the request fits).
//   gemini     one input bucket, --quota-tpm (output is not counted: the quota metric is the input
//              token count); no headers; 429 RESOURCE_EXHAUSTED with QuotaFailure (limit, model)
//              and RetryInfo.retryDelay (whole seconds until the request fits).
//   requests   every provider also has a request bucket, --quota-rpm (10000).
//   usage      a 2xx answer's usage reports the prompt side as counted (OpenAI prompt/input and
//              total tokens, Anthropic input/cache_read/cache_creation, Gemini promptTokenCount and
//              total); output as recorded. x-fake-usage: as-recorded keeps the fixture's numbers.
//   recorded   requests[i].quota = {identity, model, admitted, limited (the bucket that refused),
//              limit, wait_ms, requested, remaining, estimate, input, cache_read, cache_creation,
//              reserved_output, settled_output}.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import url from 'node:url';
import {loadFixture, sseEvents, usageOf, stripOpenAIUsage} from './fixtures.mjs';
import {createQuota, quotaConfig} from './quota.mjs';
import {recallAnswer} from './recall.mjs';
import {withLiveRateLimits, answerOverQuota, reportedUsageBody} from './quota_wire.mjs';
import {scriptedFixture} from './script.mjs';
import {createBilling} from './billing.mjs';

const ERROR_FIXTURES = {
  openai: {'429': 'openai-error-rate-limit', '500': 'openai-error-server', 'context-length': 'openai-error-context-length'},
  anthropic: {'429': 'anthropic-error-rate-limit', '500': 'anthropic-error-server', 'context-length': 'anthropic-error-context-length',
    '529': 'anthropic-error-overloaded', 'overloaded': 'anthropic-error-overloaded'},
  gemini: {'429': 'gemini-error-resource-exhausted', '500': 'gemini-error-server', 'context-length': 'gemini-error-context-length'},
};

// The numbers in each provider's context-length fixture: [window, prompt tokens].
const CONTEXT_LENGTH_NUMBERS = {openai: ['128000', '130512'], anthropic: ['200000', '208310'], gemini: ['1048576', '1234567']};

// The provider's context-length error with `window` and `tokens` in it.
function contextLengthError(provider, window, tokens, fixturesDir) {
  const fx = loadFixture(ERROR_FIXTURES[provider]['context-length'], fixturesDir);
  const [w, n] = CONTEXT_LENGTH_NUMBERS[provider];
  const text = fx.body.toString('utf8').replace(w, String(window)).replace(n, String(tokens));
  return {...fx, body: Buffer.from(text)};
}

// What the path asks for: {provider, op, stream}; null for paths no provider has.
export function classify(pathname, body, query) {
  let wantsStream = false;
  try { wantsStream = JSON.parse(body.toString('utf8'))?.stream === true; } catch { /* not JSON */ }
  if (pathname === '/v1/chat/completions') return {provider: 'openai', op: 'chat', stream: wantsStream, body};
  if (pathname === '/v1/responses') return {provider: 'openai', op: 'responses', stream: wantsStream};
  if (pathname === '/v1/messages') return {provider: 'anthropic', op: 'messages', stream: wantsStream};
  const g = /^\/(v1beta|v1|v1alpha)\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.exec(pathname);
  if (g) return {provider: 'gemini', op: g[2], stream: g[2] === 'streamGenerateContent', sse: query.get('alt') === 'sse'};
  return null;
}

function asksUsage(body) {
  try { return JSON.parse(body.toString('utf8'))?.stream_options?.include_usage === true; } catch { return false; }
}

function defaultFixture(route, body) {
  if (route.op === 'chat') {
    if (!route.stream) return 'openai-chat-nonstream';
    return asksUsage(body) ? 'openai-chat-stream-include-usage' : 'openai-chat-stream';
  }
  if (route.op === 'responses') return route.stream ? 'openai-responses-stream' : 'openai-responses-nonstream';
  if (route.op === 'messages') return route.stream ? 'anthropic-stream-thinking' : 'anthropic-messages-nonstream';
  if (route.op === 'generateContent') return 'gemini-generatecontent-verbatim';
  return 'gemini-stream-functioncall-verbatim';
}

function intHeader(req, name, dflt, max = 3_600_000) {
  const v = Number.parseInt(req.headers[name] ?? '', 10);
  return Number.isFinite(v) && v >= 0 ? Math.min(v, max) : dflt;
}

// The pieces the body is written in: SSE events one by one; JSON in up to 3
// pieces, so chunked framing really has several chunks.
function bodyPieces(fx, req, route) {
  if (fx.kind === 'sse') {
    let events = sseEvents(fx.body);
    // Gemini streamGenerateContent without alt=sse answers one JSON array.
    if (route?.provider === 'gemini' && route.stream && !route.sse) {
      const datas = events.map(e => e.toString('utf8').replace(/^data: ?/, '').trim()).filter(Boolean);
      return datas.map((d, i) => Buffer.from((i === 0 ? '[' : ',\r\n') + d + (i === datas.length - 1 ? ']' : '')));
    }
    // Like OpenAI: usage parts in a chat stream only when the request asked for them.
    if (route?.op === 'chat' && route.stream && !asksUsage(route.body) && req.headers['x-fake-usage'] !== 'as-recorded')
      events = stripOpenAIUsage(events);
    const repeat = intHeader(req, 'x-fake-repeat', 0, 1_000_000);
    if (repeat >= 2 && repeat !== events.length && events.length >= 2) {
      const body = events.slice(0, -1), last = events[events.length - 1];
      const out = [];
      for (let i = 0; out.length < repeat - 1; i++) out.push(body[i % body.length]);
      events = [...out, last];
    }
    return events;
  }
  const b = fx.body;
  if (b.length < 3) return [b];
  const a = Math.floor(b.length / 3), c = Math.floor((2 * b.length) / 3);
  return [b.subarray(0, a), b.subarray(a, c), b.subarray(c)];
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// Modes whose answer is no well-formed response: written straight to the
// socket, bypassing node:http. Returns the status sent, or 0 for other modes.
function misbehave(mode, req, socket) {
  const status = intHeader(req, 'x-fake-status', 200, 599);
  const chunkedHead = s => `HTTP/1.1 ${s} ${http.STATUS_CODES[s] ?? 'Unknown'}\r\n` +
    'content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';
  switch (mode) {
    case 'bad-chunk': socket.write(chunkedHead(200) + 'zz\r\n'); return 200;
    case 'close-after-head': socket.end(chunkedHead(status)); return status;
    case 'reset-after-head': socket.write(chunkedHead(status)); socket.resetAndDestroy(); return status;
    case 'upgrade-101':
      socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n');
      return 101;
    default: return 0;
  }
}

// Waits ms, or less if the response goes away first (so a closed fake leaves no timers behind).
function pause(ms, res) {
  if (res.destroyed) return Promise.resolve();
  return new Promise(resolve => {
    const done = () => { clearTimeout(t); res.off('close', done); resolve(); };
    const t = setTimeout(done, ms);
    res.on('close', done);
  });
}

// Resolves when the response can take more bytes, or is gone.
function drained(res) {
  return new Promise(resolve => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
    res.on('drain', done);
    res.on('close', done);
  });
}

export async function startFakeUpstream(opts = {}) {
  const requests = [];
  const record = opts.record !== false;
  const quota = createQuota(opts.quota);
  const billing = opts.billing ? createBilling() : null;
  let nextId = 1;

  async function handle(req, res) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const u = new URL(req.url, 'http://fake');
    res.sendDate = false;  // the recorded Date header is relayed as is

    if (u.pathname === '/healthz' && req.method === 'GET') return res.end('ok\n');
    if (u.pathname === '/__requests') {
      if (req.method === 'DELETE') { requests.length = 0; res.writeHead(204); return res.end(); }
      const bodies = u.searchParams.get('bodies') !== '0';  // ?bodies=0: sizes only (bodyBytes)
      const out = JSON.stringify(requests.map(r => ({...r, body: undefined, ...(bodies ? {body_base64: r.body.toString('base64')} : {})})));
      res.writeHead(200, {'content-type': 'application/json'});
      return res.end(out);
    }
    if (u.pathname === '/__quota') {
      if (req.method === 'DELETE') { quota?.clear(); res.writeHead(204); return res.end(); }
      res.writeHead(200, {'content-type': 'application/json'});
      return res.end(JSON.stringify(quota ? {config: quota.config, buckets: quota.snapshot()} : null));
    }

    const route = classify(u.pathname, body, u.searchParams);
    // A request whose headers the client does not write (tokendiet's own
    // recap summarizer) is steered by its model: "fake-mode-500" is x-fake-mode: 500.
    const modelMode = /"model"\s*:\s*"fake-mode-([a-z0-9-]+)"/.exec(body.subarray(0, 4096).toString('latin1'));
    const mode = String(req.headers['x-fake-mode'] || modelMode?.[1] || '').toLowerCase();
    const entry = {
      id: nextId++, at: Date.now(), method: req.method, url: req.url, path: u.pathname,
      query: u.search.replace(/^\?/, ''), httpVersion: req.httpVersion,
      rawHeaders: req.rawHeaders, headers: req.headers, body, bodyBytes: body.length,
      remotePort: req.socket.remotePort, provider: route?.provider ?? null, mode,
      fixture: null, status: null, usage: null, quota: null, bytesSent: 0, finished: false, aborted: false,
    };
    if (record) requests.push(entry);
    res.on('finish', () => { entry.finished = true; });
    res.on('close', () => { if (!entry.finished) entry.aborted = true; });

    // Quota mode: admitted (and counted) or answered 429 before any other steering.
    const admission = quota && route ? quota.admit(route, req, body, u) : null;
    if (admission) {
      entry.quota = admission.record;
      res.on('close', () => admission.settle(entry.usage));
      if (!admission.admitted) {
        return answerOverQuota(res, entry, admission, loadFixture(ERROR_FIXTURES[route.provider]['429'], opts.fixturesDir));
      }
    }
    if (mode === 'hang') return;  // the client (or proxy) has to give up
    const rawStatus = misbehave(mode, req, res.socket);
    if (rawStatus) { entry.status = rawStatus; return; }
    if (mode === 'early-hints') res.writeEarlyHints({link: '</style.css>; rel=preload; as=style'});

    let name = req.headers['x-fake-fixture'];
    const window = intHeader(req, 'x-fake-context-window', 0, Number.MAX_SAFE_INTEGER);
    if (route && window > 0 && Math.ceil(body.length / 4) > window) {
      const fx = contextLengthError(route.provider, window, Math.ceil(body.length / 4), opts.fixturesDir);
      entry.fixture = ERROR_FIXTURES[route.provider]['context-length'];
      entry.status = fx.status;
      const headers = [...fx.headers.filter(([k]) => !/^content-length$/i.test(k)), 'content-length', String(fx.body.length)];
      res.writeHead(fx.status, fx.statusMessage, headers.flat());
      return res.end(fx.body);
    }
    // Billing mode charges what the script answers (its usage carries the cached counts).
    const billed = !name && !mode && route && opts.script && billing ? billing.charge(route, req, body, u) : null;
    if (billed) entry.billing = billed;
    const scripted = !name && !mode && route && opts.script ? scriptedFixture(opts.script, route, body, billed) : null;
    if (scripted) { name = scripted.name; entry.scriptTurn = scripted.turn; }
    if (!name && route && ERROR_FIXTURES[route.provider][mode]) name = ERROR_FIXTURES[route.provider][mode];
    if (!name && ERROR_FIXTURES.openai[mode] && !route) name = ERROR_FIXTURES.openai[mode];
    if (!name && route) name = defaultFixture(route, body);
    if (!name) {
      const msg = JSON.stringify({error: {message: `fake upstream: no route for ${req.method} ${u.pathname}`, type: 'invalid_request_error', param: null, code: 'unknown_url'}});
      entry.status = 404;
      res.writeHead(404, {'content-type': 'application/json', 'content-length': Buffer.byteLength(msg), 'x-fake-no-route': '1'});
      return res.end(msg);
    }
    let fx = scripted ?? (mode === 'recall' ? recallAnswer(route, body, req.headers) : null);
    if (fx) name = fx.name;
    else try { fx = loadFixture(name, opts.fixturesDir); } catch (e) {
      entry.status = 500;
      res.writeHead(500, {'content-type': 'text/plain', 'x-fake-error': '1'});
      return res.end(String(e.message));
    }
    entry.fixture = name;
    entry.status = fx.status;
    if (admission && !billed && fx.status < 300 && req.headers['x-fake-usage'] !== 'as-recorded')
      fx = {...fx, body: reportedUsageBody(route.provider, fx.body, usageOf(fx.body, fx.kind), admission.counted)};
    entry.usage = usageOf(fx.body, fx.kind);
    billing?.settle(billed, entry.usage?.output_tokens ?? entry.usage?.completion_tokens ?? entry.usage?.candidatesTokenCount);

    const pieces = bodyPieces(fx, req, route);
    const total = pieces.reduce((n, p) => n + p.length, 0);
    const framing = String(req.headers['x-fake-framing'] || (fx.kind === 'sse' ? 'chunked' : 'length')).toLowerCase();
    const headers = [];
    let ctype = null;
    for (const [k, v] of withLiveRateLimits(fx.headers, admission?.headers)) {
      // Gemini's JSON-array stream is JSON, whatever the SSE recording said.
      if (k.toLowerCase() === 'content-type') { ctype = v; if (route?.provider === 'gemini' && route.stream && !route.sse) continue; }
      headers.push(k, v);
    }
    if (route?.provider === 'gemini' && route.stream && !route.sse) headers.push('content-type', 'application/json; charset=UTF-8');
    else if (!ctype) headers.push('content-type', fx.kind === 'sse' ? 'text/event-stream' : 'application/json');
    if (framing === 'length') headers.push('content-length', String(total));
    res.writeHead(fx.status, fx.statusMessage, headers);

    const slow = mode === 'slow';
    const firstMs = intHeader(req, 'x-fake-first-ms', 300), gapMs = intHeader(req, 'x-fake-gap-ms', 50);
    const resetAfter = mode === 'reset' ? intHeader(req, 'x-fake-reset-after', 1, 1e6) : Infinity;
    if (slow || mode === 'reset') res.flushHeaders();
    for (let i = 0; i < pieces.length; i++) {
      if (res.destroyed) return;
      if (i === resetAfter) {
        // Let the bytes already written leave, then abort with a TCP RST.
        await pause(Math.min(gapMs, 50), res);
        res.socket?.resetAndDestroy();
        return;
      }
      if (slow) await pause(i === 0 ? firstMs : gapMs, res);
      if (res.destroyed) return;
      // Backpressure: a slow reader must not make the fake buffer unboundedly.
      const more = res.write(pieces[i]);
      entry.bytesSent += pieces[i].length;
      if (!more) await drained(res);
    }
    res.end();
  }

  const onRequest = (req, res) => handle(req, res).catch(e => {
    if (!res.headersSent) { res.writeHead(500, {'content-type': 'text/plain', 'x-fake-error': '1'}); res.end(String(e?.stack || e)); }
    else res.destroy();
  });
  const server = opts.tls
    ? https.createServer({cert: opts.tls.cert, key: opts.tls.key}, onRequest)
    : http.createServer(onRequest);
  server.keepAliveTimeout = opts.keepAliveMs ?? 30_000;
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  server.maxHeadersCount = 0;
  const sockets = new Set();
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  const scheme = opts.tls ? 'https' : 'http';
  return {
    port, server, requests, quota, billing,
    url: `${scheme}://127.0.0.1:${port}`,
    clear() { requests.length = 0; },
    last() { return requests[requests.length - 1]; },
    // Resolves when n requests (not counting /__ and /healthz) have arrived; bounded.
    async waitForRequests(n, timeoutMs = 5000) {
      const end = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > end) throw new Error(`fake upstream: ${requests.length} of ${n} requests after ${timeoutMs} ms`);
        await sleep(10);
      }
      return requests;
    },
    openConnections() { return sockets.size; },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise(r => server.close(() => r()));
    },
  };
}

const QUOTA_FLAGS = {'--quota-tpm': 'tpm', '--quota-itpm': 'itpm', '--quota-otpm': 'otpm', '--quota-rpm': 'rpm',
  '--quota-window-ms': 'windowMs', '--quota-cache-ttl-ms': 'cacheTtlMs'};

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') o.port = Number(next());
    else if (a === '--port-file') o.portFile = next();
    else if (a === '--tls-cert') o.cert = next();
    else if (a === '--tls-key') o.key = next();
    else if (a === '--keep-alive-ms') o.keepAliveMs = Number(next());
    else if (a === '--fixtures') o.fixturesDir = next();
    else if (a === '--no-record') o.record = false;
    else if (a === '--billing') o.billing = true;
    else if (a === '--script') o.script = JSON.parse(fs.readFileSync(next(), 'utf8'));
    else if (a.startsWith('--quota-') && QUOTA_FLAGS[a]) (o.quota ??= {})[QUOTA_FLAGS[a]] = Number(next());
    else if (a === '--help' || a === '-h') o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

if (process.argv[1] && import.meta.url === url.pathToFileURL(process.argv[1]).href) {
  let o;
  try { o = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`fake upstream: ${e.message}`); process.exit(2); }
  if (o.help) {
    const src = fs.readFileSync(url.fileURLToPath(import.meta.url), 'utf8');
    console.log(src.split('\n').filter(l => l.startsWith('//')).map(l => l.slice(3)).join('\n'));
    process.exit(0);
  }
  try { quotaConfig(o.quota); } catch (e) { console.error(`fake upstream: ${e.message}`); process.exit(2); }
  if ((o.cert || o.key) && !(o.cert && o.key)) { console.error('fake upstream: --tls-cert and --tls-key go together'); process.exit(2); }
  const tls = o.cert ? {cert: fs.readFileSync(o.cert), key: fs.readFileSync(o.key)} : null;
  const fake = await startFakeUpstream({...o, tls});
  if (o.portFile) fs.writeFileSync(o.portFile, `${fake.port}\n`);
  console.log(`LISTENING ${fake.port}`);
  const stop = () => fake.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
