#include "proxy/diet_filter.hpp"

#include <exception>

#include "config/match.hpp"
#include "providers/route.hpp"
#include "proxy/cached_counter.hpp"
#include "proxy/routing.hpp"
#include "pruning/conversation_tokens.hpp"
#include "pruning/pipeline.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/counter.hpp"

namespace td::proxy {

namespace {

// What the logging phase needs to calibrate the estimator.
struct DietState : FilterState {
  std::uint64_t raw_estimate = 0;  // uncalibrated estimate of the prompt sent; 0: none
};

void fail_open(RequestContext& ctx, std::string reason) {
  ctx.fail_open = true;
  ctx.fail_open_reason = std::move(reason);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

std::optional<LocalResponse> DietFilter::request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                             std::string& body) {
  try {
    auto target = origin_form(ctx.target);
    if (!target) return {};
    auto route = providers::chat_route(ctx.method, *target);
    if (!route) return {};  // not a chat request: never looked at
    // A compressed body is forwarded as it came: we do not inflate requests.
    std::string_view encoding = headers.get("content-encoding");
    if (!encoding.empty() && !iequals(encoding, "identity")) return {};

    providers::ParseOutcome parsed = providers::parse_request(*route, body);
    if (!parsed.request) {
      fail_open(ctx, "parse: " + parsed.error);
      return {};
    }
    providers::ParsedRequest& request = *parsed.request;
    if (!request.model.empty()) ctx.model = request.model;
    ctx.stream = request.stream;
    const pruning::Profile& profile = config::profile_for(config_, ctx.model);
    ctx.profile = profile.name;

    const auto model_counter = tok::counter_for_model(ctx.model, calibration_);
    const CachedCounter counter(*model_counter, text_count_cache());
    const pruning::PipelineResult diet = pruning::run_pipeline(request.conversation, profile, counter);
    ctx.tokens_before = diet.tokens_before;
    ctx.tokens_after = diet.tokens_after;
    ctx.mode = pruning::mode_name(diet.mode);
    ctx.strategies = join(diet.fired);

    providers::WriteOutcome written = providers::write(request, body);
    if (!written.ok) {
      ctx.tokens_after = ctx.tokens_before;  // nothing was cut after all
      fail_open(ctx, "write: " + written.error);
      return {};
    }
    if (written.changed) body = std::move(written.body);
    if (!counter.exact() && calibration_) {
      // In shadow mode the view is the request as sent, otherwise its diet.
      state<DietState>(ctx).raw_estimate =
          pruning::conversation_tokens(request.conversation, tok::EstimatingCounter(1.0));
    }
  } catch (const std::exception& e) {
    fail_open(ctx, std::string("diet: ") + e.what());
  } catch (...) {
    fail_open(ctx, "diet: unknown exception");
  }
  return {};
}

void DietFilter::logging(const RequestContext& ctx) {
  if (!calibration_ || !ctx.usage.present || ctx.fail_open || ctx.status < 200 || ctx.status >= 300) return;
  if (slot() >= ctx.filter_state.size() || !ctx.filter_state[slot()]) return;
  const auto& st = static_cast<const DietState&>(*ctx.filter_state[slot()]);
  if (st.raw_estimate > 0 && ctx.usage.prompt > 0) calibration_->observe(ctx.model, st.raw_estimate, ctx.usage.prompt);
}

}  // namespace td::proxy
