// The diet: the request body filter that puts a chat request's message array
// through the diet's steps (diet/diet.hpp: parse, count, decide, prune,
// write, thinking) and publishes what it did (docs/design.md §Request flow):
// the DietReport (proxy/reports/diet_report.hpp) for the explain headers,
// the log line and the ledger; the DietResult (diet_result.hpp) for the
// archive write, the quota and the recall offer, which run after it.
//
// Fail open: a body the adapter cannot parse, a write it cannot splice, or any
// exception leaves the body exactly as the client sent it and records why in
// ctx.fail_open_reason. Requests that are not chat requests (no adapter for
// the path) are not looked at.
//
// Big bodies (limits.diet_offload_bytes and more), and a recap the profile's
// summarizer has not summarized yet, are dieted on a diet thread while the
// request is paused (proxy/phases/off_thread.hpp); a wait that ends first
// (kOffloadWait, the client gone) sends the body as it came.
//
// For models counted by the estimator, the logging phase feeds the
// calibration: what we estimated for the bytes sent against what was billed.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "providers/route.hpp"
#include "proxy/filters/diet_services.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

class DietFilter final : public Filter {
 public:
  DietFilter(const config::Config& config, DietServices services);

  // How long an offloaded diet may take, queue included, before the body
  // goes as it came.
  static constexpr std::chrono::milliseconds kOffloadWait{60'000};
  std::string_view name() const override { return "diet"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;
  void logging(const RequestContext& ctx) override;

 private:
  FilterResult offload(RequestContext& ctx, const HeaderMap& headers, const providers::ChatRoute& route,
                       std::string& body);
  bool disabled_profile(RequestContext& ctx, const providers::ChatRoute& route, const std::string& body) const;

  // A copy, shared with the diet threads' jobs: a job may outlive the filter.
  std::shared_ptr<const config::Config> config_;
  DietServices services_;
  bool any_profile_disabled_;  // only then is a body peeked for its profile
};

}  // namespace td::proxy
