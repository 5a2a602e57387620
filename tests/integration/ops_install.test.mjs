// Operations (F23): the binary's check-config exit codes, the README's first
// command (scripts/run.sh), scripts/install.sh staged into a temp directory
// (DESTDIR), and the systemd unit it installs as `systemd-analyze verify` sees it.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawn, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {tokendietBin, tempDir, freePort, SOURCE_DIR} from '../support/index.mjs';

const run = (cmd, args, opts = {}) =>
  spawnSync(cmd, args, {encoding: 'utf8', timeout: 60_000, ...opts});

test('check-config: 0 and "FILE: ok", or FILE:LINE:COL per error and 1', () => {
  const {dir, cleanup} = tempDir('td-ops-');
  try {
    const good = path.join(dir, 'good.yaml');
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(good, 'listen: 127.0.0.1:9\n');
    fs.writeFileSync(bad, 'listen: 127.0.0.1:9\ntreads: 2\nupstreams:\n  openai: ftp://x\n');
    let r = run(tokendietBin(), ['check-config', good]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${good}: ok\n`);
    r = run(tokendietBin(), ['check-config', bad]);
    assert.equal(r.status, 1);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 2, r.stderr);
    assert.match(lines[0], new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2:1: unknown key 'treads'`));
    assert.match(lines[1], /:4:11: upstreams\.openai: invalid upstream URL 'ftp:\/\/x': scheme must be http or https/);
    r = run(tokendietBin(), ['check-config']);
    assert.equal(r.status, 2);
    r = run(tokendietBin(), ['check-config', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /usage: tokendiet check-config FILE/);
  } finally { cleanup(); }
});

test('scripts/run.sh, the README\'s first command, builds and serves', async () => {
  const {dir, cleanup} = tempDir('td-run-');
  const port = await freePort();
  // The build tree the tests use (BUILD_DIR/cli/tokendiet): run.sh's build
  // step finds it up to date, and setup.sh has nothing left to install.
  const buildDir = path.dirname(path.dirname(tokendietBin()));
  const child = spawn(path.join(SOURCE_DIR, 'scripts', 'run.sh'),
                      ['--listen', `127.0.0.1:${port}`, '--upstream', 'openai=http://127.0.0.1:9'],
                      {env: {...process.env, BUILD_DIR: buildDir, XDG_STATE_HOME: dir}, stdio: ['ignore', 'pipe', 'pipe']});
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    let healthy = false;
    for (let i = 0; i < 600 && !healthy && child.exitCode === null; ++i) {
      healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (!healthy) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(healthy, `run.sh never served /healthz:\n${output}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    cleanup();
  }
});

test('install.sh stages binary, config (kept if present) and unit', () => {
  const {dir, cleanup} = tempDir('td-install-');
  try {
    const env = {...process.env, DESTDIR: dir, TOKENDIET_BIN: tokendietBin()};
    const script = path.join(SOURCE_DIR, 'scripts', 'install.sh');
    let r = run(script, ['--no-build', '--prefix', '/opt/td'], {env});
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /systemctl enable --now tokendiet/);
    const bin = path.join(dir, 'opt/td/bin/tokendiet');
    assert.ok(fs.statSync(bin).mode & 0o111, 'binary is executable');
    const conf = path.join(dir, 'etc/tokendiet/tokendiet.yaml');
    assert.equal(fs.readFileSync(conf, 'utf8'),
                 fs.readFileSync(path.join(SOURCE_DIR, 'config/tokendiet.example.yaml'), 'utf8'));
    const unit = fs.readFileSync(path.join(dir, 'etc/systemd/system/tokendiet.service'), 'utf8');
    assert.match(unit, /^ExecStart=\/opt\/td\/bin\/tokendiet serve --config \/etc\/tokendiet\/tokendiet\.yaml$/m);
    assert.match(unit, /^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);

    // A second install keeps the user's config, and says if it no longer validates.
    fs.writeFileSync(conf, 'threads: 2\nbogus: 1\n');
    r = run(script, ['--no-build', '--prefix', '/opt/td'], {env});
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(fs.readFileSync(conf, 'utf8'), 'threads: 2\nbogus: 1\n');
    assert.match(r.stderr, /:2:1: unknown key 'bogus'/);
    assert.match(r.stderr, /WARNING: fix/);
  } finally { cleanup(); }
});

test('the systemd unit, as install.sh installs it, passes systemd-analyze verify', (t) => {
  if (run('systemd-analyze', ['--version']).status !== 0) return t.skip('systemd-analyze not installed');
  const {dir, cleanup} = tempDir('td-unit-');
  try {
    const stage = path.join(dir, 'stage');
    const r0 = run(path.join(SOURCE_DIR, 'scripts', 'install.sh'), ['--no-build', '--prefix', '/opt/td'],
                   {env: {...process.env, DESTDIR: stage, TOKENDIET_BIN: tokendietBin()}});
    assert.equal(r0.status, 0, r0.stdout + r0.stderr);
    // verify checks that ExecStart's binary exists: point it at the staged one.
    const text = fs.readFileSync(path.join(stage, 'etc/systemd/system/tokendiet.service'), 'utf8');
    const unit = path.join(dir, 'tokendiet.service');
    fs.writeFileSync(unit, text.replaceAll('/opt/td/bin/tokendiet', path.join(stage, 'opt/td/bin/tokendiet')));
    const r = run('systemd-analyze', ['verify', unit]);
    // It exits 0 even for ignored lines, so any output is a failure too.
    const complaints = (r.stdout + r.stderr).split('\n').filter(l => l.includes('tokendiet.service'));
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(complaints, []);
    for (const key of ['StateDirectory=tokendiet', 'DynamicUser=yes', 'Restart=on-failure', 'LimitNOFILE=',
                       'TimeoutStopSec=', 'NoNewPrivileges=yes', 'ProtectSystem=strict'])
      assert.ok(text.includes(key), key);
    // Type=notify: started once listening, reloads waited for, the watchdog
    // (tests/integration/service_notify.test.mjs: what the binary sends).
    assert.match(text, /^Type=notify$/m);
    assert.match(text, /^NotifyAccess=main$/m);
    assert.match(text, /^WatchdogSec=\d+s$/m);
    // On systemd 252 the reload job waits for READY=1 only if RELOADING=1
    // came while ExecReload still ran: the signal, then a pause.
    assert.deepEqual(text.match(/^ExecReload=.*$/gm), ['ExecReload=/bin/kill -HUP $MAINPID', 'ExecReload=/bin/sleep 1']);
    // SIGTERM drains for limits.drain_grace_ms + drain_timeout_ms; systemd must wait longer than that.
    const stopSec = Number(/^TimeoutStopSec=(\d+)s$/m.exec(text)[1]);
    const example = fs.readFileSync(path.join(SOURCE_DIR, 'config/tokendiet.example.yaml'), 'utf8');
    const drain = /^\s*drain_timeout_ms:\s*(\d+)s\b/m.exec(example);
    const grace = /^\s*drain_grace_ms:\s*(\d+)s\b/m.exec(example);
    assert.ok(drain && grace, 'drain_grace_ms and drain_timeout_ms in the example, in seconds');
    assert.ok(stopSec > Number(drain[1]) + Number(grace[1]), `TimeoutStopSec ${stopSec}s > grace ${grace[1]}s + drain ${drain[1]}s`);
  } finally { cleanup(); }
});
