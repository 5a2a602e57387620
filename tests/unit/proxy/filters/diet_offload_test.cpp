// The diet of a big body on a diet thread (DietFilter with a WorkPool): the
// request pauses, the diet runs elsewhere, and the result is handed over on
// the request's thread, exactly as an inline diet would have left it.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "config/config.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/telemetry/work_pool.hpp"
#include "filter_reports.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;
using td::test::diet_report;
using td::test::trajectory_body;

namespace {

RequestContext chat_context() {
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/chat/completions";
  return ctx;
}

// What the session does with a pause: wait for the wake, then take the
// answer (which runs the filter's hand-over on this thread).
std::optional<LocalResponse> wait_resumed(const FilterResult& r, RequestContext& ctx, std::string& body) {
  REQUIRE(r.pauses());
  REQUIRE(r.handle());
  std::promise<void> woken;
  if (r.handle()->arm([&] { woken.set_value(); }))
    REQUIRE(woken.get_future().wait_for(30s) == std::future_status::ready);
  REQUIRE_FALSE(r.handle()->cancel(PausedRequest{&ctx, &body}));  // resumed, not cancelled
  return r.handle()->take_answer(PausedRequest{&ctx, &body});
}

td::config::Config offload_everything() {
  td::config::Config cfg;
  cfg.limits.diet_offload_bytes = 1;
  return cfg;
}

}  // namespace

TEST_CASE("diet offload: a big body is dieted on the pool and comes back as the inline diet leaves it") {
  const td::config::Config cfg = offload_everything();
  const std::string sent = trajectory_body("mini-swe-agent-12.json");
  SimpleHeaderMap headers;

  td::diet::DietCaches inline_caches;
  DietFilter inline_diet(cfg, DietServices{.caches = &inline_caches});
  RequestContext inline_ctx = chat_context();
  std::string inline_body = sent;
  REQUIRE(inline_diet.request_body_filter(inline_ctx, headers, inline_body).proceeds());
  REQUIRE(inline_body != sent);  // the trajectory does get pruned

  WorkPool pool(1, [] {});
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches, .workers = &pool});
  RequestContext ctx = chat_context();
  std::string body = sent;
  FilterResult r = diet.request_body_filter(ctx, headers, body);
  CHECK(body.empty());  // the diet thread has it meanwhile
  CHECK_FALSE(wait_resumed(r, ctx, body).has_value());
  CHECK(body == inline_body);
  CHECK(ctx.model == inline_ctx.model);
  CHECK(diet_report(ctx).tokens_before == diet_report(inline_ctx).tokens_before);
  CHECK(diet_report(ctx).tokens_after == diet_report(inline_ctx).tokens_after);
  CHECK(diet_report(ctx).strategies == diet_report(inline_ctx).strategies);
  CHECK(ctx.body_parsed);
  CHECK_FALSE(ctx.fail_open);
}

TEST_CASE("diet offload: small bodies and a filter without a pool stay on the request's thread") {
  td::config::Config cfg;  // offload from 256 KiB
  WorkPool pool(1, [] {});
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches, .workers = &pool});
  SimpleHeaderMap headers;
  RequestContext ctx = chat_context();
  std::string body = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";
  CHECK(diet.request_body_filter(ctx, headers, body).proceeds());
  CHECK(ctx.model == "gpt-4o");

  DietFilter no_pool(offload_everything(), DietServices{.caches = &caches});
  RequestContext ctx2 = chat_context();
  CHECK(no_pool.request_body_filter(ctx2, headers, body).proceeds());
}

TEST_CASE("diet offload: a wait that ends first sends the body as it came, whatever the job does later") {
  const td::config::Config cfg = offload_everything();
  // One thread, kept busy until the wait is over: the diet job is still queued.
  WorkPool pool(1, [] {});
  std::promise<void> release_worker;
  std::shared_future<void> go = release_worker.get_future().share();
  pool.post([go] { go.wait(); });
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches, .workers = &pool});
  SimpleHeaderMap headers;
  RequestContext ctx = chat_context();
  const std::string sent = trajectory_body("mini-swe-agent-12.json");
  std::string body = sent;
  FilterResult r = diet.request_body_filter(ctx, headers, body);
  REQUIRE(r.pauses());
  CHECK(r.handle()->cancel(PausedRequest{&ctx, &body}));  // the session gave up waiting (timeout, client gone)
  CHECK(body == sent);
  // A job behind the diet's (one thread, in order): once it ran, the diet's
  // job is over. It saw the cancel and left the body and the context alone.
  std::promise<void> after_diet;
  pool.post([&] { after_diet.set_value(); });
  release_worker.set_value();
  REQUIRE(after_diet.get_future().wait_for(30s) == std::future_status::ready);
  // The last job counts as done once it has returned, just after it set the
  // promise: wait for that too.
  for (int i = 0; i < 3000 && pool.pending() != 0; ++i) std::this_thread::sleep_for(1ms);
  CHECK(pool.pending() == 0);
  CHECK(body == sent);
  CHECK_FALSE(ctx.body_parsed);
}
