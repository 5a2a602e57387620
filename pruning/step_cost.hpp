// What a step's cost reads of the profile (pruning/loss_cap.hpp's pays_back()
// and LossCap, used by the frontier, the recap and completed tasks), apart so
// that a strategy's options can hold it without the rest of the loss cap.
#pragma once

#include "pruning/strategy_options.hpp"

namespace td::pruning {

// The profile fields a step's cost reads (pruning/strategy_options.hpp):
// these and window_turns, which a strategy's list gets from working memory's.
// clang-format off
#define TD_STEP_COST_OPTIONS(X) \
  X(clear_at_least_tokens) \
  X(cache_read_price) \
  X(cache_write_price) \
  X(payback_requests) \
  X(payback_turn_fraction) \
  X(max_loss)
// clang-format on
// clang-format off
#define TD_STEP_COST_AND_WINDOW_OPTIONS(X) \
  TD_STEP_COST_OPTIONS(X) \
  X(window_turns)
// clang-format on
TD_STRATEGY_OPTIONS(StepCostOptions, TD_STEP_COST_AND_WINDOW_OPTIONS);

}  // namespace td::pruning
