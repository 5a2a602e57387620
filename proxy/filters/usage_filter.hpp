// The usage filter: reads what every response cost, without changing what the
// client receives (docs/design.md §Principles (1) and its one exception).
//
//   request_body_filter       OpenAI chat streams whose client did not ask for
//                             usage get stream_options.include_usage added
//                             (profile flag `stream_usage`; registered after
//                             the diet, so it splices into the final body).
//   response_head_filter      the upstream's head (not the proxy's own
//                             answers): publishes BilledUsage
//                             (proxy/reports/billed_usage.hpp), its rate
//                             limits from the headers; picks the
//                             body reader: a scrubber for an injected stream,
//                             else a tee (JSON or SSE by content type).
//   response_body_filter      tees every piece into the reader; for an
//                             injected stream, swaps in the scrubbed bytes
//                             (holding back at most one SSE event).
//                             BilledUsage is kept current after every piece, so
//                             a stream that breaks still reports what it had.
//
// Fail open everywhere: if anything goes wrong the bytes pass unchanged and
// ctx.fail_open says why.
#pragma once

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

class UsageFilter final : public Filter {
 public:
  explicit UsageFilter(const config::Config& config) : config_(config) {}
  std::string_view name() const override { return "usage"; }

  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;
  void response_head_filter(RequestContext& ctx, HeaderMap& headers) override;
  void response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) override;

 private:
  config::Config config_;  // a copy: filters live as long as their configuration
};

}  // namespace td::proxy
