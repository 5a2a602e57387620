// Which stale tool outputs are file reads the agent may still copy from
// (docs/design.md §Strategies): stale_tool_outputs leaves them whole until
// they are superseded.
//
// A file read is the output of a call that reads a file (cat, head, tail,
// sed -n, nl, less, SWE-agent's open, an editor's view, a Read tool) and names
// a path (pruning/snip.hpp is_path_name). It is superseded when a later call
// of the same frontier block (the turns up to the next grid point of
// `frontier_step_turns`) names that path again: a newer read or a write, so
// what the agent copies next comes from there. Judged within the block only,
// so the answer is a function of the block's messages: a block is stale only
// once whole, and then never changes (docs/design.md §Principles (4)).
#pragma once

#include <cstdint>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"

namespace td::pruning {

// Per message of [0, limit): true for a tool message whose output is a file
// read not superseded within its block.
std::vector<bool> unsuperseded_reads(const Conversation& conv, const Profile& profile, std::uint32_t limit);

// Whether a call's arguments read a file (exposed for tests).
bool reads_a_file(std::string_view name, std::string_view arguments);

}  // namespace td::pruning
