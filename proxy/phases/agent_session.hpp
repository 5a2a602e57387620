// The session a request belongs to, by the agent's own account
// (docs/design.md §Client identity): the x-tokendiet-session header where
// the client sends one, else the session id an agent CLI already puts in
// every request, so per-session memory, the ledger's sessions and the
// control arm work without configuring the agent:
//
//   Claude Code  the x-claude-code-session-id header (2.1), else the body's
//                metadata.user_id: "user_<h>_account_<a>_session_<uuid>",
//                or (newer) a JSON text {"device_id",…,"session_id":"<uuid>"}
//   Codex CLI    the `session-id` header (older versions: `session_id`,
//                `conversation_id`)
//
// Anything else (Gemini CLI and opencode send none on the providers' APIs)
// has "" here, and its session is its conversation's start
// (pruning::session_anchor()). Pure: reads the head and the body only.
#pragma once

#include <string>
#include <string_view>

#include "proxy/phases/header_map.hpp"

namespace td::proxy {

// The session id from the request head alone (the header, Codex's): "" none.
std::string session_from_head(const HeaderMap& headers);

// The session id Claude Code put in the body's metadata.user_id: "" none.
// Looks only at the last 4 KiB of a body over 8 KiB, where Claude Code puts
// its metadata (after the messages and tools).
std::string session_from_body(std::string_view body);

}  // namespace td::proxy
