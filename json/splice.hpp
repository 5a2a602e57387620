// Byte splicing over a span-keeping json::Document (docs/design.md
// §Splicing). Everything here copies original bytes wherever it can: an edit
// replaces one span, a rebuilt container reuses the original separators and
// whitespace between the elements it keeps.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_spans.hpp"

namespace td::json {

struct Edit {
  std::uint32_t begin = 0, end = 0;  // replaced span of the original body
  std::string text;
  // Instead of `text` when non-empty: the replacement as pieces (views into
  // the body or into strings kept alive by the caller), so a rebuilt message
  // array costs one copy of each kept message, into the final body.
  std::vector<std::string_view> pieces;
};

// body[begin, end) with `edits` (sorted, inside the range, not overlapping) applied.
void append_with_edits(std::string& out, std::string_view body, std::uint32_t begin, std::uint32_t end,
                       const std::vector<Edit>& edits);

// The whole body with `edits` applied (sorts them; false if two overlap).
bool apply(std::string_view body, std::vector<Edit> edits, std::string& out);

// One element of a rebuilt array or object: the original child at `pos` (its
// position among the container's children) or a new one (pos < 0), and the
// bytes to write for it. For objects the bytes are the whole member.
struct Item {
  int pos = -1;
  std::string bytes;
  std::string_view ref;  // used instead of `bytes` when set: original bytes, not copied
  std::string_view view() const { return ref.empty() ? std::string_view(bytes) : ref; }
};

// Writes `container` (an array or object node) holding `items`, reusing the
// original's opening/closing whitespace and the separator that preceded each
// kept element. Empty items are skipped. container == kNone: a fresh array.
void rebuild(const Document& doc, std::uint32_t container, const std::vector<Item>& items, std::string& out);
// The same as pieces: `store` keeps the items' own bytes alive.
void rebuild(const Document& doc, std::uint32_t container, std::vector<Item>& items, std::vector<std::string_view>& out,
             std::deque<std::string>& store);

// Children of a container node, in order.
std::vector<std::uint32_t> children(const Document& doc, std::uint32_t container);

// A member's bytes up to its value: `"key":` with the original spacing.
std::string_view member_head(const Document& doc, std::uint32_t member);

// The edit that deletes member `member` of object `obj` together with one
// separator, so the object stays valid JSON.
Edit cut_member(const Document& doc, std::uint32_t obj, std::uint32_t member);

}  // namespace td::json
