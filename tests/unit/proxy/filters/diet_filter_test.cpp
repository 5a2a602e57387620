#include <doctest/doctest.h>

#include "config/config.hpp"
#include "proxy/filters/diet_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "providers/request.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "filter_reports.hpp"
#include "trajectory_body.hpp"

using namespace td::proxy;
using td::test::billed;
using td::test::diet_report;
using td::test::fixture;
using td::test::trajectory_body;

namespace {

struct Run {
  RequestContext ctx;
  std::string body;
};

Run run(const td::config::Config& cfg, std::string target, std::string body, SimpleHeaderMap headers = {}) {
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches});
  Run r;
  r.ctx.method = "POST";
  r.ctx.target = std::move(target);
  r.ctx.model = "peeked";
  r.body = std::move(body);
  CHECK_FALSE(diet.request_body_filter(r.ctx, headers, r.body).answers());
  return r;
}

const std::string kChat =
    R"({"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]})";

}  // namespace

TEST_CASE("diet filter: a chat request is parsed, its model and stream read exactly") {
  td::config::Config cfg;
  Run r = run(cfg, "/v1/chat/completions", kChat);
  CHECK(r.body == kChat);
  CHECK_FALSE(r.ctx.fail_open);
  CHECK(r.ctx.model == "gpt-4o");
  CHECK(r.ctx.stream);
  CHECK(diet_report(r.ctx).profile == "default");
  CHECK(diet_report(r.ctx).mode == td::pruning::Mode::Standard);
  CHECK(diet_report(r.ctx).tokens_before > 0);
  CHECK(diet_report(r.ctx).tokens_after == diet_report(r.ctx).tokens_before);  // two messages: nothing to cut
  CHECK(diet_report(r.ctx).strategies.empty());
}

TEST_CASE("diet filter: Gemini takes its model from the path") {
  td::config::Config cfg;
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
  Run r = run(cfg, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body);
  CHECK(r.body == body);
  CHECK_FALSE(r.ctx.fail_open);
  CHECK(r.ctx.model == "gemini-2.5-pro");
  CHECK(r.ctx.stream);
}

TEST_CASE("diet filter: fails open on bodies it cannot parse") {
  td::config::Config cfg;
  for (std::string bad : {std::string("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\""),
                          std::string("not json"), std::string(R"({"messages":"wrong type"})"), std::string()}) {
    Run r = run(cfg, "/v1/chat/completions", bad);
    CHECK(r.body == bad);
    CHECK(r.ctx.fail_open);
    CHECK(r.ctx.fail_open_reason.rfind("parse: ", 0) == 0);
    CHECK(r.ctx.model == "peeked");
  }
}

TEST_CASE("diet filter: leaves alone what is not a chat request it can read") {
  td::config::Config cfg;
  Run embeddings = run(cfg, "/v1/embeddings", R"({"input":"x"})");
  CHECK(embeddings.body == R"({"input":"x"})");
  CHECK_FALSE(embeddings.ctx.fail_open);
  CHECK(embeddings.ctx.model == "peeked");

  Run gzip = run(cfg, "/v1/chat/completions", "\x1f\x8b binary", SimpleHeaderMap{{"Content-Encoding", "gzip"}});
  CHECK(gzip.body == "\x1f\x8b binary");
  CHECK_FALSE(gzip.ctx.fail_open);
}

TEST_CASE("diet filter: a disabled profile forwards untouched") {
  td::config::Config cfg;
  td::pruning::Profile off;
  off.name = "off";
  off.enabled = false;
  cfg.profiles.push_back(off);
  Run r = run(cfg, "/v1/chat/completions", kChat);
  CHECK(r.body == kChat);
  CHECK(diet_report(r.ctx).profile == "off");
  CHECK(diet_report(r.ctx).mode == td::pruning::Mode::None);
  CHECK_FALSE(r.ctx.fail_open);
  // Not even parsed or counted: the model and stream flag come from a peek.
  CHECK(r.ctx.model == "gpt-4o");
  CHECK(r.ctx.stream);
  CHECK(diet_report(r.ctx).tokens_before == 0);
}

TEST_CASE("diet filter: a disabled profile is chosen by model; the others still diet") {
  td::config::Config cfg;
  td::pruning::Profile off;
  off.name = "off";
  off.models = {"gpt-4o-mini*"};
  off.enabled = false;
  cfg.profiles.push_back(off);
  Run on = run(cfg, "/v1/chat/completions", kChat);
  CHECK(diet_report(on.ctx).profile != "off");
  CHECK(diet_report(on.ctx).tokens_before > 0);  // parsed and counted
  std::string mini = kChat;
  mini.replace(mini.find("gpt-4o"), 6, "gpt-4o-mini");
  Run skipped = run(cfg, "/v1/chat/completions", mini);
  CHECK(diet_report(skipped.ctx).profile == "off");
  CHECK(diet_report(skipped.ctx).tokens_before == 0);
  CHECK(skipped.body == mini);
  // Gemini names its model in the path.
  Run gemini = run(cfg, "/v1beta/models/gpt-4o-mini-x:generateContent", R"({"contents":[]})");
  CHECK(diet_report(gemini.ctx).profile == "off");
  CHECK(gemini.ctx.model == "gpt-4o-mini-x");
}

TEST_CASE("diet filter: a long agent history goes on a diet, and the result is a valid request") {
  td::config::Config cfg;
  td::pruning::Profile eager;
  eager.name = "eager";
  eager.trigger_tokens = 20000;   // the default 100k is more than this history holds
  eager.cache_write_price = 0.0;  // cache writes free (as OpenAI's): every step pays
  cfg.profiles.push_back(eager);
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  Run r = run(cfg, "/v1/chat/completions", body);
  INFO(r.ctx.fail_open_reason);
  CHECK_FALSE(r.ctx.fail_open);
  CHECK(r.ctx.model == "deepseek/deepseek-chat");
  CHECK(diet_report(r.ctx).mode == td::pruning::Mode::Standard);
  CHECK(diet_report(r.ctx).tokens_before > 50000);
  CHECK(diet_report(r.ctx).tokens_after < diet_report(r.ctx).tokens_before);
  CHECK_FALSE(diet_report(r.ctx).strategies.empty());
  CHECK(r.body.size() < body.size());
  auto back = td::providers::parse(td::providers::Api::openai_chat, r.body);
  REQUIRE(back.request.has_value());
  auto sent = td::providers::parse(td::providers::Api::openai_chat, body);
  REQUIRE(sent.request.has_value());
  CHECK(back.request->conversation.messages.size() == sent.request->conversation.messages.size());
  CHECK(diet_report(r.ctx).profile == "eager");
  // The same history diets to the same bytes (provider prefix caches keep hitting).
  Run again = run(cfg, "/v1/chat/completions", body);
  CHECK(again.body == r.body);
}

TEST_CASE("diet filter: the logging phase learns the bill ratio from billed usage") {
  td::config::Config cfg;
  td::tok::Calibration calibration;
  td::diet::DietCaches caches;
  DietFilter diet(cfg, DietServices{.caches = &caches, .calibration = &calibration});
  diet.logging(RequestContext{});  // no state, no usage: nothing to learn
  RequestContext ctx;
  ctx.method = "POST";
  ctx.target = "/v1/chat/completions";
  std::string body = trajectory_body("tau-bench-3.json");
  SimpleHeaderMap headers;
  diet.request_body_filter(ctx, headers, body);
  REQUIRE(ctx.model == "gpt-4o");
  // An exact tokenizer learns a ratio too: the runway predicts bills in the
  // provider's tokens, however its quota counts them.
  billed(ctx).usage.present = true;
  billed(ctx).usage.prompt = diet_report(ctx).tokens_after * 5 / 4;
  ctx.status = 200;
  diet.logging(ctx);
  CHECK(calibration.ratio("gpt-4o") == doctest::Approx(1.25).epsilon(0.01));
  RequestContext failed;  // an error answer teaches nothing
  failed.method = "POST";
  failed.target = "/v1/chat/completions";
  diet.request_body_filter(failed, headers, body);
  failed.status = 500;
  billed(failed).usage = billed(ctx).usage;
  billed(failed).usage.prompt = 1;
  diet.logging(failed);
  CHECK(calibration.ratio("gpt-4o") == doctest::Approx(1.25).epsilon(0.01));

  RequestContext est;
  est.method = "POST";
  est.target = "/v1/messages";
  std::string anthropic = fixture("providers/anthropic.json");
  est.status = 200;
  diet.request_body_filter(est, headers, anthropic);
  REQUIRE(est.model == "claude-sonnet-4-5");
  billed(est).usage.present = true;
  billed(est).usage.prompt = 2 * diet_report(est).tokens_after;
  diet.logging(est);
  CHECK(calibration.ratio("claude-sonnet-4-5") > 1.5);
}

// What is cut is a pure function of the bytes: the calibrated ratio (learned
// from bills, different per process and over time) must not move a decision,
// or two replicas, or one before and after a restart, send different bytes.
TEST_CASE("diet filter: an estimated model prunes to the same bytes whatever ratio the calibration learned") {
  // A diet only over 120k tokens, which the history (deepseek: estimated,
  // about 96k) passes only if counted with a learned ratio over 1.25.
  td::config::Config cfg;
  td::pruning::Profile profile;
  profile.trigger_tokens = 120000;
  profile.cache_write_price = 0.0;  // every step pays: only the count decides
  cfg.profiles.push_back(profile);
  const std::string body = trajectory_body("mini-swe-agent-12.json");
  auto diet_with_ratio = [&](double ratio) {
    td::tok::Calibration calibration;
    calibration.set_state({{"deepseek/deepseek-chat", ratio, 100}});
    td::diet::DietCaches caches;
    DietFilter diet(cfg, DietServices{.caches = &caches, .calibration = &calibration});
    Run r;
    r.ctx.method = "POST";
    r.ctx.target = "/v1/chat/completions";
    r.body = body;
    SimpleHeaderMap headers;
    CHECK(diet.request_body_filter(r.ctx, headers, r.body).proceeds());
    return r;
  };
  const Run learned_low = diet_with_ratio(0.5);
  const Run fresh = diet_with_ratio(1.0);
  const Run learned_high = diet_with_ratio(4.0);
  CHECK(fresh.body == learned_low.body);
  CHECK(fresh.body == learned_high.body);
  CHECK(diet_report(fresh.ctx).tokens_before == diet_report(learned_high.ctx).tokens_before);
  CHECK(diet_report(fresh.ctx).strategies == diet_report(learned_high.ctx).strategies);
}
