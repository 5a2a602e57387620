#include "proxy/key_fingerprint.hpp"

#include <openssl/evp.h>

namespace td::proxy {

std::string key_fingerprint(std::string_view api_key) {
  if (api_key.empty()) return {};
  static constexpr std::string_view kSalt = "tokendiet-key:";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx, kSalt.data(), kSalt.size()) == 1 &&
            EVP_DigestUpdate(ctx, api_key.data(), api_key.size()) == 1 &&
            EVP_DigestFinal_ex(ctx, digest, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok || len < 8) return "unhashable";  // never fall back to the key itself
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

std::string_view api_key_from_headers(std::string_view authorization, std::string_view x_api_key,
                                      std::string_view x_goog_api_key) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  authorization = trim(authorization);
  if (authorization.size() > 7) {
    std::string_view scheme = authorization.substr(0, 7);
    bool bearer = true;
    static constexpr std::string_view kBearer = "bearer ";
    for (size_t i = 0; i < 7; ++i)
      if ((scheme[i] | 0x20) != kBearer[i]) bearer = false;
    if (bearer) return trim(authorization.substr(7));
  }
  if (!trim(x_api_key).empty()) return trim(x_api_key);
  return trim(x_goog_api_key);
}

}  // namespace td::proxy
