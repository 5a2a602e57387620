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
    auto hit = body.find(quoted_key, from);
    if (hit == std::string_view::npos) return hit;
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

BodyPeek peek_body(std::string_view body) {
  BodyPeek out;
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
