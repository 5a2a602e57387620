// The off-thread primitive (proxy/phases/off_thread.hpp): a job that
// outlives its request is cancelled, a time-out may answer, the body comes
// back whole, and the hand-over runs with the request on its thread.
#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proxy/phases/off_thread.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;

namespace {

// A queue that runs its jobs when the test says.
struct ManualQueue final : JobQueue {
  std::vector<std::function<void()>> jobs;
  void post(std::function<void()> job) override { jobs.push_back(std::move(job)); }
  void run_all() {
    auto now = std::move(jobs);
    for (auto& j : now) j();
  }
};

// Takes the body, upper-cases it off the thread, hands it back.
struct Upper {
  std::string body;
  bool ran = false;
  bool saw_stop = false;
};

OffThreadSteps<Upper> upper_steps(std::function<void(const std::function<bool()>&)> during = {}) {
  return OffThreadSteps<Upper>{
      .work =
          [during](Upper& job, const std::function<bool()>& stopped) {
            job.ran = true;
            if (during) during(stopped);
            job.saw_stop = stopped();
            for (char& c : job.body) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          },
      .finish = [](PausedRequest r, Upper& job) -> std::optional<LocalResponse> {
        *r.body = std::move(job.body);
        r.ctx->model = "finished";
        return std::nullopt;
      },
      .give_back = [](PausedRequest r, Upper& job) -> std::optional<LocalResponse> {
        if (r.body) *r.body = job.body;
        return std::nullopt;
      },
  };
}

}  // namespace

TEST_CASE("off thread: the work runs elsewhere and its result is handed over with the request") {
  ManualQueue queue;
  RequestContext ctx;
  std::string body = "abc";
  auto job = std::make_shared<Upper>(Upper{std::move(body)});
  body.clear();
  FilterResult r = run_off_thread(&queue, 5s, job, upper_steps());
  REQUIRE(r.pauses());
  CHECK(r.pause_for() == 5s);
  CHECK_FALSE(job->ran);  // not on this thread
  queue.run_all();
  CHECK(job->ran);
  CHECK(ctx.model.empty());                                       // nothing touched the request from the job's thread
  REQUIRE_FALSE(r.handle()->cancel(PausedRequest{&ctx, &body}));  // resumed
  CHECK_FALSE(r.handle()->take_answer(PausedRequest{&ctx, &body}));
  CHECK(body == "ABC");
  CHECK(ctx.model == "finished");
}

TEST_CASE("off thread: a job that outlives its request is never run, and the body comes back whole") {
  ManualQueue queue;
  RequestContext ctx;
  const std::string sent(1 << 20, 'x');
  std::string body = sent;
  auto job = std::make_shared<Upper>(Upper{std::move(body)});
  FilterResult r = run_off_thread(&queue, 5s, job, upper_steps());
  CHECK(r.handle()->cancel(PausedRequest{&ctx, &body}));  // the wait ended: time-out, client gone
  CHECK(body == sent);
  queue.run_all();  // the job's turn comes after all
  CHECK_FALSE(job->ran);
  CHECK(body == sent);
  CHECK(ctx.model.empty());
}

TEST_CASE("off thread: a running job sees the cancel, and its late result is dropped") {
  ManualQueue queue;
  RequestContext ctx;
  std::string body = "abc";
  auto job = std::make_shared<Upper>(Upper{body});
  FilterResult r = run_off_thread(&queue, 5s, job, upper_steps());
  // The request went away after the job was queued, before it started.
  auto handle = r.handle();
  queue.jobs.front() = [inner = std::move(queue.jobs.front()), handle, &ctx, &body] {
    handle->cancel(PausedRequest{&ctx, &body});
    inner();
  };
  queue.run_all();
  CHECK_FALSE(job->ran);  // never run
  CHECK(body == "abc");

  // Cancelled while running: `stopped()` turns true for the job.
  auto job2 = std::make_shared<Upper>(Upper{"def"});
  std::shared_ptr<ResumeHandle> h2;
  FilterResult r2 = run_off_thread(&queue, 5s, job2, upper_steps([&](const std::function<bool()>&) { h2->cancel(); }));
  h2 = r2.handle();
  queue.run_all();
  CHECK(job2->ran);
  CHECK(job2->saw_stop);
  CHECK_FALSE(r2.handle()->take_answer(PausedRequest{&ctx, &body}));  // nothing handed over
  CHECK(ctx.model.empty());
}

TEST_CASE("off thread: a time-out answers when the filter says so") {
  ManualQueue queue;
  RequestContext ctx;
  auto job = std::make_shared<int>(0);
  FilterResult r = run_off_thread(&queue, 10ms, job,
                                  OffThreadSteps<int>{
                                      .work = [](int& n, const std::function<bool()>&) { n = 1; },
                                      .finish = [](PausedRequest, int&) { return std::optional<LocalResponse>(); },
                                      .give_back =
                                          [](PausedRequest, int&) {
                                            return std::optional(LocalResponse{503, "text/plain", "too slow", {}});
                                          },
                                  });
  REQUIRE(r.handle()->cancel(PausedRequest{&ctx, nullptr}));  // what the session does when 10 ms passed
  auto answer = r.handle()->take_answer(PausedRequest{&ctx, nullptr});
  REQUIRE(answer);
  CHECK(answer->status == 503);
  queue.run_all();
  CHECK(*job == 0);
}

TEST_CASE("off thread: a job that throws is a fail-open, the body given back") {
  RequestContext ctx;
  std::string body = "as it came";
  auto job = std::make_shared<Upper>(Upper{body});
  body.clear();
  FilterResult r = run_off_thread(static_cast<JobQueue*>(nullptr), 5s, job,
                                  upper_steps([](const std::function<bool()>&) { throw std::runtime_error("boom"); }));
  REQUIRE_FALSE(r.handle()->cancel(PausedRequest{&ctx, &body}));  // resumed (with the failure)
  CHECK_FALSE(r.handle()->take_answer(PausedRequest{&ctx, &body}));
  CHECK(body == "as it came");
  CHECK(ctx.fail_open);
  CHECK(ctx.fail_open_reason.find("boom") != std::string::npos);
  CHECK(ctx.model.empty());  // the finish step did not run
}
