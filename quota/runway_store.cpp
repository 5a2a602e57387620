#include "quota/runway_store.hpp"

#include <algorithm>
#include <functional>

namespace td::quota {

namespace {

using providers::Provider;

double configured(std::uint64_t specific, std::uint64_t tpm) { return double(specific ? specific : tpm); }

struct Limits3 {
  double combined = 0, input = 0, output = 0;
};

// The profile's limits, per bucket, for a provider.
Limits3 configured_limits(Provider provider, const QuotaLimits& l) {
  if (provider == Provider::anthropic) return {0, configured(l.itpm, l.tpm), configured(l.otpm, l.tpm)};
  return {double(l.tpm), 0, 0};
}

// The limit a bucket runs under: the lower of the profile's (a team's share
// of an account) and the provider's (learnt from its headers); either alone
// when only one is known (docs/design.md §Policy, the runway).
double effective_limit(double learnt, double configured) {
  if (learnt > 0 && configured > 0) return std::min(learnt, configured);
  return learnt > 0 ? learnt : configured;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

std::string runway_key(Provider provider, std::string_view client, std::string_view group) {
  std::string k(providers::to_string(provider));
  k += '\x1f';
  k += client;
  k += '\x1f';
  k += group;
  return k;
}

std::string runway_client(std::string_view key_fp, std::uint64_t conversation, bool anonymous_shared) {
  if (!key_fp.empty() || anonymous_shared) return std::string(key_fp);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "anon-";  // never a fingerprint: those are 16 hex digits
  for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(conversation >> shift) & 15];
  return out;
}

pruning::Runway RunwayStore::view(const StoredRunway& e, Provider provider, const QuotaLimits& limits) {
  const Limits3 cfg = configured_limits(provider, limits);
  const double window_ms = double(std::max<std::int64_t>(limits.window.count(), 1));
  auto bucket = [&](const Bucket& b, double cfg_limit) {
    pruning::RunwayBucket r;
    r.limit = effective_limit(b.learnt_limit, cfg_limit);
    if (r.limit <= 0) return pruning::RunwayBucket{};
    r.refill_per_ms = r.limit / window_ms;
    r.level = b.started ? b.level : r.limit;
    return r;
  };
  pruning::Runway rw;
  rw.combined = bucket(e.combined, cfg.combined);
  rw.input = bucket(e.input, cfg.input);
  rw.output = bucket(e.output, cfg.output);
  rw.combined_counts_output = provider != Provider::gemini;
  return rw;
}

// Brings every bucket to `now`: a known one starts full and refills at its
// limit per window, never above the limit.
void RunwayStore::refill(StoredRunway& e, Provider provider, const QuotaLimits& limits, Clock::time_point now) {
  const pruning::Runway rw = view(e, provider, limits);
  const double dt = std::max(0.0, ms_between(e.at, now));
  auto one = [&](Bucket& b, const pruning::RunwayBucket& v) {
    if (!v.known()) return;
    b.level = b.started ? std::min(v.limit, b.level + v.refill_per_ms * dt) : v.limit;
    b.started = true;
  };
  one(e.combined, rw.combined);
  one(e.input, rw.input);
  one(e.output, rw.output);
  if (now > e.at) e.at = now;
}

template <class F>
decltype(auto) RunwayStore::on(const std::string& key, Provider provider, const QuotaLimits& limits,
                               Clock::time_point now, F&& f) {
  return entries_.with(key, now, [&](Entry& e, Clock::time_point) -> decltype(auto) {
    if (e.at == Clock::time_point{}) e.at = now;
    e.provider = provider;
    e.limits = limits;
    refill(e, provider, limits, now);
    return f(e);
  });
}

pruning::Runway RunwayStore::snapshot(const std::string& key, Provider provider, const QuotaLimits& limits,
                                      Clock::time_point now) {
  return on(key, provider, limits, now, [&](Entry& e) { return view(e, provider, limits); });
}

void RunwayStore::take(const std::string& key, Provider provider, const QuotaLimits& limits,
                       const pruning::RunwayAsk& ask, Clock::time_point now) {
  on(key, provider, limits, now, [&](Entry& e) {
    const pruning::Runway rw = view(e, provider, limits);
    if (rw.combined.known()) e.combined.level -= rw.combined_ask(ask);
    if (rw.input.known()) e.input.level -= ask.input;
    if (rw.output.known()) e.output.level -= ask.output;
    e.in_flight.input += ask.input;
    e.in_flight.output += ask.output;
  });
}

void RunwayStore::settle(const std::string& key, Provider provider, const QuotaLimits& limits,
                         const pruning::RunwayAsk& taken, pruning::RunwayAsk billed, Clock::time_point now,
                         const ProviderFigures& figures) {
  on(key, provider, limits, now, [&](Entry& e) {
    if (figures.headers && figures.headers->present()) e.note = header_note(*figures.headers, figures.received);
    if (figures.headers && rebase(e, provider, limits, figures, taken)) billed.input = taken.input;
    const pruning::Runway rw = view(e, provider, limits);
    const pruning::RunwayAsk delta{billed.input - taken.input, billed.output - taken.output};
    auto charge = [](Bucket& b, const pruning::RunwayBucket& v, double d) {
      if (v.known()) b.level = std::min(v.limit, b.level - d);
    };
    charge(e.combined, rw.combined, rw.combined_ask(delta));
    charge(e.input, rw.input, delta.input);
    charge(e.output, rw.output, delta.output);
    e.in_flight.input = std::max(0.0, e.in_flight.input - taken.input);
    e.in_flight.output = std::max(0.0, e.in_flight.output - taken.output);
  });
}

bool RunwayStore::rebase(Entry& e, Provider provider, const QuotaLimits& limits, const ProviderFigures& figures,
                         const pruning::RunwayAsk& taken) {
  const providers::RateLimits& headers = *figures.headers;
  // Less what other requests in flight took (the provider's figure may not
  // count them yet) and, when the provider did not count this request (an
  // error answer), its own ask, which the bill (none) gives back.
  const pruning::RunwayAsk own = figures.counted ? pruning::RunwayAsk{} : taken;
  const pruning::RunwayAsk less{std::max(0.0, e.in_flight.input - taken.input) + own.input,
                                std::max(0.0, e.in_flight.output - taken.output) + own.output};
  const Limits3 cfg = configured_limits(provider, limits);
  const double window_ms = double(std::max<std::int64_t>(limits.window.count(), 1));
  const double age_ms = std::max(0.0, figures.age_ms);
  // True when the level is now the provider's count (which holds this
  // request's prompt). Under a profile limit lower than the provider's, the
  // runway keeps its own count of the share, never above what the provider
  // says is left. What was left when the headers came has refilled since at
  // the provider's rate (docs/design.md §Policy, the runway).
  auto learn = [&](Bucket& b, const providers::RateWindow& w, double less_ask, double ceiling) {
    if (w.limit && *w.limit > 0) b.learnt_limit = double(*w.limit);
    if (!w.remaining || b.learnt_limit <= 0) return false;
    const double left = double(*w.remaining) + b.learnt_limit / window_ms * age_ms - less_ask;
    if (ceiling > 0 && ceiling < b.learnt_limit) {
      b.level = std::min(b.started ? b.level : ceiling, left);
      b.started = true;
      return false;
    }
    b.level = std::min(b.learnt_limit, left);
    b.started = true;
    return true;
  };
  bool prompt_rebased = false;
  if (provider == Provider::anthropic) {
    prompt_rebased = learn(e.input, headers.input_tokens, less.input, cfg.input);
    learn(e.output, headers.output_tokens, less.output, cfg.output);
  } else if (provider != Provider::gemini) {
    prompt_rebased = learn(e.combined, headers.tokens, less.input + less.output, cfg.combined);
  }
  // A 429's retry-after: nothing fits before then (the bill, none, then
  // gives the request's ask back, so at that time the bucket holds it).
  const double until_ms = figures.retry_wait_ms();
  if (until_ms > 0) {
    const pruning::Runway rw = view(e, provider, limits);
    auto empty_until = [&](Bucket& b, const pruning::RunwayBucket& v) {
      if (v.known()) b.level = std::min(b.level, -v.refill_per_ms * until_ms);
    };
    empty_until(e.combined, rw.combined);
    empty_until(e.input, rw.input);
    empty_until(e.output, rw.output);
  }
  return prompt_rebased && figures.counted;
}

std::size_t RunwayStore::size() const { return entries_.size(); }

pruning::Runway RunwayStore::runway_at(StoredRunway s, Provider provider, const QuotaLimits& limits,
                                       Clock::time_point now) {
  if (s.at == Clock::time_point{} || s.at > now) s.at = now;
  refill(s, provider, limits, now);
  return view(s, provider, limits);
}

std::vector<RunwayStatus> RunwayStore::list(Clock::time_point now, std::size_t max) const {
  // The `max` most recently used, in one pass: a heap of the newest so far
  // (the oldest on top), so a key is copied only when it is among them.
  struct Held {
    Clock::time_point used;
    std::string key;
    bool operator<(const Held& o) const { return used > o.used; }  // the oldest on the heap's top
  };
  std::vector<Held> newest;
  if (max == 0) return {};
  entries_.for_each([&](const std::string& key, const Entry&, Clock::time_point used) {
    if (now - used > kIdleExpiry) return;
    if (newest.size() == max) {
      if (used <= newest.front().used) return;
      std::pop_heap(newest.begin(), newest.end());
      newest.pop_back();
    }
    newest.push_back({used, key});
    std::push_heap(newest.begin(), newest.end());
  });
  std::sort_heap(newest.begin(), newest.end());  // the newest first
  std::vector<RunwayStatus> out;
  for (const Held& h : newest) {
    Entry e;
    if (!entries_.peek(h.key, [&](const Entry& found, Clock::time_point) { e = found; })) continue;
    auto status = runway_status(h.key, runway_at(e, e.provider, e.limits, now));
    if (!status) continue;
    status->headers = e.note;
    out.push_back(std::move(*status));
  }
  return out;
}

}  // namespace td::quota
