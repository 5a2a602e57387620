#include "proxy/net/head_text.hpp"

#include <charconv>

namespace td::proxy {
namespace {

template <bool isRequest>
std::size_t fields_size(const boost::beast::http::header<isRequest>& head) {
  std::size_t size = 2;  // the blank line
  for (const auto& f : head) size += f.name_string().size() + f.value().size() + 4;
  return size;
}

template <bool isRequest>
void append_fields(std::string& out, const boost::beast::http::header<isRequest>& head) {
  for (const auto& f : head) {
    out += f.name_string();
    out += ": ";
    out += f.value();
    out += "\r\n";
  }
  out += "\r\n";
}

std::string_view version_text(unsigned version) { return version == 10 ? "HTTP/1.0" : "HTTP/1.1"; }

}  // namespace

std::string head_text(const boost::beast::http::request_header<>& head) {
  const std::string_view method = head.method_string();
  const std::string_view target = head.target();
  std::string out;
  out.reserve(method.size() + target.size() + 12 + fields_size(head));
  out += method;
  out += ' ';
  out += target;
  out += ' ';
  out += version_text(head.version());
  out += "\r\n";
  append_fields(out, head);
  return out;
}

std::string head_text(const boost::beast::http::response_header<>& head) {
  const std::string_view reason = head.reason();
  std::string out;
  out.reserve(16 + reason.size() + fields_size(head));
  out += version_text(head.version());
  out += ' ';
  char code[4];
  auto [end, ec] = std::to_chars(code, code + 3, head.result_int());
  out.append(code, static_cast<std::size_t>(end - code));
  out += ' ';
  out += reason;
  out += "\r\n";
  append_fields(out, head);
  return out;
}

}  // namespace td::proxy
