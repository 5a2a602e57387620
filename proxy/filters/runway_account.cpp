#include "proxy/filters/runway_account.hpp"

#include <algorithm>
#include <cmath>

#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/hash.hpp"
#include "proxy/phases/rate_limit_info.hpp"

namespace td::proxy {

namespace {

using Clock = quota::Clock;

std::string_view group_of(const pruning::Profile& profile, std::string_view model) {
  return profile.quota_group.empty() ? model : std::string_view(profile.quota_group);
}

quota::QuotaLimits limits_of(const pruning::Profile& p) {
  return {p.tpm_limit, p.itpm_limit, p.otpm_limit, std::chrono::milliseconds(p.quota_window_ms)};
}

// The client's session name where it sends one, else the conversation's
// start; always with the API key, so two keys never share a memory.
std::uint64_t session_key(std::string_view fingerprint, std::string_view session_id, std::uint64_t anchor) {
  std::string k(fingerprint);
  k += '\x1f';
  if (session_id.empty()) k.append(reinterpret_cast<const char*>(&anchor), sizeof anchor);
  else k += session_id;
  return tok::hash_bytes(k.data(), k.size());
}

}  // namespace

PolicyFactsFn PolicyState::facts_for(const RequestContext& ctx) const {
  // The stores are the process's: they outlive the filter, which a diet
  // thread's job may outlive.
  return [runways = runways_, sessions = sessions_, calibration = calibration_, provider = ctx.provider,
          fingerprint = ctx.key_fingerprint, session_id = ctx.session_id](const PolicyQuery& q) {
    PolicyFacts f;
    if (provider == Provider::other) return f;
    const Clock::time_point now = Clock::now();
    const pruning::Profile& p = *q.profile;
    f.runway = runways->snapshot(quota::runway_key(provider, fingerprint, group_of(p, q.model)), provider,
                                  limits_of(p), now);
    const quota::SessionFacts s = sessions->get(session_key(fingerprint, session_id, q.anchor), now);
    f.memory = s.memory;
    // Only Anthropic leaves cache reads out of its input quota.
    if (provider == Provider::anthropic && s.cached_prefix > 0 && now - s.billed_at < kCacheLifetime)
      f.cached_prefix = s.cached_prefix;
    if (calibration) f.bill_ratio = calibration->ratio(q.model);
    return f;
  };
}

RunwayAccount PolicyState::admit(RequestContext& ctx, const pruning::Profile& profile, const DietOutcome& diet) const {
  RunwayAccount a;
  if (!enabled() || ctx.provider == Provider::other || !diet.parsed || diet.fail_open || !diet.decision.settings.write)
    return a;
  const Clock::time_point now = Clock::now();
  const pruning::Decision& d = diet.decision;
  a.active = true;
  a.provider = ctx.provider;
  a.limits = limits_of(profile);
  a.key = quota::runway_key(ctx.provider, ctx.key_fingerprint, group_of(profile, diet.model));
  a.session = session_key(ctx.key_fingerprint, ctx.session_id, diet.anchor);
  if (d.ask.input > 0 || d.ask.output > 0) {
    runways_->take(a.key, a.provider, a.limits, d.ask, now);
    a.taken = d.ask;
  }
  sessions_->remember(a.session, d.memory, now);
  ctx.quota_group = std::string(group_of(profile, diet.model));
  if (d.outcome != pruning::SurvivalOutcome::None) ctx.survival = pruning::outcome_name(d.outcome);
  // Tokens owed ahead of the refill read as none left.
  if (d.left.limit > 0) ctx.runway_tokens = std::max<std::int64_t>(0, std::llround(d.left.tokens));
  ctx.thinking = diet.thinking;
  return a;
}

void PolicyState::settle(const RequestContext& ctx, const RunwayAccount& a) const {
  if (!a.active || !enabled()) return;
  const Clock::time_point now = Clock::now();
  const bool admitted = ctx.status >= 200 && ctx.status < 300 && !ctx.local_response;
  const bool prompt_rebased =
      ctx.rate_limit && runways_->rebase(a.key, a.provider, a.limits, ctx.rate_limit->limits, a.taken, admitted,
                                         ctx.rate_limit->received, now);
  pruning::RunwayAsk billed;  // the provider did not count a request it refused or never saw
  if (ctx.usage.present) {
    // Anthropic's input quota counts what its cache did not serve.
    const std::uint64_t input = a.provider == Provider::anthropic
                                    ? ctx.usage.prompt - std::min(ctx.usage.prompt, ctx.usage.cached_read)
                                    : ctx.usage.prompt;
    billed = {double(input), double(ctx.usage.completion)};
    if (a.provider == Provider::anthropic)
      sessions_->billed(a.session, double(ctx.usage.cached_read + ctx.usage.cache_write), now);
  } else if (admitted) {
    billed = a.taken;  // no bill seen: what it took stands
  }
  // The provider's remaining count holds its own count of this prompt (and
  // the output cap it reserved): only the output written is left to settle.
  if (prompt_rebased) billed.input = a.taken.input;
  runways_->settle(a.key, a.provider, a.limits, a.taken, billed, now);
}

}  // namespace td::proxy
