// Context-overflow recovery (proxy/filters/recovery_filter.hpp, F21): a
// request the upstream found too long is compressed to fit the window the
// error names (or the profile's, or the model's), at survival's harder
// levels, with the note last; one that cannot fit is left for the error; the
// filter retries only a context-length error of a chat request.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <regex>
#include <string>

#include "config/config.hpp"
#include "providers/response_error.hpp"
#include "proxy/filters/recovery_filter.hpp"
#include "proxy/reports/reports.hpp"
#include "proxy/phases/header_map.hpp"
#include "pruning/reanchor.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;
using td::test::trajectory_body;

namespace {

// What the recovery filter reported ("" nothing).
std::string_view recovery_of(const RequestContext& ctx) {
  const RecoveryReport* r = ctx.objects.find<RecoveryReport>();
  return r ? r->outcome : std::string_view();
}

}  // namespace

namespace {

const std::string& history() {
  static const std::string body = trajectory_body("mini-swe-agent-12.json", "gpt-4o");
  return body;
}

td::providers::ResponseError openai_error(std::uint64_t window, std::uint64_t prompt) {
  return td::providers::classify_error_body(
      400,
      R"({"error":{"message":"This model's maximum context length is )" + std::to_string(window) +
          " tokens. However, your messages resulted in " + std::to_string(prompt) +
          R"( tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})");
}

rapidjson::Document parse(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

// The request's tokens as the diet counts them.
std::uint64_t tokens_of(const std::string& body) {
  td::diet::DietCaches caches;
  const Recovery r = recover_body({}, body, openai_error(1'000'000'000, 0), td::config::Config{}, caches);
  REQUIRE(r.tokens_before > 0);
  return r.tokens_before;
}

}  // namespace

TEST_CASE("recovery: compressed to fit the window the error names, the note last, the recent turns intact") {
  const std::uint64_t sent = tokens_of(history());
  const td::config::Config cfg;
  const std::string& note = cfg.profiles.empty() ? td::pruning::Profile{}.recovery_note : cfg.profiles[0].recovery_note;
  for (double fraction : {0.8, 0.5}) {
    CAPTURE(fraction);
    td::diet::DietCaches caches;
    const auto window = std::uint64_t(double(sent) * fraction);
    const Recovery r = recover_body({}, history(), openai_error(window, sent), cfg, caches);
    REQUIRE(r.outcome == "retried");
    CHECK(r.tokens_before == sent);
    CHECK(r.tokens_after <= window * 0.9);
    CHECK(r.level != td::pruning::Level::Standard);
    CHECK_FALSE(r.fired.empty());
    const rapidjson::Document before = parse(history()), after = parse(r.body);
    const auto& bm = before["messages"];
    const auto& am = after["messages"];
    // The note is the last message, a user message, after the task restated
    // (a compression re-anchors, F22); the last turns before them are as sent.
    REQUIRE(am.Size() >= 3);
    CHECK(std::string(am[am.Size() - 1]["role"].GetString()) == "user");
    CHECK(std::string(am[am.Size() - 1]["content"].GetString()) == note);
    const std::string restated = am[am.Size() - 2]["content"].GetString();
    CHECK(restated.rfind(td::pruning::kReanchorMarker, 0) == 0);
    CHECK(restated.find(std::string(bm[1]["content"].GetString()).substr(0, 200)) != std::string::npos);
    for (rapidjson::SizeType i = 1; i <= 4; ++i) CHECK(am[am.Size() - 2 - i] == bm[bm.Size() - i]);
    CHECK(std::find(r.fired.begin(), r.fired.end(), std::string_view("reanchor")) != r.fired.end());
    CHECK(am[0] == bm[0]);  // the system prompt
  }
  // The harder cut is only taken when the easier one does not fit.
  td::diet::DietCaches a, b;
  const Recovery loose = recover_body({}, history(), openai_error(sent * 8 / 10, sent), cfg, a);
  const Recovery tight = recover_body({}, history(), openai_error(sent * 3 / 10, sent), cfg, b);
  CHECK(loose.level == td::pruning::Level::Window);
  REQUIRE(tight.outcome == "retried");
  CHECK(tight.level == td::pruning::Level::DropMiddle);
}

TEST_CASE("recovery: the provider's count calibrates the diet's, and the output cap takes its room") {
  const std::uint64_t sent = tokens_of(history());
  const td::config::Config cfg;
  td::diet::DietCaches c1, c2, c3;
  // The provider counted twice what the diet did: the window holds half as many diet tokens.
  const Recovery calibrated = recover_body({}, history(), openai_error(sent, 2 * sent), cfg, c1);
  REQUIRE(calibrated.outcome == "retried");
  CHECK(calibrated.budget == doctest::Approx(double(sent) / 2 * 0.9));
  CHECK(calibrated.tokens_after <= calibrated.budget);
  // An output cap as large as the window leaves no room: the error stands.
  std::string capped = history();
  capped.insert(capped.rfind('}'), R"(,"max_completion_tokens":)" + std::to_string(sent));
  CHECK(recover_body({}, capped, openai_error(sent, sent), cfg, c2).outcome == "no_fit");
  // A smaller cap shrinks the budget by itself.
  std::string small_cap = history();
  small_cap.insert(small_cap.rfind('}'), R"(,"max_completion_tokens":1000)");
  const Recovery with_cap = recover_body({}, small_cap, openai_error(sent, sent), cfg, c3);
  CHECK(with_cap.budget == doctest::Approx(double(sent - 1000) * 0.9).epsilon(0.01));
}

TEST_CASE("recovery: what cannot fit, or has no known window, is left for the error; the switch turns it off") {
  const td::config::Config cfg;
  td::diet::DietCaches caches;
  const Recovery tiny = recover_body({}, history(), openai_error(500, 0), cfg, caches);
  CHECK(tiny.outcome == "no_fit");
  CHECK(tiny.body.empty());

  // No number in the error and a model of no known window: nothing to aim at...
  std::string unknown = history();
  unknown.replace(unknown.find("gpt-4o"), 6, "llama-3-70b");
  const auto bare = td::providers::classify_error_body(
      400, R"({"error":{"message":"context length exceeded","code":"context_length_exceeded"}})");
  REQUIRE(bare.context_length_exceeded);
  CHECK(recover_body({}, unknown, bare, cfg, caches).outcome == "no_fit");
  // ... unless the profile names it.
  td::config::Config windowed;
  td::pruning::Profile p;
  p.context_window = 30000;
  windowed.profiles.push_back(p);
  const Recovery named = recover_body({}, unknown, bare, windowed, caches);
  CHECK(named.outcome == "retried");
  CHECK(named.tokens_after <= 30000 * 0.9);

  td::config::Config off;
  td::pruning::Profile q;
  q.recovery = false;
  off.profiles.push_back(q);
  CHECK(recover_body({}, history(), openai_error(50000, 0), off, caches).outcome.empty());
  CHECK(recover_body({}, "not json", openai_error(50000, 0), cfg, caches).outcome.empty());
}

TEST_CASE("recovery: a trailing assistant prefill stays last, the note just before it") {
  std::string body = history();
  body.insert(body.rfind(']'), R"(,{"role":"user","content":"go on"},{"role":"assistant","content":"Next I will"})");
  td::diet::DietCaches caches;
  const Recovery r = recover_body({}, body, openai_error(30000, 0), td::config::Config{}, caches);
  REQUIRE(r.outcome == "retried");
  const rapidjson::Document d = parse(r.body);
  const auto& m = d["messages"];
  CHECK(std::string(m[m.Size() - 1]["content"].GetString()) == "Next I will");
  CHECK(std::string(m[m.Size() - 2]["content"].GetString()) == td::pruning::Profile{}.recovery_note);
  CHECK(std::string(m[m.Size() - 4]["content"].GetString()) == "go on");
}

TEST_CASE("recovery: without re-anchoring after a compression, only the note is added") {
  td::config::Config cfg;
  td::pruning::Profile p;
  p.reanchor_after_compression = false;
  cfg.profiles.push_back(p);
  td::diet::DietCaches caches;
  const Recovery r = recover_body({}, history(), openai_error(30000, 0), cfg, caches);
  REQUIRE(r.outcome == "retried");
  const rapidjson::Document before = parse(history()), after = parse(r.body);
  CHECK(after["messages"][after["messages"].Size() - 2] == before["messages"][before["messages"].Size() - 1]);
}

TEST_CASE("recovery filter: retries a chat request's context-length error once compressed, nothing else") {
  const td::config::Config cfg;
  td::diet::DietCaches caches;
  RecoveryFilter filter(cfg, caches);
  const std::uint64_t sent = tokens_of(history());
  const std::string error = R"({"error":{"message":"This model's maximum context length is )" +
                            std::to_string(sent / 2) + R"( tokens. However, your messages resulted in )" +
                            std::to_string(sent) +
                            R"( tokens.","type":"invalid_request_error","code":"context_length_exceeded"}})";
  auto outcome = [](unsigned status, std::string_view body) {
    UpstreamOutcome o;
    o.status = status;
    o.body = body;
    o.body_complete = true;
    return o;
  };
  auto chat = [] {
    RequestContext ctx;
    ctx.method = "POST";
    ctx.target = "/v1/chat/completions";
    return ctx;
  };
  {
    RequestContext ctx = chat();
    ctx.objects.publish<DietReport>(DietReport{.tokens_before = sent, .tokens_after = sent});  // the diet cut nothing
    std::string body = history();
    CHECK(filter.upstream_failure_filter(ctx, outcome(400, error), body) == RetryDecision::retry);
    CHECK(recovery_of(ctx) == "retried");
    CHECK(ctx.objects.find<RecoveryReport>()->fit_tokens > 0);
    CHECK(body.size() < history().size());
    CHECK(ctx.objects.find<DietReport>()->tokens_after <= sent / 2 * 0.9);  // the retry is what went
  }
  {  // Another 400, a 429, a 5xx, a failed attempt: not recovery's.
    const td::proxy::UpstreamFailure failure{};
    UpstreamOutcome failed;
    failed.failure = &failure;
    for (const UpstreamOutcome& o : {outcome(400, R"({"error":{"message":"bad tool schema","code":"invalid_value"}})"),
                                     outcome(429, R"({"error":{"message":"Rate limit","code":"rate_limit_exceeded"}})"),
                                     outcome(500, error), failed}) {
      RequestContext ctx = chat();
      std::string body = history();
      CHECK(filter.upstream_failure_filter(ctx, o, body) == RetryDecision::no_retry);
      CHECK(body == history());
      CHECK(recovery_of(ctx).empty());
    }
  }
  {  // Not a chat request.
    RequestContext ctx = chat();
    ctx.target = "/v1/embeddings";
    std::string body = history();
    CHECK(filter.upstream_failure_filter(ctx, outcome(400, error), body) == RetryDecision::no_retry);
    CHECK(body == history());
  }
  {  // Cannot fit: the error stands, and the log says so.
    RequestContext ctx = chat();
    std::string body = history();
    const std::string tiny =
        R"({"error":{"message":"This model's maximum context length is 100 tokens.","code":"context_length_exceeded"}})";
    CHECK(filter.upstream_failure_filter(ctx, outcome(400, tiny), body) == RetryDecision::no_retry);
    CHECK(body == history());
    CHECK(recovery_of(ctx) == "no_fit");
  }
}

TEST_CASE("recovery: no new tombstone in a retry, whose evicted outputs nothing could archive first") {
  // A real Codex session with completed plan steps, semantic mode on at a low threshold.
  const std::string codex = trajectory_body("codex-1.json", "gpt-4o");
  td::config::Config cfg;
  td::pruning::Profile p;
  p.semantic_threshold = 8000;
  cfg.profiles.push_back(p);
  const std::uint64_t sent = tokens_of(codex);
  td::diet::DietCaches caches;
  const Recovery r = recover_body({}, codex, openai_error(sent * 6 / 10, sent), cfg, caches);
  REQUIRE(r.outcome == "retried");
  CHECK(r.body.find("output archived as td-") == std::string::npos);
  CHECK(std::find(r.fired.begin(), r.fired.end(), std::string_view("completed_tasks")) == r.fired.end());
}

TEST_CASE("recovery filter: the retry's cuts are recallable: the offer holds their texts, or the retry gets the tool") {
  const td::config::Config cfg;
  td::diet::DietCaches caches;
  RecoveryFilter filter(cfg, caches);
  const std::uint64_t sent = tokens_of(history());
  UpstreamOutcome o;
  o.status = 400;
  const std::string error = R"({"error":{"message":"This model's maximum context length is )" +
                            std::to_string(sent / 2) + R"( tokens. However, your messages resulted in )" +
                            std::to_string(sent) +
                            R"( tokens.","type":"invalid_request_error","code":"context_length_exceeded"}})";
  o.body = error;
  o.body_complete = true;
  const std::regex notice(R"(\[… (t[0-9a-f]{8}):\d+-\d+ hidden\])");
  for (const bool offered_before : {false, true}) {
    CAPTURE(offered_before);
    RequestContext ctx;
    ctx.method = "POST";
    ctx.target = "/v1/chat/completions";
    ctx.key_fingerprint = "k";
    if (offered_before)
      ctx.objects.publish<RecallOffer>().source = std::make_shared<RequestRecall>(
          "k", std::vector<td::pruning::ArchivedOutput>{{"td-x", "task", 1, "archived"}});
    std::string body = history();
    REQUIRE(filter.upstream_failure_filter(ctx, o, body) == RetryDecision::retry);
    std::smatch m;
    REQUIRE(std::regex_search(body, m, notice));
    const RecallOffer* offer = ctx.objects.find<RecallOffer>();
    REQUIRE(offer != nullptr);
    CHECK(offer->source->read("k", m[1].str()).has_value());  // the text the retry's snip hid
    if (offered_before) {
      CHECK(offer->source->read("k", "td-x") == "archived");  // what it held before stays
    } else {
      CHECK(body.find(R"("name":"tokendiet_recall")") != std::string::npos);
      CHECK(offer->limits.max_calls == td::pruning::Profile{}.recall_max_calls);
    }
  }
}
