// Hand-written pretokenizer scanners; see pretokenizer.hpp for the patterns.
// Each alternative is tried in the regex's order at the piece start, and each
// one's greedy-with-backtracking result is computed directly.
#include "pruning/tokenizer/pretokenizer.hpp"

#include "pruning/tokenizer/char_class.hpp"

namespace td::tok {
namespace {

using Bytes = const unsigned char*;

constexpr std::uint8_t kLN = kLetter | kNumber;
constexpr std::uint8_t kLNS = kLetter | kNumber | kSpace;

inline bool is_newline(std::uint32_t cp) { return cp == '\r' || cp == '\n'; }
// [^\s\p{L}\p{N}]
inline bool is_punct(const Char& c) { return (c.cls & kLNS) == 0; }
// [^\r\n\p{L}\p{N}]
inline bool is_prefix(const Char& c) { return (c.cls & kLN) == 0 && !is_newline(c.cp); }

inline unsigned char lower(unsigned char b) { return b | 0x20; }

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: its length, or 0. Rust's (?i) uses simple
// case folding, under which `s` also matches U+017F (LATIN SMALL LETTER LONG S).
std::size_t contraction(Bytes s, std::size_t n, std::size_t i) {
  if (i + 1 >= n || s[i] != '\'') return 0;
  unsigned char a = lower(s[i + 1]);
  if (s[i + 1] >= 0x80) {
    return (s[i + 1] == 0xC5 && i + 2 < n && s[i + 2] == 0xBF) ? 3 : 0;  // 'ſ
  }
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= n) return 0;
  unsigned char b = lower(s[i + 2]);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// End of the run of characters with any of `bits`, from p.
inline std::size_t run_of(Bytes s, std::size_t n, std::size_t p, std::uint8_t bits) {
  while (p < n) {
    Char c = decode_at(s, n, p);
    if (!(c.cls & bits)) break;
    p += c.len;
  }
  return p;
}

inline std::size_t punct_run(Bytes s, std::size_t n, std::size_t p) {
  while (p < n) {
    Char c = decode_at(s, n, p);
    if (!is_punct(c)) break;
    p += c.len;
  }
  return p;
}

// \p{N}{1,3} at i (the character at i is a number).
std::size_t numbers(Bytes s, std::size_t n, std::size_t i) {
  std::size_t p = i;
  for (int k = 0; k < 3 && p < n; ++k) {
    Char c = decode_at(s, n, p);
    if (!(c.cls & kNumber)) break;
    p += c.len;
  }
  return p;
}

// \s*[\r\n]+ | \s+(?!\S) | \s+ at i (the character at i is white space).
std::size_t whitespace(Bytes s, std::size_t n, std::size_t i) {
  std::size_t p = i, last_start = i, after_newline = 0;
  int chars = 0;
  while (p < n) {
    Char c = decode_at(s, n, p);
    if (!(c.cls & kSpace)) break;
    if (is_newline(c.cp)) after_newline = p + 1;
    last_start = p;
    p += c.len;
    ++chars;
  }
  if (after_newline) return after_newline;  // \s*[\r\n]+ ends at the last newline
  if (p == n) return p;                     // \s+(?!\S) at the end of the text
  if (chars >= 2) return last_start;        // \s+(?!\S): leave one for the next piece
  return p;                                 // \s+
}

// ---- o200k word alternatives ----------------------------------------------

// [U]*[W]+ from p, greedy with backtracking: the end, or 0 if no match.
std::size_t upper_star_lower_plus(Bytes s, std::size_t n, std::size_t p) {
  std::size_t q = p, last_lowerish_end = 0;
  while (q < n) {
    Char c = decode_at(s, n, q);
    if (!(c.cls & kUpperish)) break;
    q += c.len;
    if (c.cls & kLowerish) last_lowerish_end = q;
  }
  std::size_t r = run_of(s, n, q, kLowerish);
  if (r > q) return r;
  return last_lowerish_end;  // backtrack [U]* to its last character that is also W
}

// [U]+[W]* from p: the end, or 0 if no match.
std::size_t upper_plus_lower_star(Bytes s, std::size_t n, std::size_t p) {
  std::size_t q = run_of(s, n, p, kUpperish);
  if (q == p) return 0;
  return run_of(s, n, q, kLowerish);
}

}  // namespace

std::size_t next_piece_cl100k(Bytes s, std::size_t n, std::size_t i) {
  Char c = decode_at(s, n, i);
  if (c.cp == '\'') {
    if (std::size_t k = contraction(s, n, i)) return i + k;
  }
  if (c.cls & kLetter) return run_of(s, n, i + c.len, kLetter);
  if (is_prefix(c) && i + c.len < n) {
    Char d = decode_at(s, n, i + c.len);
    if (d.cls & kLetter) return run_of(s, n, i + c.len + d.len, kLetter);
  }
  if (c.cls & kNumber) return numbers(s, n, i);
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  std::size_t p = i;
  if (c.cp == ' ' && i + 1 < n && is_punct(decode_at(s, n, i + 1))) p = i + 1;
  if (p > i || is_punct(c)) {
    p = punct_run(s, n, p);
    while (p < n && is_newline(s[p])) ++p;
    return p;
  }
  return whitespace(s, n, i);
}

std::size_t next_piece_o200k(Bytes s, std::size_t n, std::size_t i) {
  Char c = decode_at(s, n, i);
  const bool prefix = is_prefix(c);
  auto with_contraction = [&](std::size_t e) { return e + contraction(s, n, e); };
  // [^\r\n\p{L}\p{N}]?[U]*[W]+('s…)?  — first with the optional prefix, then without.
  if (prefix && i + c.len < n) {
    if (std::size_t e = upper_star_lower_plus(s, n, i + c.len)) return with_contraction(e);
  }
  if (c.cls & (kUpperish | kLowerish)) {
    if (std::size_t e = upper_star_lower_plus(s, n, i)) return with_contraction(e);
  }
  // [^\r\n\p{L}\p{N}]?[U]+[W]*('s…)?
  if (prefix && i + c.len < n) {
    if (std::size_t e = upper_plus_lower_star(s, n, i + c.len)) return with_contraction(e);
  }
  if (c.cls & kUpperish) {
    if (std::size_t e = upper_plus_lower_star(s, n, i)) return with_contraction(e);
  }
  if (c.cls & kNumber) return numbers(s, n, i);
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*
  std::size_t p = i;
  if (c.cp == ' ' && i + 1 < n && is_punct(decode_at(s, n, i + 1))) p = i + 1;
  if (p > i || is_punct(c)) {
    p = punct_run(s, n, p);
    while (p < n && (is_newline(s[p]) || s[p] == '/')) ++p;
    return p;
  }
  return whitespace(s, n, i);
}

std::vector<std::string_view> split_pieces(Pattern pattern, std::string_view text) {
  std::vector<std::string_view> out;
  auto s = reinterpret_cast<Bytes>(text.data());
  std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t e = pattern == Pattern::O200k ? next_piece_o200k(s, n, i) : next_piece_cl100k(s, n, i);
    out.push_back(text.substr(i, e - i));
    i = e;
  }
  return out;
}

}  // namespace td::tok
