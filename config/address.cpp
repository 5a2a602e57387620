#include "config/address.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace td::config {
namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

bool is_ipv6_char(char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; }

// Splits "host[:port]" (host possibly "[v6]"). Returns an error or "".
std::string split_host_port(std::string_view text, std::string& host, std::string_view& port, bool& has_port) {
  has_port = false;
  if (text.empty()) return "missing host";
  std::string_view rest;
  if (text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) return "'[' without ']' in IPv6 address";
    std::string_view v6 = text.substr(1, close - 1);
    if (v6.empty() || !std::all_of(v6.begin(), v6.end(), is_ipv6_char) || v6.find(':') == std::string_view::npos)
      return "invalid IPv6 address '" + std::string(v6) + "'";
    host = std::string(v6);
    rest = text.substr(close + 1);
  } else {
    auto colon = text.find(':');
    std::string_view h = text.substr(0, colon);
    if (h.empty()) return "missing host";
    if (!std::all_of(h.begin(), h.end(), is_name_char)) return "invalid host '" + std::string(h) + "'";
    host = std::string(h);
    rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon);
  }
  if (!rest.empty()) {
    if (rest.front() != ':') return "unexpected '" + std::string(rest) + "' after host";
    has_port = true;
    port = rest.substr(1);
  }
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return {};
}

// Port text to a number in [min_port, 65535].
std::string parse_port(std::string_view text, unsigned min_port, std::uint16_t& out) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    return "invalid port '" + std::string(text) + "'";
  if (value < min_port || value > 65535)
    return "port " + std::string(text) + " out of range (" + std::to_string(min_port) + "-65535)";
  out = static_cast<std::uint16_t>(value);
  return {};
}

}  // namespace

Parsed<ListenAddress> parse_listen(std::string_view text) {
  ListenAddress out;
  std::string_view port;
  bool has_port = false;
  if (auto e = split_host_port(text, out.host, port, has_port); !e.empty())
    return Parsed<ListenAddress>::fail(e + " in listen address '" + std::string(text) + "' (want HOST:PORT)");
  if (!has_port)
    return Parsed<ListenAddress>::fail("missing port in listen address '" + std::string(text) + "' (want HOST:PORT)");
  if (auto e = parse_port(port, 0, out.port); !e.empty())
    return Parsed<ListenAddress>::fail(e + " in listen address '" + std::string(text) + "'");
  return {out, {}};
}

Parsed<Upstream> parse_upstream_url(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Parsed<Upstream>::fail("invalid upstream URL '" + std::string(text) + "': " + why);
  };
  Upstream up;
  up.url = std::string(text);
  auto scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return bad("want http://HOST[:PORT][/prefix] or https://...");
  std::string scheme(text.substr(0, scheme_end));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme == "https")
    up.tls = true;
  else if (scheme != "http")
    return bad("scheme must be http or https, not '" + scheme + "'");

  std::string_view rest = text.substr(scheme_end + 3);
  auto path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path = path_start == std::string_view::npos ? std::string_view{} : rest.substr(path_start);
  if (authority.find('@') != std::string_view::npos)
    return bad("user info (user:password@) is not allowed; API keys come from the client");
  if (rest.find_first_of("?#") != std::string_view::npos)
    return bad("a query or fragment is not allowed; the client's query is appended as is");

  std::string_view port;
  bool has_port = false;
  if (auto e = split_host_port(authority, up.host, port, has_port); !e.empty()) return bad(e);
  up.port = up.tls ? 443 : 80;
  if (has_port)
    if (auto e = parse_port(port, 1, up.port); !e.empty()) return bad(e);

  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.find("//") != std::string_view::npos) return bad("empty segment in path prefix");
  for (char c : path)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return bad("space or control character in path prefix");
  up.path_prefix = std::string(path);
  return {up, {}};
}

std::string versioned_url_warning(std::string_view what, const Upstream& up) {
  const std::string_view prefix = up.path_prefix;
  const std::size_t slash = prefix.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? prefix : prefix.substr(slash + 1);
  if (last != "v1" && last != "v1beta" && last != "v1alpha") return {};
  std::string_view url = up.url;
  while (url.ends_with('/')) url.remove_suffix(1);
  if (url.ends_with(last)) url.remove_suffix(last.size() + 1);
  return std::string(what) + ": the URL ends in /" + std::string(last) +
         ", but clients send paths that start with it (/" + std::string(last) +
         "/...), which tokendiet appends: every request would go to " + std::string(prefix) + "/" + std::string(last) +
         "/... and get a 404. Use " + std::string(url);
}

}  // namespace td::config
