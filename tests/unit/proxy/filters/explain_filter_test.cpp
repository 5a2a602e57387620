#include <doctest/doctest.h>

#include "proxy/filters/explain_filter.hpp"
#include "proxy/phases/header_map.hpp"

using namespace td::proxy;

TEST_CASE("explain filter: the diet's decision in headers; only the id when it never decided") {
  ExplainFilter f;
  RequestContext ctx;
  ctx.request_id = 1838676130251784;
  SimpleHeaderMap h;
  h.add("x-tokendiet-mode", "from-upstream");
  f.upstream_response_filter(ctx, h);
  CHECK(h.get("x-tokendiet-request-id") == "1838676130251784");
  CHECK(h.get("x-tokendiet-tokens-before").empty());
  CHECK(h.get("x-tokendiet-mode") == "from-upstream");  // not ours to say: nothing decided

  ctx.mode = td::pruning::Mode::Standard;
  ctx.tokens_before = 41000;
  ctx.tokens_after = 12000;
  ctx.strategies = {"stale_tool_outputs", "identical_tool_outputs"};
  SimpleHeaderMap d;
  d.add("x-tokendiet-mode", "from-upstream");
  f.upstream_response_filter(ctx, d);
  CHECK(d.get("x-tokendiet-mode") == "standard");
  CHECK(d.get("x-tokendiet-tokens-before") == "41000");
  CHECK(d.get("x-tokendiet-tokens-after") == "12000");
  CHECK(d.get("x-tokendiet-strategies") == "stale_tool_outputs,identical_tool_outputs");
  int modes = 0;
  d.for_each([&](std::string_view name, std::string_view) { modes += name == "x-tokendiet-mode"; });
  CHECK(modes == 1);
}
