#include "proxy/filters/quota_filter.hpp"

#include <string>

#include "proxy/filters/diet_result.hpp"
#include "proxy/phases/errors.hpp"

namespace td::proxy {

namespace {

// What the request took from its runway, until its logging phase.
struct QuotaState {
  RunwayAccount runway;
};

}  // namespace

FilterResult QuotaFilter::request_body_filter(RequestContext& ctx, const HeaderMap&, std::string&) {
  const DietResult* result = ctx.objects.find<DietResult>();
  if (!result) return {};
  const diet::DietOutcome& outcome = result->outcome;
  if (!outcome.fail_open && policy_.enabled() && outcome.profile)
    ctx.objects.get<QuotaState>().runway = policy_.admit(ctx, *outcome.profile, outcome);
  if (auto answer = admit(ctx, outcome.decision.admission)) return FilterResult::respond(std::move(*answer));
  return {};
}

std::optional<LocalResponse> admit(RequestContext& ctx, const pruning::Admission& admission) {
  using Kind = pruning::Admission::Kind;
  switch (admission.kind) {
    case Kind::Send:
      return {};
    case Kind::Wait:
      ctx.delay_upstream = admission.wait;
      return {};
    case Kind::Reject: {
      const auto seconds = (admission.wait.count() + 999) / 1000;
      LocalResponse r;
      r.status = 429;
      r.body = provider_error_body(ctx.provider, 429,
                                   "tokendiet: not sent upstream now; retry after " + std::to_string(seconds) + " s");
      r.headers.emplace_back("retry-after", std::to_string(seconds));
      r.headers.emplace_back("x-tokendiet-error", "runway_exhausted");
      return r;
    }
  }
  return {};
}

void QuotaFilter::logging(const RequestContext& ctx) {
  if (const QuotaState* st = ctx.objects.find<QuotaState>()) policy_.settle(ctx, st->runway);
}

}  // namespace td::proxy
