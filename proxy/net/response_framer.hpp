// The response towards the client, framed by hand: the head serialized once
// into one string (proxy/net/head_text.hpp), then each body piece with its chunk
// framing as at most four buffers for one gather write.
//
// Why not Beast's serializer: it produced the same bytes, but iterating its
// buffer views was a large share of a small response's instructions
// (scripts/bench/proxy/record-2026-11-24.md), and it handed the kernel one
// iovec per header field. The bytes
// are Beast's exactly (status line with the upstream's reason, each field as
// "name: value\r\n", lower-case hex chunk sizes, "0\r\n\r\n" at the end);
// tests/unit/proxy/response_framer_test.cpp checks them against Beast's.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <string>

namespace td::proxy {

class ResponseFramer {
 public:
  // `head` as it will go out (version, status, fields, Transfer-Encoding and
  // Connection already final). `chunked`: frame the body as chunks.
  ResponseFramer(const boost::beast::http::response_header<>& head, bool chunked);

  // The buffers that send the head, if not sent yet, then `size` bytes at
  // `data` framed; `last` ends the body (chunked: the last-chunk follows).
  // Views into this object and `data`: keep both until the write is done.
  std::span<const boost::asio::const_buffer> frame(const char* data, std::size_t size, bool last);
  // The head alone (nothing of the body has arrived yet).
  std::span<const boost::asio::const_buffer> head_only();
  // Call after a write of frame()/head_only() went through whole: the head
  // was part of it.
  void sent() { head_sent_ = true; }

  bool head_sent() const { return head_sent_; }

 private:
  std::string head_;
  bool chunked_;
  bool head_sent_ = false;
  char size_line_[20];  // hex size + CRLF
  std::array<boost::asio::const_buffer, 4> bufs_;
};

}  // namespace td::proxy
