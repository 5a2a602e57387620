#include "proxy/net/pause_wait.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "proxy/net/stream_io.hpp"

namespace td::proxy {

namespace asio = boost::asio;

namespace {

// The link from a resume (any thread) to the waiting timer, which only the
// session's thread touches: the posted wake-up finds the timer, or null once
// the wait is over.
struct Waker {
  asio::steady_timer* timer = nullptr;
};

// Ends the wait on every way out, the coroutine's destruction included: the
// wake-up finds no timer, and a handle not resumed is told.
struct WaitScope {
  std::shared_ptr<Waker> waker;
  ResumeHandle* handle;
  SessionIo& io;
  PausedRequest request;
  ~WaitScope() {
    io.hold_timer = nullptr;
    if (waker) waker->timer = nullptr;
    if (handle) handle->cancel(request);
  }
};

}  // namespace

asio::awaitable<PauseOutcome> wait_for_resume(SessionIo& io, const std::shared_ptr<ResumeHandle>& handle,
                                              std::chrono::milliseconds at_most, PausedRequest request) {
  auto ex = io.client.get_executor();
  asio::steady_timer timer(ex, at_most);
  WaitScope scope{handle ? std::make_shared<Waker>(Waker{&timer}) : nullptr, handle.get(), io, request};
  bool wait = !io.client_gone;
  if (handle && wait) {
    wait = handle->arm([ex, waker = scope.waker] {
      asio::post(ex, [waker] {
        if (waker->timer) waker->timer->cancel();
      });
    });
  }
  if (wait) {
    io.hold_timer = &timer;
    co_await timer.async_wait(nothrow);
    io.hold_timer = nullptr;
  }
  PauseOutcome out;  // timed out (for a hold(): ran its course) unless...
  if (handle && !handle->cancel(request)) out.end = PauseOutcome::End::resumed;
  if (handle) out.answer = handle->take_answer(request);  // the resume's, or a time-out's
  if (io.client_gone) out.end = PauseOutcome::End::client_gone;
  co_return out;
}

}  // namespace td::proxy
