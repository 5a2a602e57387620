#include "proxy/filters/explain_filter.hpp"

#include <string>
#include <string_view>

#include "proxy/reports/diet_report.hpp"
#include "proxy/reports/quota_report.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "proxy/reports/recovery_report.hpp"
#include "pruning/mode.hpp"
#include "pruning/strategy_stats.hpp"

namespace td::proxy {

namespace {

// A reason as a header value: printable ASCII only (a reason may quote the
// body), at most 200 bytes, never empty.
std::string header_text(std::string_view reason) {
  if (reason.empty()) return "unknown";
  std::string out(reason.substr(0, 200));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

}  // namespace

void ExplainFilter::response_head_filter(RequestContext& ctx, HeaderMap& headers) {
  // What the answer alone does not show: the request went as the client sent
  // it because something failed, it was retried compressed, or the model
  // was offered tokendiet_recall (its rounds come later, in the body).
  if (ctx.fail_open) headers.set("x-tokendiet-fail-open", header_text(ctx.fail_open_reason));
  if (const RecoveryReport* recovery = ctx.objects.find<RecoveryReport>(); recovery && !recovery->outcome.empty())
    headers.set("x-tokendiet-recovery", recovery->outcome);
  if (ctx.objects.find<RecallOffer>()) headers.set("x-tokendiet-recall", "offered");
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
