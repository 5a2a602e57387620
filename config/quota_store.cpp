#include "config/quota_store.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace td::config {
namespace {

bool parse_uint(std::string_view text, unsigned max, unsigned& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && out <= max;
}

// Percent-decoding of the user and password (RFC 3986 §2.1).
bool decode(std::string_view text, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= text.size()) return false;
    auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, v, 16);
    if (ec != std::errc{} || end != text.data() + i + 3) return false;
    out += static_cast<char>(v);
    i += 2;
  }
  return true;
}

bool is_host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

}  // namespace

Parsed<QuotaStore> parse_quota_store(std::string_view text) {
  using P = Parsed<QuotaStore>;
  QuotaStore out;
  if (text.empty()) return P{out, {}};
  out.url = std::string(text);
  if (text.starts_with("rediss://"))
    return P::fail(
        "rediss:// (TLS) is not supported: Debian's hiredis 0.14 has no TLS; use redis:// over a "
        "private network or a tunnel, or unix:///path/to/redis.sock");
  if (text.starts_with("unix://")) {
    std::string_view rest = text.substr(7);
    std::string_view query;
    if (auto q = rest.find('?'); q != std::string_view::npos) {
      query = rest.substr(q + 1);
      rest = rest.substr(0, q);
    }
    if (rest.empty() || rest.front() != '/')
      return P::fail("unix:// needs an absolute socket path (unix:///run/redis.sock)");
    out.socket = std::string(rest);
    if (!query.empty()) {
      if (!query.starts_with("db=") || !parse_uint(query.substr(3), 1u << 20, out.db))
        return P::fail("unix:// takes one query parameter, db=N (a database number), got '" + std::string(query) + "'");
    }
    return P{out, {}};
  }
  if (!text.starts_with("redis://"))
    return P::fail("expected redis://[user:password@]host[:port][/db] or unix:///path/to/socket[?db=N], got '" +
                   std::string(text) + "'");
  std::string_view rest = text.substr(8);
  std::string_view path;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    std::string_view user = auth, password;
    if (auto colon = auth.find(':'); colon != std::string_view::npos) {
      user = auth.substr(0, colon);
      password = auth.substr(colon + 1);
    } else {
      password = auth;  // redis://secret@host: a password alone (Redis' AUTH without a user)
      user = {};
    }
    if (!decode(user, out.user) || !decode(password, out.password))
      return P::fail("bad percent-encoding in the user or password");
  }
  std::string_view host = rest, port;
  if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty() || !std::all_of(host.begin(), host.end(), is_host_char))
    return P::fail("invalid or missing host in '" + std::string(text) + "'");
  out.host = std::string(host);
  std::transform(out.host.begin(), out.host.end(), out.host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!port.empty()) {
    unsigned p = 0;
    if (!parse_uint(port, 65535, p) || p == 0) return P::fail("invalid port '" + std::string(port) + "'");
    out.port = static_cast<std::uint16_t>(p);
  }
  if (!path.empty() && !parse_uint(path, 1u << 20, out.db))
    return P::fail("the path is the database number (redis://host:6379/0), got '/" + std::string(path) + "'");
  return P{out, {}};
}

}  // namespace td::config
