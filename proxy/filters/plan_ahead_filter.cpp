#include "proxy/filters/plan_ahead_filter.hpp"

#include <utility>

#include "diet/diet.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/telemetry/body_budget.hpp"

namespace td::proxy {

FilterResult PlanAheadFilter::request_body_filter(RequestContext& ctx, const HeaderMap&, std::string&) {
  DietResult* result = ctx.objects.find<DietResult>();
  if (!result || !result->outcome.result.ahead.due() || result->ahead_body.empty()) return {};
  // The bytes go with the job: the request no longer needs them.
  std::string body = std::exchange(result->ahead_body, {});
  if (!thread_ || !caches_) return {};
  if (thread_->pending() >= kMaxWaiting) {
    if (counts_) counts_->left.fetch_add(1, std::memory_order_relaxed);
    return {};
  }
  // A big body's bytes stay claimed from the budget while the job holds
  // them (docs/design.md §Big bodies).
  const BigBodyClaim* held = ctx.objects.find<BigBodyClaim>();
  thread_->post([caches = caches_, counts = counts_, route = result->route, ahead = result->outcome.result.ahead,
                 body = std::move(body), claim = held ? held->claim : nullptr] {
    const bool computed = diet::plan_ahead(route, body, ahead, *caches);
    if (counts) (computed ? counts->computed : counts->left).fetch_add(1, std::memory_order_relaxed);
  });
  return {};
}

}  // namespace td::proxy
