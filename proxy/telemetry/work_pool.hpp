// A few threads for work too heavy for an I/O thread: the diet of a big
// request body (proxy/filters/diet_filter.cpp). Jobs run in the order they
// were posted. The request that posted one is paused meanwhile
// (FilterResult::pause), so a job that is no longer wanted checks its
// ResumeHandle and returns at once.
//
// Big bodies leave big holes in the heap: once the pool has been idle for
// kReleaseAfterIdle after a job that asked for it (want_release()), it hands
// free heap memory back to the system (memory_release.hpp), on its own thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "proxy/phases/off_thread.hpp"

namespace td::proxy {

class WorkPool final : public JobQueue {
 public:
  static constexpr std::chrono::milliseconds kReleaseAfterIdle{1000};

  // `threads` >= 1; `release` is what want_release() leads to (tests pass
  // their own; the default is release_free_memory()). `nice` > 0 lowers the
  // threads' scheduling priority (setpriority on each thread): the diet
  // threads yield the CPU to the I/O threads on a busy box. `name` (at most
  // 15 bytes) names the threads for top -H, /proc and the benchmarks that
  // read a pool's CPU time apart (docs/benchmarks.md §The dashboard's stats API).
  explicit WorkPool(unsigned threads, std::function<void()> release = {}, int nice = 0, const char* name = nullptr);
  ~WorkPool() override;  // jobs not started are dropped; running ones are waited for
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  void post(std::function<void()> job) override;
  // Free memory goes back to the system once the pool is next idle.
  void want_release();

  std::size_t pending() const;   // jobs waiting or running (not those done, whose captures are being freed)
  std::size_t releases() const;  // times the release ran

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::function<void()> release_;
  int nice_ = 0;
  const char* name_ = nullptr;
  bool release_wanted_ = false;
  bool stopping_ = false;
  unsigned busy_ = 0;     // threads in a job, its captures' freeing included
  unsigned working_ = 0;  // threads in a job's work
  std::size_t releases_ = 0;
  std::vector<std::thread> threads_;
};

// The number of diet threads for a `diet_threads` setting: 0 means one per
// two cores, at least one.
unsigned diet_thread_count(unsigned configured);

// The diet threads' nice value: a thread at nice 10 weighs about a tenth of
// one at 0, so an I/O thread that wakes runs before a diet that is counting
// (docs/design.md §Big bodies).
inline constexpr int kDietThreadNice = 10;

}  // namespace td::proxy
