// A paused request's handle (FilterResult::pause in filter.hpp), shared by
// the filter that paused it and the session holding it. Envoy's
// StopIteration / continueDecoding() is the model: the filter returns at
// once, does its waiting elsewhere (a timer, a look-up on another thread),
// and resumes the request later from any thread; the I/O thread serves other
// requests meanwhile. No Beast/Asio here: the session gives the handle a
// `wake` function that posts back to its own thread.
#pragma once

#include <functional>
#include <mutex>
#include <optional>

#include "proxy/phases/local_response.hpp"

namespace td::proxy {

class ResumeHandle {
 public:
  ResumeHandle() = default;
  ResumeHandle(const ResumeHandle&) = delete;
  ResumeHandle& operator=(const ResumeHandle&) = delete;

  // --- the filter's side, from any thread ---------------------------------
  // The request goes on with the next filter; or is answered with `answer`
  // instead. Only the first call counts, and none after a cancel.
  void resume();
  void resume(LocalResponse answer);
  // The request goes on once `then` ran on the session's thread, where the
  // context and the body may be touched (work done on another thread hands
  // its result over this way); `then` may return an answer instead. It runs
  // only if the session takes the resume: never after a cancel.
  void resume_then(std::function<std::optional<LocalResponse>()> then);
  // `fn` runs once if the request stops waiting without being resumed: the
  // pause timed out (the request then goes on, fail-open), the client went
  // away, or the proxy stopped. It runs on the session's thread, or at once
  // on the caller's if that already happened. Keep it short.
  void on_cancel(std::function<void()> fn);
  bool cancelled() const;

  // --- the network code's side --------------------------------------------
  // Starts the wait: `wake` is called once, on the resuming thread, when the
  // filter resumes. False when it resumed already (nothing to wait for).
  bool arm(std::function<void()> wake);
  // Ends the wait without a resume (calls the on_cancel function). False
  // when the filter resumed first: then take_answer().
  bool cancel();
  // The resume's answer, if any; after resume_then(), runs `then` (on the
  // calling thread, which must be the session's) and returns its answer.
  std::optional<LocalResponse> take_answer();

 private:
  void finish_resume(std::optional<LocalResponse> answer, std::function<std::optional<LocalResponse>()> then);

  enum class State : unsigned char { waiting, resumed, cancelled };
  mutable std::mutex mutex_;
  State state_ = State::waiting;
  std::optional<LocalResponse> answer_;
  std::function<std::optional<LocalResponse>()> then_;
  std::function<void()> wake_;
  std::function<void()> on_cancel_;
};

}  // namespace td::proxy
