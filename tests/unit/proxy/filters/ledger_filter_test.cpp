#include <doctest/doctest.h>

#include "config/config.hpp"
#include "proxy/filters/ledger_filter.hpp"
#include "proxy/reports/reports.hpp"
#include "proxy/telemetry/process_state.hpp"
#include "temp_dir.hpp"

using namespace td::proxy;
using td::ledger::LedgerRow;
using td::ledger::LedgerStore;
using td::test::TempDir;

namespace {

RequestContext finished_request() {
  RequestContext ctx;
  ctx.request_id = 42;
  ctx.wall_start = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'790'000'000'123));
  ctx.provider = Provider::anthropic;
  ctx.upstream = "anthropic";
  ctx.model = "claude-sonnet-4-5";
  ctx.stream = true;
  ctx.key_fingerprint = "00112233aabbccdd";
  ctx.session_id = "agent-7";
  ctx.status = 200;
  ctx.bytes_in = 52'000;
  ctx.bytes_out = 3'100;
  ctx.ttfb_ms = 812.6;
  ctx.total_ms = 4020.2;
  ctx.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::Standard,
                                             .profile = "claude",
                                             .tokens_before = 14'000,
                                             .tokens_after = 9'000,
                                             .strategies = {"identical_tool_outputs", "stale_tool_outputs"}});
  ctx.objects.get<BilledUsage>().usage = {
      .prompt = 9'100, .completion = 400, .cached_read = 6'000, .cache_write = 1'000, .reasoning = 0, .present = true};
  return ctx;
}

}  // namespace

TEST_CASE("a finished request becomes one ledger row with every field") {
  LedgerRow r = ledger_row(finished_request());
  CHECK(r.time_ms == 1'790'000'000'123);
  CHECK(r.request_id == "42");
  CHECK(r.session == "agent-7");
  CHECK(r.key_fingerprint == "00112233aabbccdd");
  CHECK(r.provider == "anthropic");
  CHECK(r.model == "claude-sonnet-4-5");
  CHECK(r.profile == "claude");
  CHECK(r.mode == "standard");
  CHECK(r.tokens_before == 14'000);
  CHECK(r.tokens_after == 9'000);
  CHECK(r.prompt_tokens == 9'100);
  CHECK(r.completion_tokens == 400);
  CHECK(r.cached_read_tokens == 6'000);
  CHECK(r.cache_write_tokens == 1'000);
  CHECK(r.usage_present);
  CHECK(r.status == 200);
  CHECK(r.ttfb_ms == 813);
  CHECK(r.total_ms == 4020);
  CHECK(r.stream);
  CHECK(r.strategies == std::vector<std::string>{"identical_tool_outputs", "stale_tool_outputs"});
  CHECK_FALSE(r.fail_open);
  CHECK(r.bytes_in == 52'000);
  CHECK(r.bytes_out == 3'100);

  RequestContext aborted;
  aborted.ttfb_ms = -1;
  aborted.provider = Provider::other;
  aborted.upstream = "local-llm";
  LedgerRow a = ledger_row(aborted);
  CHECK(a.ttfb_ms == -1);
  CHECK(a.provider == "local-llm");
  CHECK(a.strategies.empty());
  CHECK(a.mode.empty());  // the diet never decided: no mode, as before the enum
  aborted.objects.publish<DietReport>(DietReport{.mode = td::pruning::Mode::None});
  CHECK(ledger_row(aborted).mode == "none");
  CHECK(a.recovery.empty());
  aborted.objects.publish<RecoveryReport>(RecoveryReport{"retried"});  // context-overflow recovery, for /metrics
  CHECK(ledger_row(aborted).recovery == "retried");
  // What the diet evicted and the recall loop read back (the ledger's
  // evicted_tasks and recalled columns).
  aborted.objects.publish<EvictionReport>(EvictionReport{{"Fix the parser"}, {}});
  aborted.objects.publish<RecallReport>(RecallReport{{"td-0123456789abcdef0123456789abcdef"}, 1});
  const LedgerRow tasks = ledger_row(aborted);
  CHECK(tasks.evicted_tasks == std::vector<std::string>{"Fix the parser"});
  CHECK(tasks.recalled == std::vector<std::string>{"td-0123456789abcdef0123456789abcdef"});
  CHECK(tasks.recall_rounds == 1);
}

TEST_CASE("the filter counts in flight, records metrics and queues the row") {
  TempDir tmp;
  td::config::Config cfg;
  cfg.ledger.path = tmp.file("usage.db");
  ProcessState t;
  REQUIRE(t.open_ledger(cfg).empty());
  REQUIRE(t.ledger());
  LedgerFilter filter(t);
  SimpleHeaderMap headers;

  RequestContext ctx = finished_request();
  {
    RequestContext live = finished_request();
    CHECK(filter.request_filter(live, headers).proceeds());
    CHECK(t.metrics().in_flight() == 1);
    filter.logging(live);
    CHECK(t.metrics().in_flight() == 1);  // until the request's context is gone
  }
  CHECK(t.metrics().in_flight() == 0);
  {
    // Ended without a logging phase (client gone mid-body): still not in flight.
    RequestContext abandoned;
    CHECK(filter.request_filter(abandoned, headers).proceeds());
    CHECK(t.metrics().in_flight() == 1);
  }
  CHECK(t.metrics().in_flight() == 0);

  // A request some earlier filter answered: never counted up, so not down.
  RequestContext answered = finished_request();
  answered.status = 429;
  filter.logging(answered);
  CHECK(t.metrics().in_flight() == 0);

  t.close_ledger();
  CHECK(t.ledger()->written() == 2);
  auto ro = LedgerStore::open(cfg.ledger.path, LedgerStore::Access::ReadOnly);
  REQUIRE(ro.store);
  auto rows = ro.store->rows_since(0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == ledger_row(ctx));
  CHECK(rows[1].status == 429);

  std::string page = t.metrics().render();
  CHECK(page.find("tokendiet_tokens_saved_total{provider=\"anthropic\",model=\"claude-sonnet-4-5\"} "
                  "10000") != std::string::npos);
  CHECK(page.find("tokendiet_ledger_rows_written_total 2") != std::string::npos);
  CHECK(page.find("tokendiet_ledger_dropped_total 0") != std::string::npos);

  // After close, rows are dropped and counted, never written or blocking.
  filter.logging(finished_request());
  CHECK(t.ledger()->dropped() == 1);
}

TEST_CASE("ledger disabled: metrics only; a bad path is reported") {
  td::config::Config off;
  off.ledger.enabled = false;
  ProcessState t;
  CHECK(t.open_ledger(off).empty());
  CHECK(t.ledger() == nullptr);
  LedgerFilter filter(t);
  filter.logging(finished_request());
  CHECK(t.metrics().render().find("model=\"claude-sonnet-4-5\"") != std::string::npos);

  td::config::Config bad;
  bad.ledger.path = "/proc/no/such/dir/usage.db";
  ProcessState t2;
  CHECK_FALSE(t2.open_ledger(bad).empty());
  CHECK(t2.ledger() == nullptr);
}

TEST_CASE("the estimator calibration is saved in the ledger and restored on the next start") {
  TempDir tmp;
  td::config::Config cfg;
  cfg.ledger.path = tmp.file("usage.db");
  auto t0 = std::chrono::steady_clock::time_point(std::chrono::hours(1000));
  {
    ProcessState t;
    REQUIRE(t.open_ledger(cfg).empty());
    CHECK_FALSE(t.maybe_save_calibration(t0));  // nothing learnt yet (and the interval starts)
    t.calibration().observe("gemini-2.5-pro", 1000, 1200);
    CHECK_FALSE(t.maybe_save_calibration(t0 + std::chrono::seconds(1)));  // not due yet
    CHECK(t.maybe_save_calibration(t0 + ProcessState::kCalibrationSaveInterval));
    REQUIRE(t.ledger()->flush());
    auto ro = LedgerStore::open(cfg.ledger.path, LedgerStore::Access::ReadOnly);
    REQUIRE(ro.store);
    auto saved = ro.store->load_calibration();
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].model == "gemini-2.5-pro");
    CHECK(saved[0].ratio == doctest::Approx(1.2));
    CHECK(saved[0].samples == 1);
    t.calibration().observe("claude-x", 1000, 900);
    t.close_ledger();  // saves the latest state
  }
  ProcessState restarted;
  REQUIRE(restarted.open_ledger(cfg).empty());
  CHECK(restarted.calibration().ratio("gemini-2.5-pro") == doctest::Approx(1.2));
  CHECK(restarted.calibration().ratio("claude-x") == doctest::Approx(0.9));
  CHECK(restarted.calibration().ratio("never-seen") == 1.0);
}

TEST_CASE("the recaps a model wrote are kept in the ledger and restored on the next start") {
  TempDir tmp;
  td::config::Config cfg;
  cfg.ledger.path = tmp.file("usage.db");
  {
    ProcessState t;
    t.diet_caches().summaries.put(1, "before the ledger: memory only");
    REQUIRE(t.open_ledger(cfg).empty());
    t.diet_caches().summaries.put(2, "a model's recap");
    t.diet_caches().summaries.put(3, "");                // the summarizer failed: the extractive recap stays
    t.diet_caches().summaries.put(2, "a later answer");  // the first text stays
    REQUIRE(t.ledger()->flush());
    t.close_ledger();
  }
  ProcessState restarted;
  CHECK_FALSE(restarted.diet_caches().summaries.get(2));
  REQUIRE(restarted.open_ledger(cfg).empty());
  CHECK(restarted.diet_caches().summaries.get(2) == std::optional<std::string>("a model's recap"));
  CHECK(restarted.diet_caches().summaries.get(3) == std::optional<std::string>(""));
  CHECK_FALSE(restarted.diet_caches().summaries.get(1));
  REQUIRE(restarted.ledger()->flush());
  CHECK(restarted.ledger()->load_recap_summaries().size() == 2);  // restored, not written again
}

TEST_CASE("the row's arm and outcome fields: what the diet would have sent, re-reads, context errors, input priced") {
  RequestContext ctx = finished_request();
  DietReport& diet = ctx.objects.get<DietReport>();
  diet.arm = td::pruning::Arm::Control;
  diet.tokens_after = diet.tokens_before;
  diet.tokens_diet = 9'000;
  diet.rereads = 2;
  diet.session_key = 0xabcdef0123456789ull;
  ctx.objects.publish<RecoveryReport>(RecoveryReport{.outcome = "retried"});
  ctx.objects.publish<RecallReport>(RecallReport{.recalled = {"td-1"}, .rounds = 1});
  td::config::Config cfg;
  cfg.prices.push_back({"claude-*", 3.0, 0.3, 3.75, 15.0});
  LedgerRow r = ledger_row(ctx, &cfg);
  CHECK(r.arm == "control");
  CHECK(r.session_key == "abcdef0123456789");
  CHECK(r.tokens_after == 14'000);
  CHECK(r.tokens_diet == 9'000);
  CHECK(r.rereads == 2);
  CHECK(r.recall_rounds == 1);
  CHECK(r.context_errors == 1);  // recovery saw one; its retry's answer was no other
  // (9,100 - 6,000 - 1,000) x 3 + 6,000 x 0.3 + 1,000 x 3.75, per million; no output.
  REQUIRE(r.input_cost_usd);
  CHECK(*r.input_cost_usd == doctest::Approx((2'100 * 3.0 + 6'000 * 0.3 + 1'000 * 3.75) / 1e6));
  ctx.objects.get<BilledUsage>().context_length_exceeded = true;  // the retry overflowed too
  CHECK(ledger_row(ctx, &cfg).context_errors == 2);
  CHECK_FALSE(ledger_row(ctx).input_cost_usd);  // no prices: not priced
  cfg.prices[0].model = "gpt-*";
  CHECK_FALSE(ledger_row(ctx, &cfg).input_cost_usd);  // no price for the model
}
