#include "proxy/net/http_rules.hpp"

#include <openssl/sha.h>

#include <array>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proxy/phases/routing.hpp"

namespace td::proxy {

bool is_hop_by_hop(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kNames = {"connection", "keep-alive",        "te",
                                                             "trailer",    "transfer-encoding", "upgrade"};
  for (auto n : kNames)
    if (iequals(name, n)) return true;
  return name.size() >= 6 && iequals(name.substr(0, 6), "proxy-");
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

unsigned check_request_head(const RequestHeadFacts& f, const config::Limits& limits) {
  if (f.header_count > limits.max_header_count) return 431;
  if (f.has_content_length && f.has_transfer_encoding) return 400;
  if (f.content_length && *f.content_length > limits.max_body_bytes) return 413;
  return 0;
}

std::string limit_message(unsigned status, const config::Limits& limits, bool count) {
  if (status == 413)
    return "request body larger than limits.max_body_bytes (" + std::to_string(limits.max_body_bytes) + " bytes)";
  if (count)
    return "more request header fields than limits.max_header_count (" + std::to_string(limits.max_header_count) + ")";
  return "request header block larger than limits.max_header_bytes (" + std::to_string(limits.max_header_bytes) +
         " bytes)";
}

namespace {

// An Authorization value as a credential (find_api_key()'s rule 1).
std::string authorization_credential(std::string_view value) {
  value = trim_ows(value);
  const std::size_t gap = value.find_first_of(" \t");
  if (gap == std::string_view::npos) return iequals(value, "bearer") ? std::string() : std::string(value);
  const std::string_view scheme = value.substr(0, gap);
  const std::string_view credentials = trim_ows(value.substr(gap));
  if (iequals(scheme, "bearer")) return std::string(credentials);
  std::string out;
  out.reserve(value.size());
  for (char c : scheme) out += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  out += ' ';
  out += credentials;
  return out;
}

std::string query_key(std::string_view query) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && iequals(percent_decode(param.substr(0, eq)), "key")) {
      std::string value = percent_decode(param.substr(eq + 1));
      if (!value.empty()) return value;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
}

}  // namespace

std::string find_api_key(const HeaderMap& headers, std::string_view query) {
  if (std::string a = authorization_credential(headers.get("authorization")); !a.empty()) return a;
  for (std::string_view name : {"x-api-key", "api-key", "x-goog-api-key"})
    if (std::string_view k = trim_ows(headers.get(name)); !k.empty()) return std::string(k);
  return query_key(query);
}

std::string key_fingerprint(std::string_view key) {
  if (key.empty()) return {};
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace td::proxy
