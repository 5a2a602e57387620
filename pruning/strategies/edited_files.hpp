// Files being edited (docs/design.md §Strategies, stale_tool_outputs; §The
// stale frontier, held reads): while the agent is still editing a file, the
// newest read of it stays whole even once stale, since the agent's next edit
// quotes its lines (Claude Code's Edit `old_string`, a Codex patch's context);
// `stale_tool_outputs_keep_edited_turns` turns after its last edit it is cut
// like any stale output. A fresh read is held the same way: a whole file
// shown as Claude Code's Read shows it (`    1→`), of at least
// `stale_tool_outputs_keep_fresh_reads_bytes`, for
// `stale_tool_outputs_keep_fresh_reads_turns` turns after it was read (an
// agent reads the files it will edit, then reads more before its first edit:
// docs/benchmarks.md §Fresh reads held). A hold moves the moment a read's
// pruned form applies, never the form: the pipeline applies it at the first
// frontier step at or past the hold.
//
// An edit is a call of an editing tool (Claude Code's Edit, MultiEdit,
// Write; Gemini CLI's replace, write_file; opencode's and pi's edit, write;
// SWE-agent's str_replace_editor other than view; apply_patch) or a command
// that writes a file (`*** Update File:` / `*** Add File:` of a patch,
// `sed -i`, `+++ b/` of a diff, `> path`, `open(..., 'w')`); it edits the
// paths it names. A read (file_reads.hpp) is held at grid point g (a
// multiple of `frontier_step_turns` turns) when it is still fresh at g or an
// edit of its path lies in the `keep_edited_turns` turns before g, and no
// newer read of the path showing its lines came before g; holds are granted
// in grid and message order, and where the held reads would total more than
// `stale_tool_outputs_held_reads_bytes` the oldest held ones are released at
// g to make room (an agent edits from the files it read last: docs/
// benchmarks.md §Newest reads held first). A read not held at its block's
// end is never held; one released stays released. Every input at g is a message
// before g, so the answer for g is the same in every later request
// (§Principles (4)).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/memo.hpp"
#include "pruning/strategies/stale_tool_outputs.hpp"

namespace td::pruning {

// A hold reaching past the messages given: not released there.
inline constexpr std::uint32_t kHeldBeyond = std::numeric_limits<std::uint32_t>::max();

// The holds of a history. A read is one tool result: Claude Code sends the
// results of parallel calls as one message, and each is held (and weighed
// against the budget) on its own.
struct ReadHolds {
  // Per message of [0, limit) of the history: 0 when its pruned form applies
  // as soon as it is stale, else the grid point (turns) from which it
  // applies, the latest of its held reads' (kHeldBeyond when not within
  // [0, limit)).
  std::vector<std::uint32_t> until;
  // The tool results held, as (message, part index), ascending.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> parts;

  std::uint32_t operator[](std::size_t message) const { return until[message]; }
};

// The holds of messages [0, limit) of `conv` (the history as sent). None
// when both `stale_tool_outputs_keep_edited_turns` and
// `_keep_fresh_reads_turns` are 0, or `_held_reads_bytes` is.
ReadHolds edited_file_holds(const Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit);

// The paths a call (its tool name and its arguments as sent, JSON text)
// edits, as named there; none for a call that edits nothing (exposed for tests).
std::vector<std::string_view> edited_paths(std::string_view name, std::string_view arguments);

// A call that writes a file (edited_paths() names one), as `writes` (may be
// null) remembers it by the call's name and arguments: semantic mode asks it
// of every completed task's calls on every request, and a Write's arguments
// are a whole file to scan for names.
struct CallWrites {
  std::size_t memo_bytes() const { return sizeof(CallWrites); }
};
bool writes_a_file(const Part& call, Memo<CallWrites>* writes);

}  // namespace td::pruning
