// A fixed number of POSTs over keep-alive connections (for instruction counts
// under callgrind, where a duration-based load like wrk would not be stable).
//
//   node scripts/bench/load.mjs URL BODY_FILE N [--concurrency C] [--header 'Name: value']...
//
// Prints: LOAD requests=N ok=N errors=N ms=...  (exit 1 if any request failed)
import http from 'node:http';
import fs from 'node:fs';

const [url, bodyFile, nArg, ...rest] = process.argv.slice(2);
if (!url || !bodyFile || !nArg) {
  console.error('usage: load.mjs URL BODY_FILE N [--concurrency C] [--header "Name: value"]...');
  process.exit(2);
}
let concurrency = 1;
const headers = {'content-type': 'application/json', authorization: 'Bearer sk-bench-0000000000000000'};
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--concurrency') concurrency = Number(rest[++i]);
  else if (rest[i] === '--header') { const h = rest[++i]; const c = h.indexOf(':'); headers[h.slice(0, c).trim().toLowerCase()] = h.slice(c + 1).trim(); }
  else { console.error(`unknown argument ${rest[i]}`); process.exit(2); }
}
const body = fs.readFileSync(bodyFile);
headers['content-length'] = String(body.length);
const total = Number(nArg);
const agent = new http.Agent({keepAlive: true, maxSockets: concurrency});
const u = new URL(url);

function one() {
  return new Promise(resolve => {
    const req = http.request({host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers, agent}, res => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

let sent = 0, ok = 0, errors = 0;
const t0 = performance.now();
await Promise.all(Array.from({length: concurrency}, async () => {
  while (sent < total) { sent++; if (await one()) ok++; else errors++; }
}));
agent.destroy();
console.log(`LOAD requests=${total} ok=${ok} errors=${errors} ms=${(performance.now() - t0).toFixed(0)}`);
process.exit(errors ? 1 : 0);
