#include "diet/diet_policy.hpp"

#include <array>
#include <stdexcept>
#include <utility>

#include "providers/generation_settings.hpp"
#include "diet/diet.hpp"
#include "pruning/control_arm.hpp"
#include "pruning/session_anchor.hpp"

namespace td::diet {

namespace {

// The output the provider takes from its quota at admission: the output cap
// (OpenAI's combined TPM, Anthropic's OTPM; Gemini counts input only).
double reserved_output(const providers::ParsedRequest& request) {
  return double(providers::reserved_output_tokens(request));
}

}  // namespace

PolicyStep policy_step(const providers::ChatRoute& route, std::string_view body, providers::ParsedRequest& request,
                       const pruning::Counted& counted, const pruning::Profile& profile,
                       const pruning::TokenCounter& counter, DietCaches& caches, const PolicyFactsFn& facts) {
  PolicyStep step;
  step.reparsed.reserve(2);  // one per harder level: `request` pointers stay valid
  step.reserved_output = reserved_output(request);
  PolicyFacts f = facts(PolicyQuery{request.model, &profile, pruning::session_anchor(request.conversation)});
  step.runway_key = std::move(f.runway_key);
  step.session = f.session;

  pruning::PolicyInput in;
  in.counted = &counted;
  in.profile = &profile;
  in.runway = f.runway;
  in.bill_ratio = f.bill_ratio;
  in.cached_prefix = f.cached_prefix;
  in.reserved_output = step.reserved_output;
  in.memory = f.memory;
  in.messages = static_cast<std::uint32_t>(request.conversation.messages.size());
  // The arm: a function of the session's key, the same on every replica.
  in.control = pruning::in_control_arm(f.session, profile.control_fraction);

  // Each level the policy asks about is pruned once and kept: the one
  // decided is then written as it is.
  struct Run {
    providers::ParsedRequest* request = nullptr;
    pruning::PipelineResult result;
  };
  std::array<std::optional<Run>, 3> runs;
  bool request_free = true;
  auto run_at = [&](pruning::Level level) -> Run& {
    auto& slot = runs[static_cast<std::size_t>(level)];
    if (slot) return *slot;
    providers::ParsedRequest* target = &request;
    if (!std::exchange(request_free, false)) {
      // `request` holds another level's cut: prune a second parse of the bytes.
      step.reparsed.push_back(parse_step(route, body, caches));
      if (!step.reparsed.back().request) throw std::runtime_error("second parse: " + step.reparsed.back().error);
      target = &*step.reparsed.back().request;
    }
    pruning::Decision at{pruning::Mode::Standard, {&profile, true, level}, {}};
    at.settings.recalled = f.recalled;
    slot = Run{target, prune_step(target->conversation, counted, at, counter, caches)};
    // A harder level that cuts restates the task: part of what it sends,
    // so part of what the runway is asked for.
    reanchor_step(*target, profile, at, 0, counter, slot->result);
    return *slot;
  };

  step.decision = pruning::decide(in, [&](pruning::Level level) {
    const Run& r = run_at(level);
    return pruning::LevelCut{r.result.tokens_after, r.result.turns};
  });
  step.decision.settings.recalled = f.recalled;
  const pruning::Decision& d = step.decision;
  if (request_free) {
    // No level was run (the profile alone decided): prune as it says.
    step.request = &request;
    step.result = prune_step(request.conversation, counted, d, counter, caches);
    return step;
  }
  Run& chosen = run_at(d.settings.level);
  step.request = chosen.request;
  step.result = std::move(chosen.result);
  if (!d.settings.write) {
    // A control-arm request that goes as it came: as for any decision that
    // does not write, nothing needs archiving or recalling.
    step.result.archived.clear();
    step.result.hidden.clear();
  }
  return step;
}

}  // namespace td::diet
