// Small HTTP rules the server applies, kept free of Beast so they are unit
// tested on their own: hop-by-hop headers, request-head limits, the client's
// credential and its fingerprint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/phases/header_map.hpp"

namespace td::config {
struct Limits;
}

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

// The message of a refusal for a limit, naming its config key and value, so
// whoever reads the error knows what to raise: 413 (limits.max_body_bytes),
// 431 with `count` (limits.max_header_count) or without (limits.max_header_bytes).
std::string limit_message(unsigned status, const config::Limits& limits, bool count = false);

// The credential a request carries, whichever way the providers accept it,
// "" when none (docs/design.md §Client identity). The first of
// these that is present and not empty wins:
//   1. Authorization: `Bearer <token>` gives the token; another scheme gives
//      the scheme in lower case, a space and its credentials (`basic dXNl…`),
//      so the same secret under two schemes is two clients; one word without
//      a scheme is the credential itself; `Bearer` alone carries none
//   2. x-api-key (Anthropic)   3. api-key (Azure OpenAI)   4. x-goog-api-key
//   5. the `key` query parameter (Gemini), read as a server decodes a query:
//      its name percent-decoded and in any case (`KEY`, `k%65y`), its value
//      percent-decoded (`+` a space); the first one with a value.
// The same secret sent in two of the forms (x-goog-api-key, ?key=) is the
// same client.
std::string find_api_key(const HeaderMap& headers, std::string_view query);

// 16 hex digits of SHA-256(key): identifies a key in logs and the ledger
// without revealing it. "" for an empty key.
std::string key_fingerprint(std::string_view key);

}  // namespace td::proxy
