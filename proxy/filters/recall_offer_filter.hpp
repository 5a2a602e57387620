// The recall offer (docs/design.md §Recall): a request that goes out with a
// notice naming what a cut hid (the texts kept with the diet's outcome), or
// with tombstones whose outputs the archive kept (EvictionReport), gets the
// tokendiet_recall tool appended (providers/recall_tool.hpp) and publishes a
// RecallOffer (proxy/reports/recall_offer.hpp): those texts and entries and
// the profile's bounds, from which the recall filter answers the model's
// recall calls. The profile's `recall: false` offers nothing. A big body's tool is appended on a diet thread
// (proxy/phases/off_thread.hpp).
#pragma once

#include <chrono>
#include <memory>

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/telemetry/work_pool.hpp"

namespace td::proxy {

class RecallOfferFilter final : public Filter {
 public:
  // `workers`: the diet threads (null: every body on the request's thread).
  RecallOfferFilter(const config::Config& config, WorkPool* workers)
      : max_body_bytes_(config.limits.max_body_bytes),
        offload_bytes_(config.limits.diet_offload_bytes),
        workers_(workers) {}
  static constexpr std::chrono::milliseconds kAppendWait{30'000};
  std::string_view name() const override { return "recall_offer"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;

 private:
  std::uint64_t max_body_bytes_;
  std::uint64_t offload_bytes_;
  WorkPool* workers_;
};

}  // namespace td::proxy
