#include "quota/local_policy_store.hpp"

namespace td::quota {

std::optional<StoredFacts> LocalPolicyStore::facts(const RunwayRef& r, std::uint64_t session) {
  const Clock::time_point now = Clock::now();
  StoredFacts f;
  f.runway = runways_.snapshot(r.key, r.provider, r.limits, now);
  const SessionFacts s = sessions_.get(session, now);
  f.memory = s.memory;
  f.recalled = s.recalled;
  if (s.cached_prefix > 0 && now - s.billed_at < kCacheLifetime) f.cached_prefix = s.cached_prefix;
  return f;
}

void LocalPolicyStore::take(const RunwayRef& r, const pruning::RunwayAsk& ask, double margin, TakeDone done) {
  const Clock::time_point now = Clock::now();
  const auto wait = runways_.snapshot(r.key, r.provider, r.limits, now).wait_for(ask, margin);
  runways_.take(r.key, r.provider, r.limits, ask, now);
  if (done) done(wait);
}

void LocalPolicyStore::settle(const RunwayRef& r, const pruning::RunwayAsk& taken, const pruning::RunwayAsk& billed,
                              const ProviderFigures& figures) {
  runways_.settle(r.key, r.provider, r.limits, taken, billed, Clock::now(), figures);
}

void LocalPolicyStore::remember(std::uint64_t session, const pruning::SessionMemory& memory) {
  sessions_.remember(session, memory, Clock::now());
}

void LocalPolicyStore::overflowed(std::uint64_t session, std::uint64_t fit_tokens) {
  sessions_.overflowed(session, fit_tokens, Clock::now());
}

void LocalPolicyStore::billed(std::uint64_t session, double cached_prefix) {
  sessions_.billed(session, cached_prefix, Clock::now());
}

void LocalPolicyStore::recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) {
  sessions_.recalled(session, ranges, Clock::now());
}

}  // namespace td::quota
