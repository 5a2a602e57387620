#include "providers/json_spans.hpp"

#include <array>

#include "providers/json_simd.hpp"
#include "providers/json_string_end.hpp"

namespace td::providers::json {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char* put_utf8(char* o, std::uint32_t cp) {
  if (cp < 0x80) {
    *o++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *o++ = static_cast<char>(0xC0 | (cp >> 6));
    *o++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *o++ = static_cast<char>(0xE0 | (cp >> 12));
    *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *o++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *o++ = static_cast<char>(0xF0 | (cp >> 18));
    *o++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *o++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return o;
}

std::uint32_t read_hex4(std::string_view s, std::size_t i) {
  std::uint32_t v = 0;
  for (std::size_t k = 0; k < 4; ++k) v = v * 16 + static_cast<std::uint32_t>(hex_value(s[i + k]));
  return v;
}

// Length of the valid UTF-8 sequence starting at s[i], 0 if invalid
// (overlongs, surrogates, > U+10FFFF and truncations are invalid).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

// What each one-character escape stands for (\u is decoded apart). Those
// JSON does not define cannot reach here (the parser refuses them); they
// stand for themselves, as \" \\ and \/ do.
constexpr auto kUnescaped = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = static_cast<char>(c);
  t['b'] = '\b';
  t['f'] = '\f';
  t['n'] = '\n';
  t['r'] = '\r';
  t['t'] = '\t';
  return t;
}();

// Decodes the \u escape at s[i] (and the low surrogate after a high one)
// into *o; returns the index after it. Lone halves become U+FFFD.
std::size_t decode_u_escape(std::string_view body, std::size_t i, char*& o) {
  const char* s = body.data();
  const std::size_t n = body.size();
  i += 2;
  std::uint32_t cp = read_hex4(body, i);
  i += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
      std::uint32_t lo = read_hex4(body, i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i += 6;
      } else {
        cp = 0xFFFD;
      }
    } else {
      cp = 0xFFFD;
    }
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    cp = 0xFFFD;
  }
  o = put_utf8(o, cp);  // at most 4 bytes from at least 6 escaped ones
  return i;
}

// Decodes the escape at s[i] (s[i] == '\\', validated by the parser) into
// *o; returns the index after it.
inline std::size_t decode_escape(std::string_view body, std::size_t i, char*& o) {
  const auto e = static_cast<unsigned char>(body[i + 1]);
  if (e == 'u') return decode_u_escape(body, i, o);
  *o++ = kUnescaped[e];
  return i + 2;
}

}  // namespace

void decode_string(std::string_view body, std::string& out) {
  // Decoded text is never longer than its escaped form: write into a buffer
  // of that size through a pointer, then trim. Tool output is full of \n
  // and \", one every few dozen bytes, so the per-escape cost is what
  // matters. Long strings go 64 bytes at a time: the window is stored as it
  // is, then for each escape in it (in order) its character is written and
  // the 64 bytes after it are stored again right behind, each store
  // overwriting what the shift left wrong. No branch depends on where the
  // escapes are but the loop over them. Every store stays inside the buffer
  // and every load inside `body`: windows need 140 bytes ahead (64 for the
  // window, 12 for a surrogate pair escaped at its last byte, 64 for the
  // store after it), and output trails input.
  const std::size_t base = out.size();
  out.resize(base + body.size());
  char* o = out.data() + base;
  const char* s = body.data();
  const std::size_t n = body.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i backslash = _mm_set1_epi8('\\');
  auto copy64 = [](char* to, const char* from) {
    for (int k = 0; k < 64; k += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + k)));
  };
  while (i + 140 <= n) {
    std::uint64_t mask = 0;
    for (int k = 0; k < 64; k += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k), v);
      mask |= std::uint64_t(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)))) << k;
    }
    const std::size_t start = i;
    std::size_t next = i;  // input index of the next byte not yet decoded
    while (mask != 0) {
      const std::size_t at = start + static_cast<std::size_t>(__builtin_ctzll(mask));
      o += at - next;  // the bytes before the escape are in place already
      next = decode_escape(body, at, o);
      copy64(o, s + next);
      // Backslashes the escape consumed (\\ or inside \u....) are not escapes.
      const std::size_t done = next - start;
      mask = done >= 64 ? 0 : mask & (~std::uint64_t{0} << done);
    }
    const std::size_t end = std::max(start + 64, next);
    o += end - next;
    i = end;
  }
  while (i + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), v);
    const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash));
    if (mask == 0) {
      i += 16;
      o += 16;
      continue;
    }
    const auto k = static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    o += k;
    i = decode_escape(body, i + k, o);
  }
#endif
  while (i < n) {
    if (s[i] != '\\') {
      *o++ = s[i++];
      continue;
    }
    i = decode_escape(body, i, o);
  }
  out.resize(static_cast<std::size_t>(o - out.data()));
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  std::size_t i = 0, run = 0;  // [run, i) is a stretch copied verbatim
  auto flush = [&] { out.append(s.data() + run, i - run); };
  while (i < s.size()) {
    i = scan_plain_ascii(s.data(), i, s.size());
    if (i == s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t len = utf8_sequence_length(s, i);
      if (len > 0) {
        i += len;
        continue;
      }
      flush();
      out.append("\xEF\xBF\xBD");  // U+FFFD for each invalid byte
      run = ++i;
      continue;
    }
    flush();
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
    run = ++i;
  }
  flush();
  out.push_back('"');
}

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

bool Document::fail(const char* why) {
  if (!error_) error_ = why;
  return false;
}

std::uint32_t Document::add(Type t, std::uint32_t begin) {
  // Built in place: a Node assembled on the stack was stored field by field
  // and then read back as 16-byte vectors to copy it, a store-forwarding
  // stall on every node.
  Node& n = nodes_.emplace_back();
  n.type = t;
  n.begin = begin;
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

void Document::skip_ws() {
  while (pos_ < text_.size() && is_ws(text_[pos_])) ++pos_;
}

// On entry text_[pos_] == '"'. Leaves pos_ after the closing quote.
bool Document::parse_string_token(std::uint32_t& end, bool& escaped) {
  const StringEnd e = find_string_end(text_, pos_ + 1);
  if (e.error) return fail(e.error);
  escaped = e.escaped;
  pos_ = e.quote + 1;
  end = static_cast<std::uint32_t>(pos_);
  return true;
}

bool Document::parse_number() {
  const std::size_t n = text_.size();
  std::size_t i = pos_;
  if (i < n && text_[i] == '-') ++i;
  if (i >= n) return fail("bad number");
  if (text_[i] == '0') {
    ++i;
  } else if (is_digit(text_[i])) {
    while (i < n && is_digit(text_[i])) ++i;
  } else {
    return fail("bad number");
  }
  if (i < n && text_[i] == '.') {
    ++i;
    if (i >= n || !is_digit(text_[i])) return fail("bad number");
    while (i < n && is_digit(text_[i])) ++i;
  }
  if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
    ++i;
    if (i < n && (text_[i] == '+' || text_[i] == '-')) ++i;
    if (i >= n || !is_digit(text_[i])) return fail("bad number");
    while (i < n && is_digit(text_[i])) ++i;
  }
  pos_ = i;
  return true;
}

bool Document::splice_known(std::uint32_t& out, KnownValues::Where where) {
  if (pos_ >= text_.size()) return false;
  const KnownValues::Value v = known_->at(text_, pos_, where);
  // Only values that end themselves: a number's bytes may go on past them.
  if (v.nodes.empty() || (v.nodes[0].type != Type::Object && v.nodes[0].type != Type::Array)) return false;
  const auto base = static_cast<std::uint32_t>(nodes_.size());
  const auto at = static_cast<std::uint32_t>(pos_);
  nodes_.resize(base + v.nodes.size());
  // Field by field: a Node assembled in a local and stored whole is read
  // back across a pending store, a store-forwarding stall per node.
  Node* to = nodes_.data() + base;
  for (const Node& n : v.nodes) {
    to->begin = n.begin + at;
    to->end = n.end + at;
    to->key_begin = n.key_end != 0 ? n.key_begin + at : 0;
    to->key_end = n.key_end != 0 ? n.key_end + at : 0;
    to->first = n.first != kNone ? n.first + base : kNone;
    to->next = n.next != kNone ? n.next + base : kNone;
    to->count = n.count;
    to->type = n.type;
    to->escaped = n.escaped;
    to->key_escaped = n.key_escaped;
    ++to;
  }
  pos_ += v.size;
  out = base;
  return true;
}

// A root member's value with `known_` set: the known array is parsed with its
// elements offered to `known_`; another object or array value is offered
// whole, and told about when parsed.
bool Document::parse_root_member(std::uint32_t key_begin, std::uint32_t key_end, bool key_escaped,
                                 std::uint32_t& out) {
  const bool is_array = !key_escaped && text_.substr(key_begin + 1, key_end - key_begin - 2) == known_array_;
  skip_ws();
  if (is_array || pos_ >= text_.size() || (text_[pos_] != '{' && text_[pos_] != '[')) {
    return parse_value(1, out, is_array);
  }
  if (splice_known(out, KnownValues::Where::Member)) return true;
  if (!parse_value(1, out)) return false;
  known_->parsed_member(*this, out);
  return true;
}

bool Document::parse_value(unsigned depth, std::uint32_t& out, bool known_elements) {
  skip_ws();
  if (pos_ >= text_.size()) return fail("unexpected end");
  const auto begin = static_cast<std::uint32_t>(pos_);
  char c = text_[pos_];
  switch (c) {
    case '"': {
      out = add(Type::String, begin);
      std::uint32_t end;
      bool escaped;
      if (!parse_string_token(end, escaped)) return false;
      nodes_[out].end = end;
      nodes_[out].escaped = escaped;
      return true;
    }
    case '{':
    case '[': {
      if (depth >= max_depth_) return fail("nesting too deep");
      const bool is_object = c == '{';
      out = add(is_object ? Type::Object : Type::Array, begin);
      ++pos_;
      skip_ws();
      const char close = is_object ? '}' : ']';
      std::uint32_t prev = kNone, count = 0;
      if (pos_ < text_.size() && text_[pos_] == close) {
        ++pos_;
        nodes_[out].end = static_cast<std::uint32_t>(pos_);
        return true;
      }
      for (;;) {
        std::uint32_t key_begin = 0, key_end = 0;
        bool key_escaped = false;
        if (is_object) {
          skip_ws();
          if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected member name");
          key_begin = static_cast<std::uint32_t>(pos_);
          if (!parse_string_token(key_end, key_escaped)) return false;
          skip_ws();
          if (pos_ >= text_.size() || text_[pos_] != ':') return fail("expected ':'");
          ++pos_;
        }
        std::uint32_t child;
        if (is_object && depth == 0 && known_ != nullptr) {
          if (!parse_root_member(key_begin, key_end, key_escaped, child)) return false;
        } else if (known_elements && !is_object) {
          skip_ws();
          if (!splice_known(child, KnownValues::Where::Element) && !parse_value(depth + 1, child)) return false;
        } else if (!parse_value(depth + 1, child)) {
          return false;
        }
        Node& cn = nodes_[child];
        cn.key_begin = key_begin;
        cn.key_end = key_end;
        cn.key_escaped = key_escaped;
        if (prev == kNone) {
          nodes_[out].first = child;
        } else {
          nodes_[prev].next = child;
        }
        prev = child;
        ++count;
        skip_ws();
        if (pos_ >= text_.size()) return fail("unexpected end");
        if (text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (text_[pos_] == close) {
          ++pos_;
          break;
        }
        return fail(is_object ? "expected ',' or '}'" : "expected ',' or ']'");
      }
      nodes_[out].end = static_cast<std::uint32_t>(pos_);
      nodes_[out].count = count;
      return true;
    }
    case 't':
    case 'f':
    case 'n': {
      std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      if (text_.substr(pos_, word.size()) != word) return fail("bad literal");
      out = add(c == 't' ? Type::True : c == 'f' ? Type::False : Type::Null, begin);
      pos_ += word.size();
      nodes_[out].end = static_cast<std::uint32_t>(pos_);
      return true;
    }
    default: {
      if (c != '-' && !is_digit(c)) return fail("unexpected character");
      out = add(Type::Number, begin);
      if (!parse_number()) return false;
      nodes_[out].end = static_cast<std::uint32_t>(pos_);
      return true;
    }
  }
}

bool Document::parse(std::string_view text, std::string* error, unsigned max_depth, std::string_view known_array,
                     KnownValues* known) {
  text_ = text;
  pos_ = 0;
  error_ = nullptr;
  max_depth_ = max_depth;
  known_array_ = known_array;
  known_ = known;
  nodes_.clear();
  std::uint32_t root = 0;
  bool ok = text.size() < 0xFFFFFFF0u || fail("body too large");
  if (ok) {
    nodes_.reserve(text.size() / 96 + 16);  // chat bodies: ~1 node per 130 bytes (tool-heavy ones)
    ok = parse_value(0, root);
  }
  if (ok) {
    skip_ws();
    if (pos_ != text_.size()) ok = fail("trailing bytes after the value");
  }
  if (!ok) {
    if (error) *error = std::string(error_ ? error_ : "invalid JSON") + " at byte " + std::to_string(pos_);
    nodes_.clear();
  }
  return ok;
}

std::vector<Node> Document::subtree(std::uint32_t i) const {
  // Preorder: the subtree is the run of nodes from i that start before i ends.
  const Node& top = nodes_[i];
  std::uint32_t end = i + 1;
  while (end < nodes_.size() && nodes_[end].begin < top.end) ++end;
  std::vector<Node> out(nodes_.begin() + i, nodes_.begin() + end);
  for (Node& n : out) {
    n.begin -= top.begin;
    n.end -= top.begin;
    if (n.key_end != 0) {
      n.key_begin -= top.begin;
      n.key_end -= top.begin;
    }
    if (n.first != kNone) n.first -= i;
    if (n.next != kNone) n.next -= i;
  }
  out[0].next = kNone;
  out[0].key_begin = out[0].key_end = 0;
  out[0].key_escaped = false;
  return out;
}

std::string_view Document::raw(std::uint32_t i) const {
  const Node& n = nodes_[i];
  return text_.substr(n.begin, n.end - n.begin);
}

std::string_view Document::raw_member(std::uint32_t i) const {
  const Node& n = nodes_[i];
  return text_.substr(n.key_begin, n.end - n.key_begin);
}

bool Document::key_is(std::uint32_t i, std::string_view key) const {
  const Node& n = nodes_[i];
  std::string_view body = text_.substr(n.key_begin + 1, n.key_end - n.key_begin - 2);
  if (!n.key_escaped) return body == key;
  std::string decoded;
  decode_string(body, decoded);
  return decoded == key;
}

std::string Document::key(std::uint32_t i) const {
  const Node& n = nodes_[i];
  std::string out;
  decode_string(text_.substr(n.key_begin + 1, n.key_end - n.key_begin - 2), out);
  return out;
}

void Document::append_str(std::uint32_t i, std::string& out) const {
  const Node& n = nodes_[i];
  std::string_view body = text_.substr(n.begin + 1, n.end - n.begin - 2);
  if (!n.escaped) {
    out.append(body);
  } else {
    decode_string(body, out);
  }
}

std::string Document::str(std::uint32_t i) const {
  std::string out;
  append_str(i, out);
  return out;
}

bool Document::str_is(std::uint32_t i, std::string_view s) const {
  const Node& n = nodes_[i];
  if (n.type != Type::String) return false;
  if (!n.escaped) return text_.substr(n.begin + 1, n.end - n.begin - 2) == s;
  return str(i) == s;
}

std::uint32_t Document::find(std::uint32_t obj, std::string_view key) const {
  if (nodes_[obj].type != Type::Object) return kNone;
  for (std::uint32_t c = nodes_[obj].first; c != kNone; c = nodes_[c].next)
    if (key_is(c, key)) return c;
  return kNone;
}

}  // namespace td::providers::json
