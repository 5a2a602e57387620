// Resent messages parsed once: an agent sends its whole history with every
// turn, so all but the last message or two of a chat request are byte for
// byte ones the proxy has parsed before.
//
// What the format's parser makes of one message element (the Message with its
// decoded texts and their hashes, its MessageSource and PartSources) depends
// on the element's bytes alone. So it is kept under a 128-bit hash of those
// bytes, with every node index stored relative to the element's node and
// every byte offset relative to its first byte; a later request whose
// element has the same bytes gets the same view, moved to where the element
// now sits: in the same Document layout (the same bytes parse to the same
// subtree, node for node), at another index and offset. Skips the string
// decoding and the walk, which were most of the parse.
//
// The element's JSON subtree goes along: a later request's Document finds a
// resent element by its first 512 bytes (a guess: which element started so,
// and how long it was), checks the guess by hashing that many bytes, and
// copies the subtree in instead of parsing the element (KnownMessages, given
// to Document::parse). Hashing costs far fewer instructions per byte than
// parsing (docs/benchmarks.md §What moved the numbers).
//
// One ParsedMessageMemo is shared by the I/O threads of the proxy (its owner
// passes it to parse(); pruning::Memo: sharded, bounded at 64 MiB, oldest
// first out), another by `tokendiet replay`. It changes how fast a request
// parses, never what it parses to: a miss, or no memo, parses the element as
// before. Used by the parsers of all four formats (OpenAI chat and
// Responses, Anthropic, Gemini).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "json/json_spans.hpp"
#include "providers/request.hpp"
#include "pruning/memo.hpp"

namespace td::providers {

using ParsedMessageKey = pruning::memo_detail::Key;

class ParsedMessageMemo {
 public:
  ParsedMessageMemo();
  ~ParsedMessageMemo();
  ParsedMessageMemo(const ParsedMessageMemo&) = delete;
  ParsedMessageMemo& operator=(const ParsedMessageMemo&) = delete;

  // Messages answered from the memo so far (tests and metrics).
  std::uint64_t hits() const;
  // Root member values (tool definitions) spliced in so far (tests).
  std::uint64_t spliced_members() const;
  // Texts append_json_text() took escaped from the memo so far (tests).
  std::uint64_t escaped_hits() const;

  struct Stores;  // the views, the guesses and the counters (parsed_message_memo.cpp)
  Stores& stores() { return *stores_; }

 private:
  std::unique_ptr<Stores> stores_;
};

// The key of message element `elem` of r.doc, for format `format`.
ParsedMessageKey parsed_message_key(const ParsedRequest& r, std::uint32_t elem);

// The functions below use r.memo, which must be set.

// Appends the remembered view of element `elem` to r (conversation message,
// its source and its parts' sources, moved to `elem`): true, or false when
// there is none. `mark` (if given) gets the format's bit remembered with it.
bool reuse_parsed_message(ParsedRequest& r, std::uint32_t elem, const ParsedMessageKey& key, bool* mark = nullptr);

// Remembers the view the parser just appended for element `elem` (the last
// message of r and its parts), and `mark`, a bit the format's parser learned
// from the element besides (Anthropic: it holds a cache_control breakpoint).
void remember_parsed_message(const ParsedRequest& r, std::uint32_t elem, const ParsedMessageKey& key,
                             bool mark = false);

// Appends part `p`'s text as a JSON string (quoted and escaped) to `out`.
// A pruned form goes out again with every later request of its session, so
// its escaped bytes are kept in `memo` (when given) under the text's hash
// (docs/design.md §Memos and caches): the same bytes either way.
void append_json_text(ParsedMessageMemo* memo, const pruning::Part& p, std::string& out);

// What Document::parse offers r's message elements and large root members
// (tool definitions) to: those r.memo knows are copied in (elements are
// listed in r.spliced), not parsed.
class KnownMessages final : public json::KnownValues {
 public:
  explicit KnownMessages(ParsedRequest& r) : r_(r) {}
  Value at(std::string_view text, std::size_t pos, Where where) override;
  void parsed_member(const json::Document& doc, std::uint32_t i) override;

 private:
  ParsedRequest& r_;
  std::vector<std::shared_ptr<const ParsedMessage>> member_views_;
};

}  // namespace td::providers
