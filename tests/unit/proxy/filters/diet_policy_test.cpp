// The diet filter with the policy's state (runway and session stores):
// survival compresses, holds or answers 429 on a recorded trajectory; the
// same history and runway give the same bytes in two processes; thinking is
// lowered under pressure; the logging phase corrects the runway.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>

#include "config/config.hpp"
#include "diet_chain.hpp"
#include "filter_reports.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/phases/header_map.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;
using td::test::billed;
using td::test::diet_report;
using td::test::DietChain;
using td::test::trajectory_body;

namespace {

// One proxy's state: its stores, caches and a filter over them.
struct Proxy {
  td::quota::RunwayStore runways;
  td::quota::SessionStore sessions;
  td::diet::DietCaches caches;
  td::config::Config cfg;
  std::unique_ptr<DietChain> diet;

  explicit Proxy(td::pruning::Profile p) {
    p.models = {"*"};
    cfg.profiles.push_back(std::move(p));
    diet = std::make_unique<DietChain>(
        cfg, DietServices{.caches = &caches, .policy = PolicyState(&runways, &sessions, nullptr)});
  }

  struct Sent {
    RequestContext ctx;
    std::string body;
    std::optional<LocalResponse> answer;  // the proxy's own answer (a 429), or none: it goes upstream
  };
  Sent send(std::string body, const char* key = "key-1") {
    Sent s;
    s.ctx.method = "POST";
    s.ctx.target = "/v1/chat/completions";
    s.ctx.provider = Provider::openai;
    s.ctx.key_fingerprint = key;
    s.body = std::move(body);
    s.answer = diet->body_phase(s.ctx, s.body).answer;
    return s;
  }
  td::pruning::Runway runway(const td::pruning::Profile& p, const std::string& model, const char* key = "key-1") {
    return runways.snapshot(td::quota::runway_key(Provider::openai, key, model), Provider::openai,
                            {p.tpm_limit, 0, 0, std::chrono::milliseconds(p.quota_window_ms)}, td::quota::Clock::now());
  }
};

// The quota filter's report; empty when it published none.
QuotaReport quota_of(const RequestContext& ctx) {
  const QuotaReport* r = ctx.objects.find<QuotaReport>();
  return r ? *r : QuotaReport{};
}

// The diet's tokens for the trajectory's last request, with no quota at all.
std::uint64_t diet_tokens(const std::string& body) {
  Proxy plain{td::pruning::Profile{}};
  return diet_report(plain.send(body).ctx).tokens_after;
}

td::pruning::Profile quota(std::uint64_t tpm, std::uint64_t max_wait_ms = 20'000) {
  td::pruning::Profile p;
  p.tpm_limit = tpm;
  p.max_wait_ms = max_wait_ms;
  return p;
}

}  // namespace

TEST_CASE("diet policy: room in the runway: the diet as usual, its tokens taken from the runway") {
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  const std::uint64_t tokens = diet_tokens(body);
  auto p = quota(10'000'000);
  p.quota_window_ms = 86'400'000;  // a day: what refills while the test runs (slow under ASan) stays small
  Proxy proxy(p);
  Proxy::Sent s = proxy.send(body);
  CHECK_FALSE(s.answer.has_value());
  CHECK(diet_report(s.ctx).mode == td::pruning::Mode::Standard);
  CHECK(quota_of(s.ctx).survival.empty());
  CHECK(diet_report(s.ctx).tokens_after == tokens);
  REQUIRE(quota_of(s.ctx).runway_tokens);
  CHECK(*quota_of(s.ctx).runway_tokens == std::int64_t(10'000'000 - tokens));
  CHECK(proxy.runway(p, s.ctx.model).combined.level == doctest::Approx(10'000'000.0 - tokens).epsilon(1e-5));
  CHECK(quota_of(s.ctx).quota_group == s.ctx.model);
}

TEST_CASE("diet policy: a short runway compresses harder, then holds, then answers 429") {
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  const std::uint64_t tokens = diet_tokens(body);
  // Room for the request at a harder level only.
  const std::uint64_t tpm = tokens * 9 / 10;
  const auto p = quota(tpm);
  Proxy proxy(p);
  Proxy::Sent first = proxy.send(body);
  CHECK_FALSE(first.answer.has_value());
  CHECK(diet_report(first.ctx).mode == td::pruning::Mode::Survival);
  CHECK(quota_of(first.ctx).survival == "compressed");
  CHECK(diet_report(first.ctx).tokens_after * 12 / 10 <= tpm);
  CHECK(first.ctx.delay_upstream.count() == 0);

  // The same history again at once, until the window is drained: held until
  // it holds the request, and always at the same level (the latch: a retry
  // goes byte for byte as before).
  Proxy::Sent again;
  for (int i = 0; i < 20 && quota_of(again.ctx).survival != "waited"; ++i) {
    again = proxy.send(body);
    CHECK_FALSE(again.answer.has_value());
    CHECK(again.body == first.body);
  }
  CHECK(quota_of(again.ctx).survival == "waited");
  CHECK(again.ctx.delay_upstream.count() > 0);
  CHECK(again.ctx.delay_upstream.count() <= 20'000);

  // A proxy that may not hold it answers 429 with the wait, and takes nothing.
  const auto impatient = quota(tpm, 0);
  Proxy strict(impatient);
  Proxy::Sent refused = strict.send(body);
  double level = 0;
  for (int i = 0; i < 20 && !refused.answer.has_value(); ++i) {
    level = strict.runway(impatient, first.ctx.model).combined.level;
    refused = strict.send(body);
  }
  REQUIRE(refused.answer.has_value());
  const LocalResponse& answer = *refused.answer;
  CHECK(answer.status == 429);
  CHECK(answer.body.find("retry after") != std::string::npos);
  bool retry_after = false, error = false;
  for (const auto& [k, v] : answer.headers) {
    retry_after |= k == "retry-after" && std::stol(v) >= 1;
    error |= k == "x-tokendiet-error" && v == "runway_exhausted";
  }
  CHECK(retry_after);
  CHECK(error);
  CHECK(diet_report(refused.ctx).mode == td::pruning::Mode::Survival);  // what the explain headers will say
  CHECK(quota_of(refused.ctx).survival == "rejected");
  CHECK(strict.runway(impatient, first.ctx.model).combined.level >= level);  // refilled a little, nothing taken
}

TEST_CASE("diet policy: two proxies with the same history and runway send the same bytes") {
  const std::string body = trajectory_body("mini-swe-agent-10.json", "deepseek/deepseek-chat");
  const std::uint64_t tokens = diet_tokens(body);
  for (std::uint64_t tpm : {tokens * 100, tokens, tokens / 2}) {
    CAPTURE(tpm);
    Proxy a(quota(tpm)), b(quota(tpm));
    Proxy::Sent sa = a.send(body), sb = b.send(body);
    CHECK(sa.body == sb.body);
    CHECK(quota_of(sa.ctx).survival == quota_of(sb.ctx).survival);
  }
}

TEST_CASE("diet policy: thinking lowered under pressure, only where the body sets it") {
  std::string body = trajectory_body("tau-bench-3.json", "gpt-5");
  body.insert(body.size() - 1, R"(,"reasoning_effort":"high")");
  const std::string plain = trajectory_body("tau-bench-3.json", "gpt-5");
  const auto roomy = quota(100'000'000);
  Proxy calm(roomy);
  Proxy::Sent s = calm.send(body);
  CHECK(s.body.find(R"("reasoning_effort":"high")") != std::string::npos);
  CHECK(diet_report(s.ctx).thinking.empty());

  auto tight = quota(100'000);
  tight.thinking_budget_runway_fraction = 0.99;  // lowered under 99,000 left
  Proxy pressed(tight);
  pressed.send(plain);  // takes most of the window
  s = pressed.send(body, "key-1");
  CHECK(s.body.find(R"("reasoning_effort":"low")") != std::string::npos);
  CHECK(diet_report(s.ctx).thinking.find("reasoning_effort high -> low") != std::string::npos);
  Proxy::Sent none = pressed.send(plain);
  CHECK(none.body.find("reasoning_effort") == std::string::npos);  // none added
}

TEST_CASE("diet policy: the logging phase re-bases the runway on the headers and settles the bill") {
  const std::string body = trajectory_body("tau-bench-3.json");
  auto p = quota(1'000'000);
  p.quota_window_ms = 86'400'000;  // a day: little refills while the test runs
  Proxy proxy(p);
  Proxy::Sent s = proxy.send(body);
  REQUIRE(quota_of(s.ctx).runway_tokens);
  s.ctx.status = 200;
  billed(s.ctx).usage.present = true;
  billed(s.ctx).usage.prompt = diet_report(s.ctx).tokens_after + 5'000;  // the provider counted more than predicted
  billed(s.ctx).usage.completion = 100;
  RateLimitInfo rl;
  rl.limits.tokens.limit = 800'000;  // below the profile's 1,000,000: the provider's limit holds
  rl.limits.tokens.remaining = 500'000;
  rl.received = std::chrono::system_clock::now();
  billed(s.ctx).rate_limit = rl;
  proxy.diet->logging(s.ctx);
  // The provider's limit and level, which hold its own count of the prompt;
  // then the bill's 100 completion tokens (no output cap was reserved).
  const td::pruning::Runway r = proxy.runway(p, s.ctx.model);
  CHECK(r.combined.limit == doctest::Approx(800'000));
  CHECK(r.combined.level == doctest::Approx(500'000 - 100).epsilon(1e-4));

  // Without headers (Gemini) the bill corrects the prompt too.
  Proxy::Sent g = proxy.send(body, "key-2");
  const double before = proxy.runway(p, g.ctx.model, "key-2").combined.level;
  g.ctx.status = 200;
  billed(g.ctx).usage.present = true;
  billed(g.ctx).usage.prompt = diet_report(g.ctx).tokens_after + 5'000;
  proxy.diet->logging(g.ctx);
  CHECK(proxy.runway(p, g.ctx.model, "key-2").combined.level == doctest::Approx(before - 5'000).epsilon(1e-4));
}

TEST_CASE("diet policy: survival's compression re-anchors the task after the newest message; switched off, not") {
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  const std::uint64_t tokens = diet_tokens(body);
  for (bool on : {true, false}) {
    CAPTURE(on);
    auto p = quota(tokens * 9 / 10);
    p.reanchor_after_compression = on;
    Proxy proxy(p);
    Proxy::Sent s = proxy.send(body);
    REQUIRE(quota_of(s.ctx).survival == "compressed");
    const bool restated = s.body.find("[tokendiet: the task, restated]") != std::string::npos;
    CHECK(restated == on);
    CHECK((std::find(diet_report(s.ctx).strategies.begin(), diet_report(s.ctx).strategies.end(),
                     std::string_view("reanchor")) != diet_report(s.ctx).strategies.end()) == on);
    if (on) {  // the restatement is the last message; re-sent, the same bytes (never twice)
      CHECK(s.body.rfind("[tokendiet: the task, restated]") > s.body.rfind("\"role\":\"tool\""));
      CHECK(proxy.send(body).body == s.body);
    }
  }
}

// docs/design.md §Policy: a request without an API key is an anonymous client,
// told apart by its conversation; anonymous_clients: shared makes them one.
TEST_CASE("diet policy: two anonymous conversations draw on two runways; anonymous_clients: shared, on one") {
  const auto conversation = [](const char* task) {
    std::string text = task;
    while (text.size() < 8000) text += " the quick brown fox jumps over the lazy dog.";
    return std::string(R"({"model":"gpt-4o","messages":[{"role":"user","content":")") + text + "\"}]}";
  };
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    auto p = quota(1'000'000);
    p.quota_window_ms = 86'400'000;  // a day: nothing refills while the test runs
    if (shared) p.anonymous_clients = "shared";
    Proxy proxy(p);
    const Proxy::Sent a = proxy.send(conversation("Task A."), "");
    const Proxy::Sent b = proxy.send(conversation("Task B."), "");
    // The same conversation again draws on its own runway, whatever the mode.
    const Proxy::Sent a2 = proxy.send(conversation("Task A."), "");
    // A keyed client is never an anonymous one.
    const Proxy::Sent keyed = proxy.send(conversation("Task B."), "0123456789abcdef");
    REQUIRE(quota_of(a.ctx).runway_tokens);
    REQUIRE(quota_of(b.ctx).runway_tokens);
    REQUIRE(quota_of(a2.ctx).runway_tokens);
    REQUIRE(quota_of(keyed.ctx).runway_tokens);
    const std::int64_t ask_a = 1'000'000 - *quota_of(a.ctx).runway_tokens;
    CHECK(ask_a > 1000);
    CHECK(*quota_of(keyed.ctx).runway_tokens == std::int64_t(1'000'000 - diet_report(b.ctx).tokens_after));
    if (shared) {
      CHECK(*quota_of(b.ctx).runway_tokens ==
            *quota_of(a.ctx).runway_tokens - std::int64_t(diet_report(b.ctx).tokens_after));
    } else {
      CHECK(*quota_of(b.ctx).runway_tokens == std::int64_t(1'000'000 - diet_report(b.ctx).tokens_after));
    }
    CHECK(*quota_of(a2.ctx).runway_tokens < *quota_of(a.ctx).runway_tokens - ask_a / 2);
  }
}

TEST_CASE(
    "diet policy: control_fraction 1 sends every session untouched, reports the diet, and asks the runway for "
    "what went") {
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  const std::uint64_t tokens = diet_tokens(body);
  auto p = quota(10'000'000);
  p.quota_window_ms = 86'400'000;
  p.control_fraction = 1.0;
  Proxy proxy(p);
  Proxy::Sent s = proxy.send(body);
  CHECK_FALSE(s.answer.has_value());
  CHECK(s.body == body);  // byte for byte
  const DietReport r = diet_report(s.ctx);
  CHECK(r.arm == td::pruning::Arm::Control);
  CHECK(r.tokens_after == r.tokens_before);  // what went upstream
  CHECK(r.tokens_diet == tokens);            // what the diet would have sent
  CHECK(r.tokens_diet < r.tokens_before);
  CHECK(r.session_key != 0);
  REQUIRE(quota_of(s.ctx).runway_tokens);
  CHECK(*quota_of(s.ctx).runway_tokens == std::int64_t(10'000'000 - r.tokens_before));
  // Nothing was cut, so nothing is kept for the recall loop to answer.
  CHECK(s.ctx.objects.find<DietResult>()->outcome.result.hidden.empty());

  // control_fraction 0: the same history is the treatment, dieted.
  p.control_fraction = 0;
  Proxy treated(p);
  Proxy::Sent t = treated.send(body);
  CHECK(diet_report(t.ctx).arm == td::pruning::Arm::Treatment);
  CHECK(diet_report(t.ctx).tokens_after == tokens);
  CHECK(diet_report(t.ctx).tokens_diet == tokens);
  CHECK(t.body != body);
}

TEST_CASE("diet policy: a control session whose request as sent outruns the runway is cut by survival") {
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  const std::uint64_t tokens = diet_tokens(body);
  Proxy probe{td::pruning::Profile{}};
  const std::uint64_t sent = diet_report(probe.send(body).ctx).tokens_before;
  // Room for the diet's tokens with the margin, not for the request as sent.
  auto p = quota(std::uint64_t(double(tokens) * 1.3));
  REQUIRE(double(sent) * 1.2 > double(p.tpm_limit));
  p.quota_window_ms = 86'400'000;
  p.control_fraction = 1.0;
  Proxy proxy(p);
  Proxy::Sent s = proxy.send(body);
  CHECK(diet_report(s.ctx).arm == td::pruning::Arm::Control);
  CHECK(diet_report(s.ctx).mode == td::pruning::Mode::Survival);
  CHECK_FALSE(quota_of(s.ctx).survival.empty());  // the row says it happened
  CHECK(s.body != body);
  CHECK(diet_report(s.ctx).tokens_after < sent);
}
