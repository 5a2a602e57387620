#include "proxy/filters/explain_filter.hpp"

#include <string>

#include "pruning/mode.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::proxy {

void ExplainFilter::upstream_response_filter(RequestContext& ctx, HeaderMap& headers) {
  headers.set("x-tokendiet-request-id", std::to_string(ctx.request_id));
  if (!ctx.mode) return;  // the diet never decided: not a chat request, or not one it could read
  headers.set("x-tokendiet-mode", pruning::mode_name(*ctx.mode));
  headers.set("x-tokendiet-tokens-before", std::to_string(ctx.tokens_before));
  headers.set("x-tokendiet-tokens-after", std::to_string(ctx.tokens_after));
  if (!ctx.strategies.empty()) headers.set("x-tokendiet-strategies", pruning::join_names(ctx.strategies));
}

}  // namespace td::proxy
