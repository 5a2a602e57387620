// Small HTTP rules the server applies, kept free of Beast so they are unit
// tested on their own: hop-by-hop headers, request-head limits, the API-key
// fingerprint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/phases/header_map.hpp"

namespace td::config { struct Limits; }

namespace td::proxy {

// RFC 9110 §7.6.1 hop-by-hop fields, which a proxy never forwards: Connection,
// Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade.
bool is_hop_by_hop(std::string_view name);

// `s` without the optional whitespace (spaces, tabs) HTTP allows around
// header values and list elements (RFC 9110 §5.6.3).
std::string_view trim_ows(std::string_view s);

// What the client's request head says, for check_request_head().
struct RequestHeadFacts {
  std::size_t header_count = 0;
  bool has_content_length = false;
  bool has_transfer_encoding = false;
  std::optional<std::uint64_t> content_length;  // when present and valid
};

// 0 when the head is acceptable, otherwise the status to refuse it with:
// 431 too many header fields, 400 both Content-Length and Transfer-Encoding
// (request smuggling), 413 a declared body over the limit.
unsigned check_request_head(const RequestHeadFacts& facts, const config::Limits& limits);

// The API key a request carries (Authorization: Bearer, x-api-key,
// x-goog-api-key, or the `key` query parameter), "" when none.
std::string_view find_api_key(const HeaderMap& headers, std::string_view query);

// 16 hex digits of SHA-256(key): identifies a key in logs and the ledger
// without revealing it. "" for an empty key.
std::string key_fingerprint(std::string_view key);

}  // namespace td::proxy
