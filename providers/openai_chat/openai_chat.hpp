// What providers/openai_chat/'s files share, and what openai_responses/ takes
// from them (internal to providers/): OpenAI bills and lowers thinking the
// same way in both of its formats.
#pragma once

#include <memory>
#include <string_view>

#include "providers/format_adapter.hpp"

namespace td::providers {

namespace openai {

// Both OpenAI formats' counts: prompt includes cached, completion includes reasoning.
Usage normalise_usage(const RawUsage& raw);

// reasoning_effort (chat) / reasoning.effort (Responses) lowered for the
// OpenAI model families that document their efforts.
ThinkingChange lower_thinking(std::string_view model, const GenerationSettings& now, const LowerThinking& limits);

}  // namespace openai
}  // namespace td::providers
