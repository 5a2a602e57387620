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
  if (!ctx.survival.empty()) headers.set("x-tokendiet-survival", ctx.survival);
  if (ctx.runway_tokens) headers.set("x-tokendiet-runway-tokens", std::to_string(*ctx.runway_tokens));
  if (ctx.delay_upstream.count() > 0) headers.set("x-tokendiet-wait-ms", std::to_string(ctx.delay_upstream.count()));
  if (!ctx.thinking.empty()) headers.set("x-tokendiet-thinking", ctx.thinking);
}

}  // namespace td::proxy
