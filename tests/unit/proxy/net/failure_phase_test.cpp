// The failure phase (Filter::upstream_failure_filter) through a real session:
// an upstream error or failure before any byte reached the client, a filter
// that may change the body and ask for one more attempt.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "proxy_harness.hpp"

using namespace td::proxy;
using namespace td::net_test;
using namespace std::chrono_literals;

namespace {

const std::string kChat = "/v1/chat/completions";
const std::string kTooLong = R"({"error":{"message":"too long","code":"context_length_exceeded"}})";
const std::string kFirstBody = R"({"model":"m","messages":[{"role":"user","content":"a very long prompt"}]})";
const std::string kShorterBody = R"({"model":"m","messages":[]})";

// What the filter saw in the failure phase.
struct Seen {
  int asked = 0;
  unsigned status = 0;
  std::string body;
  bool body_complete = false;
  std::optional<UpstreamFailure::Kind> failure;
  std::string content_type;
};

// Asks for a retry with kShorterBody when `wants(outcome)`; records what the
// phase showed it and what the logging phase saw.
class RetryFilter final : public Filter {
 public:
  explicit RetryFilter(std::function<bool(const UpstreamOutcome&)> wants) : wants_(std::move(wants)) {}
  std::string_view name() const override { return "retry"; }
  RetryDecision upstream_failure_filter(RequestContext&, const UpstreamOutcome& outcome, std::string& body) override {
    std::lock_guard lock(mutex_);
    ++seen_.asked;
    seen_.status = outcome.status;
    seen_.body = std::string(outcome.body);
    seen_.body_complete = outcome.body_complete;
    if (outcome.failure) seen_.failure = outcome.failure->kind;
    if (outcome.headers) seen_.content_type = std::string(outcome.headers->get("content-type"));
    if (!wants_(outcome)) return RetryDecision::no_retry;
    body = kShorterBody;
    return RetryDecision::retry;
  }
  void logging(const RequestContext& ctx) override {
    std::lock_guard lock(mutex_);
    logged_status_ = ctx.status;
    logged_retries_ = ctx.retries;
    logged_upstream_bytes_ = ctx.bytes_upstream;
    ++logged_;
  }
  Seen seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  int logged() const {
    std::lock_guard lock(mutex_);
    return logged_;
  }
  unsigned logged_status() const {
    std::lock_guard lock(mutex_);
    return logged_status_;
  }
  unsigned logged_retries() const {
    std::lock_guard lock(mutex_);
    return logged_retries_;
  }
  std::uint64_t logged_upstream_bytes() const {
    std::lock_guard lock(mutex_);
    return logged_upstream_bytes_;
  }

 private:
  std::function<bool(const UpstreamOutcome&)> wants_;
  mutable std::mutex mutex_;
  Seen seen_;
  int logged_ = 0;
  unsigned logged_status_ = 0, logged_retries_ = 0;
  std::uint64_t logged_upstream_bytes_ = 0;
};

std::unique_ptr<TestProxy> proxy_with(RetryFilter*& out, unsigned short upstream_port,
                                      std::function<bool(const UpstreamOutcome&)> wants) {
  auto f = std::make_unique<RetryFilter>(std::move(wants));
  out = f.get();
  std::vector<std::unique_ptr<Filter>> chain;
  chain.push_back(std::move(f));
  return std::make_unique<TestProxy>(std::move(chain), upstream_port);
}

bool context_too_long(const UpstreamOutcome& o) {
  return o.status == 400 && o.body.find("context_length_exceeded") != std::string_view::npos;
}

// Everything written to stderr (the log) while it lives.
class StderrCapture {
 public:
  StderrCapture() : path_("/tmp/td_net_test_" + std::to_string(::getpid()) + ".log") {
    std::fflush(stderr);
    saved_ = ::dup(2);
    int fd = ::open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() {
    ::dup2(saved_, 2);
    ::close(saved_);
    std::remove(path_.c_str());
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string path_;
  int saved_ = -1;
};

}  // namespace

TEST_CASE(
    "a filter that asks for a retry after an upstream 400 gets one more attempt with its new body; the client sees "
    "only the second answer") {
  FakeUpstream upstream([](const UpstreamRequest&, std::size_t n) {
    return n == 0 ? json_response(400, kTooLong) : json_response(200, R"({"ok":true})");
  });
  RetryFilter* filter = nullptr;
  StderrCapture log;
  auto proxy = proxy_with(filter, upstream.port(), context_too_long);

  ClientReply r = post(proxy->port(), kChat, kFirstBody);
  CHECK(r.status == 200);
  CHECK(r.body == R"({"ok":true})");
  auto seen = upstream.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].body() == kFirstBody);
  CHECK(seen[1].body() == kShorterBody);
  CHECK(seen[1][boost::beast::http::field::content_length] == std::to_string(kShorterBody.size()));
  CHECK(filter->seen().asked == 1);
  CHECK(filter->seen().status == 400);
  CHECK(filter->seen().body == kTooLong);
  CHECK(filter->seen().body_complete);
  CHECK(filter->seen().content_type == "application/json");
  REQUIRE(eventually([&] { return filter->logged() == 1; }));
  CHECK(filter->logged_status() == 200);
  CHECK(filter->logged_retries() == 1);
  CHECK(filter->logged_upstream_bytes() == kShorterBody.size());
  REQUIRE(eventually([&] { return log.text().find(R"("retries":1)") != std::string::npos; }));

  // A request that needs no retry: its access line has no "retries".
  ClientReply again = post(proxy->port(), kChat, kShorterBody);
  CHECK(again.status == 200);
  REQUIRE(eventually([&] { return filter->logged() == 2; }));
  REQUIRE(eventually([&] {
    std::string t = log.text();
    return std::count(t.begin(), t.end(), '\n') >= 2;
  }));
  std::string last = log.text();
  last = last.substr(last.rfind("{\"ts\"", last.size() - 2));
  CHECK(last.find("retries") == std::string::npos);
}

TEST_CASE(
    "filters get one retry per request: an upstream that keeps failing is asked twice, the client sees its second "
    "answer") {
  FakeUpstream upstream([](const UpstreamRequest&, std::size_t n) {
    return json_response(400, R"({"error":{"code":"context_length_exceeded","attempt":)" + std::to_string(n) + "}}");
  });
  RetryFilter* filter = nullptr;
  auto proxy = proxy_with(filter, upstream.port(), context_too_long);
  ClientReply r = post(proxy->port(), kChat, kFirstBody);
  CHECK(r.status == 400);
  CHECK(r.body == R"({"error":{"code":"context_length_exceeded","attempt":1}})");
  CHECK(upstream.requests().size() == 2);
  CHECK(filter->seen().asked == 1);  // no retry left: the phase does not run again
}

TEST_CASE("no filter asks: the error response is relayed unchanged, a long one whole past the buffered part") {
  const std::string long_error = R"({"error":")" + std::string(200 * 1024, 'e') + R"("})";
  FakeUpstream upstream([&](const UpstreamRequest& req, std::size_t) {
    return req.body() == "long" ? json_response(500, long_error) : json_response(429, R"({"error":"slow down"})");
  });
  RetryFilter* filter = nullptr;
  auto proxy = proxy_with(filter, upstream.port(), [](const UpstreamOutcome&) { return false; });

  ClientReply r = post(proxy->port(), kChat, "short");
  CHECK(r.status == 429);
  CHECK(r.body == R"({"error":"slow down"})");
  CHECK(filter->seen().body == R"({"error":"slow down"})");
  CHECK(filter->seen().body_complete);

  ClientReply big = post(proxy->port(), kChat, "long");
  CHECK(big.status == 500);
  CHECK(big.body == long_error);
  CHECK(filter->seen().body.size() == UpstreamOutcome::kMaxBufferedBody);
  CHECK(filter->seen().body == long_error.substr(0, UpstreamOutcome::kMaxBufferedBody));
  CHECK_FALSE(filter->seen().body_complete);
  CHECK(upstream.requests().size() == 2);
  REQUIRE(eventually([&] { return filter->logged() == 2; }));
  CHECK(filter->logged_retries() == 0);
}

TEST_CASE("a 2xx answer never enters the failure phase") {
  FakeUpstream upstream([](const UpstreamRequest&, std::size_t) { return json_response(200, "{}"); });
  RetryFilter* filter = nullptr;
  auto proxy = proxy_with(filter, upstream.port(), [](const UpstreamOutcome&) { return true; });
  ClientReply r = post(proxy->port(), kChat, "{}");
  CHECK(r.status == 200);
  CHECK(filter->seen().asked == 0);
  CHECK(upstream.requests().size() == 1);
}

TEST_CASE("a failed connection enters the phase too; the retry's failure is the client's answer") {
  unsigned short dead_port;
  {
    FakeUpstream gone([](const UpstreamRequest&, std::size_t) { return json_response(200, "{}"); });
    dead_port = gone.port();
  }  // closed: nothing listens there now
  RetryFilter* filter = nullptr;
  auto proxy = proxy_with(filter, dead_port, [](const UpstreamOutcome& o) { return o.failure != nullptr; });
  ClientReply r = post(proxy->port(), kChat, kFirstBody);
  CHECK(r.status == 502);
  CHECK(r.body.find("tokendiet: upstream openai (http://127.0.0.1:" + std::to_string(dead_port) +
                    "): cannot connect") != std::string::npos);
  CHECK(filter->seen().asked == 1);
  REQUIRE(filter->seen().failure);
  CHECK(*filter->seen().failure == UpstreamFailure::Kind::connect_failed);
  REQUIRE(eventually([&] { return filter->logged() == 1; }));
  CHECK(filter->logged_retries() == 1);
  CHECK(filter->logged_status() == 502);
}
