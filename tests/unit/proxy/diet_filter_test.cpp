#include <doctest/doctest.h>

#include "config/config.hpp"
#include "proxy/diet_filter.hpp"
#include "proxy/header_map.hpp"

using namespace td::proxy;

namespace {

struct Run {
  RequestContext ctx;
  std::string body;
};

Run run(const td::config::Config& cfg, std::string target, std::string body, SimpleHeaderMap headers = {}) {
  DietFilter diet(cfg);
  Run r;
  r.ctx.method = "POST";
  r.ctx.target = std::move(target);
  r.ctx.model = "peeked";
  r.body = std::move(body);
  CHECK_FALSE(diet.request_body_filter(r.ctx, headers, r.body).has_value());
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
  CHECK(r.ctx.profile == "default");
  CHECK(r.ctx.mode == "none");
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
  for (std::string bad : {std::string("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\""), std::string("not json"),
                          std::string(R"({"messages":"wrong type"})"), std::string()}) {
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
  CHECK(r.ctx.profile == "off");
  CHECK(r.ctx.mode == "none");
  CHECK_FALSE(r.ctx.fail_open);
}
