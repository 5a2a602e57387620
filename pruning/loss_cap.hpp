// The loss cap (F30, docs/design.md §The stale frontier, (d)): a frontier
// step is taken only if the session's cumulative effective input cost with
// tokendiet, the request that takes it included, stays within
// (1 + max_loss) of what the same requests cost without it. Both costs are
// pure functions of the history and the profile's prices (the session's
// requests reconstructed from it), so every replica computes the same; what
// is not modelled, and why bounding each step's request bounds every
// request boundary: that section.
#pragma once

#include <cstdint>
#include <vector>

#include "pruning/conversation.hpp"
#include "pruning/held_forms.hpp"
#include "pruning/profile.hpp"
#include "pruning/step_cost.hpp"

namespace td::pruning {

// The cache-economics gate of a step (docs/design.md §The stale frontier
// (c)): the `saved` tokens, at the cached-read price over the requests it
// may count on (payback_requests, and at most payback_turn_fraction of the
// turns the conversation had then: `grid_turns` plus the window), pay for
// writing `rewritten` tokens again that were `was_cached`. The frontier's
// steps and the recap's (strategies/recap.hpp) both take it.
bool pays_back(const StepCostOptions& opt, std::uint64_t saved, double rewritten, double was_cached,
               std::uint32_t grid_turns);

// Where each request of the session ended, ascending: before each assistant
// message that follows a non-assistant one, and this request (its size).
std::vector<std::uint32_t> request_ends(const Conversation& conv);

class LossCap {
 public:
  // `orig_ps` and `plan_ps`: prefix sums of every message's tokens as sent
  // and as pruned (ps[i] = tokens of messages [0, i)); `held` (may be null):
  // the reads sent whole until the frontier releases them.
  LossCap(const Conversation& conv, const StepCostOptions& opt, const std::vector<std::uint64_t>& orig_ps,
          const std::vector<std::uint64_t>& plan_ps, const HeldForms* held = nullptr);

  // Whether moving the frontier to message `to`, its first edit at message
  // `first`, at the first request that holds [0, end), keeps the cumulative
  // cost within the cap. Steps are asked about in the order they are decided.
  bool allows(std::uint32_t first, std::uint32_t to, std::uint32_t end);
  // The step asked about last was taken.
  void take(std::uint32_t first, std::uint32_t to, std::uint32_t end);

  // Where each request of the session ended, ascending: the last is this request.
  const std::vector<std::uint32_t>& request_ends() const { return ends_; }

  // Cumulative costs through the request holding [0, end), in units of the
  // uncached input price (exposed for tests; end must not go back).
  struct Totals {
    double without = 0, with = 0;
  };
  Totals through(std::uint32_t end);

 private:
  struct Request {
    std::uint32_t end = 0;       // the request held messages [0, end)
    std::uint32_t frontier = 0;  // pruned before this message
    std::uint32_t first = 0;     // first message that changed since the previous request (end: none)
  };
  // Requests before the one at index `r` accounted; `r` becomes the open one.
  void close_before(std::size_t r);
  std::size_t request_at(std::uint32_t end) const;  // the first request holding [0, end)
  std::uint64_t sent(std::uint32_t end, std::uint32_t frontier) const;
  double cost(const Request& now, const Request* prev, bool with) const;

  double read_price_, write_price_, max_loss_;  // the profile's
  const std::vector<std::uint64_t>& orig_ps_;
  const std::vector<std::uint64_t>& plan_ps_;
  const HeldForms* held_;
  std::vector<std::uint32_t> ends_;  // every request's end, ascending (the last: this request)
  std::size_t open_ = 0;             // index of the request steps are being decided at
  Request current_;                  // its state
  Request last_;                     // the request before it (end 0: none)
  Totals closed_;                    // cost of the requests before it
};

}  // namespace td::pruning
