// The recall loop (docs/design.md §Recall) through a real session: the recall
// filter continues an answer that called tokendiet_recall, and the client gets
// one response made of both rounds. the recall offer is published by a filter of the
// test's (in the product, the diet sets it when it wrote tombstones).
#include <doctest/doctest.h>

#include <rapidjson/document.h>

#include <map>

#include "proxy/filters/recall_filter.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "proxy_harness.hpp"
#include "test_util.hpp"

using namespace td::proxy;
using namespace td::net_test;

namespace {

struct OneEntry final : RecallSource {
  std::optional<std::string> read(std::string_view key_fp, std::string_view id) const override {
    if (id == "td-aaa") return std::string("archived line 1\narchived line 2\n");
    return std::nullopt;
  }
};

class SetRecall final : public Filter {
 public:
  explicit SetRecall(const RecallSource* source) : source_(source) {}
  std::string_view name() const override { return "set_recall"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap&, std::string&) override {
    ctx.objects.publish<RecallOffer>(
        RecallOffer{std::shared_ptr<const RecallSource>(std::shared_ptr<void>(), source_), {}});
    return {};
  }
  void logging(const RequestContext& ctx) override {
    std::lock_guard lock(mutex_);
    if (const RecallReport* r = ctx.objects.find<RecallReport>()) {
      recalled_ = r->recalled;
      rounds_ = r->rounds;
    }
    logged_ = true;
  }
  bool logged() const {
    std::lock_guard lock(mutex_);
    return logged_;
  }
  std::vector<std::string> recalled() const {
    std::lock_guard lock(mutex_);
    return recalled_;
  }
  unsigned rounds() const {
    std::lock_guard lock(mutex_);
    return rounds_;
  }

 private:
  const RecallSource* source_;
  mutable std::mutex mutex_;
  bool logged_ = false;
  std::vector<std::string> recalled_;
  unsigned rounds_ = 0;
};

std::string chunk(const std::string& id, const std::string& delta, const std::string& finish = "null") {
  return "data: {\"id\":\"" + id +
         "\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" + delta +
         ",\"finish_reason\":" + finish + "}]}\n\n";
}

UpstreamResponse sse_response(std::string body) {
  UpstreamResponse res{boost::beast::http::status::ok, 11};
  res.set(boost::beast::http::field::content_type, "text/event-stream");
  res.body() = std::move(body);
  return res;
}

// Round 1 calls tokendiet_recall; round 2 quotes the tool result it was sent.
UpstreamResponse answer(const UpstreamRequest& req, std::size_t n) {
  if (n == 0)
    return sse_response(
        chunk("c1", R"({"role":"assistant","content":"Let me look. "})") +
        chunk(
            "c1",
            R"({"tool_calls":[{"index":0,"id":"call_r","type":"function","function":{"name":"tokendiet_recall","arguments":"{\"id\":\"td-aaa\",\"lines\":\"2-2\"}"}}]})") +
        chunk("c1", "{}", "\"tool_calls\"") + "data: [DONE]\n\n");
  rapidjson::Document d;
  d.Parse(req.body().c_str());
  std::string quoted = "(no tool result)";
  if (!d.HasParseError() && d.HasMember("messages") && d["messages"].Size() > 0) {
    const auto& last = d["messages"][d["messages"].Size() - 1];
    if (last.HasMember("content") && last["content"].IsString()) quoted = last["content"].GetString();
  }
  std::string text = "Recalled: " + quoted;
  std::string escaped;
  for (char c : text) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  return sse_response(chunk("c2", R"({"role":"assistant","content":")" + escaped + "\"}") +
                      chunk("c2", "{}", "\"stop\"") + "data: [DONE]\n\n");
}

}  // namespace

TEST_CASE(
    "recall loop: an OpenAI chat stream that calls tokendiet_recall is continued with the archived lines; the client "
    "gets one stream") {
  FakeUpstream upstream(answer);
  OneEntry archive;
  std::vector<std::unique_ptr<Filter>> chain;
  auto set = std::make_unique<SetRecall>(&archive);
  SetRecall* observer = set.get();
  chain.push_back(std::move(set));
  chain.push_back(std::make_unique<RecallFilter>());
  TestProxy proxy(std::move(chain), upstream.port());

  ClientReply r = post(proxy.port(), "/v1/chat/completions",
                       R"({"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"go"}]})");
  CHECK(r.status == 200);
  CHECK(r.body.find("Let me look. ") != std::string::npos);
  CHECK(r.body.find("Recalled: archived line 2\\n") != std::string::npos);
  CHECK(r.body.find("tokendiet_recall") == std::string::npos);
  CHECK(td::usage_test::occurrences(r.body, "[DONE]") == 1);
  CHECK(r.body.find("\"c2\"") == std::string::npos);  // one chunk id
  CHECK(r.body.find("\"finish_reason\":\"stop\"") != std::string::npos);
  CHECK(r.body.find("\"finish_reason\":\"tool_calls\"") == std::string::npos);
  auto seen = upstream.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].body().find(R"("tool_call_id":"call_r","content":"archived line 2\n")") != std::string::npos);
  REQUIRE(eventually([&] { return observer->logged(); }));
  CHECK(observer->recalled() == std::vector<std::string>{"td-aaa"});
  CHECK(observer->rounds() == 1);

  // Without a recall offer the same answer reaches the client as it came.
  FakeUpstream plain(answer);
  std::vector<std::unique_ptr<Filter>> bare;
  bare.push_back(std::make_unique<RecallFilter>());
  TestProxy direct(std::move(bare), plain.port());
  ClientReply untouched =
      post(direct.port(), "/v1/chat/completions", R"({"model":"gpt-x","stream":true,"messages":[]})");
  CHECK(untouched.body == answer(UpstreamRequest{}, 0).body());
  CHECK(plain.requests().size() == 1);
}
