// The policy's state shared by every replica through Redis (docs/design.md
// §Shared state), beside the replica's own stores (quota/), which it falls
// back to at once when Redis is down or slow:
//
//   facts      the runway's buckets and the session's memory, before the
//              diet decides: one round trip (a script), waited on a diet
//              thread, never an I/O thread
//   take       the admitted request's ask, atomically, with the wait the
//              shared buckets need for it (asynchronous: the request pauses)
//   settle, remember, overflowed, billed, recalled   written after, not waited for
//   recap      the model-written recaps, first text wins (shared_recap.hpp)
//
// Fallback: a round trip that fails or takes over quota_store_timeout_ms
// drops the connection; until Redis answers again every request is decided
// with the replica's own stores (counted: fallbacks()), logged once when it
// goes and once when it is back. What the replica spent alone is charged to
// the shared buckets once on return (its local buckets' deficit, refills
// counted), then its local runway is forgotten, so nothing is counted twice.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "pruning/decision.hpp"
#include "quota/policy_store.hpp"
#include "quota/runway_store.hpp"
#include "shared_state/redis_client.hpp"

namespace td::shared_state {

using quota::RunwayRef;

class SharedStore final : public quota::PolicyStore {
 public:
  // Log lines: (error?, what). `local_runways`: the replica's own, which
  // requests use while Redis is down.
  using Log = std::function<void(bool error, const std::string& message)>;
  SharedStore(const config::QuotaStore& endpoint, quota::RunwayStore& local_runways, Log log);
  ~SharedStore() override;

  void start();
  void stop();

  // Redis answers now (tokendiet_shared_state_shared).
  bool shared() const { return up_.load(std::memory_order_acquire); }
  // Round trips that fell back to the replica's own stores
  // (tokendiet_shared_state_fallbacks_total).
  std::uint64_t fallbacks() const { return fallbacks_.load(std::memory_order_relaxed); }
  std::chrono::milliseconds timeout() const { return timeout_; }
  std::string describe() const { return client_.describe(); }

  // Blocks for one round trip, at most the time-out: off the I/O threads
  // only. nullopt: decide with the replica's own stores (counted).
  std::optional<quota::StoredFacts> facts(const RunwayRef& runway, std::uint64_t session) override;
  // The ask taken from the shared buckets; `done` (on the client's thread)
  // gets the wait they needed for it, or nullopt when Redis did not answer
  // (counted; take it locally then).
  void take(const RunwayRef& runway, const pruning::RunwayAsk& ask, double margin, TakeDone done) override;
  // Not waited for: a failure leaves the shared bucket as it was (the
  // provider's next headers re-base it).
  void settle(const RunwayRef& runway, const pruning::RunwayAsk& taken, const pruning::RunwayAsk& billed,
              const quota::ProviderFigures& figures) override;
  void remember(std::uint64_t session, const pruning::SessionMemory& memory) override;
  void overflowed(std::uint64_t session, std::uint64_t fit_tokens) override;
  void billed(std::uint64_t session, double cached_prefix) override;
  void recalled(std::uint64_t session, const std::vector<pruning::RecalledLines::Range>& ranges) override;
  // The runways Redis holds, the `max` most recently written, each refilled
  // to the server's now (the dashboard's list; shared: true). Blocks for one
  // round trip, at most the time-out: off the I/O threads only. nullopt:
  // Redis did not answer.
  std::optional<std::vector<quota::RunwayStatus>> list_runways(std::size_t max);
  // A request of `runway` was decided and taken with the replica's own
  // stores while Redis was down: reconciled when it is back.
  void decided_alone(const RunwayRef& runway);
  void count_fallback() { fallbacks_.fetch_add(1, std::memory_order_relaxed); }

  // The recaps (blocking, diet threads): the text kept under `key`, if any;
  // and `text` offered for it: the text that stands (the first offered).
  // nullopt: Redis did not answer.
  std::optional<std::optional<std::string>> recap_get(const std::string& key);
  std::optional<std::string> recap_put(const std::string& key, const std::string& text);

  static std::string runway_key(const std::string& key) { return "td:rw:" + key; }
  static std::string session_key(std::uint64_t session);
  static constexpr long long kRecapExpiryMs = 24ll * 3600 * 1000;

 private:
  void on_ready();
  void on_down(const std::string& why);
  // A blocking round trip: the reply, or nullopt after the time-out.
  std::optional<RedisReply> wait(std::function<void(ReplyFn)> send);

  std::chrono::milliseconds timeout_;
  quota::RunwayStore& local_;
  Log log_;
  std::atomic<bool> up_{false};
  std::atomic<std::uint64_t> fallbacks_{0};
  bool ever_up_ = false, announced_down_ = false;  // the client's thread
  std::mutex alone_mu_;
  std::map<std::string, RunwayRef> alone_;  // runways decided alone since Redis went
  RedisClient client_;
};

}  // namespace td::shared_state
