// A recorded request body of another wire format (Anthropic, Gemini, OpenAI
// Responses) as a replay trajectory: read by its own adapter
// (providers::parse) and written as the OpenAI chat messages every
// trajectory is (tests/fixtures/replay/README.md), as
// scripts/bench/replay/convert.py converts recorded sessions: text, tool
// calls with their arguments, tool results as tool messages right after the
// calls they answer, thinking as reasoning_content; images and other opaque
// blocks are left out (replay measures text).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "providers/api.hpp"

namespace td::cli {

// The trajectory's JSON ({"id","model","format","messages"}), or nullopt
// with `error` when the adapter cannot read the body.
std::optional<std::string> trajectory_from_request(providers::Api format, std::string_view body, std::string_view id,
                                                   std::string& error);

}  // namespace td::cli
