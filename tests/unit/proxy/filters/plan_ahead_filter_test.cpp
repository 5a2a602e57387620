// The plan ahead through the proxy's filters (proxy/filters/plan_ahead_filter.hpp):
// a request whose diet reports the next plan missing posts it to the plans'
// thread with the client's bytes; computed there, the session's later
// requests find their plans, and each sends what it would have sent without.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/filters/plan_ahead_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/telemetry/body_budget.hpp"
#include "pruning/strategy_order.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;

namespace {

// The plans' thread drained before the session's next request, as it is
// while the model answers.
void drain(WorkPool& pool) {
  while (pool.pending() > 0) std::this_thread::yield();
}

struct Session {
  std::vector<std::string> sent;
  std::size_t posted = 0;
  std::uint64_t plan_hits = 0;
  std::uint64_t computed = 0;  // plans the thread computed
};

// Every request of a recorded session, in order, through the diet (and the
// plan ahead filter, with `thread` where it computes the plans).
Session run(WorkPool* thread, bool with_filter) {
  const td::config::Config cfg = td::test::eager_config();
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches});
  PlanAheadCounts counts;
  PlanAheadFilter ahead(&caches, thread, &counts);
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
      const DietResult* diet_result = ctx.objects.find<DietResult>();
      s.posted += diet_result && diet_result->outcome.result.ahead.due();
      REQUIRE(ahead.request_body_filter(ctx, headers, body).proceeds());
      // The bytes went with the job (or were dropped without a queue).
      if (const DietResult* r = ctx.objects.find<DietResult>()) CHECK(r->ahead_body.empty());
    }
    CHECK_FALSE(ctx.fail_open);
    s.sent.push_back(body);
    if (thread) drain(*thread);
  }
  s.plan_hits = caches.pipeline.plans.hits();
  s.computed = counts.computed;
  return s;
}

// `jobs` jobs on `thread`, held until `go`.
void hold(WorkPool& thread, std::atomic<bool>& go, std::size_t jobs) {
  for (std::size_t k = 0; k < jobs; ++k)
    thread.post([&go] {
      while (!go.load()) std::this_thread::yield();
    });
}

// A diet result whose next plan is due, with the client's bytes for it.
DietResult& publish_due_plan(RequestContext& ctx) {
  td::diet::DietOutcome outcome;
  outcome.result.ahead = {5, std::make_shared<const td::pruning::LossyOptions>(td::pruning::Profile{})};
  DietResult& result = ctx.objects.publish<DietResult>(td::providers::ChatRoute{}, std::move(outcome));
  result.ahead_body = "{\"model\":\"gpt-4o\",\"messages\":[]}";
  return result;
}

}  // namespace

TEST_CASE("plan ahead filter: later requests find the plans computed on the diet threads, and send the same") {
  WorkPool thread(1);
  const Session reference = run(nullptr, false);
  const Session ahead = run(&thread, true);
  CHECK(ahead.sent == reference.sent);
  CHECK(ahead.posted >= 5);
  CHECK(ahead.computed == ahead.posted);
  // Each plan computed ahead is looked up by the request whose grid moved,
  // which planned anew without it.
  CHECK(ahead.plan_hits >= reference.plan_hits + ahead.posted);
  // No thread for them: nothing planned ahead, nothing else changes.
  const Session without_thread = run(nullptr, true);
  CHECK(without_thread.sent == reference.sent);
  CHECK(without_thread.plan_hits == reference.plan_hits);
}

TEST_CASE("plan ahead filter: with its thread's queue full the plan is left to the request, the bytes let go") {
  td::diet::DietCaches caches;
  WorkPool thread(1);
  PlanAheadCounts counts;
  PlanAheadFilter filter(&caches, &thread, &counts);
  // Two jobs already there, held until the test lets them go.
  std::atomic<bool> go{false};
  hold(thread, go, PlanAheadFilter::kMaxWaiting);
  RequestContext ctx;
  DietResult& result = publish_due_plan(ctx);
  std::string body;
  SimpleHeaderMap headers;
  CHECK(filter.request_body_filter(ctx, headers, body).proceeds());
  CHECK(thread.pending() == PlanAheadFilter::kMaxWaiting);  // nothing more queued
  CHECK(result.ahead_body.empty());
  CHECK(counts.left == 1);
  go = true;
  drain(thread);
  // With room, the same request's plan is posted: bytes that are no request
  // leave the memo as it was.
  result.ahead_body = "not json";
  CHECK(filter.request_body_filter(ctx, headers, body).proceeds());
  CHECK(result.ahead_body.empty());
  drain(thread);
  CHECK(counts.left == 2);
  CHECK(counts.computed == 0);
}

TEST_CASE("plan ahead filter: a big body's bytes stay claimed from the budget until its job let them go") {
  td::diet::DietCaches caches;
  WorkPool thread(1);
  PlanAheadCounts counts;
  PlanAheadFilter filter(&caches, &thread, &counts);
  BodyBudget budget;
  std::atomic<bool> go{false};
  hold(thread, go, 1);
  {
    RequestContext ctx;
    REQUIRE(budget.take(1000, 4000, nullptr));
    ctx.objects.publish<BigBodyClaim>(BigBodyClaim{std::make_shared<BodyClaim>(budget, 1000)});
    publish_due_plan(ctx);
    std::string body;
    SimpleHeaderMap headers;
    CHECK(filter.request_body_filter(ctx, headers, body).proceeds());
    CHECK(thread.pending() == 2);
  }
  // The request ended; its plan's job, queued, still holds the body.
  CHECK(budget.in_flight() == 1000);
  go = true;
  drain(thread);
  for (int i = 0; i < 1000 && budget.in_flight() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(budget.in_flight() == 0);
}
