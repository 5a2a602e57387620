#include "proxy/phases/resume_handle.hpp"

#include <utility>

namespace td::proxy {

void ResumeHandle::resume() { finish_resume(std::nullopt, nullptr); }

void ResumeHandle::resume(LocalResponse answer) { finish_resume(std::move(answer), nullptr); }

void ResumeHandle::resume_then(OnRequestThread then) { finish_resume(std::nullopt, std::move(then)); }

void ResumeHandle::finish_resume(std::optional<LocalResponse> answer, OnRequestThread then) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::waiting) return;
    state_ = State::resumed;
    answer_ = std::move(answer);
    then_ = std::move(then);
    wake = std::move(wake_);
    on_cancel_ = nullptr;
  }
  if (wake) wake();  // outside the lock: it may post to another thread
}

void ResumeHandle::on_cancel(OnRequestThread fn) {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::cancelled) {
      if (state_ == State::waiting) on_cancel_ = std::move(fn);
      return;
    }
  }
  if (fn) fn(PausedRequest{});
}

bool ResumeHandle::cancelled() const {
  std::lock_guard lock(mutex_);
  return state_ == State::cancelled;
}

bool ResumeHandle::arm(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  if (state_ != State::waiting) return false;
  wake_ = std::move(wake);
  return true;
}

bool ResumeHandle::cancel(PausedRequest request) {
  OnRequestThread fn;
  {
    std::lock_guard lock(mutex_);
    if (state_ == State::resumed) return false;
    if (state_ == State::cancelled) return true;
    state_ = State::cancelled;
    fn = std::move(on_cancel_);
    wake_ = nullptr;
  }
  if (fn) {
    std::optional<LocalResponse> answer = fn(request);
    std::lock_guard lock(mutex_);
    answer_ = std::move(answer);
  }
  return true;
}

std::optional<LocalResponse> ResumeHandle::take_answer(PausedRequest request) {
  OnRequestThread then;
  {
    std::lock_guard lock(mutex_);
    if (!then_) return std::exchange(answer_, std::nullopt);
    then = std::move(then_);
  }
  return then(request);
}

}  // namespace td::proxy
