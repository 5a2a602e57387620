// The policy's state in this process (docs/design.md §Policy): the runway
// store and the session store behind the PolicyStore interface, the clock
// read here. Every call answers at once.
#pragma once

#include "quota/policy_store.hpp"
#include "quota/runway_store.hpp"
#include "quota/session_store.hpp"

namespace td::quota {

class LocalPolicyStore final : public PolicyStore {
 public:
  LocalPolicyStore(RunwayStore& runways, SessionStore& sessions) : runways_(runways), sessions_(sessions) {}

  std::optional<StoredFacts> facts(const RunwayRef& runway, std::uint64_t session) override;
  void take(const RunwayRef& runway, const pruning::RunwayAsk& ask, double margin, TakeDone done) override;
  void settle(const RunwayRef& runway, const pruning::RunwayAsk& taken, const pruning::RunwayAsk& billed,
              const ProviderFigures& figures) override;
  void remember(std::uint64_t session, const pruning::SessionMemory& memory) override;
  void overflowed(std::uint64_t session, std::uint64_t fit_tokens) override;
  void billed(std::uint64_t session, double cached_prefix) override;
  void recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) override;

  RunwayStore& runways() { return runways_; }

 private:
  RunwayStore& runways_;
  SessionStore& sessions_;
};

}  // namespace td::quota
