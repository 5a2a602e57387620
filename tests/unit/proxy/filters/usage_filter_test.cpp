// The usage filter through its phases, as the proxy calls them, without a
// network: request body → response head → response body pieces.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "filter_reports.hpp"
#include "proxy/filters/usage_filter.hpp"
#include "test_util.hpp"

using namespace td;
using namespace td::proxy;
using td::usage_test::fixed_split;
using td::usage_test::read_fixture;

namespace {

struct Run {
  RequestContext ctx;
  std::string body;      // what went upstream
  SimpleHeaderMap head;  // the response head as relayed
  std::string client;    // the response body as relayed
};

// One request through the filter: `upstream_body` arrives in pieces of `piece` bytes.
Run run(UsageFilter& f, std::string target, std::string request_body, unsigned status, SimpleHeaderMap head,
        const std::string& upstream_body, std::size_t piece, std::string model = "gpt-5.1") {
  Run r;
  r.ctx.method = "POST";
  r.ctx.target = std::move(target);
  r.ctx.model = std::move(model);
  r.body = std::move(request_body);
  SimpleHeaderMap req;
  CHECK(f.request_body_filter(r.ctx, req, r.body).proceeds());
  r.ctx.status = status;
  r.head = std::move(head);
  f.response_head_filter(r.ctx, r.head);
  auto pieces = fixed_split(upstream_body, piece);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::string chunk(pieces[i]);
    f.response_body_filter(r.ctx, chunk, false);
    r.client += chunk;
  }
  std::string last;
  f.response_body_filter(r.ctx, last, true);
  r.client += last;
  return r;
}

SimpleHeaderMap sse_head() {
  return {{"content-type", "text/event-stream; charset=utf-8"},
          {"x-ratelimit-limit-tokens", "50000000"},
          {"x-ratelimit-remaining-tokens", "49999975"},
          {"x-ratelimit-reset-tokens", "6m0s"}};
}

const char* kStreamBody = R"({"model":"gpt-5.1","messages":[{"role":"user","content":"count to six"}],"stream":true})";

}  // namespace

TEST_CASE("filter: an OpenAI stream without include_usage is asked for it and scrubbed") {
  config::Config cfg;
  UsageFilter f(cfg);
  std::string upstream = read_fixture("wire/openai-chat-stream-include-usage.sse");
  for (std::size_t piece : {1u, 7u, 100u, 100000u}) {
    CAPTURE(piece);
    SimpleHeaderMap head = sse_head();
    head.add("content-length", std::to_string(upstream.size()));
    Run r = run(f, "/v1/chat/completions", kStreamBody, 200, head, upstream, piece);
    CHECK(r.body.ends_with(R"("stream":true,"stream_options":{"include_usage":true}})"));
    CHECK(r.client.find("usage") == std::string::npos);
    CHECK(r.client.ends_with("data: [DONE]\n\n"));
    CHECK_FALSE(r.head.contains("content-length"));
    CHECK(td::test::billed(r.ctx).usage.present);
    CHECK(td::test::billed(r.ctx).usage.prompt == 33);
    CHECK(td::test::billed(r.ctx).usage.completion == 10);
    CHECK(td::test::billed(r.ctx).response_model == "gpt-5.1-2025-11-13");
    REQUIRE(td::test::billed(r.ctx).rate_limit);
    CHECK(td::test::billed(r.ctx).rate_limit->limits.tokens.remaining == 49999975);
    CHECK(td::test::billed(r.ctx).rate_limit->limits.tokens.reset ==
          td::test::billed(r.ctx).rate_limit->received + std::chrono::minutes{6});
    CHECK_FALSE(r.ctx.fail_open);
  }
}

TEST_CASE("filter: a client that asked for usage gets the stream untouched") {
  config::Config cfg;
  UsageFilter f(cfg);
  std::string asked = R"({"model":"gpt-5.1","stream":true,"stream_options":{"include_usage":true},"messages":[]})";
  std::string upstream = read_fixture("wire/openai-chat-stream-include-usage.sse");
  Run r = run(f, "/v1/chat/completions", asked, 200, sse_head(), upstream, 13);
  CHECK(r.body == asked);
  CHECK(r.client == upstream);
  CHECK(td::test::billed(r.ctx).usage.prompt == 33);
}

TEST_CASE("filter: stream_usage: false leaves request and stream alone (and records no usage)") {
  config::Config cfg;
  pruning::Profile p;
  p.name = "no-inject";
  p.stream_usage = false;
  cfg.profiles.push_back(p);
  UsageFilter f(cfg);
  std::string upstream = read_fixture("wire/openai-chat-stream.sse");
  Run r = run(f, "/v1/chat/completions", kStreamBody, 200, sse_head(), upstream, 50);
  CHECK(r.body == kStreamBody);
  CHECK(r.client == upstream);
  CHECK_FALSE(td::test::billed(r.ctx).usage.present);
}

TEST_CASE("filter: non-stream and other providers are teed, never changed") {
  config::Config cfg;
  UsageFilter f(cfg);
  struct Case {
    const char* target;
    const char* fixture;
    const char* content_type;
    std::uint64_t prompt, completion, cached_read, cache_write;
  } cases[] = {
      {"/v1/chat/completions", "wire/openai-chat-nonstream.json", "application/json", 33, 10, 0, 0},
      {"/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse", "wire/gemini-stream-functioncall-verbatim.sse",
       "text/event-stream", 148, 193, 0, 0},
      {"/v1/messages", "wire/anthropic-stream-tool-use.sse", "text/event-stream", 1591, 175, 0, 0},
      {"/v1/messages", "synth/usage/anthropic-messages-cache.json", "application/json", 12 + 18204 + 1577, 312, 18204,
       1577},
      {"/v1/responses", "synth/openai-responses-stream.sse", "text/event-stream", 27, 2, 0, 0},
  };
  for (const auto& c : cases) {
    CAPTURE(c.fixture);
    std::string upstream = read_fixture(c.fixture);
    std::string req = R"({"model":"m","stream":true,"messages":[]})";
    bool openai_chat = std::string_view(c.target) == "/v1/chat/completions";
    if (openai_chat) req = R"({"model":"m","messages":[]})";  // not streaming: no injection
    Run r = run(f, c.target, req, 200, {{"content-type", c.content_type}}, upstream, 11);
    CHECK(r.body == req);
    CHECK(r.client == upstream);
    CHECK(td::test::billed(r.ctx).usage.prompt == c.prompt);
    CHECK(td::test::billed(r.ctx).usage.completion == c.completion);
    CHECK(td::test::billed(r.ctx).usage.cached_read == c.cached_read);
    CHECK(td::test::billed(r.ctx).usage.cache_write == c.cache_write);
  }
}

TEST_CASE("filter: an error answered to an injected request passes through and is classified") {
  config::Config cfg;
  UsageFilter f(cfg);
  std::string err = read_fixture("synth/openai-error-context-length.json");
  Run r = run(f, "/v1/chat/completions", kStreamBody, 400,
              {{"content-type", "application/json"}, {"content-length", std::to_string(err.size())}}, err, 9);
  CHECK(r.client == err);
  CHECK(r.head.contains("content-length"));
  CHECK(td::test::billed(r.ctx).context_length_exceeded);
  CHECK(td::test::billed(r.ctx).upstream_error_code == "context_length_exceeded");
  CHECK_FALSE(td::test::billed(r.ctx).usage.present);

  std::string gem = read_fixture("wire/gemini-stream-error-not-found.json");
  Run g = run(f, "/v1beta/models/x:streamGenerateContent?alt=sse", "{}", 404, {{"content-type", "text/event-stream"}},
              gem, 5);
  CHECK(g.client == gem);
  CHECK_FALSE(td::test::billed(g.ctx).context_length_exceeded);
  CHECK(td::test::billed(g.ctx).upstream_error_code == "NOT_FOUND");
}

TEST_CASE("filter: a stream that breaks off still reports the usage seen so far") {
  config::Config cfg;
  UsageFilter f(cfg);
  std::string upstream = read_fixture("wire/gemini-stream-thinking.sse");
  RequestContext ctx;
  ctx.target = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
  std::string body = "{}";
  SimpleHeaderMap req;
  f.request_body_filter(ctx, req, body);
  ctx.status = 200;
  SimpleHeaderMap head{{"content-type", "text/event-stream"}};
  f.response_head_filter(ctx, head);
  std::string half = upstream.substr(0, upstream.size() / 2);
  f.response_body_filter(ctx, half, false);  // no end_of_stream: the upstream broke
  CHECK(td::test::billed(ctx).usage.present);
  CHECK(td::test::billed(ctx).usage.prompt == 34);
  CHECK(td::test::billed(ctx).usage.completion > 0);
}

TEST_CASE("filter: a compressed body is relayed untouched and not read") {
  config::Config cfg;
  UsageFilter f(cfg);
  std::string gz = std::string("\x1f\x8b\x08\x00", 4) + std::string(300, '\x01');
  Run r = run(f, "/v1/chat/completions", kStreamBody, 200,
              {{"content-type", "text/event-stream"}, {"content-encoding", "gzip"}}, gz, 64);
  CHECK(r.client == gz);
  CHECK_FALSE(td::test::billed(r.ctx).usage.present);
  CHECK(r.ctx.fail_open);
}
