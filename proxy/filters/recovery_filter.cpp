#include "proxy/filters/recovery_filter.hpp"

#include "proxy/filters/profile_header_filter.hpp"
#include "proxy/reports/diet_report.hpp"
#include "proxy/reports/recovery_report.hpp"

#include <algorithm>

#include "config/match.hpp"
#include "providers/context_window.hpp"
#include "providers/generation_settings.hpp"
#include "diet/cached_counter.hpp"
#include "diet/diet.hpp"
#include "proxy/phases/routing.hpp"
#include "providers/recall_tool.hpp"
#include "proxy/reports/diet_report.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "proxy/reports/recovery_report.hpp"
#include "pruning/reanchor.hpp"
#include "pruning/tokenizer/counter.hpp"

namespace td::proxy {

namespace {

// The output the window must keep room for: the request's output cap, or
// what the error says was reserved (none where the window holds input alone).
std::uint64_t output_room(const providers::ParsedRequest& request, const providers::ContextOverflow& said) {
  if (!providers::limits_count_output(request.format)) return 0;
  return std::max<std::uint64_t>(providers::reserved_output_tokens(request), said.output);
}

// The retry's cuts name texts of their own: the request's recall offer holds
// them too, and a retry that makes a request's first cut gets the tool
// (docs/design.md §Recall).
void extend_recall(RequestContext& ctx, providers::Api api, std::string& body, const Recovery& r,
                   std::uint64_t max_body_bytes) {
  if (r.hidden.empty() || !r.profile || !r.profile->recall) return;
  if (RecallOffer* offer = ctx.objects.find<RecallOffer>()) {
    if (const auto* mine = dynamic_cast<const RequestRecall*>(offer->source.get()))
      offer->source = std::make_shared<RequestRecall>(mine->with(r.hidden));
    return;
  }
  if (!providers::append_recall_tool(api, body)) return;
  RecallOffer& offer = ctx.objects.publish<RecallOffer>();
  offer.source = std::make_shared<RequestRecall>(ctx.key_fingerprint, std::vector<pruning::ArchivedOutput>{}, r.hidden);
  offer.limits = {r.profile->recall_max_calls, r.profile->recall_max_answer_bytes, max_body_bytes};
}

}  // namespace

Recovery recover_body(const providers::ChatRoute& route, std::string_view body, const providers::ResponseError& error,
                      const config::Config& config, diet::DietCaches& caches, std::string_view chosen) {
  Recovery out;
  providers::ParseOutcome first = diet::parse_step(route, body, caches);
  if (!first.request) return out;
  // Semantic eviction off: its outputs would have to reach the archive before
  // the retry goes, and the failure phase cannot wait for a write. Tombstones
  // the diet already placed (and archived) stay in the body as it was sent.
  out.profile = &config::profile_for(config, first.request->model, chosen);
  pruning::Profile profile = *out.profile;
  if (!profile.enabled || !profile.recovery) return out;
  profile.completed_tasks = false;
  out.outcome = "no_fit";

  const providers::ContextOverflow said = providers::context_overflow_in(error.message);
  const std::uint64_t window = said.window              ? said.window
                               : profile.context_window ? profile.context_window
                                                        : providers::known_context_window(first.request->model);
  const std::uint64_t output = output_room(*first.request, said);
  if (window <= output) return out;  // unknown, or no room for any prompt

  const auto model_counter = tok::counter_for_model(first.request->model);
  const diet::CachedCounter counter(*model_counter, caches.pipeline.counts);
  const pruning::Counted counted = diet::count_step(first.request->conversation, counter, caches);
  out.tokens_before = counted.total;
  // The provider's tokens per diet token, where the error counted the prompt.
  const double ratio = said.prompt && counted.total ? std::clamp(double(said.prompt) / counted.total, 0.25, 4.0) : 1.0;
  out.budget = double(window - output) / ratio * profile.recovery_margin;
  const std::uint64_t note_tokens =
      profile.recovery_note.empty() ? 0 : diet::user_message_tokens(profile.recovery_note, counter);

  for (const pruning::Level level : {pruning::Level::Window, pruning::Level::DropMiddle}) {
    // Each level prunes the request as it was sent: a fresh parse after the first.
    providers::ParseOutcome again;
    providers::ParsedRequest* request = &*first.request;
    if (level != pruning::Level::Window) {
      again = diet::parse_step(route, body, caches);
      if (!again.request) return out;
      request = &*again.request;
    }
    const pruning::Decision at{pruning::Mode::Standard, {&profile, true, level}, {}};
    pruning::PipelineResult result = diet::prune_step(request->conversation, counted, at, counter, caches);
    if (!result.changed()) continue;
    std::uint64_t tokens = result.tokens_after + note_tokens;
    // A compression: the task restated (F22), unless the request carries it already; the note last.
    if (profile.reanchor_after_compression) {
      if (const std::string restated = pruning::reanchor(request->conversation, profile); !restated.empty()) {
        tokens += diet::user_message_tokens(restated, counter);
        result.fired.push_back(diet::kReanchorStat);
      }
    }
    if (double(tokens) > out.budget) continue;
    if (!profile.recovery_note.empty()) pruning::append_user_note(request->conversation, profile.recovery_note);
    providers::WriteOutcome written = providers::write(*request, body);
    if (!written.ok || !written.changed) return out;
    out.outcome = "retried";
    out.body = std::move(written.body);
    out.level = level;
    out.tokens_after = tokens;
    out.fired = std::move(result.fired);
    out.hidden = std::move(result.hidden);
    return out;
  }
  return out;
}

RetryDecision RecoveryFilter::upstream_failure_filter(RequestContext& ctx, const UpstreamOutcome& outcome,
                                                      std::string& body) {
  // Context-length errors are client errors (400, some servers 413).
  if (outcome.failure || outcome.status < 400 || outcome.status >= 500) return RetryDecision::no_retry;
  const auto target = origin_form(ctx.target);
  const auto route = target ? providers::chat_route(ctx.method, *target) : std::nullopt;
  if (!route) return RetryDecision::no_retry;
  const providers::ResponseError error = providers::classify_error_body(int(outcome.status), outcome.body);
  if (!error.context_length_exceeded) return RetryDecision::no_retry;
  Recovery r = recover_body(*route, body, error, *config_, caches_, chosen_profile(ctx));
  RecoveryReport& report = ctx.objects.publish<RecoveryReport>(RecoveryReport{r.outcome});
  if (r.outcome != "retried") return RetryDecision::no_retry;
  body = std::move(r.body);
  extend_recall(ctx, route->api, body, r, config_->limits.max_body_bytes);
  report.fit_tokens = static_cast<std::uint64_t>(r.budget);
  // The retry is what went upstream: the diet's report says so.
  if (DietReport* diet = ctx.objects.find<DietReport>()) {
    diet->tokens_after = r.tokens_after;
    if (diet->arm == pruning::Arm::Treatment) diet->tokens_diet = r.tokens_after;  // the diet's figure is the retry's
    diet->strategies = std::move(r.fired);
  }
  return RetryDecision::retry;
}

}  // namespace td::proxy
