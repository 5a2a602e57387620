#include "proxy/telemetry/body_budget.hpp"

#include <algorithm>

namespace td::proxy {

bool BodyBudget::take(std::uint64_t bytes, std::uint64_t limit, const std::shared_ptr<ResumeHandle>& waiter) {
  std::lock_guard lock(mutex_);
  // Nobody overtakes a waiter: a small big body queues behind a large one.
  if (queue_.empty() && (limit == 0 || bodies_ == 0 || in_flight_ + bytes <= limit)) {
    in_flight_ += bytes;
    ++bodies_;
    return true;
  }
  queue_.push_back({bytes, limit, waiter});
  return false;
}

void BodyBudget::give_back(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  in_flight_ -= std::min(bytes, in_flight_);
  if (bodies_ > 0) --bodies_;
  admit_locked();
}

// The waiters at the front that fit now, in order. One that stopped waiting
// meanwhile is admitted all the same: its withdraw() then finds it gone and
// its caller gives the bytes back. (A resume only posts to the waiter's
// thread: safe under the lock.)
void BodyBudget::admit_locked() {
  while (!queue_.empty()) {
    Waiter& w = queue_.front();
    if (w.limit != 0 && bodies_ > 0 && in_flight_ + w.bytes > w.limit) return;
    in_flight_ += w.bytes;
    ++bodies_;
    w.handle->resume();
    queue_.pop_front();
  }
}

bool BodyBudget::withdraw(const std::shared_ptr<ResumeHandle>& waiter) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Waiter& w) { return w.handle == waiter; });
  if (it != queue_.end()) {
    queue_.erase(it);
    admit_locked();  // the ones behind it may fit now
    return false;
  }
  return true;
}

std::uint64_t BodyBudget::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

std::size_t BodyBudget::waiting() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace td::proxy
