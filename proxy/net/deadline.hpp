// Timeouts of a client session's I/O. They are deadlines checked by one
// sweep per worker every kSweepPeriod (sweep_timeouts(), server.cpp) rather
// than a timer per operation: re-arming timers costs syscalls on every read
// and write, a stored time point costs nothing. A Deadline guard arms one
// around the operations of its scope and clears it when the scope ends, so
// no path can leave a deadline armed behind it.
#pragma once

#include <chrono>

namespace td::proxy {

// The deadline of the pending operations in one direction (client or upstream).
struct IoDeadline {
  using clock = std::chrono::steady_clock;
  static constexpr clock::time_point kNever = clock::time_point::max();

  clock::time_point at = kNever;
  bool timed_out = false;  // the sweep cancelled the operation (read it after the scope)
};

class [[nodiscard]] Deadline {
 public:
  Deadline(IoDeadline& slot, std::chrono::milliseconds timeout) : slot_(slot) {
    slot_.at = IoDeadline::clock::now() + timeout;
    slot_.timed_out = false;
  }
  ~Deadline() { slot_.at = IoDeadline::kNever; }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  IoDeadline& slot_;
};

}  // namespace td::proxy
