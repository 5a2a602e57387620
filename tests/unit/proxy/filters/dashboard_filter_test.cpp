// The dashboard (DashboardFilter, docs/design.md §Dashboard): who is served,
// the stats read from the ledger on the dashboard's thread and cached, the
// runways from the live store, and no ledger row for the dashboard's own requests.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <future>

#include "ledger/ledger_store.hpp"
#include "proxy/filters/dashboard_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/reports/own_endpoint.hpp"
#include "proxy/telemetry/work_pool.hpp"
#include "quota/runway_store.hpp"
#include "temp_dir.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;
using td::test::TempDir;

namespace {

constexpr std::string_view kToken = "0123456789abcdef-token";

unsigned status_of(const std::optional<LocalResponse>& r) { return r ? r->status : 200; }

LocalResponse answered(FilterResult r) {
  if (r.answers()) return r.answer();
  REQUIRE(r.pauses());
  std::promise<void> woken;
  if (r.handle()->arm([&] { woken.set_value(); }))
    REQUIRE(woken.get_future().wait_for(10s) == std::future_status::ready);
  REQUIRE_FALSE(r.handle()->cancel());
  auto answer = r.handle()->take_answer();
  REQUIRE(answer);
  return *answer;
}

td::ledger::LedgerRow row(std::string model, std::int64_t before, std::int64_t after, std::string session) {
  td::ledger::LedgerRow r;
  r.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count() -
              1000;
  r.model = std::move(model);
  r.tokens_before = before;
  r.tokens_after = after;
  r.session = std::move(session);
  r.key_fingerprint = "0123456789abcdef";
  r.status = 200;
  r.mode = "standard";
  return r;
}

}  // namespace

TEST_CASE("dashboard access: loopback served; others refused without the admin token, served with it") {
  SimpleHeaderMap none;
  CHECK(status_of(dashboard_refusal(true, "", none, "")) == 200);
  CHECK(status_of(dashboard_refusal(true, kToken, none, "")) == 200);
  auto forbidden = dashboard_refusal(false, "", none, "");
  CHECK(status_of(forbidden) == 403);
  CHECK(forbidden->body.find("loopback clients only") != std::string::npos);
  CHECK(status_of(dashboard_refusal(false, kToken, none, "")) == 401);
  SimpleHeaderMap wrong{{"authorization", "Bearer 0123456789abcdef-tokeN"}};
  CHECK(status_of(dashboard_refusal(false, kToken, wrong, "")) == 401);
  SimpleHeaderMap shorter{{"authorization", "Bearer 0123456789abcdef-toke"}};
  CHECK(status_of(dashboard_refusal(false, kToken, shorter, "")) == 401);
  SimpleHeaderMap bearer{{"authorization", "Bearer " + std::string(kToken)}};
  CHECK(status_of(dashboard_refusal(false, kToken, bearer, "")) == 200);
  SimpleHeaderMap header{{"x-tokendiet-admin-token", std::string(kToken)}};
  CHECK(status_of(dashboard_refusal(false, kToken, header, "")) == 200);
  CHECK(status_of(dashboard_refusal(false, kToken, none, "window=60&token=" + std::string(kToken))) == 200);
  CHECK(status_of(dashboard_refusal(false, kToken, none, "token=nope")) == 401);
}

TEST_CASE("dashboard stats: the ledger's sums, read on the dashboard's thread, then cached; no ledger row") {
  TempDir tmp;
  const std::string path = tmp.file("usage.db");
  auto opened = td::ledger::LedgerStore::open(path, td::ledger::LedgerStore::Access::ReadWrite);
  REQUIRE(opened.store);
  REQUIRE(opened.store
              ->insert(std::vector{row("gpt-4o", 1000, 400, "s1"), row("gpt-4o", 500, 500, "s1"),
                                   row("claude-x", 300, 100, "s2")})
              .empty());
  WorkPool thread(1, [] {});
  DashboardFilter filter(
      "",
      [&] {
        return DashboardFilter::LedgerSource{path, nullptr};
      },
      &thread, std::make_shared<DashboardCache>());
  SimpleHeaderMap headers;

  RequestContext ctx;
  ctx.method = "GET";
  ctx.target = "/v1/tokendiet/stats";
  ctx.client_loopback = true;
  FilterResult r = filter.request_filter(ctx, headers);
  CHECK(ctx.objects.find<OwnEndpoint>());  // the ledger filter writes no row for it
  CHECK(r.pauses());                       // read off the I/O thread
  LocalResponse answer = answered(std::move(r));
  REQUIRE(answer.status == 200);
  rapidjson::Document d;
  d.Parse(answer.body.c_str());
  REQUIRE(d.IsObject());
  CHECK(d["error"].IsNull());
  CHECK(d["totals"]["requests"].GetInt64() == 3);
  CHECK(d["totals"]["tokens_in"].GetInt64() == 1800);
  CHECK(d["totals"]["tokens_sent"].GetInt64() == 1000);
  CHECK(d["totals"]["tokens_saved"].GetInt64() == 800);
  CHECK(d["by_session"].Size() == 2);
  CHECK(d["by_model"][0]["name"].GetString() == std::string("gpt-4o"));
  CHECK(d["recent"].Size() == 3);
  CHECK(d["series"].Size() == 1);

  // Within the second: the same answer at once, the ledger not read again.
  RequestContext again;
  again.method = "GET";
  again.target = "/v1/tokendiet/stats";
  again.client_loopback = true;
  FilterResult cached = filter.request_filter(again, headers);
  REQUIRE(cached.answers());
  CHECK(cached.answer().body == answer.body);

  // Not loopback: refused before anything is read.
  RequestContext outside;
  outside.method = "GET";
  outside.target = "/tokendiet/";
  FilterResult refused = filter.request_filter(outside, headers);
  REQUIRE(refused.answers());
  CHECK(refused.answer().status == 403);

  // Any other path is not the dashboard's.
  RequestContext chat;
  chat.method = "POST";
  chat.target = "/v1/chat/completions";
  CHECK_FALSE(filter.request_filter(chat, headers).answers());
  CHECK_FALSE(chat.objects.find<OwnEndpoint>());
}

TEST_CASE("dashboard stats: the runways are the live store's now, the tightest first, with or without a ledger") {
  using td::providers::Provider;
  using td::quota::runway_key;
  td::quota::RunwayStore store;
  const auto now = td::quota::Clock::now();
  // gpt: 30,000 of 60,000 left; claude: its output bucket 1,000 of 8,000; gemini: no limit known.
  store.take(runway_key(Provider::openai, "0123456789abcdef", "gpt"), Provider::openai, {.tpm = 60'000},
             {20'000, 10'000}, now);
  store.take(runway_key(Provider::anthropic, "0123456789abcdef", "claude"), Provider::anthropic,
             {.itpm = 30'000, .otpm = 8'000}, {1'000, 7'000}, now);
  store.take(runway_key(Provider::gemini, "fedcba9876543210", "flash"), Provider::gemini, {}, {100, 0}, now);
  td::providers::RateLimits h;
  h.requests.limit = 50;
  h.requests.remaining = 49;
  const auto seen = std::chrono::system_clock::time_point{} + 1'700'000'000'000ms;
  store.settle(runway_key(Provider::openai, "0123456789abcdef", "gpt"), Provider::openai, {.tpm = 60'000}, {}, {}, now,
               {&h, true, seen});
  int listed = 0;
  WorkPool thread(1, [] {});
  // No ledger (ledger.enabled: false): the runways all the same.
  DashboardFilter filter(
      "", [] { return DashboardFilter::LedgerSource{}; }, &thread, std::make_shared<DashboardCache>(),
      [&] {
        ++listed;
        return store.list(td::quota::Clock::now(), 10);
      });
  SimpleHeaderMap headers;
  RequestContext ctx;
  ctx.method = "GET";
  ctx.target = "/v1/tokendiet/stats";
  ctx.client_loopback = true;
  FilterResult r = filter.request_filter(ctx, headers);
  CHECK(r.pauses());  // listed off the I/O thread: a shared store's list waits for Redis
  LocalResponse answer = answered(std::move(r));
  REQUIRE(answer.status == 200);
  CHECK(listed == 1);
  rapidjson::Document d;
  d.Parse(answer.body.c_str());
  REQUIRE(d.IsObject());
  CHECK(d["error"].IsString());  // the ledger is off
  const auto& rw = d["runways"];
  REQUIRE(rw.IsArray());
  REQUIRE(rw.Size() == 2);  // a runway with no limit and no headers shows nothing
  CHECK(rw[0]["provider"].GetString() == std::string("anthropic"));
  CHECK(rw[0]["quota_group"].GetString() == std::string("claude"));
  CHECK(rw[0]["limit"].GetInt64() == 8'000);
  CHECK(rw[0]["runway_tokens"].GetInt64() <= 1'001);
  CHECK(rw[0]["requests_remaining"].IsNull());
  CHECK(rw[0]["shared"].GetBool() == false);
  CHECK(rw[1]["quota_group"].GetString() == std::string("gpt"));
  CHECK(rw[1]["client"].GetString() == std::string("0123456789abcdef"));
  CHECK(rw[1]["limit"].GetInt64() == 60'000);
  CHECK(rw[1]["runway_tokens"].GetInt64() >= 30'000);
  CHECK(rw[1]["used"].GetInt64() == 60'000 - rw[1]["runway_tokens"].GetInt64());
  // Full again at a token a ms (the level's fraction rounded one way, the wait up).
  CHECK(std::abs(rw[1]["reset_ms"].GetInt64() -
                 (d["runways_ms"].GetInt64() + 60'000 - rw[1]["runway_tokens"].GetInt64())) <= 1);
  CHECK(rw[1]["requests_limit"].GetInt64() == 50);
  CHECK(rw[1]["requests_remaining"].GetInt64() == 49);
  CHECK(rw[1]["tokens_remaining"].IsNull());
  CHECK(rw[1]["headers_ms"].GetInt64() == 1'700'000'000'000);
}

TEST_CASE("dashboard stats: the runways spliced into the ledger's object") {
  CHECK(with_runways(R"({"a":1})", "[]", 5) == R"({"a":1,"runways_ms":5,"runways":[]})");
  CHECK(with_runways("{}", "[1]", 7) == R"({"runways_ms":7,"runways":[1]})");
  CHECK(runways_json({}, 0) == "[]");
}
