// Explain headers: every response to a request the filters saw says what
// tokendiet did to it, so a user (or an agent's own logs) can tell without
// the proxy's log. Written once, in the response-head phase, on the
// upstream's answer and on the proxy's own (a 429 for the runway, an
// upstream that failed), from the reports the filters published:
//
//   x-tokendiet-mode           the diet's mode (none, standard, survival), when it decided
//   x-tokendiet-tokens-before  the request's tokens as the client sent them
//   x-tokendiet-tokens-after   and as they went upstream
//   x-tokendiet-strategies     the strategies that cut something, comma-separated
//   x-tokendiet-survival       survival's outcome: compressed, waited, rejected, too_large
//   x-tokendiet-runway-tokens  the runway left after this request (the tightest
//                              per-minute limit of its key and quota group)
//   x-tokendiet-wait-ms        how long the request was held for the runway
//   x-tokendiet-thinking       the thinking setting lowered, and to what
//   x-tokendiet-fail-open      the request went upstream as the client sent it
//                              because a filter failed: why (also without a
//                              diet decision, e.g. a body it could not parse)
//   x-tokendiet-recovery       a context-length error retried compressed
//                              (retried), or not (no_fit)
//   x-tokendiet-recall         offered: the request went out with the
//                              tokendiet_recall tool, so the response may hold
//                              recall rounds (the ledger counts them)
//
// The counts are the diet's (docs/design.md §Token counting): exact for
// models with a tokenizer, else the uncalibrated estimate. The request id
// (x-tokendiet-request-id) is the core's, on every response. Fields an
// upstream sent under these names are replaced by ours.
#pragma once

#include "proxy/phases/filter.hpp"

namespace td::proxy {

class ExplainFilter final : public Filter {
 public:
  std::string_view name() const override { return "explain"; }
  void response_head_filter(RequestContext& ctx, HeaderMap& headers) override;
};

}  // namespace td::proxy
