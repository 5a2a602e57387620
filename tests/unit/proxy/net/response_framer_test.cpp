// The hand framing of requests and responses gives the bytes Beast's serializer gives.
#include <doctest/doctest.h>

#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>

#include <string>
#include <vector>

#include "proxy/net/head_text.hpp"
#include "proxy/net/response_framer.hpp"

using td::proxy::ResponseFramer;
namespace http = boost::beast::http;
namespace beast = boost::beast;

namespace {

using Response = http::response<http::buffer_body>;

// The recorded OpenAI head, as the upstream parser keeps it (original case).
Response recorded_head(unsigned status, std::string_view reason) {
  Response res;
  res.version(11);
  res.result(status);
  res.reason(reason);
  res.insert("Date", "Sat, 21 Nov 2026 10:00:00 GMT");
  res.insert("Content-Type", "application/json");
  res.insert("openai-organization", "user-abc");
  res.insert("openai-processing-ms", "412");
  res.insert("x-ratelimit-limit-requests", "10000");
  res.insert("x-ratelimit-remaining-tokens", "29999950");
  res.insert("set-cookie", "__cf_bm=x; path=/; HttpOnly");
  res.insert("X-Custom-Empty", "");
  return res;
}

template <class Each>
void for_pieces(const std::vector<std::string>& pieces, Each each) {
  for (std::size_t i = 0; i < pieces.size(); ++i) each(pieces[i], i + 1 == pieces.size());
}

std::string beast_bytes(Response res, const std::vector<std::string>& pieces) {
  http::response_serializer<http::buffer_body> sr{res};
  std::string out;
  for_pieces(pieces, [&](const std::string& p, bool last) {
    res.body().data = p.empty() ? nullptr : const_cast<char*>(p.data());
    res.body().size = p.size();
    res.body().more = !last;
    for (;;) {
      boost::system::error_code ec;
      std::size_t n = 0;
      sr.next(ec, [&](boost::system::error_code&, const auto& buffers) {
        for (auto b : beast::buffers_range_ref(buffers)) out.append(static_cast<const char*>(b.data()), b.size());
        n = beast::buffer_bytes(buffers);
      });
      if (ec == http::error::need_buffer) break;
      REQUIRE_FALSE(ec);
      sr.consume(n);
      if (sr.is_done()) break;
    }
  });
  return out;
}

std::string framer_bytes(const Response& res, bool chunked, const std::vector<std::string>& pieces, bool head_first) {
  ResponseFramer framer(res, chunked);
  std::string out;
  auto take = [&](auto bufs) {
    for (auto b : bufs) out.append(static_cast<const char*>(b.data()), b.size());
    framer.sent();
  };
  if (head_first) take(framer.head_only());
  for_pieces(pieces, [&](const std::string& p, bool last) { take(framer.frame(p.data(), p.size(), last)); });
  return out;
}

}  // namespace

TEST_CASE("response framer: the bytes of Beast's serializer, chunked and not, head first or with the body") {
  const std::vector<std::vector<std::string>> bodies = {
      {"{\"id\":\"chatcmpl-1\",\"usage\":{\"prompt_tokens\":3}}"},
      {"data: {\"a\":1}\n\n", "data: {\"b\":2}\n\n", std::string(70000, 'x'), "data: [DONE]\n\n"},
      {"data: one\n\n", ""},  // the body ends with an empty read
      {""},                   // no body at all
  };
  for (const auto& entry : {std::pair<unsigned, std::string_view>{200, "OK"},
                            {429, "Too Many Requests"},
                            {503, ""},
                            {299, "Custom Reason"}}) {
    const auto& status = entry.first;   // not a structured binding: clang 14's doctest
    const auto& reason = entry.second;  // macros cannot capture one
    for (bool chunked : {true, false}) {
      for (const auto& pieces : bodies) {
        Response res = recorded_head(status, reason);
        if (chunked)
          res.chunked(true);
        else
          res.content_length([&] {
            std::size_t n = 0;
            for (auto& p : pieces) n += p.size();
            return n;
          }());
        res.keep_alive(status != 503);
        CAPTURE(status);
        CAPTURE(chunked);
        CAPTURE(pieces.size());
        const std::string expected = beast_bytes(res, pieces);
        CHECK(framer_bytes(res, chunked, pieces, false) == expected);
        CHECK(framer_bytes(res, chunked, pieces, true) == expected);
      }
    }
  }
}

TEST_CASE("response framer: a head with no body (HEAD, 204, 304) is the head alone") {
  Response res = recorded_head(204, "No Content");
  res.chunked(false);
  ResponseFramer framer(res, false);
  auto bufs = framer.frame(nullptr, 0, true);
  REQUIRE(bufs.size() == 1);
  std::string head(static_cast<const char*>(bufs[0].data()), bufs[0].size());
  CHECK(head.starts_with("HTTP/1.1 204 No Content\r\nDate: "));
  CHECK(head.ends_with("X-Custom-Empty: \r\n\r\n"));
  framer.sent();
  CHECK(framer.head_sent());
  CHECK(framer.frame(nullptr, 0, true).empty());
}

TEST_CASE("head text: a request head is the bytes of Beast's serializer, known and unknown methods") {
  for (std::string_view method : {"POST", "GET", "PURGE"}) {
    http::request<http::empty_body> req;
    req.method_string(method);
    req.target("/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse&key=k");
    req.version(11);
    req.insert("Host", "generativelanguage.googleapis.com");
    req.insert("x-goog-api-key", "k");
    req.insert("Content-Type", "application/json");
    req.insert("X-Empty", "");
    req.set(http::field::accept_encoding, "identity");
    req.content_length(1234);
    CAPTURE(method);
    http::request_serializer<http::empty_body> sr{req};
    std::string expected;
    sr.split(true);
    boost::system::error_code ec;
    sr.next(ec, [&](boost::system::error_code&, const auto& buffers) {
      for (auto b : beast::buffers_range_ref(buffers)) expected.append(static_cast<const char*>(b.data()), b.size());
    });
    REQUIRE_FALSE(ec);
    CHECK(expected.ends_with("Content-Length: 1234\r\n\r\n"));
    CHECK(td::proxy::head_text(req) == expected);
  }
}
