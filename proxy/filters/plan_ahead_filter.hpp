// The plan ahead (docs/design.md §Memos and caches): when the diet reports
// that the plan a later request of the session will look up is not memoized
// yet (DietResult: outcome.result.ahead, with the client's bytes it kept for
// it), that plan is computed on the plans' own thread (one, at the lowest
// priority: spare work never delays a request's diet) while the request goes
// on, so the request whose frontier steps finds it instead of planning the
// whole history while the client waits. Nothing the request sends depends on
// it: with `kMaxWaiting` jobs already waiting the plan is left to that
// request (the bytes a job holds stay bounded), a job not started when the
// proxy stops is dropped, and one that fails leaves the memo as it was.
#pragma once

#include <cstddef>

#include "diet/diet_caches.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/telemetry/process_state.hpp"
#include "proxy/telemetry/work_pool.hpp"

namespace td::proxy {

class PlanAheadFilter final : public Filter {
 public:
  static constexpr std::size_t kMaxWaiting = 2;
  // `thread`: where the plans are computed (null: no plan ahead; the I/O
  // thread never plans ahead); `counts` (may be null): what became of them.
  PlanAheadFilter(diet::DietCaches* caches, WorkPool* thread, PlanAheadCounts* counts = nullptr)
      : caches_(caches), thread_(thread), counts_(counts) {}
  std::string_view name() const override { return "plan_ahead"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;

 private:
  diet::DietCaches* caches_;
  WorkPool* thread_;
  PlanAheadCounts* counts_;
};

}  // namespace td::proxy
