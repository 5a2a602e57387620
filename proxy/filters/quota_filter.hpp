// Quota admission and settlement (docs/design.md §Policy), in the manner of a
// local rate-limit filter: after the diet decided (DietResult), the request's
// ask is taken from its runway and the decision's admission applied:
//
//   send    nothing to do
//   wait    the request is held that long before it goes upstream
//           (ctx.delay_upstream)
//   reject  a 429 in the provider's error shape with Retry-After and
//           x-tokendiet-error: runway_exhausted
//
// While the replicas share the runway (quota_store), the ask is taken from
// the shared buckets while the request pauses, and the wait they need then
// applies (docs/design.md §Shared state).
//
// The logging phase corrects the runway with the answer's rate-limit headers
// and billed usage (BilledUsage). Publishes the QuotaReport
// (proxy/reports/quota_report.hpp).
#pragma once

#include "config/config.hpp"
#include "proxy/filters/runway_account.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

class QuotaFilter final : public Filter {
 public:
  // `policy`: the runway and session stores (none: the profile alone
  // decides, and only the decision's admission applies).
  explicit QuotaFilter(PolicyState policy) : policy_(policy) {}
  std::string_view name() const override { return "quota"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;
  void logging(const RequestContext& ctx) override;

 private:
  FilterResult take_shared(RequestContext& ctx, const pruning::Profile& profile);

  PolicyState policy_;
};

// What the request phase does with a decision's admission (above).
std::optional<LocalResponse> admit(RequestContext& ctx, const pruning::Admission& admission);

}  // namespace td::proxy
