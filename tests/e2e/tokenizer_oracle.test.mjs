// F5 against the oracle itself: `tokendiet count --jsonl` must equal tiktoken
// 1.0.22 (the WASM build of OpenAI's Rust core, encode_ordinary) on seeded
// random strings over the pretokenizer's traps and any Unicode code point,
// for both encodings. cases.jsonl (unit_tokenizer) pins the known cases; this
// keeps looking for unknown ones (scripts/bench/tokenizer/fuzz.mjs runs more).
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {get_encoding} from 'tiktoken';
import {tokendietBin} from '../support/index.mjs';
import {fuzzStrings} from '../../scripts/bench/tokenizer/fuzz_strings.mjs';

const texts = [
  ...fuzzStrings(4000, 20261123),
  'a   b', '\u0085y', 'a \ufeff', "'\u017fx", 'getUserName', '});\n\n/x', '1234567', '\u{1c89}\'s',
];

for (const enc of ['o200k_base', 'cl100k_base']) {
  test(`${enc}: equal to tiktoken on ${texts.length} random strings`, () => {
    const input = texts.map((t) => JSON.stringify({text: t})).join('\n') + '\n';
    const r = spawnSync(tokendietBin(), ['count', '--encoding', enc, '--jsonl'],
      {input, maxBuffer: 1 << 26, timeout: 60_000});
    assert.equal(r.status, 0, r.stderr?.toString());
    const got = r.stdout.toString().trim().split('\n').map(Number);
    const tk = get_encoding(enc);
    try {
      const diffs = [];
      texts.forEach((t, i) => {
        const want = tk.encode_ordinary(t).length;
        if (got[i] !== want) diffs.push({text: t, want, got: got[i]});
      });
      assert.deepEqual(diffs.slice(0, 5), [], `${diffs.length} of ${texts.length} differ`);
    } finally {
      tk.free();
    }
  });
}
