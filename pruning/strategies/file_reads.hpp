// Which stale tool outputs are file reads the agent may still copy from, and
// not yet superseded (docs/design.md §Strategies, stale_tool_outputs):
// stale_tool_outputs keeps them whole. A read is a Read-like tool's output or
// a shell command starting with a reading word (never after a pipe; a
// heredoc is no read); with `stale_tool_outputs_keep_reads_revisited`, only
// of a path an earlier call named. It is superseded when a later call of
// its frontier block names its path again (a numbered read only by one
// showing every line it showed). Judged within the block, which is stale
// only once whole, so the answer never changes (§Principles (4)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"

namespace td::pruning {

// What a call's name and arguments say for the reads: whether it reads a
// file (reads_a_file()) and the paths it names, as (offset, size) in the
// arguments, so that a remembered answer points into any copy of the same
// text. A function of the call alone, remembered in PipelineCaches::calls
// (docs/design.md §Memos and caches).
struct CallReads {
  bool reads = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> paths;
  std::size_t memo_bytes() const { return sizeof(CallReads) + paths.size() * sizeof(paths[0]); }
};

// Whether `call` reads a file (reads_a_file()) and the paths its arguments
// name (the path names of names_in(), in order, once each), as views into
// its own text; through `calls` (may be null) by the call's name and text.
std::pair<bool, std::vector<std::string_view>> call_reads(const Part& call, Memo<CallReads>* calls);
// The same facts as they are remembered (paths as offsets into call.text);
// null for a call that reads nothing and names no path.
std::shared_ptr<const CallReads> call_read_facts(const Part& call, Memo<CallReads>* calls);

// Per message of [0, limit): true for a tool message whose output is a file
// read not superseded within its block. `calls` (may be null) remembers
// each call's CallReads.
std::vector<bool> unsuperseded_reads(const Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit,
                                     Memo<CallReads>* calls = nullptr);

// Whether a call (its tool name and its arguments as sent, JSON text) reads
// a file (exposed for tests).
bool reads_a_file(std::string_view name, std::string_view arguments);

// The line numbers a read shows (`grep -n`, `cat -n`, `nl`, Claude Code's
// Read: "496:", "497-", "   12\t", "    12→"), ascending, or none when fewer
// than 3 or under 60 % of its non-blank lines carry one (then it is not a
// numbered read).
std::vector<std::uint32_t> shown_line_numbers(std::string_view text);

// The lines of the kept reads seen so far, for `dedupe`.
// `stale_tool_outputs_keep_reads_dedupe`: a kept read's run of lines that
// earlier kept reads already hold, over
// `stale_tool_outputs_keep_reads_dedupe_run_bytes`, becomes one line
//   [12 lines as in an earlier output]
// (lines are compared stripped, from `..._dedupe_line_chars` characters on:
// `}` or `return x` repeat everywhere). The agent has those lines in the
// earlier read, which stays whole too. Fed the kept reads in order, the
// result for a read depends only on the reads before it, so it never
// changes as the history grows.
class KeptReadLines {
 public:
  explicit KeptReadLines(const StaleToolOutputsOptions& opt);
  // `read` with its runs of earlier lines replaced; then remembers its lines.
  std::string dedupe(std::string_view read);

 private:
  std::uint64_t run_bytes_;
  std::uint64_t line_chars_;
  bool recall_;                             // notices name the read's handle and the lines (snip.hpp, recall_ref())
  std::unordered_set<std::uint64_t> seen_;  // copy_line_key of each line
};

}  // namespace td::pruning
