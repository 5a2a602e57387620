#include <doctest/doctest.h>

#include "proxy/filters/explain_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/reports/reports.hpp"

using namespace td::proxy;

TEST_CASE("explain filter: the diet's decision in headers; nothing when it never decided") {
  ExplainFilter f;
  RequestContext ctx;
  SimpleHeaderMap h;
  h.add("x-tokendiet-mode", "from-upstream");
  f.response_head_filter(ctx, h);
  CHECK(h.get("x-tokendiet-tokens-before").empty());
  CHECK(h.get("x-tokendiet-mode") == "from-upstream");  // not ours to say: nothing decided

  ctx.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::Standard,
                                             .tokens_before = 41000,
                                             .tokens_after = 12000,
                                             .strategies = {"stale_tool_outputs", "identical_tool_outputs"}});
  SimpleHeaderMap d;
  d.add("x-tokendiet-mode", "from-upstream");
  f.response_head_filter(ctx, d);
  CHECK(d.get("x-tokendiet-mode") == "standard");
  CHECK(d.get("x-tokendiet-tokens-before") == "41000");
  CHECK(d.get("x-tokendiet-tokens-after") == "12000");
  CHECK(d.get("x-tokendiet-strategies") == "stale_tool_outputs,identical_tool_outputs");
  int modes = 0;
  d.for_each([&](std::string_view name, std::string_view) { modes += name == "x-tokendiet-mode"; });
  CHECK(modes == 1);
}

TEST_CASE("explain filter: the quota's report and the wait") {
  ExplainFilter f;
  RequestContext ctx;
  ctx.objects.publish<DietReport>(
      DietReport{.mode = td::pruning::Mode::Survival, .thinking = "reasoning_effort high -> low"});
  ctx.objects.publish<QuotaReport>(QuotaReport{.survival = "waited", .runway_tokens = 1200, .quota_group = "g"});
  ctx.delay_upstream = std::chrono::milliseconds(350);
  SimpleHeaderMap h;
  f.response_head_filter(ctx, h);
  CHECK(h.get("x-tokendiet-mode") == "survival");
  CHECK(h.get("x-tokendiet-survival") == "waited");
  CHECK(h.get("x-tokendiet-runway-tokens") == "1200");
  CHECK(h.get("x-tokendiet-wait-ms") == "350");
  CHECK(h.get("x-tokendiet-thinking") == "reasoning_effort high -> low");
}

TEST_CASE("explain filter: shadow and control say their arm and what the diet would have sent; the treatment not") {
  for (const auto arm : {td::pruning::Arm::Shadow, td::pruning::Arm::Control}) {
    ExplainFilter f;
    RequestContext ctx;
    ctx.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::Standard,
                                               .tokens_before = 68778,
                                               .tokens_after = 68778,
                                               .arm = arm,
                                               .tokens_diet = 19494});
    SimpleHeaderMap h;
    f.response_head_filter(ctx, h);
    CHECK(h.get("x-tokendiet-tokens-after") == "68778");  // what went upstream
    CHECK(h.get("x-tokendiet-arm") == td::pruning::arm_name(arm));
    CHECK(h.get("x-tokendiet-tokens-diet") == "19494");
  }
  ExplainFilter f;
  RequestContext ctx;
  ctx.objects.publish<DietReport>(
      DietReport{.mode = td::pruning::Mode::Standard, .tokens_before = 100, .tokens_after = 60, .tokens_diet = 60});
  SimpleHeaderMap h;
  f.response_head_filter(ctx, h);
  CHECK(h.get("x-tokendiet-arm").empty());
  CHECK(h.get("x-tokendiet-tokens-diet").empty());
}
