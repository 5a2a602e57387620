// The diet: the request body filter that puts a chat request's message array
// through the pruning pipeline (DESIGN.md "request flow").
//
//   route by path -> providers::parse_request -> pruning::run_pipeline
//   (counting with the model's tokenizer, or the calibrated estimator)
//   -> providers::write (splices only what changed)
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

namespace td::tok { class Calibration; }

namespace td::proxy {

class DietFilter final : public Filter {
 public:
  // `calibration` (may be null: fixed bytes/4 estimates, nothing learned) is
  // the process-wide one, telemetry().calibration().
  DietFilter(const config::Config& config, tok::Calibration* calibration);
  std::string_view name() const override { return "diet"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                   std::string& body) override;
  void logging(const RequestContext& ctx) override;

 private:
  config::Config config_;  // a copy: filters live as long as their configuration
  tok::Calibration* calibration_;
  bool any_profile_disabled_;  // only then is a body peeked for its profile
};

}  // namespace td::proxy
