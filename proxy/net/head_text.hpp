// HTTP/1.x heads as one string, byte for byte what Beast's serializer writes
// (start line, each field as "name: value\r\n" in order, a blank line), for
// gather writes of head + body without Beast's serializer: iterating its
// buffer views cost thousands of instructions a message, and it handed the
// kernel one iovec per header field. tests/unit/proxy/net/response_framer_test.cpp
// checks both kinds against Beast's own output.
#pragma once

#include <boost/beast/http/message.hpp>

#include <string>

namespace td::proxy {

// "METHOD target HTTP/1.x\r\n" + fields + "\r\n".
std::string head_text(const boost::beast::http::request_header<>& head);
// "HTTP/1.x status reason\r\n" + fields + "\r\n".
std::string head_text(const boost::beast::http::response_header<>& head);

}  // namespace td::proxy
