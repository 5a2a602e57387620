#include "proxy/net/response_framer.hpp"

#include <charconv>

#include "proxy/net/head_text.hpp"

namespace td::proxy {

namespace asio = boost::asio;

ResponseFramer::ResponseFramer(const boost::beast::http::response_header<>& head, bool chunked)
    : head_(head_text(head)), chunked_(chunked) {}

std::span<const asio::const_buffer> ResponseFramer::head_only() {
  if (head_sent_) return {};
  bufs_[0] = asio::buffer(head_);
  return {bufs_.data(), 1};
}

std::span<const asio::const_buffer> ResponseFramer::frame(const char* data, std::size_t size, bool last) {
  static constexpr std::string_view kCrlf = "\r\n";
  static constexpr std::string_view kCrlfLastChunk = "\r\n0\r\n\r\n";
  static constexpr std::string_view kLastChunk = "0\r\n\r\n";
  std::size_t n = 0;
  if (!head_sent_) bufs_[n++] = asio::buffer(head_);
  if (!chunked_) {
    if (size) bufs_[n++] = asio::const_buffer(data, size);
  } else if (size) {
    auto [end, ec] = std::to_chars(size_line_, size_line_ + sizeof size_line_ - 2, size, 16);
    *end++ = '\r';
    *end++ = '\n';
    bufs_[n++] = asio::const_buffer(size_line_, static_cast<std::size_t>(end - size_line_));
    bufs_[n++] = asio::const_buffer(data, size);
    bufs_[n++] = asio::buffer(last ? kCrlfLastChunk : kCrlf);
  } else if (last) {
    bufs_[n++] = asio::buffer(kLastChunk);
  }
  return {bufs_.data(), n};
}

}  // namespace td::proxy
