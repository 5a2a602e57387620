// Filters that pause a request and resume it later (FilterResult::pause),
// through a real session on one I/O thread.
#include <doctest/doctest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>

#include <atomic>
#include <charconv>
#include <functional>

#include "proxy_harness.hpp"

using namespace td::proxy;
using namespace td::net_test;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

unsigned number(std::string_view s, unsigned dflt = 0) {
  unsigned v = dflt;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// What the logging phase saw of the last request.
struct Seen {
  unsigned status = 0;
  bool fail_open = false, client_aborted = false;
  std::string fail_open_reason, error;
};

// Pauses the requests that carry x-test-pause (in phase 1, or in phase 2
// with x-test-phase: body) and resumes them from a timer on a thread of its
// own after that many ms ("never": not at all), with an answer of status
// x-test-answer if given. The session waits at most x-test-pause-for ms
// (default 5000). x-test-hold: ms sets ctx.delay_upstream instead. With
// x-test-take-body the phase-2 pause takes the body away meanwhile (as a
// filter working on it elsewhere does) and puts it back on resume.
class PausingFilter final : public Filter {
 public:
  PausingFilter() : thread_([this] { timers_.run(); }) {}
  ~PausingFilter() override {
    guard_.reset();
    timers_.stop();
    thread_.join();
  }
  std::string_view name() const override { return "pausing"; }

  FilterResult request_filter(RequestContext& ctx, HeaderMap& headers) override {
    if (auto hold = headers.get("x-test-hold"); !hold.empty())
      ctx.delay_upstream = std::chrono::milliseconds(number(hold));
    if (headers.get("x-test-phase") == "body") {
      pause_body_ = std::string(headers.get("x-test-pause"));
      answer_ = number(headers.get("x-test-answer"));
      pause_for_ = number(headers.get("x-test-pause-for"), 5000);
      take_body_ = !headers.get("x-test-take-body").empty();
      return {};
    }
    return maybe_pause(headers.get("x-test-pause"), number(headers.get("x-test-answer")),
                       number(headers.get("x-test-pause-for"), 5000));
  }
  FilterResult request_body_filter(RequestContext&, const HeaderMap&, std::string& body) override {
    std::string pause = std::exchange(pause_body_, {});
    return maybe_pause(pause, answer_, pause_for_, std::exchange(take_body_, false) ? &body : nullptr);
  }
  void logging(const RequestContext& ctx) override {
    std::lock_guard lock(mutex_);
    seen_ = Seen{ctx.status, ctx.fail_open, ctx.client_aborted, ctx.fail_open_reason, ctx.error};
  }

  Seen seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  std::atomic<int> paused{0}, resumed{0}, cancelled{0};

 private:
  FilterResult maybe_pause(std::string_view pause, unsigned answer, unsigned pause_for, std::string* body = nullptr) {
    if (pause.empty()) return {};
    auto handle = std::make_shared<ResumeHandle>();
    auto taken = std::make_shared<std::string>();
    if (body) *taken = std::move(*body);
    handle->on_cancel([this](PausedRequest) {
      ++cancelled;
      return std::optional<LocalResponse>();
    });
    ++paused;
    if (pause != "never") {
      const auto after = std::chrono::milliseconds(number(pause));
      asio::post(timers_, [this, handle, after, answer, body, taken] {
        auto timer = std::make_shared<asio::steady_timer>(timers_, after);
        timer->async_wait([this, timer, handle, answer, body, taken](auto) {
          ++resumed;
          if (answer)
            handle->resume(LocalResponse{answer, "application/json", R"({"from":"filter"})", {}});
          else if (body)
            handle->resume_then([taken](PausedRequest request) {
              *request.body = std::move(*taken);  // on the session's thread, into the request's body
              return std::optional<LocalResponse>();
            });
          else
            handle->resume();
        });
      });
    }
    return FilterResult::pause(handle, std::chrono::milliseconds(pause_for));
  }

  asio::io_context timers_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{timers_.get_executor()};
  std::thread thread_;
  mutable std::mutex mutex_;
  Seen seen_;
  // One request at a time uses the phase-2 settings (the tests send them so).
  std::string pause_body_;
  unsigned answer_ = 0, pause_for_ = 0;
  bool take_body_ = false;
};

struct Fixture {
  FakeUpstream upstream{[](const UpstreamRequest& req, std::size_t n) {
    return json_response(200, R"({"n":)" + std::to_string(n) + R"(,"got":)" + req.body() + "}");
  }};
  PausingFilter* filter = nullptr;
  std::unique_ptr<TestProxy> proxy;
  Fixture() {
    auto f = std::make_unique<PausingFilter>();
    filter = f.get();
    std::vector<std::unique_ptr<Filter>> chain;
    chain.push_back(std::move(f));
    proxy = std::make_unique<TestProxy>(std::move(chain), upstream.port());
  }
  ~Fixture() { proxy.reset(); }  // the filter (in the runtime) goes with the proxy
};

const std::string kChat = "/v1/chat/completions";

}  // namespace

TEST_CASE("a paused request waits for its filter's timer while the one I/O thread serves another request") {
  Fixture fx;
  ClientReply held;
  std::thread first([&] { held = post(fx.proxy->port(), kChat, R"({"model":"a"})", {{"x-test-pause", "600"}}); });
  REQUIRE(eventually([&] { return fx.filter->paused == 1; }));

  ClientReply other = post(fx.proxy->port(), kChat, R"({"model":"b"})");
  const int resumed_when_other_done = fx.filter->resumed;
  first.join();

  CHECK(other.status == 200);
  CHECK(resumed_when_other_done == 0);  // served while the first request was still paused
  CHECK(held.status == 200);
  CHECK(held.took >= 600ms);
  auto seen = fx.upstream.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].body() == R"({"model":"b"})");
  CHECK(seen[1].body() == R"({"model":"a"})");
  CHECK(fx.filter->cancelled == 0);
}

TEST_CASE("a filter resumes a paused request with its own answer: nothing goes upstream") {
  Fixture fx;
  ClientReply r = post(fx.proxy->port(), kChat, "{}", {{"x-test-pause", "50"}, {"x-test-answer", "429"}});
  CHECK(r.status == 429);
  CHECK(r.body == R"({"from":"filter"})");
  CHECK(fx.upstream.requests().empty());
  CHECK(fx.filter->cancelled == 0);
}

TEST_CASE("a pause not resumed in time: the request goes on fail-open and the filter is told") {
  Fixture fx;
  ClientReply r = post(fx.proxy->port(), kChat, "{}", {{"x-test-pause", "never"}, {"x-test-pause-for", "150"}});
  CHECK(r.status == 200);
  CHECK(r.took >= 150ms);
  CHECK(fx.filter->cancelled == 1);
  CHECK(fx.upstream.requests().size() == 1);
  REQUIRE(eventually([&] { return fx.filter->seen().status == 200; }));
  CHECK(fx.filter->seen().fail_open);
  CHECK(fx.filter->seen().fail_open_reason == "pausing request_filter: not resumed within 150 ms");
}

TEST_CASE("a client that leaves a paused request: the request ends, the filter is told, nothing goes upstream") {
  Fixture fx;
  {
    asio::io_context ioc;
    tcp::socket s(ioc);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), fx.proxy->port()));
    const std::string req =
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-test-pause: never\r\nx-test-pause-for: 10000\r\n"
        "Content-Length: 2\r\n\r\n{}";
    asio::write(s, asio::buffer(req));
    REQUIRE(eventually([&] { return fx.filter->paused == 1; }));
  }  // closed
  CHECK(eventually([&] { return fx.filter->cancelled == 1; }, 2s));
  CHECK(eventually([&] { return fx.filter->seen().client_aborted; }));
  CHECK(fx.filter->seen().error == "client went away while the request was held");
  CHECK(fx.upstream.requests().empty());
  CHECK(eventually([&] { return fx.proxy->open_connections() == 0; }));
}

// Sends a chat request whose body arrives in two writes: its first 100
// bytes with the head (plus `headers`, each ending in CRLF), then, once
// `between` returned, the rest. Returns the response.
static UpstreamResponse post_in_two_parts(unsigned short port, const std::string& headers, const std::string& body,
                                          const std::function<void()>& between) {
  asio::io_context ioc;
  tcp::socket s(ioc);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  const std::string head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + headers +
                           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  asio::write(s, asio::buffer(head + body.substr(0, 100)));
  between();
  asio::write(s, asio::buffer(body.substr(100)));
  boost::beast::flat_buffer buf;
  UpstreamResponse answer;
  boost::system::error_code ec;
  http::read(s, buf, answer, ec);
  CHECK_FALSE(ec);
  return answer;
}

TEST_CASE("a phase 1 pause while the body is still arriving: the body is read meanwhile and goes up whole") {
  Fixture fx;
  const std::string body = R"({"model":"m","messages":[")" + std::string(5000, 'x') + R"("]})";
  UpstreamResponse answer = post_in_two_parts(fx.proxy->port(), "x-test-pause: 300\r\n", body, [&] {
    REQUIRE(eventually([&] { return fx.filter->paused == 1; }));
    std::this_thread::sleep_for(100ms);
  });
  CHECK(answer.result_int() == 200);
  auto seen = fx.upstream.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].body() == body);
  CHECK(fx.filter->resumed == 1);
}

TEST_CASE("a phase 2 pause, then the request goes upstream with its body") {
  Fixture fx;
  ClientReply r =
      post(fx.proxy->port(), kChat, R"({"model":"c"})", {{"x-test-phase", "body"}, {"x-test-pause", "100"}});
  CHECK(r.status == 200);
  CHECK(r.took >= 100ms);
  auto seen = fx.upstream.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].body() == R"({"model":"c"})");
  CHECK(fx.filter->paused == 1);
  CHECK(fx.filter->resumed == 1);
}

// A body that came in several reads was read past the parser (its length was
// known): the pause must not read more of it, even when the filter holds the
// body meanwhile.
TEST_CASE("a phase 2 pause of a body that arrived in parts resumes and goes upstream whole") {
  Fixture fx;
  const std::string body = R"({"model":"m","messages":[")" + std::string(300'000, 'x') + R"("]})";
  UpstreamResponse answer = post_in_two_parts(
      fx.proxy->port(), "x-test-phase: body\r\nx-test-pause: 50\r\nx-test-pause-for: 2000\r\nx-test-take-body: 1\r\n",
      body, [] { std::this_thread::sleep_for(50ms); });
  CHECK(answer.result_int() == 200);
  CHECK(fx.filter->resumed == 1);
  CHECK_FALSE(fx.filter->seen().fail_open);  // resumed, not timed out
  auto seen = fx.upstream.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].body() == body);
}

TEST_CASE("ctx.delay_upstream holds the request through the same wait") {
  Fixture fx;
  ClientReply r = post(fx.proxy->port(), kChat, "{}", {{"x-test-hold", "200"}});
  CHECK(r.status == 200);
  CHECK(r.took >= 200ms);
  CHECK(fx.upstream.requests().size() == 1);
  REQUIRE(eventually([&] { return fx.filter->seen().status == 200; }));
  CHECK_FALSE(fx.filter->seen().fail_open);  // a hold that runs its course is no failure
}
