// The outline of a file read as Claude Code's Read numbers it, `    12→`
// (docs/design.md §Strategies, stale_tool_outputs,
// `stale_tool_outputs_read_outline`): its import and
// declaration lines (`import`, `export`, `class`, `interface`, `def`,
// `function`, `async`, `private`, `constructor(`, `fn`, `func`, ...), kept in
// the read's stale cut wherever they stand. Agents that read a whole file
// early and edit or plan from it many turns later copy these lines most
// (the signature to change, the import to extend: docs/benchmarks.md §The
// outline of a read). A function of the output's text alone, so the cut,
// once sent, never changes.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace td::pruning {

// The keys (copy_line_key(line, 1), pruning/snip.hpp) of the outline lines of
// `text`, sorted, for SnipOptions::keep_lines; none when `text` is not a
// numbered read (shown_line_numbers(), strategies/file_reads.hpp) or its
// lines are not numbered `    12→`.
std::vector<std::uint64_t> read_outline(std::string_view text);

// Whether `text` starts as a whole-file read numbered as Claude Code's Read
// numbers it: its first line is "    1→…", or "1<tab>…" from 2.1.2xx on.
bool numbered_as_read(std::string_view text);

// Whether a line of code (its number and indentation removed) declares or
// imports something (exposed for tests).
bool is_outline_line(std::string_view code);

}  // namespace td::pruning
