// Small I/O helpers shared by the parts of a client session: parsing bytes
// already read without further I/O, checking chunk framing Beast would wait
// on, and writes that skip the scheduler when the socket takes everything at
// once.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>

#include <chrono>
#include <span>
#include <string_view>

namespace td::proxy {

// Completion token for operations whose error is handled by the caller.
inline constexpr auto nothrow = boost::asio::as_tuple(boost::asio::use_awaitable);

inline double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Whether a response with this status carries a body (RFC 9110 §6.4.1).
inline bool has_body_status(unsigned status) { return !(status < 200 || status == 204 || status == 304); }

// Feeds bytes already in `buffer` to the parser, without any I/O: a request
// (or response) that arrived whole is parsed with no further async operation,
// each of which would cost a trip through the scheduler. Stops at the end of
// the header when the header is not complete yet (the caller acts on it
// first), at the end of the message, or when more bytes are needed.
// Returns the parse error, or {} (need_more is not an error).
template <class Parser>
boost::system::error_code parse_buffered(Parser& parser, boost::beast::flat_buffer& buffer) {
  boost::system::error_code ec;
  const bool header_pending = !parser.is_header_done();
  while (buffer.size() > 0 && !parser.is_done()) {
    auto n = parser.put(buffer.data(), ec);
    buffer.consume(n);
    if (ec == boost::beast::http::error::need_more) return {};
    if (ec) return ec;
    if (header_pending && parser.is_header_done()) break;
    if (n == 0) break;
  }
  return {};
}

// Whether `framing`, the bytes of a chunked body the parser left unparsed,
// holds a line ended by a bare LF. Those bytes are chunk framing only (size
// lines, the CRLF after chunk data, trailer lines): the body takes all chunk
// data as it comes. Beast ends these lines at CRLF alone and would wait for
// one forever, so the caller refuses the body instead.
inline bool has_bare_line_feed(std::string_view framing) {
  for (auto i = framing.find('\n'); i != std::string_view::npos; i = framing.find('\n', i + 1))
    if (i == 0 || framing[i - 1] != '\r') return true;
  return false;
}

// The bytes of `buffer` not parsed yet.
inline std::string_view unparsed(const boost::beast::flat_buffer& buffer) {
  return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

// Writes what the socket takes at once with one non-blocking gather write,
// and only the rest (if any) asynchronously: a write that completes
// immediately then costs no trip through the scheduler. The socket must be
// in non-blocking mode.
boost::asio::awaitable<boost::system::error_code> send_now(boost::beast::tcp_stream& stream,
                                                           std::span<const boost::asio::const_buffer> bufs);

}  // namespace td::proxy
