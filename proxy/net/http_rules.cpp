#include "proxy/net/http_rules.hpp"

#include <openssl/sha.h>

#include <array>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace td::proxy {

bool is_hop_by_hop(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kNames = {
      "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"};
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

std::string_view find_api_key(const HeaderMap& headers, std::string_view query) {
  if (auto a = headers.get("authorization"); !a.empty()) {
    if (a.size() > 7 && iequals(a.substr(0, 7), "bearer ")) return trim_ows(a.substr(7));
    return trim_ows(a);
  }
  if (auto k = headers.get("x-api-key"); !k.empty()) return trim_ows(k);
  if (auto k = headers.get("x-goog-api-key"); !k.empty()) return trim_ows(k);
  while (!query.empty()) {
    auto amp = query.find('&');
    auto param = query.substr(0, amp);
    if (param.starts_with("key=")) return param.substr(4);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
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
