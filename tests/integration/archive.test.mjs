// The archive through the real binary (docs/design.md §The archive):
// GET /v1/tokendiet/archive/<id> gives an entry back to the API key that
// caused it and 404 to any other, never going upstream; `tokendiet archive
// ls|show|id` read the same directory. The entries here are written by the
// test in the archive's layout; archive_eviction.test.mjs checks what tokendiet
// writes itself (0600 files under 0700 directories).
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {createHash} from 'node:crypto';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {startFakeUpstream, startTokendiet, rawRequest, tokendietBin, tempDir} from '../support/index.mjs';

let fake;
before(async () => { fake = await startFakeUpstream(); });
after(async () => { await fake.close(); });

const KEY_A = 'sk-archive-owner';
const KEY_B = 'sk-archive-someone-else';
// The ledger's fingerprint: 16 hex digits of SHA-256 of the key.
const fingerprint = key => createHash('sha256').update(key).digest('hex').slice(0, 16);
const cli = (...args) => execFileSync(tokendietBin(), ['archive', ...args], {encoding: 'utf8'});

// An archive directory holding one entry of KEY_A, laid out as the store
// writes it (the id from `tokendiet archive id`, the index line beside it).
function archiveWithEntry(text, task) {
  const tmp = tempDir('td-archive-');
  const file = path.join(tmp.dir, 'evicted.txt');
  fs.writeFileSync(file, text);
  const id = cli('id', file).trim();
  const keyDir = path.join(tmp.dir, 'archive', fingerprint(KEY_A));
  fs.mkdirSync(keyDir, {recursive: true, mode: 0o700});
  fs.writeFileSync(path.join(keyDir, id), text, {mode: 0o600});
  fs.writeFileSync(path.join(keyDir, 'index'), `1764000000 ${id} 42 ${Buffer.byteLength(text)} ${task}\n`, {mode: 0o600});
  return {tmp, id, dir: path.join(tmp.dir, 'archive')};
}

const get = (td, id, headers = {}) =>
  rawRequest({port: td.port, path: `/v1/tokendiet/archive/${id}`, headers});

test('GET /v1/tokendiet/archive/<id>: the same key reads the entry byte for byte, any other key gets 404', async () => {
  const text = 'PASS tests/parser.test.ts\n  \u2713 parses nested lists (3 ms)\n\tdone\n';
  const {tmp, id, dir} = archiveWithEntry(text, 'fix the parser');
  const td = await startTokendiet({upstreams: {openai: fake.url}, config: `archive: {path: ${dir}}\n`});
  try {
    fake.clear();
    const mine = await get(td, id, {authorization: `Bearer ${KEY_A}`});
    assert.equal(mine.status, 200);
    assert.match(mine.headers['content-type'], /^text\/plain/);
    assert.equal(mine.headers['x-tokendiet-archive-tokens'], '42');
    assert.deepEqual(mine.body, Buffer.from(text));
    // The same key in another header.
    assert.equal((await get(td, id, {'x-api-key': KEY_A})).status, 200);

    for (const headers of [{authorization: `Bearer ${KEY_B}`}, {}]) {
      const other = await get(td, id, headers);
      assert.equal(other.status, 404);
      assert.equal(other.headers['x-tokendiet-error'], 'archive_entry_not_found');
      assert.ok(JSON.parse(other.body.toString()).error.message.includes(id));
      assert.ok(!other.body.toString().includes('parses nested lists'));
    }
    assert.equal((await get(td, 'td-00000000000000000000000000000000', {authorization: `Bearer ${KEY_A}`})).status, 404);
    assert.equal((await get(td, `..%2F${fingerprint(KEY_A)}%2Findex`, {authorization: `Bearer ${KEY_A}`})).status, 404);
    assert.equal(fake.requests.length, 0, 'an archive read never goes upstream');
  } finally {
    await td.stop();
    tmp.cleanup();
  }
});

test('tokendiet archive ls and show read the directory the proxy serves', () => {
  const text = 'diff --git a/x b/x\n+one line\n';
  const {tmp, id, dir} = archiveWithEntry(text, 'write the fix');
  try {
    const ls = JSON.parse(cli('ls', '--json', '--dir', dir));
    assert.equal(ls.length, 1);
    assert.equal(ls[0].id, id);
    assert.equal(ls[0].key, fingerprint(KEY_A));
    assert.equal(ls[0].task, 'write the fix');
    assert.equal(ls[0].bytes, Buffer.byteLength(text));
    assert.equal(cli('show', id, '--dir', dir), text);
  } finally {
    tmp.cleanup();
  }
});
