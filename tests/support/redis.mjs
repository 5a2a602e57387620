// A real redis-server (Debian's, scripts/setup.sh --test) for the replicas'
// shared state (docs/design.md §Shared state): on a free loopback port, no
// persistence; kill() and start() again on the same port, as an operator's
// restart would; cli() runs redis-cli against it.
import {spawn, execFileSync} from 'node:child_process';
import net from 'node:net';
import {freePort} from './processes.mjs';

const sleep = ms => new Promise(r => setTimeout(r, ms));

function accepts(port) {
  return new Promise(resolve => {
    const s = net.connect({port, host: '127.0.0.1'});
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

export async function startRedis() {
  const port = await freePort();
  let proc = null;
  const redis = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
        '--loglevel', 'warning'], {stdio: 'ignore'});
      const failed = new Promise(r => proc.once('error', e => r(e)));
      for (let i = 0; i < 400; i++) {
        if (await accepts(port)) return;
        const e = await Promise.race([failed, sleep(10).then(() => null)]);
        if (e) throw new Error(`redis-server did not start (scripts/setup.sh --test installs it): ${e.message}`);
      }
      throw new Error('redis-server does not accept connections');
    },
    async kill() {
      if (!proc) return;
      const p = proc;
      proc = null;
      p.kill('SIGCONT');
      const exited = new Promise(r => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
    },
    // A Redis that answers nothing (SIGSTOP) while its socket stays open: a slow one.
    pause() { proc?.kill('SIGSTOP'); },
    resume() { proc?.kill('SIGCONT'); },
    cli(...args) {
      return execFileSync('redis-cli', ['-p', String(port), ...args], {encoding: 'utf8'});
    },
  };
  await redis.start();
  return redis;
}
