#include "proxy/filters/quota_filter.hpp"

#include <string>

#include "proxy/filters/diet_result.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/reports/quota_report.hpp"

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
  const QuotaState* st = ctx.objects.find<QuotaState>();
  if (st && st->runway.shared) return take_shared(ctx, *outcome.profile);
  return {};
}

// The ask taken from the buckets every replica shares, atomically on the
// Redis server (docs/design.md §Shared state): the request pauses for the
// round trip. Other replicas may have taken from them since the diet read
// them: the wait they need now holds the request (a 429 past max_wait_ms).
// No answer in time: the replica's own runway takes it.
FilterResult QuotaFilter::take_shared(RequestContext& ctx, const pruning::Profile& profile) {
  auto handle = std::make_shared<ResumeHandle>();
  const PolicyState policy = policy_;
  handle->on_cancel([policy](PausedRequest request) -> std::optional<LocalResponse> {
    if (request.ctx)
      if (QuotaState* st = request.ctx->objects.find<QuotaState>()) policy.take_alone(st->runway);
    return std::nullopt;
  });
  const auto max_wait = std::chrono::milliseconds(profile.max_wait_ms);
  const RunwayAccount& account = ctx.objects.find<QuotaState>()->runway;
  policy_.take_shared(
      account, profile.quota_margin,
      [handle, policy, max_wait, account](std::optional<std::chrono::milliseconds> wait) {
        handle->resume_then([policy, wait, max_wait](PausedRequest request) -> std::optional<LocalResponse> {
          RequestContext& ctx = *request.ctx;
          QuotaState* st = ctx.objects.find<QuotaState>();
          if (!wait) {
            if (st) policy.take_alone(st->runway);
            return std::nullopt;
          }
          if (*wait <= ctx.delay_upstream) return std::nullopt;
          QuotaReport* report = ctx.objects.find<QuotaReport>();
          if (*wait > max_wait) {
            if (report) report->survival = pruning::outcome_name(pruning::SurvivalOutcome::Rejected);
            return admit(ctx, pruning::Admission{pruning::Admission::Kind::Reject, *wait});
          }
          ctx.delay_upstream = *wait;
          if (report && report->survival.empty())
            report->survival = pruning::outcome_name(pruning::SurvivalOutcome::Waited);
          return std::nullopt;
        });
        // Taken in Redis after the pause ended (the replica's own runway
        // took it then): given back there, so it is not counted twice.
        if (wait && handle->cancelled()) policy.give_back_shared(account);
      });
  // The store's own time-out drops a silent connection first; this one
  // only bounds the pause.
  return FilterResult::pause(std::move(handle), policy_.shared_timeout() + std::chrono::milliseconds(50));
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
