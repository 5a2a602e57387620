// The diet: the request body filter that puts a chat request's message array
// through the pruning pipeline (docs/design.md §Request flow).
//
//   route by path -> the diet's steps (proxy/filters/diet.hpp): parse, count
//   (with the model's tokenizer, or the calibrated estimator), decide, prune,
//   write (splices only what changed) -> the decision's admission
//
// Fail open: a body the adapter cannot parse, a write it cannot splice, or any
// exception leaves the body exactly as the client sent it and records why in
// ctx.fail_open / ctx.fail_open_reason. Requests that are not chat requests
// (no adapter for the path) are not looked at. The proxy recomputes
// Content-Length from the final body after this phase.
//
// For models counted by the estimator, the logging phase feeds the
// calibration: what we estimated for the bytes sent vs what the upstream billed.
#pragma once

#include <string>

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"
#include "proxy/telemetry/diet_caches.hpp"
#include "pruning/decision.hpp"

namespace td::tok { class Calibration; }

namespace td::proxy {

class DietFilter final : public Filter {
 public:
  // `calibration` (may be null: fixed bytes/4 estimates, nothing learned) and
  // `caches` are the process-wide ones, telemetry().calibration() and
  // telemetry().diet_caches(): both outlive the filter.
  DietFilter(const config::Config& config, tok::Calibration* calibration, DietCaches& caches);
  std::string_view name() const override { return "diet"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                   std::string& body) override;
  void logging(const RequestContext& ctx) override;

 private:
  config::Config config_;  // a copy: filters live as long as their configuration
  tok::Calibration* calibration_;
  DietCaches& caches_;
  bool any_profile_disabled_;  // only then is a body peeked for its profile
};

// What the request phase does with a decision's admission: Send: nothing;
// Wait: the request is held that long before it goes upstream
// (ctx.delay_upstream); Reject: the answer, a 429 in the provider's error
// shape with Retry-After.
std::optional<LocalResponse> admit(RequestContext& ctx, const pruning::Admission& admission);

}  // namespace td::proxy
