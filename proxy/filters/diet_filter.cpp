#include "proxy/filters/diet_filter.hpp"

#include <algorithm>
#include <exception>

#include "config/match.hpp"
#include "providers/route.hpp"
#include "proxy/filters/diet.hpp"
#include "proxy/filters/recap_summary.hpp"
#include "proxy/phases/body_peek.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/phases/routing.hpp"
#include "pruning/tokenizer/calibration.hpp"

namespace td::proxy {

namespace {

// What the logging phase needs to calibrate the estimator.
struct DietState : FilterState {
  std::uint64_t raw_estimate = 0;  // uncalibrated estimate of the prompt sent; 0: none
  bool offloaded = false;          // dieted on a diet thread: a big body was freed
  RunwayAccount runway;            // what the request took from its runway
};

void fail_open(RequestContext& ctx, std::string reason) {
  ctx.fail_open = true;
  ctx.fail_open_reason = std::move(reason);
}

// A big body's diet on a diet thread. The job owns the body meanwhile and
// never changes it, so the request's thread may copy it back at any time.
struct OffloadedDiet {
  std::string body;
  std::string rewritten;
  DietOutcome outcome;
  // The request's identity and the policy's state, the job's own: the
  // request and the filter may be gone while it runs.
  std::string key_fingerprint, session_id;
  PolicyIdentity who;
  PolicyState policy;
  // For a recap to be summarized: the request's provider and credentials.
  providers::Provider provider = providers::Provider::other;
  std::vector<std::pair<std::string, std::string>> credentials;
};

}  // namespace

DietFilter::DietFilter(const config::Config& config, tok::Calibration* calibration, DietCaches& caches,
                       WorkPool* workers, PolicyState policy, std::shared_ptr<const RecapSummarizer> summarizer)
    : config_(std::make_shared<const config::Config>(config)),
      calibration_(calibration),
      caches_(caches),
      workers_(workers),
      policy_(policy),
      summarizer_(workers ? std::move(summarizer) : nullptr),
      any_profile_disabled_(std::any_of(config_->profiles.begin(), config_->profiles.end(),
                                        [](const pruning::Profile& p) { return !p.enabled; })) {}

FilterResult DietFilter::request_body_filter(RequestContext& ctx, const HeaderMap& headers,
                                                             std::string& body) {
  try {
    auto target = origin_form(ctx.target);
    if (!target) return {};
    auto route = providers::chat_route(ctx.method, *target);
    if (!route) return {};  // not a chat request: never looked at
    // A compressed body is forwarded as it came: we do not inflate requests.
    std::string_view encoding = headers.get("content-encoding");
    if (!encoding.empty() && !iequals(encoding, "identity")) return {};

    // A disabled profile keeps tokendiet out of the body altogether: neither
    // parsed nor counted. The model comes from the path (Gemini) or a cheap
    // peek (proxy/phases/body_peek.hpp); a peek that found some nested "model" key
    // can only skip a diet (the request goes as sent), never change one,
    // because an enabled profile still parses and uses the body's own model.
    // Only a config with a disabled profile pays for the peek.
    if (any_profile_disabled_) {
      const BodyPeek peek = route->model.empty() ? peek_body(body) : BodyPeek{};
      const std::string_view model = route->model.empty() ? peek.model : std::string_view(route->model);
      const pruning::Profile& p = config::profile_for(*config_, model);
      if (!model.empty() && !p.enabled) {
        ctx.model = std::string(model);
        ctx.stream = ctx.stream || route->stream || peek.stream;
        ctx.profile = p.name;
        ctx.mode = pruning::Mode::None;
        return {};
      }
    }
    if (workers_ && body.size() >= config_->limits.diet_offload_bytes) return offload(ctx, headers, *route, body);

    // THE PIPELINE CALL SITE: parse -> count -> decide -> prune -> write
    // (proxy/filters/diet.hpp), the same function `tokendiet replay` measures.
    const PolicyIdentity who{ctx.provider, ctx.key_fingerprint, ctx.session_id};
    const PolicyFactsFn facts = policy_.enabled() ? policy_.facts_for(who) : PolicyFactsFn{};
    std::string rewritten;
    const DietOutcome diet = diet_body(*route, std::string_view(body), rewritten, *config_, caches_,
                                       DietOptions{.calibration = calibration_, .policy = facts ? &facts : nullptr});
    // A recap to summarize first: on a diet thread, the request paused.
    if (summarizer_) {
      const pruning::Profile* profile = config::profile_named(*config_, diet.profile);
      if (profile && wants_summary(diet, *profile)) return offload(ctx, headers, *route, body);
    }
    if (diet.rewritten) body = std::move(rewritten);
    return apply(ctx, diet);
  } catch (const std::exception& e) {
    fail_open(ctx, std::string("diet: ") + e.what());
  } catch (...) {
    fail_open(ctx, "diet: unknown exception");
  }
  return {};
}

FilterResult DietFilter::offload(RequestContext& ctx, const HeaderMap& headers, const providers::ChatRoute& route,
                                 std::string& body) {
  auto job = std::make_shared<OffloadedDiet>();
  if (summarizer_) {
    job->provider = ctx.provider;
    job->credentials = summary_credentials(headers);
  }
  job->body = std::move(body);
  job->key_fingerprint = ctx.key_fingerprint;
  job->session_id = ctx.session_id;
  job->who = {ctx.provider, job->key_fingerprint, job->session_id};
  job->policy = policy_;
  auto handle = std::make_shared<ResumeHandle>();
  // The wait ended without the diet: the body goes as it came. (The job only
  // reads it, so copying it here races with nothing.)
  handle->on_cancel([job, &body] { body = job->body; });
  state<DietState>(ctx).offloaded = true;
  workers_->post([this, job, handle, route, &ctx, &body, config = config_, caches = &caches_,
                  calibration = calibration_, summarizer = summarizer_] {
    if (handle->cancelled()) return;  // nobody waits for it any more
    const PolicyFactsFn facts = job->policy.enabled() ? job->policy.facts_for(job->who) : PolicyFactsFn{};
    auto diet = [&] {
      job->rewritten.clear();
      job->outcome = diet_body(route, job->body, job->rewritten, *config, *caches,
                               DietOptions{.calibration = calibration, .policy = facts ? &facts : nullptr});
    };
    diet();
    // A recap to summarize: the model asked once, its text cached, the diet
    // run again with it (or with the extractive choice cached on failure).
    if (summarizer) {
      const pruning::Profile* profile = config::profile_named(*config, job->outcome.profile);
      if (profile && wants_summary(job->outcome, *profile)) {
        summarize_recap(*summarizer, job->outcome, *profile, job->provider, std::move(job->credentials),
                        caches->summaries);
        if (handle->cancelled()) return;
        diet();
      }
    }
    // `this`, `ctx` and `body` are only touched if the request still waits,
    // on its own thread: then the filter and the request are alive.
    handle->resume_then([this, job, &ctx, &body]() -> std::optional<LocalResponse> {
      body = std::move(job->outcome.rewritten ? job->rewritten : job->body);
      FilterResult r = apply(ctx, job->outcome);
      if (r.answers()) return std::move(r.answer());
      return std::nullopt;
    });
  });
  return FilterResult::pause(std::move(handle), kOffloadWait);
}

// The outcome into the request: what the access line, the ledger and the
// logging phase read, and the admission.
FilterResult DietFilter::apply(RequestContext& ctx, const DietOutcome& diet) const {
  if (!diet.parsed) {
    fail_open(ctx, diet.error);
    return {};
  }
  if (!diet.model.empty()) ctx.model = diet.model;
  ctx.stream = diet.stream;
  ctx.body_parsed = true;
  ctx.profile = diet.profile;
  ctx.tokens_before = diet.result.tokens_before;
  ctx.tokens_after = diet.result.tokens_after;
  ctx.mode = diet.decision.mode;
  ctx.mode_reason = diet.reason;
  ctx.strategies = diet.result.fired;
  if (diet.fail_open) {
    fail_open(ctx, diet.error);
    return admit(ctx, diet.decision.admission);
  }
  if (diet.raw_estimate > 0) state<DietState>(ctx).raw_estimate = diet.raw_estimate;
  if (policy_.enabled()) {
    const pruning::Profile* profile = config::profile_named(*config_, diet.profile);
    if (profile) state<DietState>(ctx).runway = policy_.admit(ctx, *profile, diet);
  }
  return admit(ctx, diet.decision.admission);
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
      // The explain headers of a proxied answer (explain_filter.hpp), which
      // never sees this one.
      if (ctx.mode) r.headers.emplace_back("x-tokendiet-mode", pruning::mode_name(*ctx.mode));
      if (!ctx.survival.empty()) r.headers.emplace_back("x-tokendiet-survival", std::string(ctx.survival));
      if (ctx.runway_tokens) r.headers.emplace_back("x-tokendiet-runway-tokens", std::to_string(*ctx.runway_tokens));
      return r;
    }
  }
  return {};
}

void DietFilter::logging(const RequestContext& ctx) {
  const DietState* st = slot() < ctx.filter_state.size() ? static_cast<const DietState*>(ctx.filter_state[slot()].get())
                                                          : nullptr;
  // The big body goes once the request ends: its memory back to the system
  // when the diet threads are next idle.
  if (st && st->offloaded) workers_->want_release();
  if (st) policy_.settle(ctx, st->runway);
  if (!calibration_ || !ctx.usage.present || ctx.fail_open || ctx.status < 200 || ctx.status >= 300) return;
  if (st && st->raw_estimate > 0 && ctx.usage.prompt > 0)
    calibration_->observe(ctx.model, st->raw_estimate, ctx.usage.prompt);
}

}  // namespace td::proxy
