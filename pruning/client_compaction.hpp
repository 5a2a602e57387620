// A client's own compaction request (F29; docs/design.md §The diet): a
// request whose purpose is to summarise the history, such as Codex's
// "CONTEXT CHECKPOINT COMPACTION" turn, Claude Code's /compact and
// auto-compaction, or Gemini CLI's <state_snapshot> compression. Such a
// request goes upstream untouched: a summary written from a pruned history
// loses what the pruning hid, and the client replaces the history with that
// summary.
//
// Recognised by the profile's patterns on the newest message, which must be
// a user message: `client_compaction_patterns` whatever the request carries
// (the known agents' own prompt phrases), `client_compaction_patterns_without_tools`
// only when it carries no tool definitions (generic phrasings a normal turn
// could also contain). Matching ignores ASCII case. Pure: a function of the
// conversation and the profile.
#pragma once

#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"

namespace td::pruning {

// The pattern that marks `conv` as the client's compaction request, or ""
// (not one, or the profile's client_compaction switch is off).
std::string_view client_compaction(const Conversation& conv, const Profile& profile);

// Whether the request defines tools: its tool definitions
// (Conversation::fixed_overhead_text) hold more than empty lists.
bool carries_tools(const Conversation& conv);

}  // namespace td::pruning
