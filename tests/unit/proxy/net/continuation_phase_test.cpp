// The continuation phase (Filter::continuation_filter, docs/design.md
// §Continuations) through a real session: a filter that ends a 2xx response's
// round by asking for another one; the client gets one response made of the
// rounds' bodies, the filters after it see one end.
#include <doctest/doctest.h>

#include <mutex>

#include "proxy_harness.hpp"

using namespace td::proxy;
using namespace td::net_test;

namespace {

const std::string kChat = "/v1/chat/completions";

// Continues each round until `rounds` were made, with body "round N";
// ends the response with "[end]" when a continuation did not come.
class ContinueFilter final : public Filter {
 public:
  explicit ContinueFilter(unsigned rounds) : rounds_(rounds) {}
  std::string_view name() const override { return "continue"; }
  void response_head_filter(RequestContext&, HeaderMap& headers) override { headers.erase("content-length"); }
  void response_body_filter(RequestContext& ctx, std::string& chunk, bool end_of_stream) override {
    if (!chunk.empty()) awaiting_ = false;  // the next round's bytes
    if (!end_of_stream) return;
    if (awaiting_) {
      chunk = "[end]";  // the round asked for did not come
      return;
    }
    if (asked_ < rounds_) {
      ++asked_;
      awaiting_ = true;
      ctx.continuation = true;
    }
  }
  bool continuation_filter(RequestContext&, std::string& body) override {
    body = "round " + std::to_string(++made_);
    return true;
  }

 private:
  unsigned rounds_;
  unsigned asked_ = 0, made_ = 0;  // one request per test
  bool awaiting_ = false;          // asked for a round, none of its bytes seen yet
};

// After the continue filter: sees every byte the client gets and one end.
class Observer final : public Filter {
 public:
  std::string_view name() const override { return "observer"; }
  void response_body_filter(RequestContext&, std::string& chunk, bool end_of_stream) override {
    std::lock_guard lock(mutex_);
    seen_ += chunk;
    ends_ += end_of_stream;
  }
  void logging(const RequestContext& ctx) override {
    std::lock_guard lock(mutex_);
    status_ = ctx.status;
    logged_ = true;
  }
  std::string seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  int ends() const {
    std::lock_guard lock(mutex_);
    return ends_;
  }
  bool logged() const {
    std::lock_guard lock(mutex_);
    return logged_;
  }
  unsigned status() const {
    std::lock_guard lock(mutex_);
    return status_;
  }

 private:
  mutable std::mutex mutex_;
  std::string seen_;
  int ends_ = 0;
  bool logged_ = false;
  unsigned status_ = 0;
};

std::unique_ptr<TestProxy> proxy_with(unsigned rounds, Observer*& observer, unsigned short upstream_port) {
  std::vector<std::unique_ptr<Filter>> chain;
  chain.push_back(std::make_unique<ContinueFilter>(rounds));
  auto o = std::make_unique<Observer>();
  observer = o.get();
  chain.push_back(std::move(o));
  return std::make_unique<TestProxy>(std::move(chain), upstream_port);
}

}  // namespace

TEST_CASE("continuation phase: each round's request is the filter's body, the client gets the rounds as one body") {
  FakeUpstream upstream(
      [](const UpstreamRequest&, std::size_t n) { return json_response(200, "<answer " + std::to_string(n) + ">"); });
  Observer* observer = nullptr;
  auto proxy = proxy_with(2, observer, upstream.port());
  ClientReply r = post(proxy->port(), kChat, R"({"model":"m","messages":[]})");
  CHECK(r.status == 200);
  CHECK(r.body == "<answer 0><answer 1><answer 2>");
  auto seen = upstream.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[1].body() == "round 1");
  CHECK(seen[2].body() == "round 2");
  CHECK(seen[2][boost::beast::http::field::content_length] == "7");
  REQUIRE(eventually([&] { return observer->logged(); }));
  CHECK(observer->seen() == r.body);
  CHECK(observer->ends() == 1);
  CHECK(observer->status() == 200);

  // The proxy still serves the next request (on a new connection).
  ClientReply again = post(proxy->port(), kChat, "{}");
  CHECK(again.status == 200);
}

TEST_CASE("continuation phase: a round answered >= 400 is not relayed; the response ends on an empty last piece") {
  FakeUpstream upstream([](const UpstreamRequest&, std::size_t n) {
    return n == 0 ? json_response(200, "<first>") : json_response(500, R"({"error":"boom"})");
  });
  Observer* observer = nullptr;
  auto proxy = proxy_with(1, observer, upstream.port());
  ClientReply r = post(proxy->port(), kChat, R"({"model":"m","messages":[]})");
  CHECK(r.status == 200);
  CHECK(r.body == "<first>[end]");
  CHECK(upstream.requests().size() == 2);
  REQUIRE(eventually([&] { return observer->logged(); }));
  CHECK(observer->ends() == 1);
}
