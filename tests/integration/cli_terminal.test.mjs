// What the CLI prints from client or file text reaches a terminal with its
// control characters shown as text, and a path that is not there is an error
// naming it (docs/design.md §Configuration, Command line): through the binary.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {tokendietBin, tempDir} from '../support/index.mjs';

const cli = (...args) => spawnSync(tokendietBin(), args, {encoding: 'latin1', timeout: 60_000});
// What a terminal acts on: C0 but \n, DEL, and C1 in UTF-8 (U+0080..U+009F).
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]/;
const EVIL = 'x\u001b]0;owned\u0007\u001b[2J\u009b31m';

test('count --request --json and replay print a client\'s model and trajectory id as text', () => {
  const {dir, cleanup} = tempDir('td-cli-term-');
  try {
    const request = path.join(dir, 'req.json');
    fs.writeFileSync(request, JSON.stringify({model: EVIL, messages: [{role: 'user', content: 'hi'}]}));
    const counted = cli('count', '--request', request, '--json');
    assert.equal(counted.status, 0, counted.stderr);
    assert.doesNotMatch(counted.stdout, CONTROL);
    assert.equal(JSON.parse(Buffer.from(counted.stdout, 'latin1').toString('utf8')).model, EVIL);

    const trajectory = path.join(dir, 'traj.json');
    fs.writeFileSync(trajectory, JSON.stringify({id: EVIL, model: 'gpt-4o',
      messages: [{role: 'user', content: 'hi'}, {role: 'assistant', content: 'ok'}]}));
    const table = cli('replay', trajectory);
    assert.equal(table.status, 0, table.stderr);
    assert.doesNotMatch(table.stdout, CONTROL);
    assert.match(table.stdout, /^x\\x1b\]0;owned\\x07\\x1b\[2J\\u009b31m /m);
    const json = cli('replay', trajectory, '--json');
    assert.equal(json.status, 0, json.stderr);
    assert.doesNotMatch(json.stdout, CONTROL);
    assert.equal(JSON.parse(Buffer.from(json.stdout, 'latin1').toString('utf8')).trajectories[0].id, EVIL);
  } finally { cleanup(); }
});

test('a path that is not there is an error naming it, in every command that reads one', () => {
  const {dir, cleanup} = tempDir('td-cli-path-');
  try {
    const none = path.join(dir, 'nonexistent');
    const cases = [
      ['archive', 'ls', '--dir', none],
      ['archive', 'show', 'td-00000000000000000000000000000000', '--dir', none],
      ['archive', 'ls', '--config', none],
      ['archive', 'id', none],
      ['usage', '--ledger', none],
      ['usage', '--config', none],
      ['count', none],
      ['count', '--request', none],
      ['replay', none],
      ['check-config', none],
      ['serve', '--config', none],
    ];
    for (const args of cases) {
      const r = cli(...args);
      assert.equal(r.status, 1, `${args.join(' ')}: exit ${r.status}\n${r.stdout}${r.stderr}`);
      assert.ok(r.stderr.includes(none), `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stdout, /created|ok\n/, args.join(' '));
    }
    // A directory where a file is read (it would load as an empty, valid config).
    for (const args of [['check-config', dir], ['usage', '--ledger', dir], ['serve', '--config', dir]]) {
      const r = cli(...args);
      assert.equal(r.status, 1, `${args.join(' ')}: exit ${r.status}\n${r.stdout}${r.stderr}`);
      assert.ok(r.stderr.includes(`${dir}: is a directory`), `${args.join(' ')}: ${r.stderr}`);
    }
  } finally { cleanup(); }
});
