#include "proxy/filters/runway_account.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/hash.hpp"
#include "proxy/reports/billed_usage.hpp"
#include "proxy/reports/quota_report.hpp"
#include "proxy/reports/recovery_report.hpp"

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
// start; always with the API key, so two keys never share a memory, and an
// anonymous client's conversations each have their own (docs/design.md §Policy).
std::uint64_t session_key(std::string_view fingerprint, std::string_view session_id, std::uint64_t anchor) {
  const std::uint64_t key = tok::hash_bytes(fingerprint.data(), fingerprint.size());
  return session_id.empty() ? tok::hash_bytes(&anchor, sizeof anchor, key)
                            : tok::hash_bytes(session_id.data(), session_id.size(), ~key);
}

}  // namespace

diet::PolicyFactsFn PolicyState::facts_for(const PolicyIdentity& who) const {
  return [this, &who](const diet::PolicyQuery& q) {
    diet::PolicyFacts f;
    if (who.provider == Provider::other) return f;
    const pruning::Profile& p = *q.profile;
    f.session = session_key(who.key_fingerprint, who.session_id, q.anchor);
    // An anonymous client is told apart by its conversation (the session
    // key), unless the profile shares one runway among them all.
    const std::string client = quota::runway_client(who.key_fingerprint, f.session, p.anonymous_clients_shared());
    f.runway_key = quota::runway_key(who.provider, client, group_of(p, q.model));
    if (calibration_) f.bill_ratio = calibration_->ratio(q.model);
    const quota::RunwayRef ref{f.runway_key, who.provider, limits_of(p)};
    // Shared by the replicas: one round trip, waited for on this diet
    // thread. Redis down (the diet ran here) or silent: decided alone, counted.
    std::optional<quota::StoredFacts> stored;
    if (shared_ && who.may_wait)
      stored = shared_->facts(ref, f.session);
    else if (shared_)
      shared_->count_fallback();
    if (!stored) stored = local_->facts(ref, f.session);
    f.runway = stored->runway;
    f.memory = stored->memory;
    f.recalled = stored->recalled;
    // Only Anthropic leaves cache reads out of its input quota.
    if (who.provider == Provider::anthropic) f.cached_prefix = stored->cached_prefix;
    return f;
  };
}

RunwayAccount PolicyState::admit(RequestContext& ctx, const pruning::Profile& profile,
                                 const diet::DietOutcome& diet) const {
  RunwayAccount a;
  // A control-arm session's request goes too, untouched or cut by survival:
  // its runway counts it, so survival keeps protecting it.
  const bool sent_by_policy = diet.decision.settings.write || diet.decision.arm == pruning::Arm::Control;
  if (!enabled() || diet.runway_key.empty() || !diet.parsed || diet.fail_open || !sent_by_policy) return a;
  const pruning::Decision& d = diet.decision;
  a.active = true;
  a.provider = ctx.provider;
  a.limits = limits_of(profile);
  a.key = diet.runway_key;
  a.session = diet.session;
  if (d.ask.input > 0 || d.ask.output > 0) {
    a.taken = d.ask;
    a.shared = sharing();
    if (!a.shared) take_alone(a);
  }
  // The replica's own memory is kept too: it decides with it while Redis is down.
  local_->remember(a.session, d.memory);
  if (sharing()) shared_->remember(a.session, d.memory);
  QuotaReport& report = ctx.objects.publish<QuotaReport>();
  report.quota_group = group_of(profile, ctx.model);  // the diet set ctx.model from the body
  if (d.outcome != pruning::SurvivalOutcome::None) report.survival = pruning::outcome_name(d.outcome);
  // Tokens owed ahead of the refill read as none left.
  if (d.left.limit > 0) report.runway_tokens = std::max<std::int64_t>(0, std::llround(d.left.tokens));
  return a;
}

void PolicyState::take_shared(const RunwayAccount& a, double margin, quota::PolicyStore::TakeDone done) const {
  shared_->take(a.ref(), a.taken, margin, std::move(done));
}

void PolicyState::give_back_shared(const RunwayAccount& a) const {
  if (shared_) shared_->settle(a.ref(), a.taken, {}, {});
}

void PolicyState::take_alone(RunwayAccount& a) const {
  a.shared = false;
  local_->take(a.ref(), a.taken, 1.0, nullptr);
  // Charged to the shared buckets once Redis answers again.
  if (shared_) shared_->decided_alone(a.ref());
}

void PolicyState::settle(const RequestContext& ctx, const RunwayAccount& a) const {
  if (!a.active || !enabled()) return;
  const bool admitted = ctx.status >= 200 && ctx.status < 300 && !ctx.local_response;
  pruning::RunwayAsk billed;  // the provider did not count a request it refused or never saw
  const BilledUsage* bill = ctx.objects.find<BilledUsage>();
  if (bill && bill->usage.present) {
    const providers::Usage& usage = bill->usage;
    // Anthropic's input quota counts what its cache did not serve.
    const std::uint64_t input =
        a.provider == Provider::anthropic ? usage.prompt - std::min(usage.prompt, usage.cached_read) : usage.prompt;
    billed = {double(input), double(usage.completion)};
    if (a.provider == Provider::anthropic) {
      const double cached = double(usage.cached_read + usage.cache_write);
      local_->billed(a.session, cached);
      if (sharing()) shared_->billed(a.session, cached);
    }
  } else if (admitted) {
    billed = a.taken;  // no bill seen: what it took stands
  }
  quota::ProviderFigures figures;
  if (bill && bill->rate_limit) {
    const auto received = bill->rate_limit->received;
    const auto age = std::chrono::system_clock::now() - received;
    figures = {&bill->rate_limit->limits, admitted, received, std::chrono::duration<double, std::milli>(age).count()};
  }
  store_of(a).settle(a.ref(), a.taken, billed, figures);
  // The session overflowed the window: its later requests go under what the retry fitted in.
  const RecoveryReport* recovery = ctx.objects.find<RecoveryReport>();
  if (recovery && recovery->outcome == "retried" && recovery->fit_tokens) {
    local_->overflowed(a.session, recovery->fit_tokens);
    if (sharing()) shared_->overflowed(a.session, recovery->fit_tokens);
  }
}

void PolicyState::recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) const {
  if (!enabled() || session == 0 || ranges.empty()) return;
  // The replica's own memory too: it decides with it while Redis is down.
  local_->recalled(session, ranges);
  if (sharing()) shared_->recalled(session, ranges);
}

}  // namespace td::proxy
