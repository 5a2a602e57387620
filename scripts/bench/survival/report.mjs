// The survival benchmark's numbers: what the fake upstream received, folded
// into the agents' stats, then totals and a markdown table.
import {ReferenceIndex, retained, sentText} from './trajectories.mjs';

// Collects the fake's requests of one run, per trajectory (by API key):
// upstream 429s, tokens admitted (the fake's count), retention of the body
// each step was admitted with (the last one, should a step get in twice).
export class UpstreamTally {
  // tpm: the quota, to spot a request admitted though larger than it.
  constructor(trajectories, keyOf, tpm) {
    this.tpm = tpm;
    this.byKey = new Map();
    for (const t of trajectories) {
      this.byKey.set(`Bearer ${keyOf(t)}`, {
        t, refs: new ReferenceIndex(t.texts), upstream_requests: 0, upstream_429: 0, tokens_sent: 0,
        bytes_sent: 0, admitted: 0, oversized_admitted: 0, stepRetention: new Map(),
      });
    }
    this.unknown = 0;
  }

  add(list) {
    for (const r of list) {
      const s = this.byKey.get(r.authorization);
      if (!s) { this.unknown++; continue; }
      s.upstream_requests++;
      if (r.status === 429) s.upstream_429++;
      if (!r.body) continue;
      s.admitted++;
      s.tokens_sent += r.quota?.estimate ?? 0;
      // A request larger than the whole quota must never be admitted (the providers refuse it;
      // the fake did on a full bucket before quota.mjs Bucket.waitMs was fixed): counted, should be 0.
      if ((r.quota?.estimate ?? 0) > this.tpm) s.oversized_admitted++;
      s.bytes_sent += r.bodyBytes;
      const i = Number(/\/(\d+)$/.exec(r.step ?? '')?.[1]);
      if (!Number.isInteger(i) || i >= s.t.steps.length) continue;
      const n = s.t.steps[i];
      s.stepRetention.set(i, retained(s.refs.counted(n), sentText(Buffer.from(r.body))));
    }
  }

  // Per trajectory id: the fake's side.
  result(id) {
    for (const s of this.byKey.values()) {
      if (s.t.id !== id) continue;
      const ret = {counted: 0, retained: 0, steps: s.stepRetention.size};
      for (const r of s.stepRetention.values()) { ret.counted += r.counted; ret.retained += r.retained; }
      return {upstream_requests: s.upstream_requests, upstream_429: s.upstream_429, upstream_admitted: s.admitted, oversized_admitted: s.oversized_admitted,
        tokens_sent: s.tokens_sent, bytes_sent: s.bytes_sent, retention: ret};
    }
    return null;
  }
}

const SUMMED = ['requests', 'answered', 'too_large', 'gave_up', 'errors', 'attempts', 'client_429', 'tokendiet_429',
  'upstream_requests', 'upstream_429', 'upstream_admitted', 'oversized_admitted', 'tokens_sent', 'bytes_sent',
  'client_wait_ms', 'tokendiet_wait_ms', 'elapsed_ms', 'ideal_ms'];

// Quota-minutes from real milliseconds of a run at `speed`.
export const quotaMinutes = (ms, speed) => +((ms * speed) / 60000).toFixed(2);

// One trajectory's row with the derived figures; `speed` scales time back.
export function finishRow(row, speed) {
  row.retention.ratio = row.retention.counted ? +(row.retention.retained / row.retention.counted).toFixed(4) : 1;
  row.wait_min = quotaMinutes(row.client_wait_ms + row.tokendiet_wait_ms, speed);
  row.client_wait_min = quotaMinutes(row.client_wait_ms, speed);
  row.tokendiet_wait_min = quotaMinutes(row.tokendiet_wait_ms, speed);
  row.lag_min = quotaMinutes(Math.max(0, row.elapsed_ms - row.ideal_ms), speed);
  return row;
}

export function totalOf(rows, speed) {
  const total = {id: 'total', retention: {counted: 0, retained: 0, steps: 0}, modes: {},
    tokendiet_retry_after: {given: 0, honoured: 0, refused_again: 0}};
  for (const k of SUMMED) total[k] = 0;
  for (const r of rows) {
    for (const k of SUMMED) total[k] += r[k];
    for (const k of Object.keys(total.retention)) total.retention[k] += r.retention[k];
    for (const k of Object.keys(total.tokendiet_retry_after)) total.tokendiet_retry_after[k] += r.tokendiet_retry_after[k];
    for (const [m, n] of Object.entries(r.modes)) total.modes[m] = (total.modes[m] ?? 0) + n;
  }
  return finishRow(total, speed);
}

const pct = x => `${(100 * x).toFixed(1)} %`;
const int = n => Math.round(n).toLocaleString('en-US');

// Markdown: per run, one row per trajectory and the total.
export function markdown(runs) {
  const out = [];
  for (const run of runs) {
    out.push(`### ${run.mode === 'direct' ? 'direct to the fake' : 'through tokendiet'}, ${int(run.tpm)} TPM` +
      `${run.quota_keys === false ? ' (no quota keys: today\'s diet)' : ''}\n`);
    out.push('| trajectory | requests | upstream 429s | tokendiet 429s | Retry-After honoured | too large | gave up | wait (quota-min) | lag (quota-min) | tokens sent | retention |');
    out.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const r of [...run.trajectories, run.total]) {
      const ra = r.tokendiet_retry_after;
      const name = r.id === 'total' ? '**total**' : r.id;
      out.push(`| ${name} | ${r.requests} | ${r.upstream_429} | ${r.tokendiet_429} | ${ra.honoured}/${ra.given} | ` +
        `${r.too_large} | ${r.gave_up} | ${r.wait_min.toFixed(1)} | ${r.lag_min.toFixed(1)} | ${int(r.tokens_sent)} | ${pct(r.retention.ratio)} |`);
    }
    const r = run.total;
    out.push('', `${int(r.upstream_requests)} upstream requests, ${int(r.upstream_admitted)} admitted` +
      `${r.oversized_admitted ? ` (${r.oversized_admitted} larger than the quota, admitted on a full bucket)` : ''}; ` +
      `elapsed ${run.seconds} s; tokendiet modes ${JSON.stringify(r.modes)}; tokendiet waited ${r.tokendiet_wait_min.toFixed(1)} quota-min.`, '');
  }
  return out.join('\n');
}
