// The bytes of big request bodies in flight, process-wide: a body of at least
// limits.diet_offload_bytes takes its Content-Length from this budget before
// it is read, and gives it back when its request ends. When the budget
// (limits.big_bodies_in_flight_bytes) is spent, the body waits unread (the
// client's bytes stay in its socket) until enough comes back, in arrival
// order; so the memory big bodies take, as read, pruned and counted, is
// bounded by configuration (docs/design.md §Big bodies).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "proxy/phases/resume_handle.hpp"

namespace td::proxy {

class BodyBudget {
 public:
  // Takes `bytes` under `limit` (0: no limit). True when taken now: they fit,
  // or no big body is in flight (a body over the whole budget still goes,
  // alone). Else `waiter` is queued and resumed once the bytes have been
  // taken for it; a waiter that stops waiting calls withdraw().
  bool take(std::uint64_t bytes, std::uint64_t limit, const std::shared_ptr<ResumeHandle>& waiter);
  // Gives back what take() (or a resume) took; admits the waiters that now fit.
  void give_back(std::uint64_t bytes);
  // A waiter that stopped waiting without being resumed (its wait timed out,
  // the client left): false when it was still queued (nothing was taken for
  // it); true when its bytes had been taken meanwhile: the caller holds them
  // and gives them back.
  bool withdraw(const std::shared_ptr<ResumeHandle>& waiter);

  std::uint64_t in_flight() const;
  std::size_t waiting() const;

 private:
  struct Waiter {
    std::uint64_t bytes, limit;
    std::shared_ptr<ResumeHandle> handle;
  };
  void admit_locked();

  mutable std::mutex mutex_;
  std::uint64_t in_flight_ = 0;
  std::size_t bodies_ = 0;  // big bodies holding bytes
  std::deque<Waiter> queue_;
};

// A claim on the budget, given back when it goes (the request ended).
class BodyClaim {
 public:
  BodyClaim() = default;
  BodyClaim(BodyBudget& budget, std::uint64_t bytes) : budget_(&budget), bytes_(bytes) {}
  BodyClaim(BodyClaim&& o) noexcept : budget_(o.budget_), bytes_(o.bytes_) { o.budget_ = nullptr; }
  BodyClaim& operator=(BodyClaim&& o) noexcept {
    if (this != &o) {
      reset();
      budget_ = o.budget_;
      bytes_ = o.bytes_;
      o.budget_ = nullptr;
    }
    return *this;
  }
  ~BodyClaim() { reset(); }
  void reset() {
    if (budget_) budget_->give_back(bytes_);
    budget_ = nullptr;
  }

 private:
  BodyBudget* budget_ = nullptr;
  std::uint64_t bytes_ = 0;
};

// The request's big body's claim, in the request's filter objects: a job
// that still holds the body's bytes after the request ended (an offloaded
// diet whose wait ran out, or whose client left) keeps a share, so the bytes
// go back to the budget only when the last holder lets go (docs/design.md
// §Big bodies).
struct BigBodyClaim {
  std::shared_ptr<BodyClaim> claim;
};

}  // namespace td::proxy
