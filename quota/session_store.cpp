#include "quota/session_store.hpp"

#include <algorithm>

namespace td::quota {

template <class F>
void SessionStore::update(std::uint64_t session, Clock::time_point now, F&& f) {
  entries_.with(session, now, [&](SessionFacts& facts, Clock::time_point last) {
    if (last != Clock::time_point{} && now - last > kIdleExpiry) facts = SessionFacts{};
    f(facts);
  });
}

SessionFacts SessionStore::get(std::uint64_t session, Clock::time_point now) const {
  SessionFacts out;
  entries_.peek(session, [&](const SessionFacts& facts, Clock::time_point used) {
    if (now - used <= kIdleExpiry) out = facts;
  });
  return out;
}

void SessionStore::remember(std::uint64_t session, const pruning::SessionMemory& memory, Clock::time_point now) {
  update(session, now, [&](SessionFacts& f) { f.memory = memory; });
}

void SessionStore::overflowed(std::uint64_t session, std::uint64_t fit_tokens, Clock::time_point now) {
  update(session, now, [&](SessionFacts& f) {
    std::uint64_t& fit = f.memory.fit_tokens;
    fit = fit ? std::min(fit, fit_tokens) : fit_tokens;
  });
}

void SessionStore::billed(std::uint64_t session, double cached_prefix, Clock::time_point now) {
  update(session, now, [&](SessionFacts& f) {
    f.cached_prefix = cached_prefix;
    f.billed_at = now;
  });
}

void SessionStore::recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges,
                            Clock::time_point now) {
  if (ranges.empty()) return;
  update(session, now, [&](SessionFacts& f) {
    auto next =
        f.recalled ? std::make_shared<pruning::RecalledLines>(*f.recalled) : std::make_shared<pruning::RecalledLines>();
    bool changed = false;
    for (const auto& r : ranges) changed = next->add(r) || changed;
    if (changed) f.recalled = std::move(next);
  });
}

}  // namespace td::quota
