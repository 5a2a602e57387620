// The diet's and the quota filter's bookkeeping of the TPM runway and the sessions' memory
// (docs/design.md §Policy): what the policy is told before it decides, what
// a request takes from its runway when it is admitted, and how its runway is
// corrected when the answer ends (the provider's rate-limit headers, then the
// billed usage). The state is the process's (process_state().runways() and
// sessions()); the clock is read here, at the edge, never in pruning/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "diet/diet.hpp"
#include "proxy/phases/request_context.hpp"
#include "quota/runway_store.hpp"
#include "quota/session_store.hpp"

namespace td::tok {
class Calibration;
}

namespace td::proxy {

// One request's share of its runway, kept until its logging phase.
struct RunwayAccount {
  bool active = false;  // the policy ran: settle() has something to correct
  std::string key;      // quota::runway_key()
  Provider provider = Provider::other;
  quota::QuotaLimits limits;
  pruning::RunwayAsk taken;
  std::uint64_t session = 0;
};

// Who a request is, as far as its runway and session go: views into the
// request's context, or into a diet thread's job's copies.
struct PolicyIdentity {
  Provider provider = Provider::other;
  std::string_view key_fingerprint;
  std::string_view session_id;
};

class PolicyState {
 public:
  PolicyState() = default;  // no state: the profile alone decides
  PolicyState(quota::RunwayStore* runways, quota::SessionStore* sessions, tok::Calibration* calibration)
      : runways_(runways), sessions_(sessions), calibration_(calibration) {}

  bool enabled() const { return runways_ && sessions_; }

  // What the policy reads for the request `who` is (the function refers to
  // `who` and to this object: both must outlive its calls).
  diet::PolicyFactsFn facts_for(const PolicyIdentity& who) const;

  // After the diet decided, on the request's thread: the admitted request's
  // ask leaves its runway, the session's memory is kept, and the request gets
  // the policy's QuotaReport (survival, runway, quota group).
  RunwayAccount admit(RequestContext& ctx, const pruning::Profile& profile, const diet::DietOutcome& diet) const;

  // The logging phase: the runway re-based on the answer's rate-limit
  // headers, then charged what the bill says instead of what was taken.
  void settle(const RequestContext& ctx, const RunwayAccount& account) const;

  // How long the provider's prompt cache is taken to hold a prefix
  // (Anthropic's default lifetime): past it, no cache read is expected.
  static constexpr std::chrono::minutes kCacheLifetime{5};

 private:
  quota::RunwayStore* runways_ = nullptr;
  quota::SessionStore* sessions_ = nullptr;
  tok::Calibration* calibration_ = nullptr;
};

}  // namespace td::proxy
