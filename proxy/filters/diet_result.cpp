#include "proxy/filters/diet_result.hpp"

#include "config/match.hpp"
#include "proxy/reports/diet_report.hpp"

namespace td::proxy {

diet::DietOutcome run_diet(const config::Config& config, const DietServices& services,
                           const providers::ChatRoute& route, const PolicyIdentity& who, std::string_view body,
                           std::string& rewritten, bool semantic_eviction, std::string_view chosen) {
  const diet::PolicyFactsFn facts = services.policy.enabled() ? services.policy.facts_for(who) : diet::PolicyFactsFn{};
  rewritten.clear();
  return diet::diet_body(
      route, body, rewritten, config, *services.caches,
      diet::DietOptions{.profile = chosen.empty() ? nullptr : &config::profile_for(config, "", chosen),
                        .calibration = services.calibration,
                        .policy = facts ? &facts : nullptr,
                        .semantic_eviction = semantic_eviction});
}

void DietRun::run(const config::Config& config, const DietServices& services, bool semantic_eviction) {
  outcome = run_diet(config, services, route, PolicyIdentity{provider, key_fingerprint, session_id, true}, body,
                     rewritten, semantic_eviction, chosen_profile);
}

void publish_diet(RequestContext& ctx, providers::ChatRoute route, diet::DietOutcome outcome, std::string& body,
                  std::string& rewritten) {
  if (!outcome.parsed) {
    ctx.mark_fail_open(outcome.error);
    return;
  }
  if (!outcome.model.empty()) ctx.model = outcome.model;
  ctx.stream = outcome.stream;
  ctx.body_parsed = true;
  ctx.objects.publish<DietReport>(DietReport{
      .mode = outcome.decision.mode,
      .reason = outcome.reason,
      .profile = std::string(outcome.profile_name()),
      .tokens_before = outcome.result.tokens_before,
      // What went upstream: the diet's tokens only when it wrote the request.
      .tokens_after = outcome.decision.settings.write ? outcome.result.tokens_after : outcome.result.tokens_before,
      .strategies = std::move(outcome.result.fired),  // the report is where they are read
      .thinking = outcome.fail_open ? std::string() : std::move(outcome.thinking),
      .arm = outcome.decision.arm,
      .tokens_diet = outcome.result.tokens_after,
      .rereads = outcome.rereads,
      .session_key = outcome.session,
  });
  if (outcome.fail_open) ctx.mark_fail_open(outcome.error);
  const bool tombstoned = outcome.tombstoned(), written = outcome.rewritten;
  const bool ahead = outcome.result.ahead.due();
  DietResult& result = ctx.objects.publish<DietResult>(std::move(route), std::move(outcome));
  // The client's bytes for the plan ahead: moved when the pruned request
  // replaces them (and no archive write needs them), else copied.
  if (ahead) result.ahead_body = written && !tombstoned ? std::move(body) : body;
  if (tombstoned) result.original = std::move(body);
  if (written) body = std::move(rewritten);
}

}  // namespace td::proxy
