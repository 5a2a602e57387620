// The explain headers through a real session (docs/design.md §Explain
// headers): written by the explain filter alone, in the response-head phase,
// on an upstream's answer and on the proxy's own (a filter's 429); the request
// id is the core's, on both.
#include <doctest/doctest.h>

#include "proxy/filters/explain_filter.hpp"
#include "proxy/reports/diet_report.hpp"
#include "proxy_harness.hpp"

using namespace td::proxy;
using namespace td::net_test;

namespace {

// Stands in for the diet: publishes its report; on a body of "refuse" it
// answers 429 itself, as the quota filter does.
class ReportingFilter final : public Filter {
 public:
  std::string_view name() const override { return "reporting"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap&, std::string& body) override {
    ctx.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::Survival,
                                               .tokens_before = 900,
                                               .tokens_after = 300,
                                               .strategies = {"stale_tool_outputs"}});
    if (body != "refuse") return {};
    LocalResponse r;
    r.status = 429;
    r.body = R"({"error":{"message":"not now"}})";
    r.headers.emplace_back("retry-after", "2");
    return FilterResult::respond(std::move(r));
  }
};

std::unique_ptr<TestProxy> proxy_with(FakeUpstream& upstream, bool explain) {
  std::vector<std::unique_ptr<Filter>> chain;
  chain.push_back(std::make_unique<ReportingFilter>());
  if (explain) chain.push_back(std::make_unique<ExplainFilter>());
  return std::make_unique<TestProxy>(std::move(chain), upstream.port());
}

void check_explained(const ClientReply& r) {
  CHECK(r.header("x-tokendiet-mode") == "survival");
  CHECK(r.header("x-tokendiet-tokens-before") == "900");
  CHECK(r.header("x-tokendiet-tokens-after") == "300");
  CHECK(r.header("x-tokendiet-strategies") == "stale_tool_outputs");
  CHECK(r.count("x-tokendiet-mode") == 1);
  CHECK(r.count("x-tokendiet-request-id") == 1);
  CHECK_FALSE(r.header("x-tokendiet-request-id").empty());
}

}  // namespace

TEST_CASE("explain headers: one filter writes them on a proxied answer and on the proxy's own") {
  FakeUpstream upstream([](const UpstreamRequest&, std::size_t) {
    UpstreamResponse res = json_response(200, R"({"ok":true})");
    res.set("x-tokendiet-mode", "from-upstream");  // replaced by ours
    return res;
  });
  auto proxy = proxy_with(upstream, true);
  const ClientReply proxied = post(proxy->port(), "/v1/chat/completions", "go");
  REQUIRE(proxied.status == 200);
  check_explained(proxied);

  const ClientReply local = post(proxy->port(), "/v1/chat/completions", "refuse");
  REQUIRE(local.status == 429);
  check_explained(local);
  CHECK(local.header("retry-after") == "2");
  CHECK(upstream.requests().size() == 1);  // the refused one never went
  CHECK(local.header("x-tokendiet-request-id") != proxied.header("x-tokendiet-request-id"));
}

TEST_CASE("explain headers: without the explain filter neither answer carries them, only the core's request id") {
  FakeUpstream upstream([](const UpstreamRequest&, std::size_t) { return json_response(200, R"({"ok":true})"); });
  auto proxy = proxy_with(upstream, false);
  for (const char* body : {"go", "refuse"}) {
    const ClientReply r = post(proxy->port(), "/v1/chat/completions", body);
    CAPTURE(body);
    REQUIRE(r.status != 0);
    CHECK(r.count("x-tokendiet-mode") == 0);
    CHECK(r.count("x-tokendiet-tokens-before") == 0);
    CHECK(r.count("x-tokendiet-request-id") == 1);
  }
}
