// What a kill -9 of `tokendiet serve` loses from the usage ledger under load:
// rounds of load (clients sending chat requests back to back to the fake
// upstream, each request its own session), then SIGKILL at a random moment;
// per round, the requests answered before the kill, how many have no row, and
// how long before the kill the oldest of those was answered (the loss window).
// docs/benchmarks.md §Usage ledger has the figures.
//
//   node scripts/bench/ledger_kill.mjs [--rounds N] [--connections N] [--load-ms N]
//   TOKENDIET_BIN=path/to/tokendiet (default build/cli/tokendiet)
import {loadThenKill} from '../../tests/support/ledger_kill.mjs';
import {startFakeProcess} from '../../tests/support/processes.mjs';

const opt = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = opt('--rounds', 20), connections = opt('--connections', 16), loadMs = opt('--load-ms', 1000);

const fake = await startFakeProcess(['--no-record']);
const windows = [];
let answered = 0, missing = 0, ms = 0;
for (let i = 0; i < rounds; i++) {
  const run = loadMs + Math.random() * loadMs / 2;  // the kill lands anywhere in the writer's cycle
  const r = await loadThenKill({connections, loadMs: run, fake});
  windows.push(r.maxMissingAgeMs);
  answered += r.total;
  missing += r.missing;
  ms += run;
  console.log(`round ${i + 1}: ${r.total} answered, ${r.missing} without a row, oldest of those answered ` +
    `${r.maxMissingAgeMs.toFixed(1)} ms before the kill`);
}
await fake.stop();
windows.sort((a, b) => a - b);
const q = p => windows[Math.min(windows.length - 1, Math.floor(p * windows.length))].toFixed(1);
console.log(`${rounds} rounds, ${connections} connections, ~${(answered / ms * 1000).toFixed(0)} requests/s: ` +
  `${missing} of ${answered} answered requests without a row; loss window median ${q(0.5)} ms, ` +
  `p90 ${q(0.9)} ms, max ${windows.at(-1).toFixed(1)} ms`);
