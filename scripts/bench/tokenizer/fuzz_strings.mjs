// Seeded random strings over the pretokenizer's tricky character pools and
// any Unicode code point (never a lone surrogate): the input of the
// differential tests against tiktoken (fuzz.mjs here, and
// tests/e2e/tokenizer_oracle.test.mjs in CI).
export function fuzzStrings(N, seed = 1) {
  const rng = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; };
  const pick = (a) => a[Math.floor(rng() * a.length)];
  const pools = [
    " ", "  ", "\t", "\n", "\r\n", "\r", "\u000b", "\u000c", "\u0085", "\u00a0", "\u1680", "\u2000", "\u2028",
    "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\u200b", "\u180e",
    "a", "b", "Z", "Q", "s", "S", "t", "re", "VE", "ll", "M", "d", "\u017f", "\u212a", "'", "\u2019", "'s", "'S",
    "'ll", "'Re", "'ve", "'d", "'m", "'t", "0", "1", "7", "123", "\u0661", "\u0967", "\uff11", "\u00b2", "\u00bd",
    "\u216b", "\u2460", "!", ".", ",", "/", "//", "\\", "(", ")", "{", "}", "[", "]", "<|endoftext|>", "#", "*",
    "-", "_", "=", "\"", "`", "~", "\u00e9", "e\u0301", "\u0301", "\u0308", "\u20dd", "\u0903", "\u093f", "\u0915",
    "\u094d", "\u4e00", "\u3042", "\u30a2", "\uac00", "\u0627", "\u064e", "\u05d0", "\u0e01", "\u0e31", "\u0410",
    "\u0430", "\u03a9", "\u03c9", "\u01c4", "\u01c5", "\u01c6", "\u0130", "\u02b0", "\u1d2c", "\u3005", "\u16a0",
    "\ud83d\ude00", "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67", "\ud83c\uddfa\ud83c\uddf8", "1\ufe0f\u20e3",
    "\ud835\udd4f", "\ud80c\udc00", "\u{2ebf0}", "\u{1c89}", "\u{a7cb}", "\u{a7ce}", "\u{10d50}", "\u0378",
    "\ue000", "\uffff", "\u0000", "\u001b", "\u007f", "\u0080", "getUserName", "HTTPServer", "camelCase",
    "snake_case", "x = 1;\n", "});\r\n", "*/\n\n", "a/b/c", "https://x.io/a", "2026-11-22T10:00:00Z", "0x1F",
  ];

  const texts = [];
  for (let i = 0; i < N; i++) {
    const len = 1 + Math.floor(rng() * (rng() < 0.1 ? 60 : 12));
    let s = "";
    for (let k = 0; k < len; k++) {
      if (rng() < 0.3) {
        // Any code point (the Unicode tables), but not a lone surrogate.
        let cp = rng() < 0.5 ? Math.floor(rng() * 0x3000) : Math.floor(rng() * 0x110000);
        if (cp >= 0xd800 && cp < 0xe000) cp = 0x61;
        s += String.fromCodePoint(cp);
      } else s += pick(pools);
    }
    texts.push(s);
  }
  return texts;
}
