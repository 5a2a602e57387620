// The bare-LF check on chunk framing, alone and on what Beast's request
// parser leaves unparsed while a chunked body arrives piece by piece.
#include <doctest/doctest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <string_view>

#include "proxy/net/stream_io.hpp"

using td::proxy::has_bare_line_feed;
using td::proxy::parse_buffered;
using td::proxy::unparsed;
namespace http = boost::beast::http;

namespace {

constexpr std::string_view kHead =
    "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

struct Fed {
  bool flagged = false;  // has_bare_line_feed() said so after some piece
  bool done = false;
  boost::system::error_code error;
  std::string body;
};

// Feeds the head, then `body` in pieces of `step` bytes, the way
// ClientSession::read_body does: each piece appended to the read buffer and
// parsed, then the unparsed rest checked.
Fed feed(std::string_view body, std::size_t step) {
  http::request_parser<http::string_body> parser;
  boost::beast::flat_buffer buf;
  auto append = [&](std::string_view bytes) {
    auto room = buf.prepare(bytes.size());
    boost::asio::buffer_copy(room, boost::asio::buffer(bytes.data(), bytes.size()));
    buf.commit(bytes.size());
  };
  append(kHead);
  Fed out;
  out.error = parse_buffered(parser, buf);
  REQUIRE(parser.is_header_done());
  for (std::size_t at = 0; at < body.size() && !out.error && !parser.is_done(); at += step) {
    append(body.substr(at, step));
    out.error = parse_buffered(parser, buf);
    if (!out.error && !parser.is_done() && has_bare_line_feed(unparsed(buf))) {
      out.flagged = true;
      break;
    }
  }
  out.done = parser.is_done();
  out.body = parser.get().body();
  return out;
}

}  // namespace

TEST_CASE("has_bare_line_feed: an LF without its CR anywhere in the bytes") {
  CHECK_FALSE(has_bare_line_feed(""));
  CHECK_FALSE(has_bare_line_feed("5"));
  CHECK_FALSE(has_bare_line_feed("5\r"));
  CHECK_FALSE(has_bare_line_feed("\r\n5;ext=1\r\n"));
  CHECK_FALSE(has_bare_line_feed("0\r\nX-Trailer: a\r\n"));
  CHECK(has_bare_line_feed("\n"));
  CHECK(has_bare_line_feed("5\n"));
  CHECK(has_bare_line_feed("5\r\n\n"));
  CHECK(has_bare_line_feed("0\r\nX-Trailer: a\n"));
  CHECK(has_bare_line_feed("\r\n0\n\n"));
}

TEST_CASE("valid chunked bodies are never flagged, whatever the pieces, LFs in the chunk data included") {
  const std::string_view bodies[] = {
      "5\r\nhello\r\n0\r\n\r\n",
      "6\r\nab\ncd\n\r\n1\r\n\n\r\n0\r\n\r\n",         // chunk data made of LFs
      "a;name=\"v\"\r\n{\"x\":\n1}\n\n\r\n0\r\n\r\n",  // a chunk extension
      "3\r\n\n\n\n\r\n0\r\nX-Trailer: a\r\n\r\n",      // a trailer
  };
  for (std::string_view body : bodies) {
    for (std::size_t step = 1; step <= body.size(); ++step) {
      CAPTURE(body);
      CAPTURE(step);
      const Fed fed = feed(body, step);
      CHECK_FALSE(fed.flagged);
      CHECK_FALSE(fed.error);
      CHECK(fed.done);
    }
  }
  CHECK(feed(bodies[1], 1).body == "ab\ncd\n\n");
}

TEST_CASE("a framing line ended by a bare LF is flagged, where Beast itself would wait for more") {
  const std::string_view bodies[] = {
      "5\nhello\n0\n\n",                // every line
      "5\r\nhello\r\n0\n\n",            // the last chunk's line
      "5\r\nhello\r\n0\r\nX-T: a\n\n",  // a trailer line
      "5\r\nhello\r\n0\r\n\n",          // the empty line that ends the body
  };
  for (std::string_view body : bodies) {
    CAPTURE(body);
    const Fed whole = feed(body, body.size());
    CHECK_FALSE(whole.error);  // Beast reports nothing: it waits
    CHECK_FALSE(whole.done);
    CHECK(whole.flagged);
    for (std::size_t step = 1; step < body.size(); ++step) {
      CAPTURE(step);
      const Fed fed = feed(body, step);
      CHECK((fed.flagged || fed.error));
      CHECK_FALSE(fed.done);
    }
  }
}
