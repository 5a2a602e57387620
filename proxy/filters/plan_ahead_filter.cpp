#include "proxy/filters/plan_ahead_filter.hpp"

#include <utility>

#include "diet/diet.hpp"
#include "proxy/filters/diet_result.hpp"

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
  thread_->post([caches = caches_, counts = counts_, route = result->route, ahead = result->outcome.result.ahead,
                 body = std::move(body)] {
    const bool computed = diet::plan_ahead(route, body, ahead, *caches);
    if (counts) (computed ? counts->computed : counts->left).fetch_add(1, std::memory_order_relaxed);
  });
  return {};
}

}  // namespace td::proxy
