#include "proxy/body_peek.hpp"

#include <cstring>

namespace td::proxy {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Position just after `"key"` + ws + ':' + ws, for the first occurrence of
// the key; npos when absent.
std::size_t value_of(std::string_view body, std::string_view quoted_key) {
  std::size_t from = 0;
  while (from < body.size()) {
    // memmem, not find(): find() stops at every '"' of the JSON.
    auto* p = static_cast<const char*>(
        memmem(body.data() + from, body.size() - from, quoted_key.data(), quoted_key.size()));
    if (!p) return std::string_view::npos;
    std::size_t hit = static_cast<std::size_t>(p - body.data());
    auto i = hit + quoted_key.size();
    while (i < body.size() && is_ws(body[i])) ++i;
    if (i < body.size() && body[i] == ':') {
      ++i;
      while (i < body.size() && is_ws(body[i])) ++i;
      return i;
    }
    from = hit + 1;
  }
  return std::string_view::npos;
}

}  // namespace

BodyPeek peek_body(std::string_view whole) {
  BodyPeek out;
  // Only the ends: SDKs put "model" (and "stream") first or last, and the
  // middle of a large body (the messages) is the expensive part to scan.
  constexpr std::size_t kEnd = 4096;
  if (whole.size() > 2 * kEnd) {
    out = peek_body(whole.substr(0, kEnd));
    if (out.model.empty()) {
      auto tail = peek_body(whole.substr(whole.size() - kEnd));
      out.model = tail.model;
      out.stream = out.stream || tail.stream;
    } else if (!out.stream) {
      out.stream = peek_body(whole.substr(whole.size() - kEnd)).stream;
    }
    return out;
  }
  std::string_view body = whole;
  std::size_t from = 0;
  // The first "model" key whose value is a string (a nested schema property
  // called "model" has an object value and is skipped).
  while (from < body.size()) {
    auto v = value_of(body.substr(from), "\"model\"");
    if (v == std::string_view::npos) break;
    v += from;
    if (v < body.size() && body[v] == '"') {
      auto end = body.find('"', v + 1);
      if (end != std::string_view::npos) {
        auto model = body.substr(v + 1, end - v - 1);
        if (model.find('\\') == std::string_view::npos && model.size() <= 256) out.model = model;
        break;
      }
      break;
    }
    from = v;
  }
  auto s = value_of(body, "\"stream\"");
  out.stream = s != std::string_view::npos && body.substr(s).starts_with("true");
  return out;
}

}  // namespace td::proxy
