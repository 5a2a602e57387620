// Which stale tool outputs are file reads the agent may still copy from
// (docs/design.md §Strategies, the stale frontier): stale_tool_outputs leaves
// them whole until they are superseded.
//
// A file read is the output of a call that reads a file and names a path
// (pruning/snip.hpp is_path_name): a Read tool (Claude Code's Read, Gemini
// CLI's read_file, an editor's view), or a shell command that starts with a
// reading word: cat, head, tail, sed -n, nl, less, SWE-agent's open, or grep
// with context (-A, -B, -C). The word must start a command (the start of the
// arguments, or after `;`, `&&`, `||`, a newline), not follow a pipe:
// `pytest 2>&1 | tail -30` and `grep -r x . | head` print what a run or a
// search found, not a file. A `cat` that writes (`cat > f`, a heredoc
// `cat <<EOF`) reads nothing, and the lines of a heredoc's body are not
// commands.
//
// With `stale_tool_outputs_keep_reads_revisited`, only a read of a path that
// an earlier call already named counts: a file the agent comes back to (it
// listed, searched or read it before) is one it works on; a file read once
// in passing is snipped like any other output. Whether a call reads, and
// whether it revisits, depend only on that call and the ones before it.
//
// A read is superseded when a later call of the same frontier block (the
// turns up to the next grid point of `frontier_step_turns`) names one of
// its paths again: a newer read or a write, so what the agent copies next
// comes from there. A newer read whose output shows line numbers (`grep -n`,
// `cat -n`, `nl`) supersedes an older numbered one only if it shows every
// line that one showed: a read of another function of the file does not
// hold what the agent saw in the first. Judged within the block only, so the answer is a
// function of the block's messages: a block is stale only once whole, and
// then never changes (docs/design.md §Principles (4)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"

namespace td::pruning {

// Per message of [0, limit): true for a tool message whose output is a file
// read not superseded within its block.
std::vector<bool> unsuperseded_reads(const Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit);

// Whether a call (its tool name and its arguments as sent, JSON text) reads
// a file (exposed for tests).
bool reads_a_file(std::string_view name, std::string_view arguments);

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
  std::unordered_set<std::uint64_t> seen_;  // copy_line_key of each line
};

}  // namespace td::pruning
