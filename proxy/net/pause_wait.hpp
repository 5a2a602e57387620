// Waiting for a paused request (FilterResult::pause, proxy/phases/filter.hpp)
// without blocking the I/O thread: a timer on the session's own executor,
// cut short by the filter's resume (posted back from whatever thread it came
// on) or by the client leaving (the watcher cancels SessionIo::hold_timer).
#pragma once

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>

#include "proxy/net/client_session.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

struct PauseOutcome {
  enum class End { resumed, timed_out, client_gone };
  End end = End::timed_out;
  std::optional<LocalResponse> answer;  // the filter resumed with an answer
};

// Waits until `handle` is resumed (null: nobody resumes, see
// FilterResult::hold()), `at_most` passes, or the client leaves (the caller
// watches it). A handle not resumed by then is cancelled, as it is when the
// wait itself is abandoned (the proxy stopping). `request` is what the
// filter's functions get on this thread (ResumeHandle, PausedRequest).
boost::asio::awaitable<PauseOutcome> wait_for_resume(SessionIo& io, const std::shared_ptr<ResumeHandle>& handle,
                                                     std::chrono::milliseconds at_most, PausedRequest request = {});

}  // namespace td::proxy
