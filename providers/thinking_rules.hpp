// The shared machinery of lowering thinking (internal to providers/): the
// effort scale, model families and the two ways a value is lowered. Each
// format's rules and model table are in its adapter (docs/design.md
// §Thinking budget gives the source of each table row).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "providers/generation_settings.hpp"
#include "providers/thinking_budget.hpp"

namespace td::providers::thinking {

// The effort scale OpenAI's reasoning effort and Gemini 3's thinking level
// share, lowest first (Gemini uses four of its names).
inline constexpr std::string_view kScale[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
inline constexpr int kScaleSize = static_cast<int>(std::size(kScale));

using Accepted = std::uint8_t;  // bit i: kScale[i] accepted

constexpr int scale_index(std::string_view v) {
  for (int i = 0; i < kScaleSize; ++i)
    if (kScale[i] == v) return i;
  return -1;
}

constexpr Accepted accept(std::initializer_list<std::string_view> names) {
  Accepted a = 0;
  for (std::string_view n : names) a = static_cast<Accepted>(a | 1u << scale_index(n));
  return a;
}

// The thinkingBudget values a model takes: 0 (off) when off_allowed, or
// lowest_on..highest.
struct BudgetRange {
  std::int64_t lowest_on = 1;
  std::int64_t highest = std::numeric_limits<std::int64_t>::max();
  bool off_allowed = false;
};

// Which setting a model family thinks with.
enum class Knob : std::uint8_t { effort, level, budget };

struct Family {
  std::string_view prefix;  // the model name, or the start of it (see family_of())
  Knob knob;
  Accepted accepted = 0;    // effort, level: the values the family takes
  BudgetRange budget = {};  // budget: its range
};

// The first row of `table` whose prefix `model` is, or is a variant of: the
// prefix followed by '-' (gpt-5-mini, o3-2025-04-16) unless it ends in a
// separator itself. So "gpt-5" does not take gpt-5.1, whose values differ.
// A narrower name comes before its prefix in a table. Null: not known.
const Family* family_of(std::span<const Family> table, std::string_view model);

// Nothing lowered, and why.
ThinkingChange unchanged(std::string reason);
std::string quoted(std::string_view model);

// An effort or level `current` lowered to `target`, or, when the family does
// not take `target`, to the lowest value it takes between the two. Never
// below the target, never up, and a value off the scale is left alone.
// `any_case`: the value is read in either case and written in the client's.
ThinkingChange lower_named(Setting s, std::string_view current, const Family& family, std::string_view target,
                           bool any_case, std::string_view model);

// A thinking budget capped at `cap` moved into `range`; -1 (dynamic, where
// `dynamic` counts it) is above any cap. Never raised.
ThinkingChange cap_budget(std::int64_t current, std::int64_t cap, const BudgetRange& range, bool dynamic,
                          std::string_view model);

}  // namespace td::providers::thinking
