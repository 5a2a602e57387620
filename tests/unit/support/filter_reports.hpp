// The reports filters publish (proxy/reports/), as tests read and fill them.
#pragma once

#include <doctest/doctest.h>

#include "proxy/phases/request_context.hpp"
#include "proxy/reports/reports.hpp"

namespace td::test {

// The diet's report, which must be there.
inline const proxy::DietReport& diet_report(const proxy::RequestContext& ctx) {
  const proxy::DietReport* r = ctx.objects.find<proxy::DietReport>();
  REQUIRE(r != nullptr);
  return *r;
}

// What the upstream billed, as the usage filter publishes it: for a test
// standing in for the upstream's answer.
inline proxy::BilledUsage& billed(proxy::RequestContext& ctx) { return ctx.objects.get<proxy::BilledUsage>(); }

// Offers the recall loop `source` (which outlives the request) for `ctx`, as
// the recall offer filter does.
inline void offer_recall(proxy::RequestContext& ctx, const proxy::RecallSource& source,
                         proxy::RecallLimits limits = {}) {
  ctx.objects.publish<proxy::RecallOffer>(
      proxy::RecallOffer{std::shared_ptr<const proxy::RecallSource>(std::shared_ptr<void>(), &source), limits});
}

// What the recall loop did; empty when it did nothing.
inline proxy::RecallReport recall_report(const proxy::RequestContext& ctx) {
  const proxy::RecallReport* r = ctx.objects.find<proxy::RecallReport>();
  return r ? *r : proxy::RecallReport{};
}

}  // namespace td::test
