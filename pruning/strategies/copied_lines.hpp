// Lines an agent copied (docs/design.md §Strategies, "what the agent will
// copy"): lines of a tool output that an assistant message repeats word for
// word (its edit quoting the file it read), or repeats without the number or
// diff mark the tool's view put before them (copy_view()). What the agent copied once, it
// copies again: stale_assistant_text keeps those lines when it cuts the
// message, in the first assistant message that copies each of them only (a
// later copy is redundant while the first one stays).
//
// A line is stripped of the spaces and tabs around it and counts from
// `stale_assistant_text_copied_line_bytes` bytes on (shorter lines such as
// `}` or `return x` repeat everywhere by chance). Built from the messages
// before `limit` as the client sent them, before any strategy edits them;
// which lines a message keeps depends only on the messages up to it, so a
// stale message's cut never changes (docs/design.md §Principles (4)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"

namespace td::pruning {

// The copy_line_key of each line of a part's line_text() that has one, in
// order: a function of the part alone, remembered in
// PipelineCaches::line_keys (docs/design.md §Memos and caches) so that a
// resent history is not decoded and hashed again on every request.
struct LineKeys {
  std::vector<std::uint64_t> keys;
  std::size_t memo_bytes() const { return sizeof(LineKeys) + keys.size() * sizeof(std::uint64_t); }
};

class CopiedLines {
 public:
  CopiedLines() = default;  // knows no line: nothing is kept
  // `memo` (may be null) remembers each part's LineKeys.
  CopiedLines(const Conversation& conv, std::uint32_t limit, std::uint64_t min_bytes, Memo<LineKeys>* memo = nullptr);

  // The keys (copy_line_key, pruning/snip.hpp) of the lines of `text`, a
  // part of message `at`, that message `at` is the first to copy from an
  // earlier tool output: sorted, without repeats.
  std::vector<std::uint64_t> kept_by(std::string_view text, std::uint32_t at) const;

  // Whether message `at` is the first to copy any line.
  bool keeps_any(std::uint32_t at) const;

  std::uint64_t min_bytes() const { return min_bytes_; }

 private:
  // Built walking forward: when an assistant message is read, the set holds
  // the lines of the tool outputs before it only.
  std::unordered_set<std::uint64_t> in_tool_outputs_;
  std::unordered_map<std::uint64_t, std::uint32_t> keeper_;  // key -> first assistant message copying it
  std::vector<std::uint32_t> keepers_;                       // those messages, ascending
  std::uint64_t min_bytes_ = 0;
};

// A tool output's line as an agent copies it (copy_view): without the line
// number a numbered view puts before it (grep -n's `120:` and context
// `120-`, grep -rn's `path:120:`, Claude Code's Read `   120→`, cat -n's and
// nl's `   120<tab>`) or a diff's `+`/`-` mark (not `+++`/`---`); the line
// itself when it has none. Agents read files through those views and copy
// the code without the number or the mark (docs/design.md §Strategies, row 7).
std::string_view copy_view(std::string_view line);

// The text of a part as lines are read from it: a tool call's string
// arguments decoded, one after the other ('\n' between), and so a tool
// output that is a JSON object (Codex's shell tool sends
// `{"output":"…","metadata":{…}}`, its lines escaped into one); any other
// part's text, and such an output's that does not parse.
std::string line_text(const Part& p);

// Whether `p` is a tool output whose text is a JSON object (its first and
// last characters, blanks aside, are braces): line_text() decodes it.
bool json_object_output(const Part& p);

}  // namespace td::pruning
