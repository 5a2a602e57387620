// The diet filter with the caches it is handed (as the proxy's survive a
// config reload, which builds a new filter), and the decision's admission.
#include <doctest/doctest.h>

#include <string>

#include "config/config.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/filters/quota_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;
using td::test::eager_config;
using td::test::trajectory_body;

namespace {

const std::string& history() { return td::test::gpt4o_history(); }

}  // namespace

TEST_CASE("diet filter: uses the caches it is handed, which a new filter (a reload) finds warm") {
  const td::config::Config cfg = eager_config();
  td::diet::DietCaches caches;
  auto through = [&](DietFilter& filter) {
    RequestContext ctx;
    ctx.method = "POST";
    ctx.target = "/v1/chat/completions";
    std::string body = history();
    SimpleHeaderMap headers;
    CHECK(filter.request_body_filter(ctx, headers, body).proceeds());
    CHECK_FALSE(ctx.fail_open);
    CHECK(ctx.delay_upstream.count() == 0);  // today's decision sends every request now
    return body;
  };
  std::string sent;
  {
    DietFilter before_reload(cfg, DietServices{.caches = &caches});
    sent = through(before_reload);
  }
  CHECK(caches.pipeline.counts.stats().inserts > 0);
  const std::uint64_t plan_hits = caches.pipeline.plans.hits();
  const std::uint64_t parse_hits = caches.parsed.hits();
  DietFilter after_reload(cfg, DietServices{.caches = &caches});
  CHECK(through(after_reload) == sent);
  CHECK(caches.pipeline.plans.hits() > plan_hits);
  CHECK(caches.parsed.hits() > parse_hits);
}

TEST_CASE("admit: send goes now, wait holds the request, reject answers 429 in the provider's shape") {
  using td::pruning::Admission;
  RequestContext ctx;
  ctx.provider = Provider::anthropic;
  CHECK_FALSE(admit(ctx, Admission{}).has_value());
  CHECK(ctx.delay_upstream.count() == 0);

  CHECK_FALSE(admit(ctx, Admission{Admission::Kind::Wait, std::chrono::milliseconds(1500)}).has_value());
  CHECK(ctx.delay_upstream == std::chrono::milliseconds(1500));

  RequestContext rejected;
  rejected.provider = Provider::anthropic;
  auto r = admit(rejected, Admission{Admission::Kind::Reject, std::chrono::milliseconds(1500)});
  REQUIRE(r.has_value());
  CHECK(r->status == 429);
  REQUIRE(r->headers.size() == 2);
  CHECK(r->headers[0].first == "retry-after");
  CHECK(r->headers[0].second == "2");  // seconds, rounded up
  CHECK(r->headers[1].first == "x-tokendiet-error");
  CHECK(r->headers[1].second == "runway_exhausted");
  CHECK(r->body.find(R"("type":"error")") != std::string::npos);
  CHECK(r->body.find("retry after 2 s") != std::string::npos);
  CHECK(rejected.delay_upstream.count() == 0);
}
