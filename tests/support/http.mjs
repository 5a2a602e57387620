// A raw HTTP/1.1 client on node:net / node:tls for tests that must see the
// exact bytes: every response header line as sent, the framing (chunked,
// content-length, close), the decoded body and when each part of it arrived.
// Also sends requests node:http refuses to build (Content-Length together with
// Transfer-Encoding, oversized bodies, odd paths).
import net from 'node:net';
import tls from 'node:tls';
import {performance} from 'node:perf_hooks';

const now = () => performance.now();

// Builds request bytes. headers: [[name, value], ...] or {name: value}; Host
// and Content-Length are added unless given (contentLength: false to omit).
export function buildRequest({method = 'GET', path = '/', headers = [], body = null, host = '127.0.0.1', contentLength = true}) {
  const list = Array.isArray(headers) ? headers.slice() : Object.entries(headers);
  const has = n => list.some(([k]) => k.toLowerCase() === n);
  if (!has('host')) list.unshift(['Host', host]);
  const b = body == null ? null : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  if (b && contentLength && !has('content-length') && !has('transfer-encoding')) list.push(['Content-Length', String(b.length)]);
  const head = `${method} ${path} HTTP/1.1\r\n` + list.map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n';
  return b ? Buffer.concat([Buffer.from(head, 'latin1'), b]) : Buffer.from(head, 'latin1');
}

// One client connection; requests on it run one after another (keep-alive).
export class Connection {
  static open({port, host = '127.0.0.1', tls: tlsOpts = null, timeoutMs = 15000} = {}) {
    return new Promise((resolve, reject) => {
      const sock = tlsOpts
        ? tls.connect({port, host, ...tlsOpts})
        : net.connect({port, host});
      const ok = tlsOpts ? 'secureConnect' : 'connect';
      sock.once(ok, () => { sock.off('error', reject); resolve(new Connection(sock, timeoutMs)); });
      sock.once('error', reject);
    });
  }

  constructor(sock, timeoutMs) {
    this.sock = sock;
    this.timeoutMs = timeoutMs;
    this.buf = Buffer.alloc(0);
    this.closed = false;
    this.closeError = null;
    this.waiter = null;
    sock.on('data', d => { this.buf = Buffer.concat([this.buf, d]); this.lastDataAt = now(); this.wake(); });
    sock.on('error', e => { this.closeError = e; });
    sock.on('close', () => { this.closed = true; this.closedAt = now(); this.wake(); });
  }

  wake() { const w = this.waiter; this.waiter = null; if (w) w(); }

  // Waits for more bytes (or close); rejects after the timeout.
  more(deadline) {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const left = deadline - now();
      if (left <= 0) return reject(new Error(`raw http: timeout after ${this.timeoutMs} ms (${this.buf.length} bytes unparsed)`));
      const t = setTimeout(() => { this.waiter = null; reject(new Error(`raw http: timeout after ${this.timeoutMs} ms`)); }, left);
      this.waiter = () => { clearTimeout(t); resolve(); };
    });
  }

  send(bytes) { this.sentAt = now(); return new Promise((res, rej) => this.sock.write(bytes, e => e ? rej(e) : res())); }

  request(opts) { return this.send(buildRequest(opts)).then(() => this.readResponse(opts)); }

  // Reads one response. Resolves with:
  //   {status, statusMessage, httpVersion, rawHeaders: [[name, value]], headers: {lower: value | [values]},
  //    framing: 'chunked'|'length'|'close'|'none', body: Buffer (de-chunked), parts: [{t, data}],
  //    complete (false when the connection ended early), error, t: {sent, headers, firstBody, end}}
  async readResponse({method = 'GET', timeoutMs} = {}) {
    const deadline = now() + (timeoutMs ?? this.timeoutMs);
    const t = {sent: this.sentAt ?? now()};
    let head;
    for (;;) {
      const i = this.buf.indexOf('\r\n\r\n');
      if (i >= 0) {
        head = this.buf.subarray(0, i).toString('latin1');
        this.buf = this.buf.subarray(i + 4);
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
        if (status >= 100 && status < 200 && status !== 101) continue;  // 100 Continue
        break;
      }
      if (this.closed) {
        return {status: 0, complete: false, error: this.closeError?.code || 'closed before response headers',
          rawHeaders: [], headers: {}, body: Buffer.alloc(0), parts: [], t: {...t, end: now()}};
      }
      await this.more(deadline);
    }
    t.headers = this.lastDataAt ?? now();
    const [statusLine, ...lines] = head.split('\r\n');
    const m = /^HTTP\/(1\.[01]) (\d{3}) ?(.*)$/.exec(statusLine);
    if (!m) throw new Error(`raw http: bad status line ${JSON.stringify(statusLine)}`);
    const rawHeaders = lines.map(l => { const c = l.indexOf(':'); return [l.slice(0, c), l.slice(c + 1).trim()]; });
    const headers = {};
    for (const [k, v] of rawHeaders) {
      const key = k.toLowerCase();
      headers[key] = key in headers ? [].concat(headers[key], v) : v;
    }
    const res = {status: Number(m[2]), statusMessage: m[3], httpVersion: m[1], rawHeaders, headers, parts: [], t, complete: false};
    const te = String(headers['transfer-encoding'] ?? '').toLowerCase();
    const cl = headers['content-length'];
    const noBody = method === 'HEAD' || res.status === 204 || res.status === 304;
    const take = n => { const d = this.buf.subarray(0, n); this.buf = this.buf.subarray(n); return d; };
    const push = d => { if (d.length) { const tt = this.lastDataAt ?? now(); res.parts.push({t: tt, data: Buffer.from(d)}); t.firstBody ??= tt; } };
    try {
      if (noBody) { res.framing = 'none'; res.complete = true; }
      else if (te.includes('chunked')) {
        res.framing = 'chunked';
        for (;;) {
          const i = this.buf.indexOf('\r\n');
          if (i < 0) { if (this.closed) throw new Error('closed mid chunk size'); await this.more(deadline); continue; }
          const size = Number.parseInt(this.buf.subarray(0, i).toString('latin1').split(';')[0], 16);
          if (!Number.isFinite(size)) throw new Error('bad chunk size');
          if (size === 0) {
            // Trailers (none expected) end with an empty line.
            for (;;) {
              const j = this.buf.indexOf('\r\n\r\n', i);
              if (j >= 0) { this.buf = this.buf.subarray(j + 4); break; }
              if (this.closed) throw new Error('closed in chunked trailer');
              await this.more(deadline);
            }
            break;
          }
          let left = size;
          this.buf = this.buf.subarray(i + 2);
          while (left > 0) {
            if (!this.buf.length) { if (this.closed) throw new Error('closed mid chunk'); await this.more(deadline); continue; }
            const d = take(Math.min(left, this.buf.length));
            left -= d.length;
            push(d);
          }
          while (this.buf.length < 2) { if (this.closed) throw new Error('closed after chunk'); await this.more(deadline); }
          if (take(2).toString('latin1') !== '\r\n') throw new Error('chunk not followed by CRLF');
        }
        res.complete = true;
      } else if (cl !== undefined) {
        res.framing = 'length';
        let left = Number(Array.isArray(cl) ? cl[0] : cl);
        while (left > 0) {
          if (!this.buf.length) { if (this.closed) throw new Error(`closed with ${left} body bytes missing`); await this.more(deadline); continue; }
          const d = take(Math.min(left, this.buf.length));
          left -= d.length;
          push(d);
        }
        res.complete = true;
      } else {
        res.framing = 'close';
        for (;;) {
          if (this.buf.length) push(take(this.buf.length));
          if (this.closed) break;
          await this.more(deadline);
        }
        res.complete = !this.closeError;
      }
    } catch (e) {
      if (/^raw http: timeout/.test(e.message)) throw e;
      res.error = this.closeError?.code || e.message;
    }
    t.end = now();
    res.body = Buffer.concat(res.parts.map(p => p.data));
    return res;
  }

  close() { this.sock.destroy(); }
}

// One request on a fresh connection, closed afterwards.
export async function rawRequest(opts) {
  const c = await Connection.open(opts);
  try {
    if (opts.raw) { await c.send(opts.raw); return await c.readResponse(opts); }
    return await c.request(opts);
  } finally { c.close(); }
}

// Header pairs minus the ones that describe the connection or its framing, in
// order: what must survive a proxy unchanged.
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer',
  'upgrade', 'proxy-authenticate', 'proxy-authorization', 'content-length']);
export function endToEndHeaders(rawHeaders) {
  return rawHeaders.filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase())).map(([k, v]) => [k.toLowerCase(), v]);
}
