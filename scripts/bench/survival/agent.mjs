// One agent of the survival benchmark: one trajectory, its own API key, its
// requests one after another on one keep-alive connection, as an agent loop
// with an official SDK behaves under a rate limit.
//
// Pace: request i is sent at max(start + i x pace, previous answer + pace),
// so the agent "thinks" one pace (3 quota-seconds) after each answer and
// never runs ahead of the fixed schedule. Without waits the two coincide
// (within a round trip); after a wait the agent resumes one pace after the
// answer, as a real agent would, instead of firing its late requests back to
// back.
//
// A 429 is waited out as the SDKs do: retry-after-ms when present, else
// retry-after (seconds), then the same request again. Two exceptions:
//   - a 429 that says the request alone is larger than the limit (OpenAI:
//     "Limit L, ... Requested R" with R > L) can never be admitted; an SDK
//     would give up after its retries and the agent would crash. The agent
//     records the step as too_large and goes on with the next one (so the
//     rest of the trajectory is still measured);
//   - after max_attempts refusals of one step it records gave_up.
// A 429 from tokendiet carries x-tokendiet-error. Its Retry-After is checked:
// the attempt after waiting it out must not be refused by tokendiet again.
import {Connection} from '../../../tests/support/index.mjs';
import {requestBody} from './trajectories.mjs';

const sleep = ms => new Promise(r => setTimeout(r, Math.max(0, ms)));
const header = (res, name) => { const v = res.headers[name]; return Array.isArray(v) ? v[0] : v; };

// The wait a 429 asks for, in ms; null when it names none.
export function retryAfterMs(res) {
  const ms = Number(header(res, 'retry-after-ms'));
  if (header(res, 'retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const s = Number(header(res, 'retry-after'));
  if (header(res, 'retry-after') !== undefined && Number.isFinite(s) && s >= 0) return s * 1000;
  return null;
}

// True when a 429's body says the request is larger than the whole limit.
export function tooLarge(body) {
  const m = /Limit (\d+), Used \d+, Requested (\d+)/.exec(body.toString('utf8'));
  return !!m && Number(m[2]) > Number(m[1]);
}

export function newAgentStats(t) {
  return {
    id: t.id, requests: t.steps.length, answered: 0, too_large: 0, gave_up: 0, errors: 0, attempts: 0,
    client_429: 0, tokendiet_429: 0, tokendiet_retry_after: {given: 0, honoured: 0, refused_again: 0},
    client_wait_ms: 0, tokendiet_wait_ms: 0, elapsed_ms: 0, ideal_ms: 0, modes: {}, error_examples: [],
  };
}

// Runs trajectory t against 127.0.0.1:port. o: {paceMs, maxAttempts, timeoutMs, key, noRetryMs}.
export async function runAgent(t, port, o) {
  const st = newAgentStats(t);
  const headers = {'content-type': 'application/json', authorization: `Bearer ${o.key}`};
  // Several replicas (a list of ports): each request goes to the next one,
  // as a round-robin load balancer sends them; one connection to each.
  const ports = Array.isArray(port) ? port : [port];
  const conns = new Array(ports.length).fill(null);
  let sent = 0;
  let conn = null;
  const send = async (step, body) => {
    const r = sent++ % ports.length;
    conn = conns[r];
    if (!conn || conn.closed) { conn?.close(); conn = conns[r] = await Connection.open({port: ports[r], timeoutMs: o.timeoutMs}); }
    const res = await conn.request({method: 'POST', path: '/v1/chat/completions', headers: {...headers, 'x-bench-step': step}, body});
    if (!res.complete || /\bclose\b/i.test(String(header(res, 'connection') ?? ''))) { conn.close(); conn = conns[r] = null; }
    return res;
  };
  const error = detail => { st.errors++; if (st.error_examples.length < 5) st.error_examples.push(detail); };

  const start = performance.now();
  let lastAnswer = -Infinity;
  for (let i = 0; i < t.steps.length; i++) {
    await sleep(Math.max(start + i * o.paceMs, lastAnswer + o.paceMs) - performance.now());
    const body = requestBody(t, t.steps[i]);
    const step = `${t.id}/${i}`;
    let waitedOutTokendiet = false;
    for (let attempt = 1; ; attempt++) {
      st.attempts++;
      let res;
      try { res = await send(step, body); } catch (e) { conn?.close(); conns[conns.indexOf(conn)] = null; conn = null; error({step, error: e.message}); break; }
      const fromTokendiet = header(res, 'x-tokendiet-error') !== undefined;
      if (waitedOutTokendiet) {
        if (res.status === 429 && fromTokendiet) st.tokendiet_retry_after.refused_again++;
        else st.tokendiet_retry_after.honoured++;
        waitedOutTokendiet = false;
      }
      if (res.status === 200 && res.complete) {
        st.answered++;
        const mode = header(res, 'x-tokendiet-mode');
        if (mode) st.modes[mode] = (st.modes[mode] ?? 0) + 1;
        st.tokendiet_wait_ms += Number(header(res, 'x-tokendiet-wait-ms') ?? 0) || 0;
        break;
      }
      if (res.status !== 429) { error({step, status: res.status, body: res.body.toString('utf8').slice(0, 200)}); break; }
      if (fromTokendiet) st.tokendiet_429++; else st.client_429++;
      if (!fromTokendiet && tooLarge(res.body)) { st.too_large++; break; }
      if (attempt >= o.maxAttempts) { st.gave_up++; break; }
      let wait = retryAfterMs(res);
      if (wait === null) { error({step, status: 429, error: 'no retry-after'}); wait = o.noRetryMs; }
      if (fromTokendiet) { st.tokendiet_retry_after.given++; waitedOutTokendiet = true; }
      st.client_wait_ms += wait;
      await sleep(wait);
    }
    lastAnswer = performance.now();
  }
  for (const c of conns) c?.close();
  st.elapsed_ms = performance.now() - start;
  st.ideal_ms = Math.max(0, t.steps.length - 1) * o.paceMs;
  return st;
}
