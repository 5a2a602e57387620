#include "proxy/telemetry/work_pool.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proxy/telemetry/log.hpp"
#include "proxy/telemetry/memory_release.hpp"

namespace td::proxy {

WorkPool::WorkPool(unsigned threads, std::function<void()> release, int nice, const char* name)
    : release_(release ? std::move(release) : std::function<void()>(release_free_memory)), nice_(nice), name_(name) {
  threads_.reserve(std::max(threads, 1u));
  for (unsigned i = 0; i < std::max(threads, 1u); ++i) threads_.emplace_back([this] { run(); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkPool::post(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void WorkPool::want_release() {
  std::lock_guard lock(mutex_);
  release_wanted_ = true;
}

std::size_t WorkPool::pending() const {
  std::lock_guard lock(mutex_);
  return jobs_.size() + working_;
}

std::size_t WorkPool::releases() const {
  std::lock_guard lock(mutex_);
  return releases_;
}

void WorkPool::run() {
  if (name_) pthread_setname_np(pthread_self(), name_);
  // Linux: a nice value is per thread; `nice_` is added to the one the
  // thread started with. Failing (a sandbox) only means the thread keeps it.
  if (nice_ > 0) {
    const auto self = static_cast<id_t>(gettid());
    setpriority(PRIO_PROCESS, self, std::min(19, getpriority(PRIO_PROCESS, self) + nice_));
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_) return;
    if (!jobs_.empty()) {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      ++busy_;
      ++working_;
      lock.unlock();
      try {
        job();
      } catch (const std::exception& e) {
        log_error("work_pool", std::string("job failed: ") + e.what());
      } catch (...) {
        log_error("work_pool", "job failed");
      }
      // Done: no longer pending, before its captures go. Freeing them may
      // admit the next big body (its claim, BigBodyClaim), whose job must
      // not find this one still counted.
      lock.lock();
      --working_;
      lock.unlock();
      job = nullptr;  // what it held is freed before the pool can call itself idle
      lock.lock();
      --busy_;
      continue;
    }
    // Idle: after kReleaseAfterIdle with nothing to do, one thread releases.
    const bool timed_out = !wake_.wait_for(lock, kReleaseAfterIdle, [this] { return stopping_ || !jobs_.empty(); });
    if (timed_out && release_wanted_ && busy_ == 0) {
      release_wanted_ = false;
      ++releases_;
      lock.unlock();
      release_();
      lock.lock();
    }
  }
}

unsigned diet_thread_count(unsigned configured) {
  if (configured > 0) return configured;
  return std::max(1u, std::thread::hardware_concurrency() / 2);
}

}  // namespace td::proxy
