// Where the policy's state lives (docs/design.md §Policy, §Shared state),
// as the proxy's bookkeeping (proxy/filters/runway_account) reads and writes
// it: this process's own stores (LocalPolicyStore, local_policy_store.hpp),
// or the ones several replicas share through Redis
// (shared_state::SharedStore), which falls back to the local one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pruning/decision.hpp"
#include "pruning/recalled_lines.hpp"
#include "quota/runway_store.hpp"

namespace td::quota {

// One runway: its key (runway_key()), provider and the profile's limits.
struct RunwayRef {
  std::string key;
  providers::Provider provider = providers::Provider::other;
  QuotaLimits limits;
};

// What the policy reads before it decides.
struct StoredFacts {
  pruning::Runway runway;
  pruning::SessionMemory memory;
  double cached_prefix = 0;  // the provider's cached prompt within its cache lifetime, else 0
  std::shared_ptr<const pruning::RecalledLines> recalled{};  // null: none
};

class PolicyStore {
 public:
  virtual ~PolicyStore() = default;
  // How long the provider's prompt cache is taken to hold a prefix
  // (Anthropic's default lifetime): past it, no cache read is expected.
  static constexpr std::chrono::minutes kCacheLifetime{5};

  // The runway's buckets and the session's memory now; nullopt: not
  // available (a shared store that did not answer: ask the local one).
  virtual std::optional<StoredFacts> facts(const RunwayRef& runway, std::uint64_t session) = 0;
  // The ask leaves the runway; `done` gets the wait the buckets needed for
  // it (nullopt: not taken). It may be called before take() returns.
  using TakeDone = std::function<void(std::optional<std::chrono::milliseconds>)>;
  virtual void take(const RunwayRef& runway, const pruning::RunwayAsk& ask, double margin, TakeDone done) = 0;
  // The answer's figures and bill (RunwayStore::settle).
  virtual void settle(const RunwayRef& runway, const pruning::RunwayAsk& taken, const pruning::RunwayAsk& billed,
                      const ProviderFigures& figures) = 0;
  virtual void remember(std::uint64_t session, const pruning::SessionMemory& memory) = 0;
  virtual void overflowed(std::uint64_t session, std::uint64_t fit_tokens) = 0;
  virtual void billed(std::uint64_t session, double cached_prefix) = 0;
  // The session's model recalled these line ranges (the recall loop):
  // kept, in order, while the session has room (pruning/recalled_lines.hpp).
  virtual void recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) = 0;
};

}  // namespace td::quota
