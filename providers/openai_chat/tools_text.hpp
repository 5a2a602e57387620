// OpenAI's tool definitions as the model sees them, for exact token counting.
//
// OpenAI renders `tools` (and legacy `functions`) into the system prompt as
// TypeScript-like declarations. This reproduces that rendering as the
// community-verified counting formula does (hmarr/openai-chat-tokens,
// "formatFunctionDefinitions"; the same layout appears in OpenAI's harmony
// format): put the result in Conversation::fixed_overhead_text, and
// td::tok::count_conversation adds its tokens + 9 (- 4 with a system message).
//
//   namespace functions {
//
//   // description
//   type name = (_: {
//   // param description
//   param: string,
//   opt?: "a" | "b",
//   }) => any;
//
//   } // namespace functions
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

namespace td::providers {

// `tools` or `functions` array of a chat request (non-function tools are
// skipped). Empty if there is no function to render.
std::string render_openai_tools(const rapidjson::Value& tools);

// The same from raw JSON text: one or more arrays one after the other (what
// the adapters put in Conversation::fixed_overhead_text, e.g. `tools` then
// `functions`). Unparsable text renders as nothing.
std::string render_openai_tools_json(std::string_view raw);

}  // namespace td::providers
