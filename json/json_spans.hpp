// A JSON parser that remembers where every value is.
//
// The request writer splices edits into the client's original bytes, so it
// needs each value's byte span, which RapidJSON's Document does not keep. It
// parses RFC 8259's grammar strictly (structure, numbers, escapes, control
// characters) and builds a flat tree of nodes holding spans only (no copies,
// no decoded strings): one pass over the body, a few dozen bytes per value.
// Strings are decoded only when asked.
//
// What it accepts beyond RFC 8259: string bytes that are not UTF-8 (§8.1
// requires UTF-8). Checking them would cost every byte of every body, and
// refusing them would change nothing for the client: bytes we never touch
// are copied as they came (the upstream judges them, as it would without
// tokendiet), and text we re-render is made valid by append_json_string()
// (U+FFFD for each invalid byte). tests/unit/json/json_spans_test.cpp
// pins both.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_strings.hpp"

namespace td::json {

enum class Type : std::uint8_t { Null, False, True, Number, String, Array, Object };

inline constexpr std::uint32_t kNone = 0;  // "no node": node 0 is the root, never a child

struct Node {
  std::uint32_t begin = 0, end = 0;          // the value's bytes [begin, end)
  std::uint32_t key_begin = 0, key_end = 0;  // object member: its key token, quotes included
  std::uint32_t first = kNone;               // first child (array element / object member)
  std::uint32_t next = kNone;                // next sibling
  std::uint32_t count = 0;                   // number of children
  Type type = Type::Null;
  bool escaped = false;      // String: contains a backslash escape
  bool key_escaped = false;  // member key contains a backslash escape
};

// Values whose bytes an earlier parse saw, spliced into a Document instead of
// parsed again (providers/parsed_message_memo.hpp: an agent resends its whole
// history, and its tool definitions, with every request).
class KnownValues {
 public:
  enum class Where : std::uint8_t {
    Element,  // an element of the root object's array member asked about
    Member,   // the object or array value of another root object member
  };
  struct Value {
    std::uint32_t size = 0;       // bytes of the value
    std::span<const Node> nodes;  // its subtree (Document::subtree()); empty: not known
  };
  // At byte `pos` of `text`, where such a value starts: the value, if those
  // bytes are known.
  virtual Value at(std::string_view text, std::size_t pos, Where where) = 0;
  // A root member's object or array value that was parsed, not known: node
  // `i` of `doc` (complete, while the rest of `doc` is still being parsed).
  virtual void parsed_member(const class Document& doc, std::uint32_t i) = 0;

 protected:
  ~KnownValues() = default;
};

class Document {
 public:
  // Parses `text`; false (with a reason in *error) if it is not exactly one
  // JSON value surrounded by optional whitespace. `max_depth` bounds nesting.
  // With `known`, each element of the root object's array member
  // `known_array`, and the object or array value of every other root member,
  // is first offered to it: a known value's subtree is copied in, moved to
  // where the value sits, instead of parsed. The result is the same node for
  // node: the subtree is that of a parse of the same bytes at the same depth
  // (the caller keeps `max_depth` the same for the parses it remembers).
  bool parse(std::string_view text, std::string* error = nullptr, unsigned max_depth = 512,
             std::string_view known_array = {}, KnownValues* known = nullptr);
  // How many times this thread has called parse(): what tests read to see
  // that a request body is parsed once (docs/design.md §Thinking budget).
  static std::uint64_t parses_on_this_thread();

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(std::uint32_t i) const { return nodes_[i]; }
  std::uint32_t root() const { return 0; }
  std::string_view text() const { return text_; }

  // The value's bytes exactly as in the body.
  std::string_view raw(std::uint32_t i) const;
  // The bytes of a member: key, colon and value.
  std::string_view raw_member(std::uint32_t i) const;
  // A member's key compared with `key` (decoding escapes only if present).
  bool key_is(std::uint32_t i, std::string_view key) const;
  std::string key(std::uint32_t i) const;
  // A String node's decoded value (lone surrogates become U+FFFD).
  std::string str(std::uint32_t i) const;
  void append_str(std::uint32_t i, std::string& out) const;
  // String node equal to `s` (cheap when the string has no escapes).
  bool str_is(std::uint32_t i, std::string_view s) const;

  // First member of object `obj` with this key, kNone if absent.
  std::uint32_t find(std::uint32_t obj, std::string_view key) const;

  // The subtree of value `i` in preorder, positions relative to its first
  // byte and links relative to its own node (kNone stays kNone; its own
  // sibling link and key are dropped): what KnownValues gives back.
  std::vector<Node> subtree(std::uint32_t i) const;

 private:
  bool fail(const char* why);
  std::uint32_t add(Type t, std::uint32_t begin);
  // `known_elements`: the value is the known array (its elements are offered
  // to `known_`).
  bool parse_value(unsigned depth, std::uint32_t& out, bool known_elements = false);
  bool splice_known(std::uint32_t& out, KnownValues::Where where);
  bool parse_root_member(std::uint32_t key_begin, std::uint32_t key_end, bool key_escaped, std::uint32_t& out);
  bool parse_string_token(std::uint32_t& end, bool& escaped);
  bool parse_number();
  void skip_ws();

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<Node> nodes_;
  const char* error_ = nullptr;
  unsigned max_depth_ = 512;
  std::string_view known_array_;
  KnownValues* known_ = nullptr;
};

}  // namespace td::json
