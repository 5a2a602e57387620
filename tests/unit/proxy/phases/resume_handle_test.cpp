#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "proxy/phases/filter.hpp"
#include "proxy/phases/resume_handle.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;

TEST_CASE("FilterResult: proceed by default, respond, pause, hold") {
  FilterResult go;
  CHECK(go.proceeds());
  CHECK_FALSE(go.answers());
  CHECK_FALSE(go.pauses());

  FilterResult answer = FilterResult::respond(LocalResponse{429, "application/json", "{}", {}});
  CHECK(answer.answers());
  CHECK(answer.answer().status == 429);

  auto handle = std::make_shared<ResumeHandle>();
  FilterResult paused = FilterResult::pause(handle, 250ms);
  CHECK(paused.pauses());
  CHECK_FALSE(paused.proceeds());
  CHECK_FALSE(paused.answers());
  CHECK(paused.handle() == handle);
  CHECK(paused.pause_for() == 250ms);

  FilterResult held = FilterResult::hold(40ms);
  CHECK(held.pauses());
  CHECK(held.handle() == nullptr);
  CHECK(held.pause_for() == 40ms);
}

TEST_CASE("ResumeHandle: a resume from another thread wakes the waiter once, with the answer") {
  ResumeHandle h;
  std::atomic<int> wakes{0};
  REQUIRE(h.arm([&] { ++wakes; }));
  std::thread t([&] {
    h.resume(LocalResponse{503, "text/plain", "busy", {}});
    h.resume();  // only the first counts
  });
  t.join();
  CHECK(wakes == 1);
  CHECK_FALSE(h.cancel());  // resumed first: nothing to cancel
  auto answer = h.take_answer();
  REQUIRE(answer);
  CHECK(answer->status == 503);
  CHECK(answer->body == "busy");
  CHECK_FALSE(h.cancelled());
}

TEST_CASE("ResumeHandle: resumed before the wait starts, there is nothing to wait for") {
  ResumeHandle h;
  h.resume();
  bool woken = false;
  CHECK_FALSE(h.arm([&] { woken = true; }));
  CHECK_FALSE(woken);
  CHECK_FALSE(h.take_answer());
}

TEST_CASE("ResumeHandle: a cancel tells the filter once, and a later resume is ignored") {
  ResumeHandle h;
  int told = 0, woken = 0;
  h.on_cancel([&](PausedRequest) {
    ++told;
    return std::optional<LocalResponse>();
  });
  REQUIRE(h.arm([&] { ++woken; }));
  CHECK(h.cancel());
  CHECK(h.cancel());  // already cancelled: still true, not told twice
  CHECK(told == 1);
  CHECK(h.cancelled());
  h.resume(LocalResponse{});
  CHECK(woken == 0);
  CHECK_FALSE(h.take_answer());
  // Registering after the cancel runs the function at once.
  int late = 0;
  h.on_cancel([&](PausedRequest) {
    ++late;
    return std::optional<LocalResponse>();
  });
  CHECK(late == 1);
}

TEST_CASE("ResumeHandle: a resumed request is never reported cancelled") {
  ResumeHandle h;
  int told = 0;
  h.on_cancel([&](PausedRequest) {
    ++told;
    return std::optional<LocalResponse>();
  });
  h.resume();
  CHECK_FALSE(h.cancel());
  CHECK(told == 0);
  h.on_cancel([&](PausedRequest) {
    ++told;
    return std::optional<LocalResponse>();
  });
  CHECK(told == 0);
}

TEST_CASE("ResumeHandle: resume_then hands over on the waiter's thread, at take_answer, never after a cancel") {
  ResumeHandle h;
  std::atomic<int> wakes{0};
  REQUIRE(h.arm([&] { ++wakes; }));
  std::thread::id ran_on;
  std::thread t([&] {
    h.resume_then([&](PausedRequest) {
      ran_on = std::this_thread::get_id();
      return std::optional<LocalResponse>(LocalResponse{429, "application/json", "{}", {}});
    });
  });
  t.join();
  CHECK(wakes == 1);
  CHECK(ran_on == std::thread::id());  // not yet: only the waiter runs it
  CHECK_FALSE(h.cancel());
  auto answer = h.take_answer();
  CHECK(ran_on == std::this_thread::get_id());
  REQUIRE(answer);
  CHECK(answer->status == 429);

  ResumeHandle late;
  CHECK(late.cancel());
  bool ran = false;
  late.resume_then([&](PausedRequest) {
    ran = true;
    return std::optional<LocalResponse>();
  });
  CHECK_FALSE(late.take_answer());
  CHECK_FALSE(ran);
}

TEST_CASE("ResumeHandle: the request reaches the hand-over and the cancel; a time-out may answer") {
  RequestContext ctx;
  std::string body = "as it came";
  ResumeHandle h;
  h.on_cancel([](PausedRequest r) {
    *r.body = "given back";
    return std::optional<LocalResponse>(LocalResponse{503, "text/plain", "late", {}});
  });
  CHECK(h.cancel(PausedRequest{&ctx, &body}));
  CHECK(body == "given back");
  auto answer = h.take_answer(PausedRequest{&ctx, &body});
  REQUIRE(answer);
  CHECK(answer->status == 503);

  ResumeHandle resumed;
  resumed.resume_then([](PausedRequest r) {
    r.ctx->model = "handed over";
    return std::optional<LocalResponse>();
  });
  CHECK_FALSE(resumed.cancel(PausedRequest{&ctx, &body}));
  CHECK_FALSE(resumed.take_answer(PausedRequest{&ctx, &body}));
  CHECK(ctx.model == "handed over");
}
