#include "proxy/net/recap_summarizer_net.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "providers/summary_call.hpp"
#include "proxy/net/upstream.hpp"

namespace td::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

// One request, its answer's body when the status is 2xx.
template <class Stream>
asio::awaitable<std::optional<std::string>> exchange(Stream& stream, beast::flat_buffer& buffer,
                                                     http::request<http::string_body>& req) {
  auto [wec, written] = co_await http::async_write(stream, req, nothrow);
  if (wec) co_return std::nullopt;
  http::response_parser<http::string_body> parser;
  parser.body_limit(NetRecapSummarizer::kMaxAnswerBytes);
  auto [rec, read] = co_await http::async_read(stream, buffer, parser, nothrow);
  if (rec) co_return std::nullopt;
  const unsigned status = parser.get().result_int();
  if (status < 200 || status >= 300) co_return std::nullopt;
  co_return std::move(parser.get().body());
}

asio::awaitable<void> call_upstream(const UpstreamTarget& target, const diet::SummaryCall& call,
                                    std::optional<std::string>& out) {
  const std::string path = providers::summary_request_path(call.provider, call.model);
  if (path.empty()) co_return;
  ConnectError error;
  UpstreamConn* in_progress = nullptr;
  std::unique_ptr<UpstreamConn> conn = co_await connect_upstream(target, call.timeout, error, in_progress);
  if (!conn) co_return;
  http::request<http::string_body> req{http::verb::post, target.cfg.path_prefix + path, 11};
  req.set(http::field::host, target.host_header);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::user_agent, "tokendiet-recap-summarizer");
  for (const auto& [name, value] : call.headers) req.set(name, value);
  if (call.provider == "anthropic" && req.find("anthropic-version") == req.end())
    req.set("anthropic-version", "2023-06-01");
  req.body() = providers::summary_request_body(call.provider, call.model, call.prompt, call.max_tokens);
  req.prepare_payload();
  conn->tcp().expires_after(call.timeout);
  // (No co_await inside ?: : GCC 12 miscompiles it.)
  std::optional<std::string> body;
  if (conn->tls)
    body = co_await exchange(*conn->tls, conn->buffer, req);
  else
    body = co_await exchange(*conn->plain, conn->buffer, req);
  conn->close();
  if (body) out = providers::summary_response_text(call.provider, *body);
}

}  // namespace

std::optional<std::string> NetRecapSummarizer::summarize(const diet::SummaryCall& call) const {
  auto it = upstreams_.find(call.upstream);
  if (it == upstreams_.end() || call.timeout.count() <= 0) return std::nullopt;
  asio::io_context io(1);
  std::optional<std::string> out;
  bool done = false;
  // Spawned from inside run(), as the I/O threads spawn theirs: Asio's
  // coroutine frames are allocated and freed through the running thread's
  // recycling allocator, never across it.
  asio::post(io, [&] {
    asio::co_spawn(io, call_upstream(it->second, call, out), [&done](std::exception_ptr) { done = true; });
  });
  // The socket's own deadline ends the exchange; this bounds DNS as well.
  io.run_for(call.timeout + std::chrono::milliseconds(100));
  if (!done) return std::nullopt;  // the pending operations go with `io`
  return out;
}

}  // namespace td::proxy
