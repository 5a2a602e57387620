#include "diet/diet.hpp"

#include <algorithm>
#include <exception>

#include "config/match.hpp"
#include "providers/context_window.hpp"
#include "providers/thinking_budget.hpp"
#include "diet/cached_counter.hpp"
#include "diet/recap_summary.hpp"
#include "pruning/client_compaction.hpp"
#include "pruning/tally.hpp"
#include "pruning/reanchor.hpp"
#include "pruning/rereads.hpp"
#include "pruning/strategies/recap.hpp"
#include "pruning/strategies/working_memory.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::diet {

providers::ParseOutcome parse_step(const providers::ChatRoute& route, std::string_view body, DietCaches& caches) {
  return providers::parse_request(route, body, &caches.parsed);
}

pruning::Counted count_step(const pruning::Conversation& conv, const pruning::TokenCounter& counter,
                            DietCaches& caches) {
  // Whole messages are looked up by content hash before any text is
  // counted: a resent history costs a hash per message.
  return pruning::count_tokens(conv, counter, &caches.pipeline);
}

pruning::PipelineResult prune_step(pruning::Conversation& conv, const pruning::Counted& counted,
                                   const pruning::Decision& decision, const pruning::TokenCounter& counter,
                                   DietCaches& caches) {
  // The model's window, for the recap: the profile's, else the known one.
  pruning::Decision d = decision;
  if (d.settings.profile)
    d.settings.context_window = d.settings.profile->context_window ? d.settings.profile->context_window
                                                                   : providers::known_context_window(conv.model);
  // A profile with a summarizer: the recap uses what a model wrote for its
  // prefix, and reports a prefix nobody summarized yet (the diet filter then
  // has it summarized: recap_summary.hpp).
  const pruning::Profile* profile = d.settings.profile;
  const pruning::RecapSummaries summaries = [&caches, profile](std::uint64_t h) {
    return caches.summaries.get(summary_key(h, *profile));
  };
  if (profile && profile->summarizer.enabled()) d.settings.recap_summaries = &summaries;
  return pruning::run_pipeline(conv, counted, d, counter, &caches.pipeline);
}

Written write_step(const providers::ParsedRequest& request, const pruning::PipelineResult& result,
                   const pruning::Decision& decision, std::string_view body, std::string& rewritten,
                   std::vector<json::Edit> extra) {
  Written out;
  const bool messages = result.changed() && decision.settings.write;
  if (!messages && extra.empty()) return out;
  providers::WriteOutcome written;
  if (messages) {
    written = providers::write(request, body, extra);
    if (!written.ok && !extra.empty()) {  // without the extra edits, as if they had not been asked for
      written = providers::write(request, body);
      out.extra_dropped = true;
    }
  } else {
    written.ok = json::apply(body, std::move(extra), written.body);
    written.changed = written.ok && written.body != body;
    out.extra_dropped = !written.ok;
    if (!written.ok) return out;
  }
  if (!written.ok) {
    out.ok = false;
    out.error = std::move(written.error);
    return out;
  }
  if (written.changed) {
    rewritten = std::move(written.body);
    out.rewritten = true;
  }
  return out;
}

std::uint64_t user_message_tokens(std::string text, const pruning::TokenCounter& counter) {
  pruning::Message m;
  m.role = pruning::Role::User;
  m.parts.emplace_back().text = std::move(text);
  return tok::count_message(m, counter);
}

void reanchor_step(providers::ParsedRequest& request, const pruning::Profile& profile,
                   const pruning::Decision& decision, std::uint32_t turns, const pruning::TokenCounter& counter,
                   pruning::PipelineResult& result) {
  if (decision.mode == pruning::Mode::None || !decision.settings.write) return;
  // Never twice: the policy restates the anchor in the levels it weighs.
  if (std::find(result.fired.begin(), result.fired.end(), std::string_view(kReanchorStat)) != result.fired.end())
    return;
  // A compression: survival's harder level that did cut something, or the
  // recap's or semantic eviction's step (not every later request that carries it: the task
  // stays verbatim at the top, and a restatement on every request is paid
  // uncached every time).
  const bool compressed = (decision.settings.level != pruning::Level::Standard && result.changed()) ||
                          result.recap_stepped || result.semantic_stepped;
  if (!pruning::reanchor_due(profile, turns, compressed)) return;
  const std::string restated = pruning::reanchor(request.conversation, profile);
  if (restated.empty()) return;
  result.tokens_after += user_message_tokens(restated, counter);
  result.fired.push_back(kReanchorStat);
}

std::vector<json::Edit> thinking_step(const providers::ParsedRequest& request, const pruning::Profile& profile,
                                      std::string& reason) {
  const providers::LowerThinking limits{profile.thinking_budget_effort,
                                        std::int64_t(profile.thinking_budget_gemini_tokens),
                                        std::int64_t(profile.thinking_budget_anthropic_tokens)};
  providers::ThinkingEdits lowered = providers::lower_thinking_edits(request, limits);
  if (!lowered.edits.ok || lowered.edits.edits.empty()) return {};
  reason = std::move(lowered.change.reason);
  return std::move(lowered.edits.edits);
}

// A request whose earlier turns the provider holds (ParsedRequest::server_history):
// what a cut hides the client never resends, so nothing is cut (the
// messages are not written, as for a shadow profile); the decision's
// admission and thinking still apply (docs/design.md §Recall).
void keep_server_history(DietOutcome& out) {
  out.decision.mode = pruning::Mode::None;
  out.decision.settings.write = false;
  out.result.tokens_after = out.result.tokens_before;
  out.result.fired.clear();
  out.result.archived.clear();
  out.result.hidden.clear();
  out.reason = kServerHistory;
}

DietOutcome diet_body(const providers::ChatRoute& route, std::string& body, const config::Config& config,
                      DietCaches& caches, const DietOptions& options) {
  std::string rewritten;
  DietOutcome out = diet_body(route, std::string_view(body), rewritten, config, caches, options);
  if (out.rewritten) body = std::move(rewritten);
  return out;
}

DietOutcome diet_body(const providers::ChatRoute& route, std::string_view body, std::string& rewritten,
                      const config::Config& config, DietCaches& caches, const DietOptions& options) {
  DietOutcome out;
  try {
    providers::ParseOutcome parsed = parse_step(route, body, caches);
    if (!parsed.request) {
      out.fail_open = true;
      out.error = "parse: " + parsed.error;
      return out;
    }
    out.parsed = true;
    providers::ParsedRequest& request = *parsed.request;
    out.model = request.model;
    out.stream = request.stream;
    const pruning::Profile& chosen = options.profile ? *options.profile : config::profile_for(config, out.model);
    std::optional<pruning::Profile> without_eviction;
    if (!options.semantic_eviction && chosen.completed_tasks) {
      without_eviction = chosen;
      without_eviction->completed_tasks = false;
    }
    const pruning::Profile& profile = without_eviction ? *without_eviction : chosen;
    out.profile = &chosen;  // the config's: `profile` may be a copy local to this call

    // Counted with a pure function of the bytes: the model's tokenizer, or the
    // estimator uncalibrated. The learned ratio predicts bills, never what is cut
    // (docs/design.md §Token counting).
    const auto model_counter = tok::counter_for_model(out.model);
    const CachedCounter counter(*model_counter, caches.pipeline.counts);
    out.exact = counter.exact();
    const pruning::Counted counted = count_step(request.conversation, counter, caches);
    out.rereads = pruning::count_rereads(request.conversation, &caches.pipeline.calls);
    // The client's own compaction request goes as it came (F29).
    if (std::string_view pattern = pruning::client_compaction(request.conversation, profile); !pattern.empty()) {
      out.decision = pruning::Decision{};  // mode none, sent now
      out.result = prune_step(request.conversation, counted, out.decision, counter, caches);
      out.reason = kClientCompaction;
      return out;
    }
    // Turns of the history as sent, for re-anchoring every N turns.
    const std::uint32_t turns =
        profile.reanchor_every_turns ? pruning::working_memory(request.conversation, profile).turns() : 0;
    providers::ParsedRequest* pruned = &request;
    std::optional<PolicyStep> policy;
    if (options.policy) {
      policy = policy_step(route, body, request, counted, profile, counter, caches, *options.policy);
      out.decision = policy->decision;
      out.result = std::move(policy->result);
      out.runway_key = std::move(policy->runway_key);
      out.session = policy->session;
      pruned = policy->request;
    } else {
      out.decision = pruning::decide(counted, profile);
      out.decision.settings.recalled = options.recalled;
      out.result = prune_step(request.conversation, counted, out.decision, counter, caches);
    }
    if (request.server_history) keep_server_history(out);
    out.decision.mode = pruning::reported_mode(out.decision.mode, !out.result.archived.empty());
    reanchor_step(*pruned, profile, out.decision, turns, counter, out.result);
    std::string thinking;
    std::vector<json::Edit> lowered;
    if (out.decision.lower_thinking) lowered = thinking_step(*pruned, profile, thinking);
    Written written = write_step(*pruned, out.result, out.decision, body, rewritten, std::move(lowered));
    if (!written.ok) {
      out.fail_open = true;
      out.error = "write: " + written.error;
      out.result.tokens_after = out.result.tokens_before;  // nothing was cut after all
      return out;
    }
    out.rewritten = written.rewritten;
    if (!written.extra_dropped) out.thinking = std::move(thinking);
    if (options.calibration) {
      // Not written (shadow): the view is the request as sent, otherwise its
      // diet. A model with its own tokenizer learns a ratio too: the bill it
      // predicts for the quota runway is in the provider's tokens, whichever
      // way the provider's quota counts them.
      out.raw_estimate = out.exact ? (out.decision.settings.write ? out.result.tokens_after : out.result.tokens_before)
                                   : tok::count_conversation(pruned->conversation, tok::EstimatingCounter(1.0)).total;
    }
  } catch (const std::exception& e) {
    out.fail_open = true;
    out.error = std::string("diet: ") + e.what();
  } catch (...) {
    out.fail_open = true;
    out.error = "diet: unknown exception";
  }
  return out;
}

bool plan_ahead(const providers::ChatRoute& route, std::string_view body, const pruning::PlanAhead& ahead,
                DietCaches& caches) noexcept {
  if (!ahead.due()) return false;
  try {
    providers::ParseOutcome parsed = parse_step(route, body, caches);
    if (!parsed.request) return false;
    // The counter diet_body() counts with: the plan's key holds its salt.
    const auto model_counter = tok::counter_for_model(parsed.request->model);
    const CachedCounter counter(*model_counter, caches.pipeline.counts);
    pruning::plan_ahead(parsed.request->conversation, ahead, pruning::Tally(counter, &caches.pipeline.counts),
                        caches.pipeline);
    return true;
  } catch (...) {
    return false;  // only a later request's speed was at stake
  }
}

}  // namespace td::diet
