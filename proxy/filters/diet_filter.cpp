#include "proxy/filters/diet_filter.hpp"

#include <algorithm>
#include <array>
#include <exception>

#include "archive/store.hpp"
#include "config/match.hpp"
#include "providers/recall_tool.hpp"
#include "providers/route.hpp"
#include "diet/diet.hpp"
#include "diet/recap_summary.hpp"
#include "proxy/phases/body_peek.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/phases/routing.hpp"
#include "pruning/tokenizer/calibration.hpp"

namespace td::proxy {

// A diet handed to another thread: a big body's diet on a diet thread, or the
// archive write of a pruned body's evicted outputs. The job owns the body
// meanwhile and never changes it, so the request's thread may copy it back
// at any time.
struct OffloadedDiet {
  std::string body;
  std::string rewritten;
  diet::DietOutcome outcome;
  // The request's identity and the policy's state, the job's own: the
  // request and the filter may be gone while it runs.
  std::string key_fingerprint, session_id;
  PolicyIdentity who;
  PolicyState policy;
  std::string archive_error;  // the archive write failed: the diet re-ran without semantic eviction
  providers::Api api = providers::Api::openai_chat;  // for the recall tool
  bool offered = false;  // the archived tombstones went with tokendiet_recall appended
  // For a recap to be summarized: the request's provider and credentials.
  providers::Provider provider = providers::Provider::other;
  std::vector<std::pair<std::string, std::string>> credentials;
};

namespace {

// What the logging phase needs to calibrate the estimator.
struct DietState {
  std::uint64_t raw_estimate = 0;  // uncalibrated estimate of the prompt sent; 0: none
  bool offloaded = false;          // dieted on a diet thread: a big body was freed
  RunwayAccount runway;            // what the request took from its runway
  std::optional<RequestRecall> recall;  // the entries its tombstones name (ctx.recall)
};

// The credentials of the client's request, for a call to its own provider
// (the recap's summarizer, diet/recap_summary.hpp).
std::vector<std::pair<std::string, std::string>> summary_credentials(const HeaderMap& headers) {
  static constexpr std::array<std::string_view, 6> kNames = {
      "authorization", "x-api-key", "x-goog-api-key", "anthropic-version", "openai-organization", "openai-project"};
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view name : kNames)
    if (std::string_view v = headers.get(name); !v.empty()) out.emplace_back(name, v);
  return out;
}

void fail_open(RequestContext& ctx, std::string reason) {
  ctx.fail_open = true;
  ctx.fail_open_reason = std::move(reason);
}

std::shared_ptr<OffloadedDiet> make_job(const RequestContext& ctx, const PolicyState& policy) {
  auto job = std::make_shared<OffloadedDiet>();
  job->key_fingerprint = ctx.key_fingerprint;
  job->session_id = ctx.session_id;
  job->who = {ctx.provider, job->key_fingerprint, job->session_id};
  job->policy = policy;
  return job;
}

// The job's diet, off the I/O thread.
void run_diet(OffloadedDiet& job, const providers::ChatRoute& route, const config::Config& config,
              diet::DietCaches& caches, tok::Calibration* calibration, bool semantic_eviction) {
  const diet::PolicyFactsFn facts = job.policy.enabled() ? job.policy.facts_for(job.who) : diet::PolicyFactsFn{};
  job.rewritten.clear();
  job.outcome = diet::diet_body(route, job.body, job.rewritten, config, caches,
                          diet::DietOptions{.calibration = calibration,
                                      .policy = facts ? &facts : nullptr,
                                      .semantic_eviction = semantic_eviction});
}

// Off the I/O thread, after the diet: what the pruned request evicted goes
// to the archive, durably, before the request may go. A write that fails
// means the diet again without semantic eviction: the request goes unpruned
// of those outputs rather than without them (fail open).
void archive_or_rediet(OffloadedDiet& job, archive::Store* store, const providers::ChatRoute& route,
                       const config::Config& config, diet::DietCaches& caches, tok::Calibration* calibration) {
  if (!job.outcome.tombstoned()) return;
  if (store && store->write(job.key_fingerprint, job.outcome.result.archived)) {
    // Tombstones go out: the model gets tokendiet_recall to read them back
    // (appended here too, a scan of the body, off the I/O thread).
    job.offered = providers::append_recall_tool(job.api, job.rewritten);
    return;
  }
  job.archive_error = store ? store->last_error() : "no archive";
  if (job.archive_error.empty()) job.archive_error = "archive write failed";
  run_diet(job, route, config, caches, calibration, false);
}

std::optional<LocalResponse> answer_of(FilterResult r) {
  if (r.answers()) return std::move(r.answer());
  return std::nullopt;
}

// The tasks whose outputs a written request went without, once each, in order.
std::vector<std::string> evicted_tasks(const std::vector<pruning::ArchivedOutput>& archived) {
  std::vector<std::string> tasks;
  for (const auto& a : archived)
    if (std::find(tasks.begin(), tasks.end(), a.task) == tasks.end()) tasks.push_back(a.task);
  return tasks;
}

}  // namespace

DietFilter::DietFilter(const config::Config& config, tok::Calibration* calibration, diet::DietCaches& caches,
                       WorkPool* workers, PolicyState policy, DietArchive archive,
                       std::shared_ptr<const diet::RecapSummarizer> summarizer)
    : config_(std::make_shared<const config::Config>(config)),
      calibration_(calibration),
      caches_(caches),
      workers_(workers),
      policy_(policy),
      summarizer_(workers ? std::move(summarizer) : nullptr),
      any_profile_disabled_(std::any_of(config_->profiles.begin(), config_->profiles.end(),
                                        [](const pruning::Profile& p) { return !p.enabled; })),
      archive_(std::move(archive)) {}

std::optional<std::string> RequestRecall::read(std::string_view key_fp, std::string_view id) const {
  if (key_fp != key_fp_) return std::nullopt;
  for (const pruning::ArchivedOutput& e : entries_)
    if (e.id == id) return e.text;
  return std::nullopt;
}

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
    // (diet/diet.hpp), the same function `tokendiet replay` measures.
    const PolicyIdentity who{ctx.provider, ctx.key_fingerprint, ctx.session_id};
    const diet::PolicyFactsFn facts = policy_.enabled() ? policy_.facts_for(who) : diet::PolicyFactsFn{};
    std::string rewritten;
    diet::DietOutcome diet = diet::diet_body(*route, body, rewritten, *config_, caches_,
                                 diet::DietOptions{.calibration = calibration_,
                                             .policy = facts ? &facts : nullptr,
                                             .semantic_eviction = semantic_eviction()});
    // A recap to summarize first: on a diet thread, the request paused.
    if (summarizer_) {
      const pruning::Profile* profile = config::profile_named(*config_, diet.profile);
      if (profile && diet::wants_summary(diet, *profile)) return offload(ctx, headers, *route, body);
    }
    // Outputs left out of the pruned request: archived before it may go.
    if (diet.tombstoned())
      return archive_then_send(ctx, *route, body, std::move(rewritten), std::move(diet));
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
  auto job = make_job(ctx, policy_);
  job->api = route.api;
  if (summarizer_) {
    job->provider = ctx.provider;
    job->credentials = summary_credentials(headers);
  }
  job->body = std::move(body);
  auto handle = std::make_shared<ResumeHandle>();
  // The wait ended without the diet: the body goes as it came. (The job only
  // reads it, so copying it here races with nothing.)
  handle->on_cancel([job, &body] { body = job->body; });
  ctx.objects.get<DietState>().offloaded = true;
  workers_->post([this, job, handle, route, &ctx, &body, config = config_, caches = &caches_,
                  calibration = calibration_, store = archive_.store ? archive_.store() : nullptr,
                  summarizer = summarizer_] {
    if (handle->cancelled()) return;  // nobody waits for it any more
    run_diet(*job, route, *config, *caches, calibration, store != nullptr);
    // A recap to summarize: the model asked once, its text cached, the diet
    // run again with it (or with the extractive choice cached on failure).
    if (summarizer) {
      const pruning::Profile* profile = config::profile_named(*config, job->outcome.profile);
      if (profile && diet::wants_summary(job->outcome, *profile)) {
        diet::summarize_recap(*summarizer, job->outcome, *profile, job->provider, std::move(job->credentials),
                        caches->summaries);
        if (handle->cancelled()) return;
        run_diet(*job, route, *config, *caches, calibration, store != nullptr);
      }
    }
    archive_or_rediet(*job, store, route, *config, *caches, calibration);  // already off the I/O thread
    // `this`, `ctx` and `body` are only touched if the request still waits,
    // on its own thread: then the filter and the request are alive.
    handle->resume_then([this, job, &ctx, &body] { return answer_of(hand_over(ctx, body, *job)); });
  });
  return FilterResult::pause(std::move(handle), kOffloadWait);
}

// A pruned request that left outputs out: paused while the archive's thread
// writes them (or, when that fails, diets the body again without semantic
// eviction), then sent as the job left it.
FilterResult DietFilter::archive_then_send(RequestContext& ctx, const providers::ChatRoute& route, std::string& body,
                                           std::string rewritten, diet::DietOutcome diet) {
  auto job = make_job(ctx, policy_);
  job->api = route.api;
  job->body = std::move(body);
  job->rewritten = std::move(rewritten);
  job->outcome = std::move(diet);
  auto handle = std::make_shared<ResumeHandle>();
  handle->on_cancel([job, &body] { body = job->body; });  // as it came: nothing archived is missing from it
  auto work = [this, job, handle, route, &ctx, &body, config = config_, caches = &caches_, calibration = calibration_,
               store = archive_.store()] {
    if (handle->cancelled()) return;
    archive_or_rediet(*job, store, route, *config, *caches, calibration);
    handle->resume_then([this, job, &ctx, &body] { return answer_of(hand_over(ctx, body, *job)); });
  };
  if (archive_.thread) archive_.thread->post(std::move(work));
  else work();
  return FilterResult::pause(std::move(handle), kArchiveWait);
}

// On the request's thread: the job's body and outcome into the request.
FilterResult DietFilter::hand_over(RequestContext& ctx, std::string& body, OffloadedDiet& job) {
  body = std::move(job.outcome.rewritten ? job.rewritten : job.body);
  if (!job.archive_error.empty()) {
    ctx.archive_error = std::move(job.archive_error);
    if (archive_.count_failure) archive_.count_failure();
  }
  FilterResult r = apply(ctx, job.outcome);
  // The recall loop answers tokendiet_recall from the entries the tombstones name.
  if (job.offered) {
    DietState& st = ctx.objects.get<DietState>();
    st.recall.emplace(job.key_fingerprint, std::move(job.outcome.result.archived));
    if (const pruning::Profile* p = config::profile_named(*config_, job.outcome.profile)) {
      st.recall->limits.max_calls = p->recall_max_calls;
      st.recall->limits.max_answer_bytes = p->recall_max_answer_bytes;
    }
    st.recall->limits.max_body_bytes = config_->limits.max_body_bytes;
    ctx.recall = &*st.recall;
  }
  return r;
}

// The outcome into the request: what the access line, the ledger and the
// logging phase read, and the admission.
FilterResult DietFilter::apply(RequestContext& ctx, const diet::DietOutcome& diet) const {
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
  // Tombstones went out (archived first, hand_over()): the tasks they name.
  if (diet.tombstoned()) ctx.evicted_tasks = evicted_tasks(diet.result.archived);
  if (diet.fail_open) {
    fail_open(ctx, diet.error);
    return admit(ctx, diet.decision.admission);
  }
  if (diet.raw_estimate > 0) ctx.objects.get<DietState>().raw_estimate = diet.raw_estimate;
  if (policy_.enabled()) {
    const pruning::Profile* profile = config::profile_named(*config_, diet.profile);
    if (profile) ctx.objects.get<DietState>().runway = policy_.admit(ctx, *profile, diet);
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
  const DietState* st = ctx.objects.find<DietState>();
  // The big body goes once the request ends: its memory back to the system
  // when the diet threads are next idle.
  if (st && st->offloaded) workers_->want_release();
  if (st) policy_.settle(ctx, st->runway);
  if (!calibration_ || !ctx.usage.present || ctx.fail_open || ctx.status < 200 || ctx.status >= 300) return;
  if (st && st->raw_estimate > 0 && ctx.usage.prompt > 0)
    calibration_->observe(ctx.model, st->raw_estimate, ctx.usage.prompt);
}

}  // namespace td::proxy
