// Explain headers: every proxied response says what tokendiet did to its
// request, so a user (or an agent's own logs) can tell without the proxy's
// log. Added in phase 4, on the upstream's response head:
//
//   x-tokendiet-request-id     the id of the log line and the ledger row
//   x-tokendiet-mode           the diet's mode (none, standard, survival), when it decided
//   x-tokendiet-tokens-before  the request's tokens as the client sent them
//   x-tokendiet-tokens-after   and as they went upstream
//   x-tokendiet-strategies     the strategies that cut something, comma-separated
//   x-tokendiet-survival       survival's outcome: compressed, waited, too_large
//                              (rejected: on tokendiet's own 429, diet_filter.cpp)
//   x-tokendiet-runway-tokens  the runway left after this request (the tightest
//                              per-minute limit of its key and quota group)
//   x-tokendiet-wait-ms        how long the request was held for the runway
//   x-tokendiet-thinking       the thinking setting lowered, and to what
//
// The counts are the diet's (docs/design.md §Token counting): exact for
// models with a tokenizer, else the uncalibrated estimate. Answers the proxy
// makes itself carry x-tokendiet-request-id too (proxy/net/local_reply.cpp).
// Fields an upstream sent under these names are replaced by ours.
#pragma once

#include "proxy/phases/filter.hpp"

namespace td::proxy {

class ExplainFilter final : public Filter {
 public:
  std::string_view name() const override { return "explain"; }
  void upstream_response_filter(RequestContext& ctx, HeaderMap& headers) override;
};

}  // namespace td::proxy
