// The wire format of a request body read from a file, where no path says
// it (`tokendiet count --request`, `tokendiet replay`): the proxy itself
// always knows the format from the path (api.hpp). Decided by the body's
// shape: `contents` is Gemini, `input` without `messages` OpenAI Responses;
// a `messages` body is Anthropic when it has a top-level `system`, or a
// content block only Anthropic has (tool_use, tool_result, thinking, …),
// else OpenAI chat (a system, developer or tool role, tool_calls, or plain
// user and assistant turns, which both adapters read alike).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "providers/api.hpp"

namespace td::providers {

// The body's format, or nullopt with `why` ("not a JSON object", "no
// messages, contents or input").
std::optional<Api> detect_body_format(std::string_view body, std::string& why);

}  // namespace td::providers
