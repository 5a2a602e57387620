#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "ledger/usage_report.hpp"

using namespace td::ledger;
using td::config::Price;

namespace {

UsageSums sums(std::string group, std::string model, std::int64_t requests, std::int64_t before, std::int64_t after,
               std::int64_t prompt, std::int64_t cached, std::int64_t completion) {
  UsageSums s;
  s.group = std::move(group);
  s.model = std::move(model);
  s.requests = requests;
  s.tokens_before = before;
  s.tokens_after = after;
  s.tokens_saved = before - after;
  s.prompt = prompt;
  s.cached_read = cached;
  s.completion = completion;
  return s;
}

const std::vector<Price> kPrices = {
    {"gpt-4o-mini*", 0.15, 0.075, 0, 0.60},
    {"gpt-4o*", 2.50, 1.25, 0, 10.00},
    {"claude-*", 3.00, 0.30, 3.75, 15.00},
};

// Enough of the config's glob for these tests: a trailing '*' or exact.
const Price* lookup(std::string_view model) {
  for (const auto& p : kPrices) {
    std::string_view g = p.model;
    if (g.back() == '*' ? model.substr(0, g.size() - 1) == g.substr(0, g.size() - 1) : model == g) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("actual cost: fresh input, cache reads, cache writes and output at their prices") {
  Price p{"claude-*", 3.00, 0.30, 3.75, 15.00};
  // 1M prompt of which 200k read from cache and 100k written: 700k fresh.
  double cost = actual_cost_usd(p, 1'000'000, 200'000, 100'000, 10'000);
  CHECK(cost == doctest::Approx(0.7 * 3.00 + 0.2 * 0.30 + 0.1 * 3.75 + 0.01 * 15.00));
  CHECK(actual_cost_usd(p, 0, 0, 0, 0) == 0);
}

TEST_CASE("a report groups per key across models, prices each model, and totals") {
  // By day: two models on one day, one unpriced model on the next.
  std::vector<UsageSums> in = {
      sums("2026-11-01", "gpt-4o", 10, 100'000, 60'000, 62'000, 20'000, 5'000),
      sums("2026-11-01", "gpt-4o-mini", 5, 10'000, 10'000, 10'100, 0, 1'000),
      sums("2026-11-02", "mystery-model", 2, 3'000, 1'000, 1'100, 0, 100),
  };
  UsageReport r = build_usage_report(in, GroupBy::Day, lookup);
  REQUIRE(r.groups.size() == 2);
  const UsageGroup& day1 = r.groups[0];
  CHECK(day1.key == "2026-11-01");
  CHECK(day1.requests == 15);
  CHECK(day1.tokens_saved == 40'000);
  double gpt4o = (42'000 * 2.50 + 20'000 * 1.25 + 5'000 * 10.00) / 1e6;
  double mini = (10'100 * 0.15 + 1'000 * 0.60) / 1e6;
  CHECK(day1.cost_usd == doctest::Approx(gpt4o + mini));
  // Saved at the rate gpt-4o's prompts were billed: 62k prompt tokens, 20k of them cache reads.
  CHECK(day1.saved_cost_usd == doctest::Approx(40'000 * (42'000 * 2.50 + 20'000 * 1.25) / 62'000 / 1e6));
  CHECK(day1.unpriced_requests == 0);
  const UsageGroup& day2 = r.groups[1];
  CHECK(day2.unpriced_requests == 2);
  CHECK(day2.unpriced_models == std::vector<std::string>{"mystery-model"});
  CHECK(day2.cost_usd == 0);
  CHECK(r.total.requests == 17);
  CHECK(r.total.tokens_before == 113'000);
  CHECK(r.total.cost_usd == doctest::Approx(gpt4o + mini));
  CHECK(r.total.unpriced_requests == 2);
}

TEST_CASE("groups other than days come biggest first") {
  std::vector<UsageSums> in = {sums("small", "gpt-4o", 1, 10, 10, 10, 0, 1),
                               sums("big", "gpt-4o", 1, 1000, 10, 10, 0, 1)};
  UsageReport r = build_usage_report(in, GroupBy::Session, lookup);
  REQUIRE(r.groups.size() == 2);
  CHECK(r.groups[0].key == "big");
}

TEST_CASE("table and JSON renderings") {
  std::vector<UsageSums> in = {sums("gpt-4o", "gpt-4o", 3, 9'000, 6'000, 6'100, 1'000, 300),
                               sums("", "", 1, 10, 10, 0, 0, 0)};
  UsageReport r = build_usage_report(in, GroupBy::Model, lookup);
  r.ledger_paths = {"/tmp/usage \"x\".db"};
  r.since_ms = 1'790'000'000'000;
  r.now_ms = r.since_ms + 86'400'000;

  std::string table = render_usage_table(r);
  CHECK(table.find("since 2026-09-21 14:13 UTC") != std::string::npos);
  CHECK(table.find("9.00k") != std::string::npos);
  CHECK(table.find("33.3%") != std::string::npos);
  CHECK(table.find("(unknown)") != std::string::npos);
  CHECK(table.find("no price for: (unknown)") != std::string::npos);
  CHECK(table.find("total") != std::string::npos);

  std::string json = render_usage_json(r);
  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(json.c_str()).HasParseError());
  CHECK(std::string(doc["ledger"].GetString()) == r.ledger_paths[0]);
  CHECK(std::string(doc["by"].GetString()) == "model");
  CHECK(doc["since_ms"].GetInt64() == r.since_ms);
  REQUIRE(doc["groups"].Size() == 2);
  CHECK(std::string(doc["groups"][0]["key"].GetString()) == "gpt-4o");
  CHECK(doc["groups"][0]["tokens_saved"].GetInt64() == 3'000);
  CHECK(doc["groups"][0]["upstream_cached_tokens"].GetInt64() == 1'000);
  CHECK(doc["groups"][0]["saved_cost_usd"].GetDouble() ==
        doctest::Approx(3'000 * (5'100 * 2.50 + 1'000 * 1.25) / 6'100 / 1e6));
  CHECK(doc["total"]["requests"].GetInt64() == 4);
  CHECK(doc["total"]["unpriced_requests"].GetInt64() == 1);

  UsageReport empty = build_usage_report({}, GroupBy::Day, lookup);
  CHECK(render_usage_table(empty).find("no requests") != std::string::npos);
  REQUIRE_FALSE(doc.Parse(render_usage_json(empty).c_str()).HasParseError());
  CHECK(doc["groups"].Size() == 0);
}

TEST_CASE("saved cost: at the rate the prompts were billed, cache reads and writes at their prices") {
  Price p{"claude-*", 3.00, 0.30, 3.75, 15.00};
  // 1M prompt: 700k fresh, 200k cache reads, 100k cache writes.
  const double rate = (0.7 * 3.00 + 0.2 * 0.30 + 0.1 * 3.75) / 1e6;
  CHECK(saved_cost_usd(p, 100'000, 1'000'000, 200'000, 100'000) == doctest::Approx(100'000 * rate));
  // All cache reads: the cut tokens were worth the cached price only.
  CHECK(saved_cost_usd(p, 1'000'000, 1'000'000, 1'000'000, 0) == doctest::Approx(0.30));
  // No usage reported: the input price.
  CHECK(saved_cost_usd(p, 1'000'000, 0, 0, 0) == doctest::Approx(3.00));
}

TEST_CASE("one number format: counts compact with three significant digits") {
  CHECK(compact(0) == "0");
  CHECK(compact(999) == "999");
  CHECK(compact(1'000) == "1.00k");
  CHECK(compact(45'640) == "45.6k");
  CHECK(compact(999'499) == "999k");
  CHECK(compact(999'500) == "1.00M");
  CHECK(compact(1'234'567) == "1.23M");
  CHECK(compact(68'778'000'000) == "68.8G");
}

TEST_CASE("the table fits 80 columns, with an errors column, long labels cut") {
  const std::string session = "378860fb-9985-439a-af2a-b7ddaa664459-and-a-long-tail";
  UsageSums a = sums(session, "gpt-4o", 123'456, 987'654'321'000, 123'456'789'000, 123'456'789'000, 0, 1'000'000);
  a.errors = 1'234;
  std::vector<UsageSums> in = {a, sums("short", "gpt-4o", 1, 10, 10, 10, 0, 1)};
  UsageReport r = build_usage_report(in, GroupBy::Session, lookup);
  r.ledger_paths = {"/x.db"};
  const std::string table = render_usage_table(r);
  std::size_t start = table.find("session  ");  // the header line
  REQUIRE(start != std::string::npos);
  for (std::size_t at = start; at < table.size();) {
    const std::size_t end = table.find('\n', at);
    CHECK_MESSAGE(end - at <= 80, table.substr(at, end - at));
    at = end + 1;
  }
  CHECK(table.find("errors") != std::string::npos);
  CHECK(table.find("1.23k") != std::string::npos);          // the errors, in the one format
  CHECK(table.find("378860fb-9985") != std::string::npos);  // cut, its start kept
  CHECK(table.find(session) == std::string::npos);
  CHECK(table.find("..") != std::string::npos);
}

TEST_CASE("--since: durations back from now, UTC dates and times") {
  const std::int64_t now = 1'790'000'000'000;
  std::string err;
  CHECK(parse_since("24h", now, &err) == now - 86'400'000);
  CHECK(parse_since("7d", now, &err) == now - 7 * 86'400'000LL);
  CHECK(parse_since("30m", now, &err) == now - 1'800'000);
  CHECK(parse_since("2w", now, &err) == now - 14 * 86'400'000LL);
  CHECK(parse_since("2026-11-01", now, &err) == 1'793'491'200'000);
  CHECK(parse_since("2026-11-01T12:30", now, &err) == 1'793'491'200'000 + 45'000'000);
  CHECK(parse_since("2026-11-01T12:30:15Z", now, &err) == 1'793'491'200'000 + 45'015'000);
  CHECK(parse_since("1970-01-01", now, &err) == 0);
  for (const char* bad : {"", "h", "24x", "-3d", "2026-13-01", "2026-02-30", "2025-02-29", "2026-11-1",
                          "2026-11-01T25:00", "yesterday", "99999999999999d"}) {
    err.clear();
    CHECK_MESSAGE(!parse_since(bad, now, &err), bad);
    CHECK_MESSAGE(!err.empty(), bad);
  }
  CHECK(parse_since("2024-02-29", now, &err).has_value());
}

TEST_CASE("--by names") {
  CHECK(parse_group_by("model") == GroupBy::Model);
  CHECK(parse_group_by("day") == GroupBy::Day);
  CHECK(parse_group_by("session") == GroupBy::Session);
  CHECK(parse_group_by("provider") == GroupBy::Provider);
  CHECK(parse_group_by("key") == GroupBy::Key);
  CHECK_FALSE(parse_group_by("week"));
}
