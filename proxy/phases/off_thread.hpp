// "Run this job off the I/O thread, then resume or answer": the one way a
// filter hands work to another thread (docs/design.md §Off the I/O thread).
// The request is paused (FilterResult::pause) while the job runs; the job
// owns its inputs (the body included) and never touches the request, so it
// may outlive it; only the steps that run on the request's thread see the
// request, which the session hands them (PausedRequest). The primitive owns:
//
//   cancellation  a job not started when the wait ends is never run; a
//                 running one sees `stopped()` turn true and may return early
//   timeouts      the wait lasts at most `at_most`; then `give_back` runs
//                 (and may answer); without an answer the request goes on
//   copying back  `finish` (the job done) or `give_back` (the wait ended
//                 first: a time-out, the client gone, the proxy stopping) on
//                 the request's thread, where the body can be restored whole
//
// A job that throws is a fail-open: `give_back` runs and the request goes on
// with ctx.fail_open set.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "proxy/phases/filter.hpp"

namespace td::proxy {

// Where jobs run: the diet threads, the archive's thread
// (proxy/telemetry/work_pool.hpp).
class JobQueue {
 public:
  virtual ~JobQueue() = default;
  virtual void post(std::function<void()> job) = 0;
};

template <class Job>
struct OffThreadSteps {
  // Off the I/O thread. `stopped()` is true once nobody waits any more.
  std::function<void(Job& job, const std::function<bool()>& stopped)> work;
  // On the request's thread, once the work is done: the result into the
  // request; may answer instead.
  std::function<std::optional<LocalResponse>(PausedRequest request, Job& job)> finish;
  // On the request's thread when the wait ended without the work, or the
  // work threw: put back what the job took (the body). May answer; for a
  // client gone or a proxy stopping the answer is not sent. Also runs, with
  // no request (null ctx and body), when the wait ended before this was set.
  std::function<std::optional<LocalResponse>(PausedRequest request, Job& job)> give_back;
};

// Pauses the request while `steps.work(*job)` runs on `queue` (null: at once,
// on this thread, for tests), for at most `at_most`.
template <class Job>
FilterResult run_off_thread(JobQueue* queue, std::chrono::milliseconds at_most, std::shared_ptr<Job> job,
                            OffThreadSteps<Job> steps) {
  auto handle = std::make_shared<ResumeHandle>();
  handle->on_cancel([job, give_back = steps.give_back](PausedRequest request) -> std::optional<LocalResponse> {
    if (!give_back) return std::nullopt;
    return give_back(request, *job);
  });
  auto run = [handle, job, work = std::move(steps.work), finish = std::move(steps.finish),
              give_back = std::move(steps.give_back)] {
    if (handle->cancelled()) return;  // nobody waits for it any more
    std::string failure;
    try {
      work(*job, [&handle] { return handle->cancelled(); });
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception";
    }
    if (failure.empty()) {
      handle->resume_then([job, finish](PausedRequest request) -> std::optional<LocalResponse> {
        if (!finish) return std::nullopt;
        return finish(request, *job);
      });
      return;
    }
    handle->resume_then([job, give_back, failure](PausedRequest request) -> std::optional<LocalResponse> {
      if (request.ctx) request.ctx->mark_fail_open("off-thread job: " + failure);
      if (!give_back) return std::nullopt;
      return give_back(request, *job);
    });
  };
  if (queue)
    queue->post(std::move(run));
  else
    run();
  return FilterResult::pause(std::move(handle), at_most);
}

}  // namespace td::proxy
