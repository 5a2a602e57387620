// The TPM runway of every (client, provider, quota group): token buckets
// counted the provider's way (docs/design.md §Policy), which the diet reads
// as a pruning::Runway snapshot before it decides.
//
//   OpenAI     one combined bucket: the prompt plus the output cap, taken at
//              admission, reconciled with the billed usage at the end
//   Anthropic  input (uncached: cache reads are not counted) and output
//              (max_tokens taken at admission, unused output given back)
//   Gemini     one bucket on input; it sends no rate-limit headers, so its
//              runway is only what the profile configures and the bills say
//
// Limits come from the profile (tpm_limit, itpm_limit, otpm_limit) or, once
// a response carried them, from the provider's headers, which also re-base
// the level (x-ratelimit-remaining-tokens; anthropic-ratelimit-input-tokens-
// and -output-tokens-remaining; a 429's retry-after empties the bucket until
// then). Everything is in the provider's tokens.
//
// Thread-safe (a mutex per shard, held for a few arithmetic operations; no
// I/O). Bounded: at most `max_keys` keys, and a key idle for longer than
// kIdleExpiry (its buckets full again) is dropped. The clock is passed in.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "providers/provider.hpp"
#include "providers/rate_limits.hpp"
#include "pruning/runway.hpp"
#include "quota/bounded_shards.hpp"
#include "quota/runway_status.hpp"

namespace td::quota {

using Clock = std::chrono::steady_clock;

// The configured limits of a key (the profile's), 0: unknown.
struct QuotaLimits {
  std::uint64_t tpm = 0;
  std::uint64_t itpm = 0;  // Anthropic; 0: tpm
  std::uint64_t otpm = 0;  // Anthropic; 0: tpm
  std::chrono::milliseconds window{60'000};
};

// What a provider's answer said of its runway: its rate-limit headers and
// whether it admitted (counted) the request (a 2xx).
struct ProviderFigures {
  const providers::RateLimits* headers = nullptr;
  bool counted = false;
  std::chrono::system_clock::time_point received{};
  // How long before the settling the headers came (a streamed answer's
  // length): the provider's bucket refilled meanwhile, and a retry-after's
  // wait ran down.
  double age_ms = 0;
  // What is left at the settling of the headers' retry-after wait (0: none).
  double retry_wait_ms() const {
    if (!headers || !headers->retry_after) return 0;
    const double ms = std::chrono::duration<double, std::milli>(*headers->retry_after - received).count();
    return std::max(0.0, ms - std::max(0.0, age_ms));
  }
};

// "provider <US> client <US> group": one runway. The client is
// runway_client()'s.
std::string runway_key(providers::Provider provider, std::string_view client, std::string_view group);

// Whose runway a request draws on (docs/design.md §Policy): its API key's
// fingerprint; for an anonymous client (key_fp ""), its conversation
// (`conversation`: the request's session key, from x-tokendiet-session or
// the conversation's start), as `anon-` and 16 hex digits, so two anonymous
// conversations never share a runway; with `anonymous_shared` (the profile's
// anonymous_clients: shared) every anonymous request is one client, "".
std::string runway_client(std::string_view key_fp, std::uint64_t conversation, bool anonymous_shared);

// A runway's buckets as stored (here and, the same fields, in Redis).
struct StoredBucket {
  double learnt_limit = 0;  // from the headers; 0: none yet
  double level = 0;
  bool started = false;  // level holds something (else: full on first use)
};
struct StoredRunway {
  StoredBucket combined, input, output;
  Clock::time_point at{};  // the levels' time
};

class RunwayStore {
 public:
  explicit RunwayStore(std::size_t max_keys = 65'536) : entries_(max_keys, kIdleExpiry) {}
  RunwayStore(const RunwayStore&) = delete;
  RunwayStore& operator=(const RunwayStore&) = delete;

  // The key's buckets now (their limits: the headers', else the profile's).
  pruning::Runway snapshot(const std::string& key, providers::Provider provider, const QuotaLimits& limits,
                           Clock::time_point now);

  // A request was sent (or is held to be sent): its ask leaves the buckets.
  void take(const std::string& key, providers::Provider provider, const QuotaLimits& limits,
            const pruning::RunwayAsk& ask, Clock::time_point now);

  // A request that took `taken` ended, with its bill (`billed`: what the
  // provider counted; zero for a request it refused or never saw) and the
  // provider's figures if its answer had any. First the figures re-base the
  // buckets: limits learnt, levels set to what the provider says remains,
  // less what other requests in flight took, a 429's retry-after emptying
  // them until then; then the bill corrects what was taken. When the figure
  // of the bucket the prompt is counted in came with an admitted answer, it
  // holds the provider's own count of the prompt already: only the output is
  // corrected. The request is no longer in flight.
  void settle(const std::string& key, providers::Provider provider, const QuotaLimits& limits,
              const pruning::RunwayAsk& taken, pruning::RunwayAsk billed, Clock::time_point now,
              const ProviderFigures& figures = {});

  // Drops the key's buckets (full again on next use): its spend was handed
  // to the shared store (docs/design.md §Shared state).
  void forget(const std::string& key) { entries_.erase(key); }

  std::size_t size() const;

  // The runways held, the `max` most recently used, each refilled to `now`
  // (nothing created, nothing marked used): the dashboard's list. A key's
  // limits are the profile's its latest request came with.
  std::vector<RunwayStatus> list(Clock::time_point now, std::size_t max) const;

  // Stored buckets refilled to `now` and viewed under `limits`.
  static pruning::Runway runway_at(StoredRunway s, providers::Provider provider, const QuotaLimits& limits,
                                   Clock::time_point now);

  static constexpr std::chrono::minutes kIdleExpiry{10};

 private:
  using Bucket = StoredBucket;
  struct Entry : StoredRunway {
    pruning::RunwayAsk in_flight;  // taken by requests whose bill has not come
    providers::Provider provider = providers::Provider::other;
    QuotaLimits limits;  // the latest request's (list() views the buckets under them)
    HeaderNote note;     // the latest answer's rate-limit headers
  };

  // Runs f(entry) on the key's entry, refilled up to `now` (created full).
  template <class F>
  decltype(auto) on(const std::string& key, providers::Provider provider, const QuotaLimits& limits,
                    Clock::time_point now, F&& f);
  // The figures into `e`; true when the prompt's bucket took the
  // provider's count of an admitted request.
  static bool rebase(Entry& e, providers::Provider provider, const QuotaLimits& limits, const ProviderFigures& figures,
                     const pruning::RunwayAsk& taken);
  static pruning::Runway view(const StoredRunway& e, providers::Provider provider, const QuotaLimits& limits);
  static void refill(StoredRunway& e, providers::Provider provider, const QuotaLimits& limits, Clock::time_point now);

  BoundedShards<std::string, Entry> entries_;
};

}  // namespace td::quota
