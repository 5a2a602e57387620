// The diet: the request body filter that puts a chat request's message array
// through the pruning pipeline (DESIGN.md "request flow").
//
//   route by path -> providers::parse_request -> the pipeline -> providers::write
//
// Fail open: a body the adapter cannot parse, a write it cannot splice, or any
// exception leaves the body exactly as the client sent it and records why in
// ctx.fail_open / ctx.fail_open_reason. Requests that are not chat requests
// (no adapter for the path) are not looked at. The proxy recomputes
// Content-Length from the final body after this phase.
#pragma once

#include <string>

#include "config/config.hpp"
#include "proxy/filter.hpp"

namespace td::proxy {

class DietFilter final : public Filter {
 public:
  explicit DietFilter(const config::Config& config) : config_(config) {}
  std::string_view name() const override { return "diet"; }
  std::optional<LocalResponse> request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                   std::string& body) override;

 private:
  config::Config config_;  // a copy: filters live as long as their configuration
};

}  // namespace td::proxy
