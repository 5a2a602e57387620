#include "proxy/filters/explain_filter.hpp"

#include <string>

#include "proxy/reports/diet_report.hpp"
#include "proxy/reports/quota_report.hpp"
#include "pruning/mode.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::proxy {

void ExplainFilter::response_head_filter(RequestContext& ctx, HeaderMap& headers) {
  const DietReport* diet = ctx.objects.find<DietReport>();
  if (!diet) return;  // the diet never decided: not a chat request, or not one it could read
  headers.set("x-tokendiet-mode", pruning::mode_name(diet->mode));
  headers.set("x-tokendiet-tokens-before", std::to_string(diet->tokens_before));
  headers.set("x-tokendiet-tokens-after", std::to_string(diet->tokens_after));
  // A shadow profile or a control-arm session sent the request as it came:
  // the arm says so, and what the diet would have sent is a header of its own.
  if (diet->arm != pruning::Arm::Treatment) {
    headers.set("x-tokendiet-arm", pruning::arm_name(diet->arm));
    headers.set("x-tokendiet-tokens-diet", std::to_string(diet->tokens_diet));
  }
  if (!diet->strategies.empty()) headers.set("x-tokendiet-strategies", pruning::join_names(diet->strategies));
  if (const QuotaReport* quota = ctx.objects.find<QuotaReport>()) {
    if (!quota->survival.empty()) headers.set("x-tokendiet-survival", quota->survival);
    if (quota->runway_tokens) headers.set("x-tokendiet-runway-tokens", std::to_string(*quota->runway_tokens));
  }
  if (ctx.delay_upstream.count() > 0) headers.set("x-tokendiet-wait-ms", std::to_string(ctx.delay_upstream.count()));
  if (!diet->thinking.empty()) headers.set("x-tokendiet-thinking", diet->thinking);
}

}  // namespace td::proxy
