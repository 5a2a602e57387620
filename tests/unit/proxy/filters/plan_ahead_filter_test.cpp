// The plan ahead through the proxy's filters (proxy/filters/plan_ahead_filter.hpp):
// a request whose diet reports the next plan missing posts it to the diet
// threads with the client's bytes; computed there, the session's later
// requests find their plans, and each sends what it would have sent without.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/filters/plan_ahead_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;

namespace {

// The diet threads, run when the test says (a job posted runs before the
// session's next request, as a diet thread does while the model answers).
struct HeldJobs final : JobQueue {
  std::vector<std::function<void()>> jobs;
  void post(std::function<void()> job) override { jobs.push_back(std::move(job)); }
  std::size_t run_all() {
    const std::size_t n = jobs.size();
    for (auto& j : jobs) j();
    jobs.clear();
    return n;
  }
};

struct Session {
  std::vector<std::string> sent;
  std::size_t posted = 0;
  std::uint64_t plan_hits = 0;
};

// Every request of a recorded session, in order, through the diet (and the
// plan ahead when `queue` is given).
Session run(JobQueue* queue, bool with_filter) {
  const td::config::Config cfg = td::test::eager_config();
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches});
  PlanAheadFilter ahead(&caches, queue);
  const rapidjson::Document t = td::test::trajectory("mini-swe-agent-12.json");
  Session s;
  for (std::size_t n = 2; n <= t["messages"].Size(); ++n) {
    if (std::string_view(t["messages"][n - 1]["role"].GetString()) != "assistant") continue;
    RequestContext ctx;
    ctx.method = "POST";
    ctx.target = "/v1/chat/completions";
    std::string body = td::test::prefix_body(t, n - 1, "gpt-4o");
    SimpleHeaderMap headers;
    REQUIRE(diet.request_body_filter(ctx, headers, body).proceeds());
    if (with_filter) {
      REQUIRE(ahead.request_body_filter(ctx, headers, body).proceeds());
      // The bytes went with the job (or were dropped without a queue).
      if (const DietResult* r = ctx.objects.find<DietResult>()) CHECK(r->ahead_body.empty());
    }
    CHECK_FALSE(ctx.fail_open);
    s.sent.push_back(body);
    if (auto* held = dynamic_cast<HeldJobs*>(queue)) s.posted += held->run_all();
  }
  s.plan_hits = caches.pipeline.plans.hits();
  return s;
}

}  // namespace

TEST_CASE("plan ahead filter: later requests find the plans computed on the diet threads, and send the same") {
  HeldJobs threads;
  const Session reference = run(nullptr, false);
  const Session ahead = run(&threads, true);
  CHECK(ahead.sent == reference.sent);
  CHECK(ahead.posted >= 5);
  // Each plan computed ahead is looked up by the request whose grid moved,
  // which planned anew without it.
  CHECK(ahead.plan_hits >= reference.plan_hits + ahead.posted);
  // No diet threads: nothing planned ahead, nothing else changes.
  const Session without_threads = run(nullptr, true);
  CHECK(without_threads.sent == reference.sent);
  CHECK(without_threads.plan_hits == reference.plan_hits);
}
