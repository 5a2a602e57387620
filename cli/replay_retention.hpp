// Retention, the measure `tokendiet replay` uses for "did the diet keep what
// the agent needed" (docs/benchmarks.md §Compression (replay)):
//   A reference is a maximal run of [A-Za-z0-9_./:-], less any '.' and ':'
//   it ends with (a sentence's full stop, a label's colon), at least 6
//   characters long, containing a digit or one of _ . / : (paths,
//   identifiers, numbers, error codes; not "absent." or "Claude:"). The
//   measure's own reading, apart from the product's names (pruning/snip.hpp
//   names_in(), the same rule), so a change there does not move the yardstick.
//   A reference found in assistant message k counts when it was first seen
//   in a tool output before k (the earliest message before k that
//   contains it is a tool result) and in no system or user message before k.
//   It is retained when request k, as tokendiet sent it, still contains it.
//   Retention = retained / counted.
// "Contains" is a substring test on the texts of a message: its content, the
// string values of its tool-call arguments (decoded from their JSON), its
// reasoning. Each reference counts once per assistant message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace td::cli {

// The references of `text`, in order of first appearance, without repeats.
std::vector<std::string> extract_references(std::string_view text);

// A line shorter than this (once stripped) is not counted as copied: short
// lines (`}`, `return x`, `else:`) repeat everywhere by chance.
inline constexpr std::size_t kMinCopiedLine = 20;

// The lines of `text` that may be copies, stripped, in order, without repeats.
std::vector<std::string> extract_copy_lines(std::string_view text);

enum class Speaker : std::uint8_t { System, User, Assistant, Tool };

// One message of the original trajectory, as text.
struct MessageText {
  Speaker speaker = Speaker::User;
  std::string text;  // every text of the message, separated by '\n'
};

struct RetentionCount {
  std::uint64_t counted = 0;
  std::uint64_t retained = 0;
  double ratio() const { return counted ? double(retained) / double(counted) : 1.0; }
};

// The references of assistant message `k` that count (see above), given the
// trajectory's messages. Where each reference was first seen is remembered,
// so asking for every k of a trajectory scans each message once per reference.
class ReferenceIndex {
 public:
  explicit ReferenceIndex(const std::vector<MessageText>& messages) : messages_(messages) {}
  std::vector<std::string> counted(std::size_t k);
  // The copied lines of assistant message `k` that count (see above).
  std::vector<std::string> copied_lines(std::size_t k);
  // The first message holding `item` (a reference or copied line; size(): none).
  std::size_t first_seen(const std::string& item) { return seen(item).first; }

 private:
  struct Seen {
    std::size_t first;       // first message containing it (size(): none)
    std::size_t first_user;  // first system/user message containing it (size(): none)
  };
  const Seen& seen(const std::string& ref);
  // Those of `candidates` (from message k) first seen in a tool output before k, never said by a user.
  std::vector<std::string> from_tool_outputs(std::vector<std::string> candidates, std::size_t k);

  const std::vector<MessageText>& messages_;
  std::unordered_map<std::string, Seen> memo_;
};

// One-off form of ReferenceIndex::counted.
std::vector<std::string> counted_references(const std::vector<MessageText>& messages, std::size_t k);

// How many of `refs` the sent request (all its texts, concatenated) retains.
RetentionCount retained(const std::vector<std::string>& refs, std::string_view sent_text);

}  // namespace td::cli
