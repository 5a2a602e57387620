// Reads the numbers of a small JSON object, such as a provider's usage
// object, without building a document.
//
// Every response carries one usage object of a few hundred bytes, and a
// RapidJSON document for it was the single largest item of the proxy core's
// response path (scripts/bench/providers/record-2026-11-24.md). This reader
// walks the bytes once and keeps, for the top level and one level of nesting,
// each member's key and, when the value is a number, that number.
//
// It reads the cases every provider sends and declines the rest: run()
// returns false for malformed JSON, escaped keys, more than kMaxEntries
// members, nesting deeper than kMaxDepth, or control characters in strings,
// and the caller then falls back to RapidJSON, so a declined object is read
// exactly as before. Lookups follow RapidJSON's FindMember: the first member
// with a key wins.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace td::json {

class UsageObjectScan {
 public:
  static constexpr std::size_t kMaxEntries = 48;
  static constexpr int kMaxDepth = 16;

  explicit UsageObjectScan(std::string_view json);

  // Whether the object was read; when false, the lookups say nothing.
  bool ok() const { return ok_; }

  // A top-level member's number (an integer, or a float cut to one).
  std::optional<std::int64_t> count(std::string_view key) const;
  // A number one level down, in the first top-level member named `parent`
  // when that member is an object.
  std::optional<std::int64_t> nested_count(std::string_view parent, std::string_view key) const;

 private:
  enum class Kind : std::uint8_t { number, object, other };
  struct Entry {
    std::string_view key;
    int parent;  // index of the enclosing top-level entry, -1 for the top level
    Kind kind;
    std::optional<std::int64_t> number;  // set for kind == number
  };

  bool object(int depth, int parent);
  template <class Element>
  bool list(char close, Element element);
  bool value(int depth, Entry* entry);
  bool string(std::string_view* out);
  bool number(std::optional<std::int64_t>* out);
  bool literal(std::string_view word);
  void skip_ws();
  const Entry* find(int parent, std::string_view key) const;

  const char* p_;
  const char* end_;
  std::array<Entry, kMaxEntries> entries_;
  std::size_t size_ = 0;
  bool ok_ = false;
};

}  // namespace td::json
