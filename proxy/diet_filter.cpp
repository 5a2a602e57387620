#include "proxy/diet_filter.hpp"

#include <exception>

#include "config/match.hpp"
#include "providers/route.hpp"
#include "proxy/routing.hpp"

namespace td::proxy {

namespace {

struct DietResult {
  std::uint64_t tokens_before = 0;
  std::uint64_t tokens_after = 0;
  std::string mode = "none";
  std::string strategies;  // comma-separated
};

// THE PIPELINE CALL SITE (the only one). Identity for now: the pruning
// pipeline (pruning/pipeline.hpp run_pipeline) and the tokenizer's per-model
// counter are not on main yet. Until they are, requests go through parse and
// write unchanged, so the adapters run on live traffic, and token counts are
// left at 0 (unknown).
DietResult run_diet(pruning::Conversation& conv, const pruning::Profile& profile) {
  (void)conv;
  (void)profile;
  return {};
}

void fail_open(RequestContext& ctx, std::string reason) {
  ctx.fail_open = true;
  ctx.fail_open_reason = std::move(reason);
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
    if (!profile.enabled) {
      ctx.mode = "none";
      return {};
    }

    DietResult diet = run_diet(request.conversation, profile);
    ctx.tokens_before = diet.tokens_before;
    ctx.tokens_after = diet.tokens_after;
    ctx.mode = diet.mode;
    ctx.strategies = diet.strategies;

    providers::WriteOutcome written = providers::write(request, body);
    if (!written.ok) {
      ctx.tokens_after = ctx.tokens_before;  // nothing was cut after all
      fail_open(ctx, "write: " + written.error);
      return {};
    }
    if (written.changed) body = std::move(written.body);
  } catch (const std::exception& e) {
    fail_open(ctx, std::string("diet: ") + e.what());
  } catch (...) {
    fail_open(ctx, "diet: unknown exception");
  }
  return {};
}

}  // namespace td::proxy
