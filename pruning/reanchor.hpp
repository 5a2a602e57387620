// Re-anchoring (F22; docs/design.md §Policy, the seed's cognitive
// re-anchoring): in a long session the task the user set is diluted by
// history, and after a compression it may be the only thing the model should
// not lose. The anchor (the profile's `anchor` text, else the conversation's
// first user message, cut to reanchor_max_bytes) is restated in a new user
// message after the newest one (before a trailing assistant prefill), so
// every byte before it, the provider's cached prefix, stays as it was; a
// provider that wants alternating roles (Anthropic, Gemini) takes it as part
// of the newest user turn.
//
// When: after a compression step (survival's harder levels, recovery's
// retry) if reanchor_after_compression, and every reanchor_every_turns turns
// if set; never twice in one request (a request that already carries a
// restatement, e.g. a retry of one, gets no second). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pruning/conversation.hpp"
#include "pruning/profile.hpp"

namespace td::pruning {

// How a restatement starts: what marks a request as already re-anchored.
inline constexpr std::string_view kReanchorMarker = "[tokendiet: the task, restated]";

// Whether a request of `turns` turns is re-anchored: after a compression
// (`compressed`), or on every reanchor_every_turns-th turn.
bool reanchor_due(const Profile& profile, std::uint32_t turns, bool compressed);

// The text restated: the profile's anchor, else the first user message's
// text, cut to reanchor_max_bytes on a character boundary ("" none).
std::string anchor_text(const Conversation& conv, const Profile& profile);

// Restates the anchor at the end of `conv`: the text of the message added,
// or "" (nothing changed) when there is no anchor or the request already
// carries a restatement.
std::string reanchor(Conversation& conv, const Profile& profile);

// `text` as a new user message after the newest message, before a trailing
// assistant prefill (which stays last). Also recovery's note.
void append_user_note(Conversation& conv, std::string text);

}  // namespace td::pruning
