// The start of a conversation as one hash: its system messages and its first
// user message, which an agent resends unchanged on every request of a
// session. The proxy keys a session's memory on it (with the API key) when
// the client names no session (quota/session_store.hpp): the same
// conversation maps to the same session on every replica and after a restart.
#pragma once

#include <cstdint>

#include "pruning/conversation.hpp"

namespace td::pruning {

// 0 for a conversation with no message at all.
std::uint64_t session_anchor(const Conversation& conv);

}  // namespace td::pruning
