#include "json/json_spans.hpp"

#include "json/json_string_end.hpp"

namespace td::json {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

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
bool Document::parse_root_member(std::uint32_t key_begin, std::uint32_t key_end, bool key_escaped, std::uint32_t& out) {
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

namespace {
thread_local std::uint64_t parses = 0;
}  // namespace

std::uint64_t Document::parses_on_this_thread() { return parses; }

bool Document::parse(std::string_view text, std::string* error, unsigned max_depth, std::string_view known_array,
                     KnownValues* known) {
  ++parses;
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

}  // namespace td::json
