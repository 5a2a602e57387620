// What providers/openai_chat/'s files share, and what openai_responses/ takes
// from them (internal to providers/): OpenAI bills and lowers thinking the
// same way in both of its formats.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/format_adapter.hpp"

namespace td::providers {

namespace detail::openai_chat {

// The writing half of the format's FormatOps (render.cpp; request.cpp parses).
bool render_changed(const ParsedRequest& r, std::string_view body, const Message& m, std::string& out,
                    std::string& err);
bool render_new(const ParsedRequest& r, const Message& m, std::string& out, std::string& err);
bool render_system(const ParsedRequest& r, std::string_view body, const std::vector<const Message*>& system,
                   std::string& out, std::string& err);

}  // namespace detail::openai_chat

namespace openai {

// Both OpenAI formats' counts: prompt includes cached, completion includes reasoning.
Usage normalise_usage(const RawUsage& raw);

// reasoning_effort (chat) / reasoning.effort (Responses) lowered for the
// OpenAI model families that document their efforts.
ThinkingChange lower_thinking(std::string_view model, const GenerationSettings& now, const LowerThinking& limits);

}  // namespace openai
}  // namespace td::providers
