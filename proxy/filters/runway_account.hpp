// The diet's and the quota filter's bookkeeping of the TPM runway and the sessions' memory
// (docs/design.md §Policy): what the policy is told before it decides, what
// a request takes from its runway when it is admitted, and how its runway is
// corrected when the answer ends (the provider's rate-limit headers, then the
// billed usage). The state is the process's (process_state().runways() and
// sessions()), or, with a quota_store, the one every replica shares
// (shared_state/shared_store.hpp), which falls back to the process's while
// Redis does not answer (docs/design.md §Shared state); the clock is read
// here, at the edge, never in pruning/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diet/diet.hpp"
#include "proxy/phases/request_context.hpp"
#include <memory>

#include "quota/local_policy_store.hpp"
#include "shared_state/shared_store.hpp"

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
  // The ask goes to (or went to) the shared buckets: settled there.
  bool shared = false;
  quota::RunwayRef ref() const { return {key, provider, limits}; }
};

// Who a request is, as far as its runway and session go: views into the
// request's context, or into a diet thread's job's copies.
struct PolicyIdentity {
  Provider provider = Provider::other;
  std::string_view key_fingerprint;
  std::string_view session_id;
  // Off the I/O threads (a diet thread): the shared store's round trip may
  // be waited for here.
  bool may_wait = false;
};

class PolicyState {
 public:
  PolicyState() = default;  // no state: the profile alone decides
  // The process's stores (both or none), and the replicas' shared one (null: none).
  PolicyState(quota::RunwayStore* runways, quota::SessionStore* sessions, tok::Calibration* calibration,
              shared_state::SharedStore* shared = nullptr)
      : local_(runways && sessions ? std::make_shared<quota::LocalPolicyStore>(*runways, *sessions) : nullptr),
        calibration_(calibration),
        shared_(shared) {}

  bool enabled() const { return local_ != nullptr; }
  // The replicas share the state now: the diet waits for it off the I/O thread.
  bool sharing() const { return enabled() && shared_ && shared_->shared(); }

  // What the policy reads for the request `who` is (the function refers to
  // `who` and to this object: both must outlive its calls).
  diet::PolicyFactsFn facts_for(const PolicyIdentity& who) const;

  // After the diet decided, on the request's thread: the admitted request's
  // ask leaves its runway, the session's memory is kept, and the request gets
  // the policy's QuotaReport (survival, runway, quota group). While the
  // replicas share the state, the ask is not taken here: the account says
  // `shared`, and the quota filter takes it with take_shared().
  RunwayAccount admit(RequestContext& ctx, const pruning::Profile& profile, const diet::DietOutcome& diet) const;

  // The account's ask from the shared buckets; `done` (on the shared
  // store's thread) gets the wait they needed for it, nullopt: not taken.
  void take_shared(const RunwayAccount& account, double margin, quota::PolicyStore::TakeDone done) const;
  // The shared store took it after its pause ended: given back there.
  void give_back_shared(const RunwayAccount& account) const;
  // The shared store did not take it: the replica's own runway does.
  void take_alone(RunwayAccount& account) const;
  std::chrono::milliseconds shared_timeout() const {
    return shared_ ? shared_->timeout() : std::chrono::milliseconds{};
  }

  // The logging phase: the runway re-based on the answer's rate-limit
  // headers, then charged what the bill says instead of what was taken.
  void settle(const RequestContext& ctx, const RunwayAccount& account) const;

  // The recall loop answered these line ranges to the model of `session`
  // (the diet's session key; 0: none): remembered, so the session's later
  // requests keep those lines (docs/design.md §Recall, "Recalled lines stay").
  void recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) const;

 private:
  // The store the account's runway is in.
  quota::PolicyStore& store_of(const RunwayAccount& a) const {
    return a.shared ? static_cast<quota::PolicyStore&>(*shared_) : *local_;
  }

  std::shared_ptr<quota::LocalPolicyStore> local_;  // shared by the copies of this state
  tok::Calibration* calibration_ = nullptr;
  shared_state::SharedStore* shared_ = nullptr;
};

}  // namespace td::proxy
