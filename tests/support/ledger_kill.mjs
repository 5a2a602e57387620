// Load through `tokendiet serve`, then kill -9: which answered requests have
// their ledger row (docs/design.md §Ledger and metrics). Shared by
// tests/integration/ledger_kill.test.mjs and scripts/bench/ledger_kill.mjs.
import {execFileSync} from 'node:child_process';
import path from 'node:path';
import {performance} from 'node:perf_hooks';
import {Connection} from './http.mjs';
import {startTokendiet, startFakeProcess} from './processes.mjs';

const sleep = ms => new Promise(r => setTimeout(r, ms));

// The sessions of the ledger's rows, read with the sqlite3 shell (read-only;
// it replays the WAL the killed writer left).
export function ledgerSessions(file) {
  const out = execFileSync('sqlite3', ['-readonly', file, 'SELECT session FROM requests'], {encoding: 'utf8'});
  return new Set(out.split('\n').filter(Boolean));
}

// `connections` clients send chat requests back to back (each its own
// session, so each row is known by it) for `loadMs`, and longer until
// `minAnswered` have been answered (a slow box, the sanitizers: the load
// still has its size, at most `maxLoadMs`), then the proxy is killed with
// SIGKILL. Returns, for every request answered before the kill,
// how long before it its response ended (ms) and whether its row is there:
// {answered: [{ageMs, stored}], total, missing, maxMissingAgeMs}.
export async function loadThenKill({connections = 16, loadMs = 1500, minAnswered = 0, maxLoadMs = 30000, fake = null,
                                    args = []} = {}) {
  const ownFake = !fake;
  fake ??= await startFakeProcess(['--no-record']);
  const td = await startTokendiet({upstreams: {openai: fake.url}, args});
  const done = [];  // [session, time the response ended]
  let stop = false;
  const body = {model: 'gpt-ledger-kill', messages: [{role: 'user', content: 'hello'}]};
  const clients = Array.from({length: connections}, async (_, w) => {
    const c = await Connection.open({port: td.port});
    try {
      for (let i = 0; !stop; i++) {
        const session = `c${w}-${i}`;
        let r;
        try {
          r = await c.request({method: 'POST', path: '/v1/chat/completions', body,
            headers: {'content-type': 'application/json', authorization: 'Bearer sk-kill', 'x-tokendiet-session': session}});
        } catch { break; }
        if (!r.complete || r.status !== 200) break;
        done.push([session, performance.now()]);
      }
    } finally { c.close(); }
  });
  try {
    const loadStart = performance.now();
    await sleep(loadMs);
    while (done.length < minAnswered && performance.now() - loadStart < maxLoadMs) await sleep(20);
    const killedAt = performance.now();
    td.proc.kill('SIGKILL');
    stop = true;
    await td.exit;
    await Promise.all(clients);
    const stored = ledgerSessions(path.join(td.stateDir, 'usage.db'));
    const answered = done.filter(([, t]) => t <= killedAt)
      .map(([session, t]) => ({ageMs: killedAt - t, stored: stored.has(session)}));
    const missing = answered.filter(a => !a.stored);
    return {answered, total: answered.length, missing: missing.length,
      maxMissingAgeMs: missing.reduce((m, a) => Math.max(m, a.ageMs), 0)};
  } finally {
    await td.stop();
    if (ownFake) await fake.stop();
  }
}
