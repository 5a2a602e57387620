// The two address forms the config accepts:
//   listen:   "HOST:PORT", HOST a name, an IPv4 address or a bracketed IPv6
//             address ("[::1]:8787"); PORT 0..65535 (0: any free port, which
//             the server logs; handy for tests);
//   upstream: "http[s]://HOST[:PORT][/path/prefix]": an origin plus an optional
//             path prefix the client's path is appended to. No user info,
//             query or fragment: they would be silently dropped or leaked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/parsed.hpp"

namespace td::config {

struct ListenAddress {
  std::string host;  // without brackets
  std::uint16_t port = 0;
};

Parsed<ListenAddress> parse_listen(std::string_view text);

// Fills url, tls, host (lower-case, IPv6 without brackets), port and
// path_prefix; ca_file and verify_tls keep their defaults.
Parsed<Upstream> parse_upstream_url(std::string_view text);

// A warning for an upstream URL whose path ends in an API version (/v1,
// /v1beta, /v1alpha), a habit from gateways that take a base URL with it:
// tokendiet appends the client's whole path, which starts with the version
// already, so every request would go to /v1/v1/… and get a 404. Names the
// fix (the URL without it); "" for any other URL. `what` names the setting.
std::string versioned_url_warning(std::string_view what, const Upstream& up);

}  // namespace td::config
