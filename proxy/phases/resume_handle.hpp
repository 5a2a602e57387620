// A paused request's handle (FilterResult::pause in filter.hpp), shared by
// the filter that paused it and the session holding it (docs/design.md
// §Answering and pausing): the filter returns at once, does its waiting
// elsewhere (a timer, a look-up on another thread), and resumes the request
// later from any thread; the I/O thread serves other requests meanwhile. No
// Beast/Asio here: the session gives the handle a `wake` function that posts
// back to its own thread.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "proxy/phases/local_response.hpp"

namespace td::proxy {

struct RequestContext;

// The paused request as the session holds it, handed to the functions below
// on the session's thread: its context, and in phase 2 its body (null in
// phase 1). Both null where no request waits (the big-body budget's waits,
// tests).
struct PausedRequest {
  RequestContext* ctx = nullptr;
  std::string* body = nullptr;
};
// What runs on the session's thread at a resume or a cancel; may answer.
using OnRequestThread = std::function<std::optional<LocalResponse>(PausedRequest)>;

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
  // The request goes on once `then` ran on the session's thread with the
  // request (work done on another thread hands its result over this way);
  // `then` may return an answer instead. It runs only if the session takes
  // the resume: never after a cancel.
  void resume_then(OnRequestThread then);
  // `fn` runs once if the request stops waiting without being resumed: the
  // pause timed out, the client went away, or the proxy stopped. It runs on
  // the session's thread with the request, or at once on the caller's, with
  // no request, if that already happened. Its answer, after a time-out, is
  // the request's (else the request goes on, fail-open). Keep it short.
  void on_cancel(OnRequestThread fn);
  bool cancelled() const;

  // --- the network code's side --------------------------------------------
  // Starts the wait: `wake` is called once, on the resuming thread, when the
  // filter resumes. False when it resumed already (nothing to wait for).
  bool arm(std::function<void()> wake);
  // Ends the wait without a resume (calls the on_cancel function with
  // `request`). False when the filter resumed first: then take_answer().
  bool cancel(PausedRequest request = {});
  // The resume's answer, if any; after resume_then(), runs `then` with
  // `request` (on the calling thread, which must be the session's) and
  // returns its answer. After a cancel: the on_cancel function's answer.
  std::optional<LocalResponse> take_answer(PausedRequest request = {});

 private:
  void finish_resume(std::optional<LocalResponse> answer, OnRequestThread then);

  enum class State : unsigned char { waiting, resumed, cancelled };
  mutable std::mutex mutex_;
  State state_ = State::waiting;
  std::optional<LocalResponse> answer_;
  OnRequestThread then_;
  std::function<void()> wake_;
  OnRequestThread on_cancel_;
};

}  // namespace td::proxy
