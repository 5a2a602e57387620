// The plan ahead (docs/design.md §Memos and caches): when the diet reports
// that the plan a later request of the session will look up is not memoized
// yet (DietResult: outcome.result.ahead, with the client's bytes it kept for
// it), that plan is computed on a diet thread while the request goes on, so
// the request whose frontier steps finds it instead of planning the whole
// history while the client waits. Nothing the request sends depends on it;
// a job not started when the proxy stops is dropped, and one that fails
// only leaves the memo as it was.
#pragma once

#include "proxy/filters/diet_services.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

class PlanAheadFilter final : public Filter {
 public:
  // `queue`: the diet threads (null: no plan ahead, the I/O thread never plans).
  PlanAheadFilter(diet::DietCaches* caches, JobQueue* queue) : caches_(caches), queue_(queue) {}
  std::string_view name() const override { return "plan_ahead"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;

 private:
  diet::DietCaches* caches_;
  JobQueue* queue_;
};

}  // namespace td::proxy
