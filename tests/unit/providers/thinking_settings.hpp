// Builders of generation settings for the thinking-budget tests.
#pragma once

#include <cstdint>

#include "providers/generation_settings.hpp"

namespace td::providers::thinking_test {

inline GenerationSettings effort(const char* v) {
  GenerationSettings g;
  g.reasoning_effort = v;
  return g;
}
inline GenerationSettings level(const char* v) {
  GenerationSettings g;
  g.thinking_level = v;
  return g;
}
inline GenerationSettings budget(std::int64_t v) {
  GenerationSettings g;
  g.thinking_budget = v;
  return g;
}
// Anthropic manual thinking; max_tokens 0: absent.
inline GenerationSettings enabled(std::int64_t budget_tokens, std::int64_t max_tokens) {
  GenerationSettings g;
  g.thinking_type = "enabled";
  g.thinking_budget = budget_tokens;
  if (max_tokens) g.max_output_tokens = max_tokens;
  return g;
}

}  // namespace td::providers::thinking_test
