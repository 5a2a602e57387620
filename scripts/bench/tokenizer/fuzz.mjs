// Differential fuzz: `tokendiet count --jsonl` against tiktoken (the oracle of
// cases.jsonl) on seeded random strings over the pretokenizer's tricky
// character pools. CI runs 4,000 strings (tests/e2e/tokenizer_oracle.test.mjs);
// run many more here after any change to the pretokenizer or BPE:
//   node fuzz.mjs /path/to/tokendiet [N=20000] [SEED=1]
import { spawnSync } from "node:child_process";
import { get_encoding } from "tiktoken";
import { fuzzStrings } from "./fuzz_strings.mjs";

const [bin, nArg, seedArg] = process.argv.slice(2);
if (!bin) { console.error("usage: node fuzz.mjs TOKENDIET [N] [SEED]"); process.exit(2); }
const N = Number(nArg || 20000);
const seed = Number(seedArg || 1);

const texts = fuzzStrings(N, seed);
const input = texts.map((t) => JSON.stringify({ text: t })).join("\n") + "\n";
let bad = 0;
for (const enc of ["o200k_base", "cl100k_base"]) {
  const tk = get_encoding(enc);
  const p = spawnSync(bin, ["count", "--encoding", enc, "--jsonl"], { input, maxBuffer: 1 << 28 });
  if (p.status !== 0) { console.error(p.stderr.toString()); process.exit(1); }
  const got = p.stdout.toString().trim().split("\n").map(Number);
  let diff = 0;
  texts.forEach((t, i) => {
    const want = tk.encode_ordinary(t).length;
    if (got[i] !== want) { if (diff++ < 5) console.log(enc, JSON.stringify(t), "want", want, "got", got[i]); }
  });
  console.log(`${enc}: ${N - diff}/${N} equal`);
  bad += diff;
  tk.free();
}
process.exit(bad ? 1 : 0);
